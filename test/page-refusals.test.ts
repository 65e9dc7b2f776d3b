/**
 * The page's counts and refusals a review found wanting, in headless Chromium (the harness of page.test.ts, built into a
 * folder of its own): one GPU or head counted as one ('1 GPU', not '1 GPUs'); the CP panel refusing a sequence length
 * the stack cannot split into 2·CP chunks, as the planner's lines do; a link's bad a2a+p2p sizes named on the top line
 * once the panel's asynchronous plan is drawn; the advisor's empty global batch (one per GPU) against the planner's micro
 * batch marked on the global batch, saying what to set; recompute layers N above a stage's layers marked on N as well.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { type PageHarness, hooks, openPage, startPage } from './page-harness.js';
import { configFromFlags } from '../src/cli/memory.js';
import { sweepGaps, parseLines } from '../src/memory/model.js';

let server: PageHarness | null = null;
const consoleErrors: string[] = [];

beforeAll(async () => {
  server = await startPage('test-output/dist-refusals', false);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

/** A fresh page at `hash`, ready, its CP plan drawn and its advisor showing the newest input. */
async function open(hash: string): Promise<Page> {
  const p = await openPage(server!, consoleErrors, hash);
  await settled(p);
  return p;
}

type Hooks = { busy?: number; advisorState?: { pending: boolean; wouldFitPending: boolean; shown: number; seq: number } };
const settled = (p: Page) => p.waitForFunction(() => {
  const h = (window as unknown as { __flashring: Hooks }).__flashring, s = h.advisorState;
  return (h.busy ?? 0) === 0 && !!s && !s.pending && !s.wouldFitPending && s.shown === s.seq;
}, null, { timeout: 60_000 });

/** A form's fields marked invalid: each one's name and the message aria-describedby points to. */
const fieldMarks = (p: Page, form: string) => p.$$eval(`${form} [aria-invalid="true"]`, (els) => els.map((e) => {
  const id = e.getAttribute('aria-describedby');
  return { name: (e as HTMLInputElement).name || e.className, message: (id && document.getElementById(id)?.textContent) ?? null };
}));
const text = (p: Page, sel: string) => p.evaluate((s) => document.querySelector(s)?.textContent ?? null, sel);

