/**
 * The advisor panel when nothing fits, in headless Chromium (the harness of page.test.ts, built into a folder of
 * its own): what would fit, searched after the summary (the page saying so meanwhile) by the functions
 * `flashring advise` prints it with (src/memory/adviseForward.ts), in the worker or, where no worker starts, on
 * the page between its events; the same lines and values as wouldFit() gives for the same request. And when the
 * model refuses the request itself, whatever the layout (requestRefusal): that refusal said once, beside its control,
 * carried from the worker as the InputError it is (its flags with it), with no search for what would fit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { type PageHarness, hooks, openPage, startPage } from './page-harness.js';
import { configFromFlags } from '../src/cli/memory.js';
import { candidates, layoutLabel, requestRefusal, type AdviseRequest } from '../src/memory/advise.js';
import { InputError } from '../src/errors.js';
import { wouldFit, wouldFitLines, type Remedy } from '../src/memory/adviseForward.js';
import { PAGE_WORDS } from '../web/advise.js';
import { duration } from '../web/format.js';
import { resolveLink } from '../src/cp/plan/linkModel.js';

let server: PageHarness | null = null;
const consoleErrors: string[] = [];

beforeAll(async () => {
  server = await startPage('test-output/dist-advisor', false);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

type Brief = { tried: number[]; at: number | null; layouts: number; globalBatch: number | null; fastest: string | null } | null;
type Would = { lines: string[]; hbmGib: Brief; gpus: Brief; seqLength: Brief };
type Hook = { fit: number; summary?: string; wouldFit: Would | null };

/** The status line's texts as the page sets them, from its load (a MutationObserver of the test's); `noWorker`: Worker taken away first. */
const watch = (noWorker: boolean) => (p: Page) => p.addInitScript((noW) => {
  const w = window as unknown as { statusTexts: string[]; Worker?: unknown };
  w.statusTexts = [];
  if (noW) w.Worker = undefined;
  // From before the page's script runs (its first search may set the line twice in one task): every text set, from the records.
  new MutationObserver((records) => {
    for (const r of records)
      if ((r.target as Element).id === 'advisor-status') w.statusTexts.push(r.addedNodes.length ? r.addedNodes[0].textContent ?? '' : '');
  }).observe(document, { childList: true, subtree: true });
}, noWorker);

/** The seed preset at 128K tokens on 8 GPUs of 30 GiB: the smallest layout needs 31.9 GiB; the page's request, in node. */
function expected() {
  const { model, par } = configFromFlags({ preset: 'seed-32L-4096h', 'seq-length': '131072' });
  const r: AdviseRequest = { model, base: par, gpus: 8, hbmGib: 30, margin: 0.1, gbs: 8, link: resolveLink('nvlink-h200') };
  const res = candidates(r), w = wouldFit(r, res, true);
  const brief = (x: Remedy | null): Brief => x && { tried: x.tried, at: x.at, layouts: x.layouts, globalBatch: x.globalBatch, fastest: x.fastest && layoutLabel(x.fastest) };
  // Each change's fastest step time as the page's table gives it (duration), where the CLI says whole ms.
  const steps = [w.hbmGib, w.gpus, w.seqLength].map((x) => duration(x!.fastest!.iterMs));
  return { res, lines: wouldFitLines(r, res, w, true, PAGE_WORDS), hbmGib: brief(w.hbmGib), gpus: { ...brief(w.gpus), between: w.gpus.between }, seqLength: brief(w.seqLength), steps };
}

