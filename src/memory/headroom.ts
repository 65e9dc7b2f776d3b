/**
 * What a predicted peak leaves of a GPU's memory, as `flashring memory` says it. The model (model.ts) predicts the peak
 * of allocated bytes, what Megatron-LM's logs call "max allocated"; a run needs more than that: PyTorch's caching
 * allocator reserves more than it hands out (fragmentation, cached blocks), and the CUDA context sits outside both. So a
 * peak just under the HBM is not a run that fits, and the verdict says where the spare is below the margin that
 * `flashring advise` keeps (DEFAULT_MARGIN), with what the measured runs reserved beside what they allocated.
 */
import { GIB, oomPoints, type SweepPoint } from './model.js';

/** The share of the HBM `advise` keeps free by default (its --margin; the page's advisor too): fits ≤ 90%. */
export const DEFAULT_MARGIN = 0.1;

/**
 * Max reserved over max allocated, the peak of each over a run's memory lines, in the committed Megatron-LM logs
 * (bench/results and test/fixtures, each distinct log once, every run in it with both figures): 302 runs on
 * 2026-12-07, 1.8–84.7 GiB allocated. test/headroom.test.ts computes them again from the logs.
 */
export const RESERVED_OVER_ALLOCATED = { runs: 302, median: 1.11, p90: 1.27, max: 1.69 } as const;

export interface Headroom {
  /** The peak is at most the HBM. */
  fits: boolean;
  /** It fits, with less than the margin to spare. */
  tight: boolean;
  /** HBM less the peak, GiB (negative: over). */
  spareGib: number;
  /** What is left or missing: '52.5 GiB spare', 'tight: 1.5 GiB (5.1%) spare', '7.5 GiB over'. */
  spare: string;
  /** The CLI's verdict after the total: 'fits in 80 GiB (52.5 GiB spare)', 'fits in 29 GiB, tight: …', 'DOES NOT FIT in 20 GiB (7.5 GiB over)'. */
  verdict: string;
  /** Why a tight fit may not run (what the model does not count, and the measured runs' reserve); null otherwise. */
  note: string | null;
}

/** A peak of `totalBytes` against `hbmGib`, with `margin` (a fraction of the HBM) as the spare below which it is tight. */
export function headroom(totalBytes: number, hbmGib: number, margin = DEFAULT_MARGIN): Headroom {
  const spareGib = hbmGib - totalBytes / GIB, fits = spareGib >= 0, tight = fits && spareGib < margin * hbmGib;
  const gib = `${Math.abs(spareGib).toFixed(1)} GiB`;
  const spare = !fits ? `${gib} over` : tight ? `tight: ${gib} (${((100 * spareGib) / hbmGib).toFixed(1)}%) spare` : `${gib} spare`;
  const verdict = `${fits ? 'fits' : 'DOES NOT FIT'} in ${hbmGib} GiB${tight ? `, ${spare}` : ` (${spare})`}`;
  const note = tight ? `${tightWhy(margin)}: this peak may not run` : null;
  return { fits, tight, spareGib, spare, verdict, note };
}

/** Why a tight peak may not run, before what that says of it ('this peak may not run'; the sweep: 'such peaks'). */
export function tightWhy(margin = DEFAULT_MARGIN): string {
  const r = RESERVED_OVER_ALLOCATED;
  return `under ${100 * margin}% of the HBM is spare (advise keeps that much free): the model counts allocated bytes, and Megatron-LM's ` +
    `allocator reserved a median ${r.median.toFixed(2)}× its peak allocated (${r.p90.toFixed(2)}× at the 90th percentile, ${r.max.toFixed(2)}× at most) ` +
    `in ${r.runs} measured runs, the CUDA context besides`;
}

/**
 * Each sweep line's longest length that fits (oomPoints), and where that one is tight (headroom()), the longest with
 * `margin` of the HBM spare (null: none): the CLI's sweep line and the page's planner say both.
 */
export function longestFitting(pts: SweepPoint[], hbmGib: number, margin = DEFAULT_MARGIN): { line: string; longest: number | null; roomy: number | null }[] {
  const all = oomPoints(pts), roomy = oomPoints(pts.filter((p) => !headroom(p.breakdown.totalBytes, hbmGib, margin).tight));
  return Object.entries(all).map(([line, longest]) => ({ line, longest, roomy: roomy[line] ?? null }));
}