describe("the page's counts and refusals", () => {
  it("one GPU, one head: '1 GPU', '1 head', never '1 GPUs'", async () => {
    const p = await open('tp=1&lines=1&seqs=4096&agpus=1&aseq=4096&ahbm=1000&cpr=1');
    expect(await text(p, '#planner-time')).toMatch(/; for a global batch of 1 on 1 GPU \(TP 1 × CP 1 × PP 1 × DP 1\), /);
    expect(await text(p, '#advisor-table caption')).toMatch(/^32 layers, h=4096, 32 heads at 4,096 tokens on 1 GPU × 1000 GiB /);
    await p.close();
    // 8 heads over TP 8: one head a TP rank, which the CP panel counts, and a2a cannot split over CP 2.
    const q = await open('heads=8&groups=8&cpcomm=a2a&lines=1,2');
    expect(await text(q, '#cp-schemes caption')).toMatch(/, B=1, 1 head \(1 K\/V\), D=512, /);
    const why = "CP comm type a2a splits the 1 head of a TP rank over the CP ranks: line 'CP=2' (CP=2) does not divide it. Choose p2p or all_gather, or other lines.";
    expect(await text(q, '#planner-error')).toBe(why);
    expect(await text(q, '#view-note')).toBe(`This link's cpcomm=a2a is refused: ${why}`);
    await q.close();
    expect(consoleErrors).toEqual([]);
  });

  it('the CP panel refuses a sequence length the stack cannot split into 2·CP chunks, in the words the planner refuses it with, naming it at the top', async () => {
    // The planner refuses the same length for a CP 4 line (seqSplitProblem, through sweepGaps).
    const { model, par } = configFromFlags({ preset: 'seed-32L-4096h', 'tensor-model-parallel-size': '8', 'sequence-parallel': true, 'seq-length': '131072' });
    expect(() => sweepGaps(par, [131073], parseLines('4', model, 'megatron'))).toThrow(/Megatron-LM splits the sequence into 2·CP chunks, two per CP rank: --seq-length 131073 is not divisible by 2·--context-parallel-size = 8/);
    const p = await open('cpseq=131073&cpr=4');
    const why = 'Megatron-LM splits the sequence into 2·CP chunks, two per CP rank: sequence length 131073 is not divisible by 2·CP = 8: choose a sequence length that is a multiple of 32, or another CP size.';
    expect(await text(p, '#cp-error')).toBe(why);
    expect(await fieldMarks(p, '#cp-form')).toEqual([{ name: 'cpseq', message: why }]);
    expect(await hooks<{ rows: unknown[] }>(p, 'cpSchemes')).toMatchObject({ rows: [] });
    expect(await text(p, '#view-note')).toBe(`This link's cpseq=131073 is refused: ${why}`);
    // With sequence parallelism each rank's s/CP tokens go over the TP ranks: 131076 splits into 4 chunks, not its halves over TP 8.
    const sp = await p.evaluate(() => {
      const el = document.querySelector<HTMLInputElement>('#cp-form input[name=cpseq]')!, r = document.querySelector<HTMLInputElement>('#cp-form input[name=cpr]')!;
      r.value = '2';
      el.value = '131076';
      el.dispatchEvent(new Event('input', { bubbles: true }));
      return document.getElementById('cp-error')!.textContent;
    });
    expect(sp).toBe('Sequence parallel splits each CP rank\'s s/CP tokens over the TP ranks: sequence length 131076 / CP 2 is not divisible by TP 8: choose a sequence length that is a multiple of 16, or another CP size.');
    await p.evaluate(() => {
      const el = document.querySelector<HTMLInputElement>('#cp-form input[name=cpseq]')!;
      el.value = '131072';
      el.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await settled(p);
    expect([await text(p, '#cp-error'), (await hooks<{ rows: unknown[] }>(p, 'cpSchemes')).rows.length]).toEqual(['', 4]);
    await p.close();
    expect(consoleErrors).toEqual([]);
  });

  it("a link's bad a2a+p2p sizes (cphcp=abc) are named on the top line once the panel's plan is drawn, as the other panels' refused values are", async () => {
    const p = await open('cphcp=abc');
    const why = 'a2a+p2p sizes must be two whole numbers A,P, each at least 1 (they are abc)';
    expect(await fieldMarks(p, '#cp-form')).toEqual([{ name: 'cphcp', message: why }]);
    expect(await text(p, '#view-note')).toBe(`This link's cphcp=abc is refused: ${why}.`);
    await p.close();
    expect(consoleErrors).toEqual([]);
  });

  it("the planner's micro batch against an empty global batch (one per GPU): the global batch is marked, and told what to set", async () => {
    const p = await open('mb=3');
    const why = "Global batch (empty: one sequence a GPU, 8) must be a multiple of the planner's micro batch (3): set one, e.g. 24 (GPUs × micro batch).";
    expect(await text(p, '#advisor-error')).toBe(why);
    expect(await fieldMarks(p, '#advisor-form')).toEqual([{ name: 'agbs', message: why }]);
    // The top line names the field refused and its value (the link gives none) and what to do, not only "the link's view".
    expect(await text(p, '#view-note')).toBe(`This link's view is refused at the advisor's global batch, agbs empty (the link does not give it): ${why} ` +
      "Set the advisor's global batch to a value it takes (the link then keeps it as agbs), or change what it is checked against.");
    // A link's global batch the field cannot hold is set aside, and the value shown in its place is the one refused.
    const setAside = await p.evaluate(() => new Promise<string>((done) => {
      addEventListener('hashchange', () => setTimeout(() => done(document.getElementById('view-note')!.textContent ?? '')), { once: true });
      location.hash = 'mb=3&agbs=abc';
    }));
    expect(setAside).toBe("This link's agbs=abc is not a value the page knows: set aside, the default shown instead (agbs empty). " +
      `This link's view is refused at the advisor's global batch, agbs empty (the default shown for the link's agbs=abc): ${why} ` +
      "Set the advisor's global batch to a value it takes (the link then keeps it as agbs), or change what it is checked against.");
    // A global batch typed that is no multiple: the same field, the same advice.
    const typed = await p.evaluate(() => {
      const el = document.querySelector<HTMLInputElement>('#advisor-form input[name=agbs]')!;
      el.value = '10';
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return document.getElementById('advisor-error')!.textContent;
    });
    expect(typed).toBe("Global batch (10) must be a multiple of the planner's micro batch (3): set one that is, e.g. 24 (GPUs × micro batch).");
    await p.fill('#advisor-form input[name=agbs]', '24');
    await p.press('#advisor-form input[name=agbs]', 'Enter');
    await settled(p);
    expect([await text(p, '#advisor-error'), await fieldMarks(p, '#advisor-form')]).toEqual(['', []]);
    await p.close();
    expect(consoleErrors).toEqual([]);
  });

  it("recompute layers N typed above a stage's layers: marked on N, where it was typed, and on the lines it wrote", async () => {
    const p = await open('pp=2');   // the seed's 32 layers, 16 a stage; its "+ recompute" is full:uniform/1
    expect([await p.inputValue('select[name=rc]'), await p.inputValue('input[name=rcn]')]).toEqual(['full', '1']);
    const marks = await p.evaluate(() => {
      const el = document.querySelector<HTMLInputElement>('#planner-form input[name=rcn]')!;
      el.value = '17';
      el.dispatchEvent(new Event('input', { bubbles: true }));
      return Array.from(document.querySelectorAll('#planner-form [aria-invalid="true"]')).map((e) => [(e as HTMLInputElement).name, document.getElementById(e.getAttribute('aria-describedby')!)!.textContent]);
    });
    const lines = "Lines: '1:full:uniform/17' recomputes chunks of 17 layers; that must be from 1 to the 16 layers of a pipeline stage (layers ÷ PP).";
    expect(marks).toEqual([['rcn', 'Recompute layers N (17) must be from 1 to the 16 layers of a pipeline stage (layers ÷ PP).'], ['lines', lines]]);
    expect(await text(p, '#planner-error')).toBe(lines);
    // Back to a valid N: neither is marked.
    await p.fill('#planner-form input[name=rcn]', '16');
    expect([await text(p, '#planner-error'), await fieldMarks(p, '#planner-form')]).toEqual(['', []]);
    await p.close();
    expect(consoleErrors).toEqual([]);
  });
});