describe('the advisor when nothing fits', () => {
  const want = expected();

  for (const noWorker of [false, true]) {
    it(`says what would fit, as wouldFit() finds it for the same request (${noWorker ? 'no worker: on the page, one search a task' : 'in the worker'})`, async () => {
      expect(want.res.fitting).toEqual([]);
      // Each change searched finds a layout here (so each line names one).
      expect([want.hbmGib?.at, want.gpus?.at, want.seqLength?.at]).toEqual([44.3, 16, 32768]);
      const p = await openPage(server!, consoleErrors, 'ahbm=30', watch(noWorker));
      await p.waitForFunction(() => (window as unknown as { __flashring: { advisor?: Hook } }).__flashring.advisor?.wouldFit != null, null, { timeout: 240_000 });
      const a = await hooks<Hook>(p, 'advisor');
      expect(a.fit).toBe(0);
      expect(a.summary).toMatch(/^\d+ layouts evaluated, 0 fit: the smallest is TP=8 CP=1 PP=1 DP=1 recompute=full:uniform\/1 at 39\.8 GiB\./);
      expect(a.wouldFit).toEqual({ lines: want.lines.map((x) => x.trim()), hbmGib: want.hbmGib, gpus: want.gpus, seqLength: want.seqLength });
      expect(await p.textContent('#advisor-would')).toBe(want.lines.map((x) => x.trim()).join('\n').replace(/^w/, 'W'));
      expect(await p.textContent('#advisor-would')).not.toContain('--');
      expect(want.steps.every((t) => / s$/.test(t))).toBe(true);
      a.wouldFit!.lines.slice(1).forEach((l, i) => expect(l).toContain(`(${want.steps[i]}/step, `));
      // Meanwhile the page said it was searching; now it says nothing, and nothing is pending.
      const texts = await p.evaluate(() => (window as unknown as { statusTexts: string[] }).statusTexts);
      expect(texts).toContain('searching what would fit…');
      expect(await p.textContent('#advisor-status')).toBe('');
      expect(await hooks<{ wouldFitPending: boolean; pending: boolean }>(p, 'advisorState')).toMatchObject({ wouldFitPending: false, pending: false });
      expect(await p.getAttribute('#advisor', 'aria-busy')).toBe('false');
      // A request that fits: no such lines.
      await p.fill('#advisor-form input[name=ahbm]', '80');
      await p.waitForFunction(() => (window as unknown as { __flashring: { advisor?: Hook } }).__flashring.advisor!.fit > 0, null, { timeout: 240_000 });
      expect(await p.textContent('#advisor-would')).toBe('');
      expect((await hooks<Hook>(p, 'advisor')).wouldFit).toBeNull();
      await p.close();
      expect(consoleErrors).toEqual([]);
    });
  }

  it("skipped layouts in the page's words: its own global batch for the hint, the planner's words for the model's reasons, no flag and no --json", async () => {
    // 48 GPUs, a global batch of 6: DP × micro batch 4, 8, … do not divide it, TP 3 and 6 not the heads, …: more than five reasons.
    const p = await openPage(server!, consoleErrors, 'agpus=48&agbs=6');
    await p.waitForFunction(() => {
      const s = (window as unknown as { __flashring: { advisorState: { pending: boolean; shown: number; seq: number } } }).__flashring.advisorState;
      return !s.pending && s.shown === s.seq;
    }, null, { timeout: 240_000 });
    const summary = (await p.textContent('#advisor-summary'))!;
    expect(summary).toContain(" layouts skipped: global batch 6 is not divisible by DP × micro batch 4, 8, 12, 16, 24, 48 (the advisor's global batch sets it).");
    expect(summary).toContain(' layouts skipped: heads 32 is not divisible by TP 3, 6.');
    expect(summary).toMatch(/ and \d+ more reasons\.$/);
    // (the lines above the table name Megatron-LM's own flag of the runs the times were checked on: a fact of those runs, not a control)
    // The table drawn (its caption and a ranked row), so that 'no flag' is said of a table with content.
    expect(await p.textContent('#advisor-table')).toMatch(/global batch 6 sequences; rates: .* Fastest first/);
    expect(await p.locator('#advisor-table tbody tr').count()).toBeGreaterThan(0);
    for (const id of ['#advisor-summary', '#advisor-table']) expect(await p.textContent(id)).not.toContain('--');
    await p.close();
    expect(consoleErrors).toEqual([]);
  });

  it('a newer input while what would fit is searched drops that search: only the newest input is drawn', async () => {
    // The newer input is typed the moment the status says the search for what would fit began (in the mutation's own
    // microtask, so before any result of that search can come back): polling for the pending state instead could miss
    // it on a busy machine, where the whole search ran between two polls and the test waited for a state that had passed.
    const typeWhileSearching = (p: Page) => p.addInitScript(() => {
      const w = window as unknown as { typedWhile?: boolean; __flashring?: { advisorState?: { wouldFitPending: boolean } } };
      new MutationObserver(() => {
        if (w.typedWhile !== undefined || document.getElementById('advisor-status')?.textContent !== 'searching what would fit…') return;
        w.typedWhile = w.__flashring?.advisorState?.wouldFitPending === true;
        const hbm = document.querySelector<HTMLInputElement>('#advisor-form input[name=ahbm]')!;
        hbm.value = '80';
        hbm.dispatchEvent(new Event('input', { bubbles: true }));
      }).observe(document, { childList: true, subtree: true, characterData: true });
    });
    const p = await openPage(server!, consoleErrors, 'ahbm=30', (pg) => { watch(false)(pg); void typeWhileSearching(pg); });
    await p.waitForFunction(() => (window as unknown as { typedWhile?: boolean }).typedWhile !== undefined, null, { timeout: 240_000 });
    expect(await p.evaluate(() => (window as unknown as { typedWhile?: boolean }).typedWhile), 'typed while the search for what would fit was pending').toBe(true);
    await p.waitForFunction(() => (window as unknown as { __flashring: { advisor?: Hook } }).__flashring.advisor!.fit > 0, null, { timeout: 240_000 });
    expect(await hooks<{ wouldFitPending: boolean }>(p, 'advisorState')).toMatchObject({ wouldFitPending: false });
    expect(await p.textContent('#advisor-would')).toBe('');
    expect(await p.textContent('#advisor-status')).toBe('');
    await p.close();
    expect(consoleErrors).toEqual([]);
  });
});

