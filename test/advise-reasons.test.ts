/**
 * advise's reasons (src/memory/advise.ts reasons(): how a candidate compares with the same layout at CP = 1 and without
 * recompute) take those layouts' figures from the search (Evaluated), which timed every one of them already: the same
 * words as computing them again, and no step time computed again (it made `advise --json` 13-15% slower).
 */
import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_PARALLEL, GIB, memoryBreakdown, PRESETS } from '../src/memory/model.js';
import { LINKS } from '../src/cp/plan/linkModel.js';
import { candidates, layoutConfig, reasons, wholeMs, type AdviseRequest, type Evaluated } from '../src/memory/advise.js';
import { duration } from '../web/format.js';
import * as step from '../src/memory/time/step.js';

// Every step time the advisor computes, counted.
const timed = vi.hoisted(() => ({ n: 0 }));
vi.mock('../src/memory/time/step.js', async (importOriginal) => {
  const mod = await importOriginal<typeof import('../src/memory/time/step.js')>();
  return { ...mod, iterationTime: (...a: Parameters<typeof mod.iterationTime>) => (timed.n++, mod.iterationTime(...a)) };
});

const request = (preset: string, seqLength: number, gpus: number, hbmGib: number, gbs = gpus): AdviseRequest => ({
  model: PRESETS[preset].model, base: { ...DEFAULT_PARALLEL, seqLength }, gpus, hbmGib, margin: 0.1, gbs,
  link: LINKS['nvlink-h200'], interNodeLink: LINKS['ib-ndr'], gpusPerNode: 8,
});

describe("advise's reasons from the search's own figures", () => {
  // CP that CP = 1 could not fit and CP that it could, recompute whose twin fits and whose does not; a batch DP does not divide.
  for (const [name, r] of [
    ['llama3-8b, 128K tokens, 64 GPUs of 139.8 GiB', request('llama3-8b', 131072, 64, 139.8)],
    ['llama3-70b, 32K tokens, 256 GPUs of 80 GiB, global batch 96', request('llama3-70b', 32768, 256, 80, 96)],
  ] as const) {
    it(`${name}: the same words as computed again, and no step time computed again`, () => {
      const seen: Evaluated = new Map(), res = candidates(r, seen);
      const kinds = res.fitting.flatMap((c) => reasons(r, c)).map((w) => w.replace(/\d+(\.\d+)?/g, 'N').slice(0, 40));
      expect(res.fitting.some((c) => c.cp > 1) && res.fitting.some((c) => c.recompute !== 'none')).toBe(true);
      expect(new Set(kinds).size).toBeGreaterThan(3);
      timed.n = 0;
      const looked = res.fitting.map((c) => reasons(r, c, seen));
      expect(timed.n).toBe(0);
      expect(looked).toEqual(res.fitting.map((c) => reasons(r, c)));
      expect(timed.n).toBeGreaterThan(0); // (without the search's figures, they are timed again)
    });
  }
  it('the counter counts (the mock is in place)', () => {
    timed.n = 0;
    step.iterationTime(PRESETS['llama3-8b'].model, { ...DEFAULT_PARALLEL, seqLength: 4096 }, { link: LINKS['nvlink-h200'], microBatches: 1 });
    expect(timed.n).toBe(1);
  });
});

describe("advise's reasons, in words that fit the numbers", () => {
  const r = request('llama3-70b', 32768, 64, 80), res = candidates(r), limit = 0.9 * 80 * GIB;
  const twinBytes = (c: (typeof res.fitting)[number]) => memoryBreakdown(r.model, layoutConfig(r, { ...c, cpCommType: c.cpCommType ?? undefined, recompute: 'none' })).totalBytes;

  it('recompute whose layout without it does not fit says so, with that peak; where it fits, nothing more', () => {
    let over = 0, under = 0;
    for (const c of res.fitting.filter((x) => x.recompute !== 'none').slice(0, 300)) {
      const w = reasons(r, c).find((x) => x.startsWith('recompute '))!, bytes = twinBytes(c);
      if (bytes > limit) {
        over++;
        expect(w).toMatch(new RegExp(`; without it \\d+ ms \\(does not fit: ${(bytes / GIB).toFixed(1)} GiB\\)`));
      } else {
        under++;
        expect(w).not.toContain('does not fit');
      }
    }
    expect([over > 0, under > 0]).toEqual([true, true]);
  });

  it("CP > 1 as fast as CP = 1 (the same whole ms) is said so, not 'faster'", () => {
    const c = res.fitting.find((x) => /^CP=\d+ is faster than CP=1 here/.test(reasons(r, x)[0]))!;
    const ms = Number(/, (\d+) ms\)$/.exec(reasons(r, c)[0])![1]);
    expect(reasons(r, { ...c, iterMs: ms + 0.3 })[0]).toBe(reasons(r, c)[0].replace('is faster than', 'is as fast as'));
    expect(reasons(r, { ...c, iterMs: ms - 0.3 })[0]).toMatch(/^CP=\d+ is as fast as CP=1 here \(the same layout at CP=1 fits too: [\d.]+ GiB, \d+ ms\)$/);
    expect(reasons(r, { ...c, iterMs: ms + 1 })[0]).toMatch(/is slower than CP=1 here/);
  });

  it("in a front end's words: the page's why column gives its durations ('12.3 s'), the CLI whole ms, the same figures", () => {
    const some = res.fitting.filter((c) => c.cp > 1 && c.recompute !== 'none').slice(0, 20);
    expect(some.length).toBeGreaterThan(0);
    for (const c of some) {
      const cli = reasons(r, c), page = reasons(r, c, undefined, duration);
      expect(reasons(r, c, undefined, wholeMs)).toEqual(cli);
      const times = (ws: string[], unit: RegExp) => ws.join(' | ').match(unit) ?? [];
      // Every CLI time '12345 ms' reads on the page as duration(12345 ± 0.5): the same figure, the page's units.
      const msFigures = times(cli, /\d+ ms\b/g).map((x) => parseFloat(x)), pageFigures = times(page, /[\d.]+ m?s\b/g);
      expect(pageFigures.length).toBe(msFigures.length);
      pageFigures.forEach((x, i) => expect([duration(msFigures[i] - 0.49), duration(msFigures[i] + 0.49), duration(msFigures[i])]).toContain(x));
      if (c.iterMs >= 1000) expect(page.join(' ')).toMatch(/\d s\b/);
    }
  });
});
