/**
 * The page's counts and refusals a review found wanting, in headless Chromium (the harness of page.test.ts, built into a
 * folder of its own): one GPU or head counted as one ('1 GPU', not '1 GPUs').
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { type PageHarness, openPage, startPage } from './page-harness.js';

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
});