describe("the advisor when the model refuses the request itself, whatever the layout", () => {
  /** A form's fields marked invalid: each one's name and the message aria-describedby points to. */
  const fieldMarks = (p: Page, form: string) => p.$$eval(`${form} [aria-invalid="true"]`, (els) => els.map((e) => {
    const id = e.getAttribute('aria-describedby');
    return { name: (e as HTMLInputElement).name, message: (id && document.getElementById(id)?.textContent) ?? null };
  }));
  /** Until the newest input is drawn and nothing is searched for it any more. */
  const settled = (p: Page) => p.waitForFunction(() => {
    const s = (window as unknown as { __flashring: { advisorState: { pending: boolean; wouldFitPending: boolean; shown: number; seq: number } } }).__flashring.advisorState;
    return !s.pending && !s.wouldFitPending && s.shown === s.seq;
  }, null, { timeout: 240_000 });
  type Refused = { error?: string; field?: string; evaluated: number; fit: number; rows: unknown[] };
  const flags = { preset: 'seed-32L-4096h', 'seq-length': '131072', 'tensor-model-parallel-size': '8', 'sequence-parallel': true, 'disable-bias-linear': true, 'num-experts': '8' };

  it('the search finds it as the model throws it: every layout refused for it, an InputError with its flags (requestRefusal)', () => {
    const cli = "Megatron-LM refuses --moe-router-enable-expert-bias with the softmax score function (TransformerConfig): add --moe-router-score-function sigmoid (or sqrtsoftplus), or leave out --moe-router-enable-expert-bias";
    expect(() => configFromFlags({ ...flags, 'moe-router-enable-expert-bias': true })).toThrow(cli);
    const { model, par } = configFromFlags({ ...flags, 'moe-router-score-function': 'sigmoid', 'moe-router-enable-expert-bias': true });
    const r = (scoreFunction?: 'sigmoid'): AdviseRequest => ({ model: { ...model, moe: { ...model.moe!, scoreFunction } }, base: par, gpus: 8, hbmGib: 80, margin: 0.1, gbs: 8, link: resolveLink('nvlink-h200') });
    const res = candidates(r()), refused = requestRefusal(res);
    expect([res.all, res.skipped.length]).toEqual([0, 1]);
    expect(refused).toBeInstanceOf(InputError);
    expect([refused!.message, refused!.flags]).toEqual([cli, ['--moe-router-enable-expert-bias', '--moe-router-score-function']]);
    // Layouts that differ (evaluated, or skipped for reasons of their own): no refusal of the request.
    expect(requestRefusal(candidates(r('sigmoid')))).toBeNull();
    expect(requestRefusal(candidates({ ...r('sigmoid'), gpus: 48, gbs: 6 }))).toBeNull();
  });

  for (const noWorker of [false, true]) {
    it(`the expert bias with softmax: said once, as the planner's, whose control the planner marks; nothing searched for what would fit (${noWorker ? 'no worker' : 'in the worker'})`, async () => {
      const p = await openPage(server!, consoleErrors, 'preset=seed-32L-4096h&lines=1&seqs=4096&nobias=1&experts=8&expertbias=1', watch(noWorker));
      await settled(p);
      const want = "Megatron-LM refuses 'expert bias' with the softmax score function (TransformerConfig): add score function sigmoid (or sqrtsoftplus), or leave out 'expert bias'";
      expect(await fieldMarks(p, '#planner-form')).toEqual([{ name: 'expertbias', message: want }]);
      expect(await p.textContent('#advisor-error')).toBe(`Fix the planner's fields above first: ${want}`);
      expect((await p.textContent('#advisor'))!.split("refuses 'expert bias'").length - 1, 'said once in the panel').toBe(1);
      expect([await p.textContent('#advisor-summary'), await p.textContent('#advisor-would')]).toEqual(['', '']);
      expect(await hooks<Refused>(p, 'advisor')).toMatchObject({ field: 'expertbias', evaluated: 0, fit: 0, rows: [] });
      expect(await fieldMarks(p, '#advisor-form')).toEqual([]);
      // The score function it takes: the advisor searches and draws layouts again (none fits these 8 GPUs of 80 GiB).
      await p.selectOption('select[name=score]', 'sigmoid');
      await p.waitForFunction(() => (window as unknown as { __flashring: { advisor?: Refused } }).__flashring.advisor!.evaluated > 0, null, { timeout: 240_000 });
      expect([await p.textContent('#advisor-error'), (await hooks<Refused>(p, 'advisor')).field]).toEqual(['', undefined]);
      await p.close();
      expect(consoleErrors).toEqual([]);
    });
  }

  it("the position table shorter than the advisor's sequence: said beside the advisor's sequence length, the planner's lengths fitting it", async () => {
    const p = await openPage(server!, consoleErrors, 'preset=seed-32L-4096h&maxpos=4096&seqs=4096&aseq=131072');
    await settled(p);
    const want = 'Max positions 4096 is less than sequence length 131072: Megatron-LM refuses it (max_position_embeddings must be at least seq_length); give at least 131072, or leave it out (the table then has a row a position of the sequence)';
    expect(await p.textContent('#planner-error')).toBe('');
    expect(await fieldMarks(p, '#advisor-form')).toEqual([{ name: 'aseq', message: want }]);
    expect(await p.textContent('#advisor-error')).toBe(want);
    expect([await p.textContent('#advisor-summary'), await p.textContent('#advisor-would')]).toEqual(['', '']);
    expect(await hooks<Refused>(p, 'advisor')).toMatchObject({ field: 'aseq', fit: 0 });
    await p.fill('#advisor-form input[name=aseq]', '4096');
    await p.press('#advisor-form input[name=aseq]', 'Enter');
    await p.waitForFunction(() => (window as unknown as { __flashring: { advisor?: Refused } }).__flashring.advisor!.fit > 0, null, { timeout: 240_000 });
    expect(await fieldMarks(p, '#advisor-form')).toEqual([]);
    await p.close();
    expect(consoleErrors).toEqual([]);
  });
});
