/**
 * When no layout fits (advise.ts's candidates() kept none): what would, each found by running the same
 * search again with one thing changed, not estimated: the HBM a GPU (the smallest layout's peak over the
 * share the margin leaves, checked by a search at it), more GPUs (doubling, whole nodes beyond one, with
 * the global batch advise would use there, then the fewest that fits between the last two doublings), a
 * shorter sequence on the same GPUs (halving). Each goes only so far (MAX_STEPS, MAX_BETWEEN) and says what
 * it tried. Pure, in steps (Steps); used by `flashring advise` and the page's advisor panel (each with its
 * own words: AdviseWords).
 */
import { candidates, layoutLabel, fitsText, type AdviseRequest, type AdviseResult, type AdviseWords, type Candidate } from './advise.js';
import { GIB, type ParallelConfig } from './model.js';
import { GPUS_PER_NODE } from './time/iteration.js';
import { counted } from '../plural.js';

/** How many doublings of the GPUs (each rounded up to a count advise takes: moreGpus), and halvings of the sequence, are searched: 64× the GPUs or more, down to 1/64 of the sequence. */
export const MAX_STEPS = 6;
/** The most GPUs advise takes (--gpus). */
export const MAX_GPUS = 65536;
/**
 * How many GPU counts between the last doubling that does not fit and the first that does are searched at most, each a
 * whole search as a doubling's: every one where there are no more (below 8 GPUs, or up to 8 nodes of 8 past 64), else some.
 */
export const MAX_BETWEEN = 7;

/** One change searched: the values tried, in order, up to the first at which some layout fits. */
export interface Remedy {
  tried: number[];
  /** The first value of `tried` at which a layout fits (null: none did); for the GPUs, the fewest that fits of those searched. */
  at: number | null;
  /** How many layouts fit there, the fastest, and the global batch (sequences) that search used (0 and nulls where none fits). */
  layouts: number; fastest: Candidate | null; globalBatch: number | null;
}

/** The GPU counts advise takes between the last doubling that did not fit and the first that did, and those searched. */
export interface Between {
  /** The last count that did not fit (the request's, or a doubling) and the first doubling that did. */
  from: number; to: number;
  /** How many counts advise takes lie between them (takesGpus). */
  counts: number;
  /** Those searched, in the order searched (ascending within each pass: fewestBetween). */
  searched: number[];
  /** How many of them below the answer (`at`) were not searched: 0, it is the fewest that fits of every count from `from` on. */
  notSearched: number;
}

/** More GPUs: the doublings `tried`, then the counts between the last two (`between`, null where no doubling fits); `at` the fewest that fits. */
export interface GpuRemedy extends Remedy { between: Between | null }

export interface WouldFit {
  /** The HBM a GPU, in GiB rounded up to 0.1, at which the smallest layout fits with the margin (null when no layout divides the model). */
  hbmGib: Remedy | null;
  /** GPU counts, doubling from the request's (whole nodes of `gpusPerNode` beyond one node), then between the last two. */
  gpus: GpuRemedy;
  /** Sequence lengths on the request's GPUs, halving from the request's. */
  seqLength: Remedy;
}

/**
 * The GPU counts searched: each double the last, but one whole node where that is past a node's GPUs (beyond one
 * node --gpus is whole nodes, and so are their doubles), rounded up to the next count `takes` accepts (advise's:
 * takesGpus; with an EP of 3 on nodes of 8, 3 GPUs double to 6, then 24, 48, …: 8 and 16 are no multiples of 3, and
 * dropping them, not rounding, ended the search at 6); MAX_STEPS of them, none over MAX_GPUS: where a count would
 * pass it, the most advise takes (MAX_GPUS in whole nodes, the largest `takes` accepts) is the last.
 */
