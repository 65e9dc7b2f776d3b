/**
 * When no layout fits (advise.ts's candidates() kept none): what would, each found by running the same
 * search again with one thing changed, not estimated: the HBM a GPU (the smallest layout's peak over the
 * share the margin leaves, checked by a search at it), more GPUs (doubling, whole nodes beyond one, with
 * the global batch advise would use there), a shorter sequence on the same GPUs (halving). Each goes only
 * so far (MAX_STEPS) and says what it tried. Pure; used by `flashring advise` and the page's advisor panel.
 */
import { candidates, layoutLabel, fitsText, type AdviseRequest, type AdviseResult, type AdviseWords, type Candidate } from './advise.js';
import { GIB } from './model.js';
import { counted } from '../plural.js';

/** How many doublings of the GPUs, and halvings of the sequence, are searched: up to 64× the GPUs, down to 1/64 of the sequence. */
export const MAX_STEPS = 6;
/** The most GPUs advise takes (--gpus). */
export const MAX_GPUS = 65536;

/** One change searched: the values tried, in order, up to the first at which some layout fits. */
export interface Remedy {
  tried: number[];
  /** The first value of `tried` at which a layout fits (null: none did). */
  at: number | null;
  /** How many layouts fit there, the fastest, and the global batch (sequences) that search used (0 and nulls where none fits). */
  layouts: number; fastest: Candidate | null; globalBatch: number | null;
}

export interface WouldFit {
  /** The HBM a GPU, in GiB rounded up to 0.1, at which the smallest layout fits with the margin (null when no layout divides the model). */
  hbmGib: Remedy | null;
  /** GPU counts, doubling from the request's (whole nodes of `gpusPerNode` beyond one node). */
  gpus: Remedy;
  /** Sequence lengths on the request's GPUs, halving from the request's. */
  seqLength: Remedy;
}

/**
 * The GPU counts searched: each double the last, but one whole node where that is past a node's GPUs (beyond one
 * node --gpus is whole nodes, and so are their doubles); MAX_STEPS of them, none over MAX_GPUS.
 */
export function moreGpus(gpus: number, perNode: number): number[] {
  const out: number[] = [];
  for (let n = gpus, i = 0; i < MAX_STEPS; i++) {
    n = n < perNode ? Math.min(2 * n, perNode) : 2 * n;
    if (n > MAX_GPUS) break;
    out.push(n);
  }
  return out;
}

/** The sequence lengths searched: each half the last, while a whole number of tokens; MAX_STEPS of them. */
export function shorterSequences(seqLength: number): number[] {
  const out: number[] = [];
  for (let s = seqLength / 2; out.length < MAX_STEPS && Number.isInteger(s) && s >= 1; s /= 2) out.push(s);
  return out;
}

/** Searches the request changed by `change` at each value in turn, up to the first at which a layout fits. */
function firstFit(values: number[], change: (v: number) => AdviseRequest): Remedy {
  const tried: number[] = [];
  for (const v of values) {
    tried.push(v);
    const q = change(v), res = candidates(q, undefined, true);
    if (res.fitting.length) return { tried, at: v, layouts: res.fitting.length, fastest: res.fitting[0], globalBatch: q.gbs };
  }
  return { tried, at: null, layouts: 0, fastest: null, globalBatch: null };
}

/**
 * wouldFit's three searches, each run only when called: the page's fallback (no worker) runs them one a task,
 * yielding to its event loop between them. `batchPerGpu`: as wouldFit's.
 */
export function wouldFitSearches(r: AdviseRequest, res: AdviseResult, batchPerGpu: boolean): { [K in keyof WouldFit]: () => WouldFit[K] } {
  // The peaks do not depend on the HBM: the smallest layout's, over the share kept, is the least HBM at which any fits.
  const hbm = res.smallest ? Math.ceil((10 * res.smallest.bytes) / GIB / (1 - r.margin)) / 10 : null;
  return {
    hbmGib: () => (hbm === null ? null : firstFit([hbm], (v) => ({ ...r, hbmGib: v }))),
    gpus: () => firstFit(moreGpus(r.gpus, r.gpusPerNode ?? 8), (n) => ({ ...r, gpus: n, gbs: batchPerGpu ? (n * r.gbs) / r.gpus : r.gbs })),
    seqLength: () => firstFit(shorterSequences(r.base.seqLength), (s) => ({ ...r, base: { ...r.base, seqLength: s } })),
  };
}

/**
 * What would fit where `res` (candidates(r)) has nothing that does. `batchPerGpu`: the global batch was advise's
 * default (one sequence a GPU), so it grows with the GPUs; else it is the one given, kept.
 */
export function wouldFit(r: AdviseRequest, res: AdviseResult, batchPerGpu: boolean): WouldFit {
  const s = wouldFitSearches(r, res, batchPerGpu);
  return { hbmGib: s.hbmGib(), gpus: s.gpus(), seqLength: s.seqLength() };
}

/** '1 layout fits, TP=… (… ms/step, … GiB)', '28 layouts fit, the fastest TP=… (…)': the step time in a front end's words. */
const fastestText = (x: Remedy, words: AdviseWords) =>
  `${counted(x.layouts, 'layout')} ${x.layouts === 1 ? 'fits,' : 'fit, the fastest'} ${layoutLabel(x.fastest!)} (${words.stepTime(x.fastest!.iterMs)}, ${(x.fastest!.totalBytes / GIB).toFixed(1)} GiB)`;

/** The lines advise prints after its verdict when nothing fits, in a front end's words (`words`): a heading, then one line for each change searched. */
export function wouldFitLines(r: AdviseRequest, res: AdviseResult, w: WouldFit, batchPerGpu: boolean, words: AdviseWords): string[] {
  const out = ['what would fit (the same search again, one thing changed):'];
  if (w.hbmGib && res.smallest)
    out.push(w.hbmGib.at === null ? `  HBM: nothing fits ${w.hbmGib.tried[0]} GiB a GPU either, though the smallest layout's peak is ${(res.smallest.bytes / GIB).toFixed(1)} GiB`
      : `  HBM: ${w.hbmGib.at} GiB a GPU (the smallest layout's ${(res.smallest.bytes / GIB).toFixed(1)} GiB, ${fitsText(r.margin)}): ${fastestText(w.hbmGib, words)}`);
  const g = w.gpus, batch = batchPerGpu ? 'one sequence a GPU' : 'as given';
  if (!g.tried.length) out.push(`  GPUs: none searched (${words.gpusAtMost(r.gpus)})`);
  else if (g.at === null) out.push(`  GPUs: nothing fits on up to ${g.tried.at(-1)} (doubling from ${r.gpus}: ${g.tried.join(', ')})`);
  else out.push(`  GPUs: ${g.at} (doubling from ${r.gpus}: ${g.tried.join(', ')}; global batch ${g.globalBatch} sequences, ${batch}): ${fastestText(g, words)}`);
  const s = w.seqLength;
  if (!s.tried.length) out.push(`  sequence: none searched (${r.base.seqLength} tokens does not halve)`);
  else if (s.at === null) out.push(`  sequence: nothing fits on these GPUs down to ${s.tried.at(-1)} tokens (halving from ${r.base.seqLength}: ${s.tried.join(', ')})`);
  else out.push(`  sequence: ${s.at} tokens on these GPUs (halving from ${r.base.seqLength}: ${s.tried.join(', ')}): ${fastestText(s, words)}`);
  return out;
}
