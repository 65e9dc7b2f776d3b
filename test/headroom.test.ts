/**
 * The memory verdict's headroom (src/memory/headroom.ts): its measured reserve computed again from the committed
 * Megatron-LM logs, and the verdict on each side of the HBM and of the margin.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MARGIN, RESERVED_OVER_ALLOCATED, headroom, longestFitting } from '../src/memory/headroom.js';
import { parseMegatronLogs } from '../src/memory/megatron.js';
import { GIB, type SweepPoint } from '../src/memory/model.js';

const ROOT = join(import.meta.dirname, '..');

/** Every .log file under `dir` (relative to the project root). */
function logs(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.log')).map((f) => join(ROOT, dir, f)).sort();
}

describe('longestFitting (the CLI sweep\'s last line and the page planner\'s)', () => {
  // Points of two lines on 80 GiB: a tight peak (75 GiB: under 10% spare) fits but is not roomy.
  const pt = (line: string, seqLength: number, gib: number) => ({ line, config: { seqLength }, fits: gib <= 80, breakdown: { totalBytes: gib * GIB } }) as unknown as SweepPoint;
  const pts = [pt('CP=1', 4096, 60), pt('CP=1', 8192, 75), pt('CP=1', 16384, 95), pt('CP=2', 4096, 90), pt('CP=4', 4096, 30), pt('CP=4', 8192, 50)];
  it('each line\'s longest that fits, and the longest with the margin spare (null: none)', () => {
    expect(longestFitting(pts, 80)).toEqual([
      { line: 'CP=1', longest: 8192, roomy: 4096 }, { line: 'CP=2', longest: null, roomy: null }, { line: 'CP=4', longest: 8192, roomy: 8192 },
    ]);
    expect(longestFitting(pts, 80, 0.01).map((x) => x.roomy)).toEqual([8192, null, 8192]);   // a 1% margin: 75 of 80 GiB is roomy
  });
});

describe('headroom', () => {
  it('RESERVED_OVER_ALLOCATED is what the committed logs give: each distinct log once, every run with both peaks', () => {
    const seen = new Set<string>(), ratios: number[] = [], allocated: number[] = [];
    for (const f of [...logs('bench/results'), ...logs('test/fixtures')]) {
      const text = readFileSync(f, 'utf8'), hash = createHash('sha1').update(text).digest('hex');
      if (seen.has(hash)) continue;
      seen.add(hash);
      let runs;
      try { runs = parseMegatronLogs(text, f); } catch { continue; }   // logs refused whole (the readers' tests' bad inputs)
      for (const { point: p } of runs) {
        if (!p.peakMaxAllocatedGiB || !p.peakMaxReservedGiB) continue;
        ratios.push(p.peakMaxReservedGiB / p.peakMaxAllocatedGiB);
        allocated.push(p.peakMaxAllocatedGiB);
      }
    }
    ratios.sort((a, b) => a - b);
    const at = (q: number) => Number(ratios[Math.floor(q * ratios.length)].toFixed(2));
    const got = { runs: ratios.length, median: at(0.5), p90: at(0.9), max: Number(ratios.at(-1)!.toFixed(2)) };
    expect(got, 'logs added or changed: update RESERVED_OVER_ALLOCATED and its comment').toEqual(RESERVED_OVER_ALLOCATED);
    expect([Math.min(...allocated), Math.max(...allocated)].map((x) => Number(x.toFixed(1)))).toEqual([1.8, 84.7]);
  });

  it('says fits with the spare, tight under the margin (with why), and how far over where it does not fit', () => {
    const at = (gib: number) => headroom(gib * GIB, 80);
    expect(at(27.5)).toMatchObject({ fits: true, tight: false, verdict: 'fits in 80 GiB (52.5 GiB spare)', note: null });
    // The margin's edge: 8 GiB spare of 80 is not tight, a byte less is.
    expect(at(72).tight).toBe(false);
    expect(headroom(72 * GIB + 1, 80).tight).toBe(true);
    const tight = at(77.5);
    expect(tight).toMatchObject({ fits: true, tight: true, spare: 'tight: 2.5 GiB (3.1%) spare', verdict: 'fits in 80 GiB, tight: 2.5 GiB (3.1%) spare' });
    expect(tight.note).toMatch(/^under 10% of the HBM is spare .* median 1\.11× .* in 302 measured runs, the CUDA context besides: this peak may not run$/);
    expect(at(80)).toMatchObject({ fits: true, tight: true });
    expect(headroom(80 * GIB + 1, 80)).toMatchObject({ fits: false, tight: false, spare: '0.0 GiB over', verdict: 'DOES NOT FIT in 80 GiB (0.0 GiB over)', note: null });
    expect(at(92.25).verdict).toBe('DOES NOT FIT in 80 GiB (12.3 GiB over)');
    expect(headroom(75 * GIB, 80, 0).tight).toBe(false);
    expect(DEFAULT_MARGIN).toBe(0.1);
  });
});