export function moreGpus(gpus: number, perNode: number, takes: (n: number) => boolean = () => true): number[] {
  const out: number[] = [];
  for (let n = gpus, i = 0; i < MAX_STEPS; i++) {
    n = n < perNode ? Math.min(2 * n, perNode) : 2 * n;
    while (n <= MAX_GPUS && !takes(n)) n++;
    if (n > MAX_GPUS) {
      let most = notWholeNodes(MAX_GPUS, perNode)?.below ?? MAX_GPUS;
      const last = out.at(-1) ?? gpus;
      while (most > last && !takes(most)) most--;
      if (most > last) out.push(most);
      break;
    }
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

/** The request on `gpus` GPUs, with the global batch advise would use there (`batchPerGpu`: one sequence a GPU; else the one given). */
const onGpus = (r: AdviseRequest, gpus: number, batchPerGpu: boolean): AdviseRequest => ({ ...r, gpus, gbs: batchPerGpu ? (gpus * r.gbs) / r.gpus : r.gbs });

/**
 * Why advise does not take a GPU count (gpusRefusal), with what each front end's words need: more than MAX_GPUS;
 * not whole nodes of `perNode` beyond one node (the nearest counts that are: `below` and `above`); a global batch
 * `gbs` that is no whole number of micro batches of `micro`; an EP that does not divide the GPUs.
 */
export type GpusRefusal =
  | { why: 'too-many'; most: number }
  | { why: 'whole-nodes'; perNode: number; below: number; above: number }
  | { why: 'micro-batch'; gbs: number; micro: number }
  | { why: 'expert-parallel'; ep: number };

/**
 * `gpus` GPUs in nodes of `perNode` where advise does not take them: more than one node and not whole nodes (Megatron-LM
 * runs under torchrun, which launches as many ranks on every node), with the nearest whole-node counts below and above
 * (12 of 8: 8 and 16); null for one node or whole nodes.
 */
export function notWholeNodes(gpus: number, perNode: number): Extract<GpusRefusal, { why: 'whole-nodes' }> | null {
  const below = gpus - (gpus % perNode);
  return gpus <= perNode || below === gpus ? null : { why: 'whole-nodes', perNode, below, above: below + perNode };
}

/** A global batch of `gbs` sequences that is no whole number of micro batches of `micro` (Megatron-LM: global batch = micro batch × DP × micro batches a step); else null. */
export const notWholeMicroBatches = (gbs: number, micro: number): Extract<GpusRefusal, { why: 'micro-batch' }> | null =>
  Number.isInteger(gbs) && gbs % micro === 0 ? null : { why: 'micro-batch', gbs, micro };

/** An EP that does not divide `gpus` GPUs (EP_GROUPS: within the DP × CP ranks, which divide them); else null. */
export const notDividedByEp = (gpus: number, ep: number): Extract<GpusRefusal, { why: 'expert-parallel' }> | null => (gpus % ep ? { why: 'expert-parallel', ep } : null);

/** What gpusRefusal reads of a request. */
export type GpusAsked = Pick<AdviseRequest, 'gpus' | 'gpusPerNode' | 'gbs'> & { base: Pick<ParallelConfig, 'microBatchSize' | 'expertParallel'> };

/**
 * Why advise does not take the request `q`'s GPU count, the first reason in the order the CLI checks its flags
 * (src/cli/advise.ts, after --gpus' own range): at most MAX_GPUS, whole nodes beyond one, a global batch of whole
 * micro batches, an EP that divides the GPUs (EP divides DP × CP, which divide them); null where it takes it.
 */
export function gpusRefusal(q: GpusAsked): GpusRefusal | null {
  if (q.gpus > MAX_GPUS) return { why: 'too-many', most: MAX_GPUS };
  return notWholeNodes(q.gpus, q.gpusPerNode ?? GPUS_PER_NODE) ?? notWholeMicroBatches(q.gbs, q.base.microBatchSize) ?? notDividedByEp(q.gpus, q.base.expertParallel ?? 1);
}

/** Whether advise takes the request `q`'s GPU count (gpusRefusal has no reason against it). */
export const takesGpus = (q: AdviseRequest): boolean => gpusRefusal(q) === null;

/**
 * A search in steps: it yields before each whole search (candidates()), so that the page's fallback (no worker) can
 * handle its events between them; finish() runs one through at once.
 */
export type Steps<T> = Generator<void, T, undefined>;

export function finish<T>(steps: Steps<T>): T {
  for (;;) {
    const x = steps.next();
    if (x.done) return x.value;
  }
}

/** One search of the request `q` (after a yield): its value `v` with what fits there, or null where nothing does. */
function* fitAt(q: AdviseRequest, v: number): Steps<Omit<Remedy, 'tried'> | null> {
  yield;
  const res = candidates(q, undefined, true);
  return res.fitting.length ? { at: v, layouts: res.fitting.length, fastest: res.fitting[0], globalBatch: q.gbs } : null;
}

/** Searches the request changed by `change` at each value in turn, up to the first at which a layout fits. */
function* firstFit(values: number[], change: (v: number) => AdviseRequest): Steps<Remedy> {
  const tried: number[] = [];
  for (const v of values) {
    tried.push(v);
    const fit = yield* fitAt(change(v), v);
    if (fit) return { tried, ...fit };
  }
  return { tried, at: null, layouts: 0, fastest: null, globalBatch: null };
}

/**
 * The fewest of `counts` (ascending, all above a count that does not fit and below one that does) at which a layout fits,
 * searching at most MAX_BETWEEN of them: all in turn where the searches left reach, else half the searches left at evenly
 * spaced counts, in turn; then again between the last that did not fit and the first that did, while searches are left.
 * What it searched, and the fewest that fits of those (null: none).
 */
function* fewestBetween(counts: number[], change: (n: number) => AdviseRequest): Steps<{ searched: number[]; best: Omit<Remedy, 'tried'> | null }> {
  const searched: number[] = [];
  let best: Omit<Remedy, 'tried'> | null = null, lo = 0, hi = counts.length;   // counts[lo, hi): unsearched, past the last that did not fit, below the first that did
  while (lo < hi && searched.length < MAX_BETWEEN) {
    const left = MAX_BETWEEN - searched.length, start = lo, n = hi - lo, k = n <= left ? n : Math.max(1, Math.floor(left / 2));
    // k of the n counts, evenly spaced (k = n: every one), in turn up to the first that fits
    for (let i = 1; i <= k; i++) {
      const j = start + Math.floor((i * n) / (k + 1)), fit = yield* fitAt(change(counts[j]), counts[j]);
      searched.push(counts[j]);
      if (fit) {
        [best, hi] = [fit, j];
        break;
      }
      lo = j + 1;
    }
  }
  return { searched, best };
}

/**
 * More GPUs: the doublings (moreGpus) up to the first at which a layout fits, then, for the fewest that fits, the counts advise
 * takes (takesGpus) between it and the last that did not (the request's count or a doubling), as fewestBetween searches them.
 */
export function* fewestGpus(r: AdviseRequest, batchPerGpu: boolean): Steps<GpuRemedy> {
  const change = (n: number) => onGpus(r, n, batchPerGpu);
  // Only counts advise takes (an EP or micro batch a doubling does not divide would be refused), as between them.
  const up = yield* firstFit(moreGpus(r.gpus, r.gpusPerNode ?? GPUS_PER_NODE, (n) => takesGpus(change(n))), change);
  if (up.at === null) return { ...up, between: null };
  const from = up.tried.at(-2) ?? r.gpus, to = up.at;
  const counts = Array.from({ length: to - from - 1 }, (_, i) => from + 1 + i).filter((n) => takesGpus(change(n)));
  const { searched, best } = yield* fewestBetween(counts, change), at = best?.at ?? to;
  const notSearched = counts.filter((n) => n < at && !searched.includes(n)).length;
  return { ...up, ...best, between: { from, to, counts: counts.length, searched, notSearched } };
}

/**
 * What would fit where `res` (candidates(r)) has nothing that does: its three searches in turn, in steps (Steps: one whole
 * search a step), so that the page's fallback (no worker) yields to its event loop between searches. `batchPerGpu`: the
 * global batch was advise's default (one sequence a GPU), so it grows with the GPUs; else it is the one given, kept.
 */
export function* wouldFitSteps(r: AdviseRequest, res: AdviseResult, batchPerGpu: boolean): Steps<WouldFit> {
  // The peaks do not depend on the HBM: the smallest layout's, over the share kept, is the least HBM at which any fits.
  const hbm = res.smallest ? Math.ceil((10 * res.smallest.bytes) / GIB / (1 - r.margin)) / 10 : null;
  const hbmGib = hbm === null ? null : yield* firstFit([hbm], (v) => ({ ...r, hbmGib: v }));
  const gpus = yield* fewestGpus(r, batchPerGpu);
  const seqLength = yield* firstFit(shorterSequences(r.base.seqLength), (s) => ({ ...r, base: { ...r.base, seqLength: s } }));
  return { hbmGib, gpus, seqLength };
}

/** wouldFitSteps run through at once (the CLI, the page's worker). */
export const wouldFit = (r: AdviseRequest, res: AdviseResult, batchPerGpu: boolean): WouldFit => finish(wouldFitSteps(r, res, batchPerGpu));

/** '1 layout fits, TP=… (… ms/step, … GiB)', '28 layouts fit, the fastest TP=… (…)': the step time in a front end's words. */
const fastestText = (x: Remedy, words: AdviseWords) =>
  `${counted(x.layouts, 'layout')} ${x.layouts === 1 ? 'fits,' : 'fit, the fastest'} ${layoutLabel(x.fastest!)} (${words.time(x.fastest!.iterMs)}/step, ${(x.fastest!.totalBytes / GIB).toFixed(1)} GiB)`;

/**
 * The GPUs' line: the fewest that fits of the counts searched, which it lists (the doublings, then those between the last
 * two: each in turn, or how many of how many there), or how far the doublings went.
 */
function gpusLine(r: AdviseRequest, g: GpuRemedy, batchPerGpu: boolean, words: AdviseWords): string {
  // None searched: no count above the request's is one advise takes (moreGpus rounds up to one), or twice it is past MAX_GPUS.
  if (!g.tried.length) {
    if (moreGpus(r.gpus, r.gpusPerNode ?? GPUS_PER_NODE).length)
      return `  GPUs: none searched (${words.advisor} takes no count above ${r.gpus} up to ${MAX_GPUS}: each must be whole nodes, a multiple of the EP ${r.base.expertParallel ?? 1} and of whole micro batches of ${r.base.microBatchSize})`;
    return `  GPUs: none searched (${r.gpus < MAX_GPUS ? `twice ${r.gpus} is past the most: ` : ''}${words.gpusAtMost(MAX_GPUS)})`;
  }
  // Where a doubling was not a count advise takes, the count searched is the next one that is (moreGpus).
  const rounded = g.tried.some((n, i) => n !== moreGpus(r.gpus, r.gpusPerNode ?? GPUS_PER_NODE)[i]);
  const doubling = `doubling from ${r.gpus}${rounded ? `, each rounded up to a count ${words.advisor} takes` : ''}: ${g.tried.join(', ')}`, b = g.between;
  if (g.at === null || !b) return `  GPUs: nothing fits on up to ${g.tried.at(-1)} (${doubling})`;
  const list = [...b.searched].sort((x, y) => x - y).join(', ');
  // Every count searched, or every one up to the answer (those above it need no search), or some of them.
  const how = b.notSearched ? `${b.searched.length} of its ${b.counts} counts` : b.searched.length === b.counts ? 'each count in turn' : `each count up to ${g.at} in turn`;
  const between = !b.counts ? `none to search between ${b.from} and ${b.to}` : `between ${b.from} and ${b.to}, ${how}: ${list}`;
  return `  GPUs: ${g.at}, the fewest that fits of those searched (${doubling}; ${between}; global batch ${counted(g.globalBatch!, 'sequence')}, ${batchPerGpu ? 'one sequence a GPU' : 'as given'}): ${fastestText(g, words)}`;
}

/** The lines advise prints after its verdict when nothing fits, in a front end's words (`words`): a heading, then one line for each change searched. */
export function wouldFitLines(r: AdviseRequest, res: AdviseResult, w: WouldFit, batchPerGpu: boolean, words: AdviseWords): string[] {
  const out = ['what would fit (the same search again, one thing changed):'];
  if (w.hbmGib && res.smallest)
    out.push(w.hbmGib.at === null ? `  HBM: nothing fits ${w.hbmGib.tried[0]} GiB a GPU either, though the smallest layout's peak is ${(res.smallest.bytes / GIB).toFixed(1)} GiB`
      : `  HBM: ${w.hbmGib.at} GiB a GPU (the smallest layout's ${(res.smallest.bytes / GIB).toFixed(1)} GiB, ${fitsText(r.margin)}): ${fastestText(w.hbmGib, words)}`);
  out.push(gpusLine(r, w.gpus, batchPerGpu, words));
  const s = w.seqLength;
  if (!s.tried.length) out.push(`  sequence: none searched (${counted(r.base.seqLength, 'token')} does not halve)`);
  else if (s.at === null) out.push(`  sequence: nothing fits on these GPUs down to ${counted(s.tried.at(-1)!, 'token')} (halving from ${r.base.seqLength}: ${s.tried.join(', ')})`);
  else out.push(`  sequence: ${counted(s.at, 'token')} on these GPUs (halving from ${r.base.seqLength}: ${s.tried.join(', ')}): ${fastestText(s, words)}`);
  return out;
}
