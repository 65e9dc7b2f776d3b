/**
 * The advisor (issue 36): for a model, a sequence length and the GPUs (count, HBM, link), every
 * layout of TP × CP (× --cp-comm-type) × PP × recompute × distributed optimizer that divides the
 * GPUs and the model; keeps those whose predicted peak (model.ts) fits the HBM with a margin, ranks
 * them by predicted step time for the same global batch (time/: the H200 profile's rates), and says
 * why: which term forced CP, what recompute costs in time, which communication is not hidden. Layouts
 * Megatron-LM cannot train at any size (untrainable.ts) are left out, and counted with the reason.
 * Used by `flashring advise` (src/cli/advise.ts: flags and printing) and the page's advisor panel;
 * pure (no I/O). Also the step time of one layout as advise computes it, and what a line's
 * recomputation saves in memory and costs in time, for the page's planner.
 */
import { InputError } from '../errors.js';
import { GIB, memoryBreakdown, recomputeSpec, parseRecomputeSpec, type ModelConfig, type ParallelConfig, type CpCommType, CP_COMM_TYPES } from './model.js';
import { iterationTime } from './time/step.js';
import { GPUS_PER_NODE, INTER_NODE_LINK, type IterationTime } from './time/iteration.js';
import { LINKS, type Link } from '../cp/plan/linkModel.js';
import { untrainable } from './untrainable.js';
import { counted } from '../plural.js';
import { H200 } from './time/devices.js';

/** The recompute settings searched: none, Megatron-LM's default selective, the plot's "+ recompute", full. */
export const RECOMPUTE_CHOICES = ['none', 'selective', 'selective:core_attn+mlp', 'full:uniform/1'];

/**
 * The recompute settings for a model chunk of `chunkLayers` layers (a pipeline stage's, or L/(PP·VP)
 * interleaved): RECOMPUTE_CHOICES, and full recomputation of only some of each chunk's layers
 * (Megatron-LM's block method: the first N layers of each chunk recomputed, the others stored), N = a
 * quarter, a half and three quarters of them.
 */
export function recomputeChoices(chunkLayers: number): string[] {
  const blocks = [...new Set([0.25, 0.5, 0.75].map((f) => Math.round(f * chunkLayers)))].filter((n) => n >= 1 && n < chunkLayers);
  return [...RECOMPUTE_CHOICES, ...blocks.map((n) => `full:block/${n}`)];
}

/** Virtual pipeline stages searched: 1, and 2 where the pipeline has stages and each holds an even number of layers (interleaved 1F1B halves the bubble). */
const virtualChoices = (pp: number, stageLayers: number) => (pp > 1 && stageLayers % 2 === 0 ? [1, 2] : [1]);

export interface Candidate {
  /** sp: sequence parallelism with TP (false at TP = 1, and where s/CP does not split over the TP ranks). */
  tp: number; sp: boolean; cp: number; cpCommType: CpCommType | null; pp: number; vp: number; dp: number; recompute: string; distributedOptimizer: boolean;
  iterMs: number; totalBytes: number; tokensPerSecond: number; tflopsPerGpu: number; commFraction: number; time: IterationTime;
}

/** What the search takes: the model and the parallel settings it does not search (micro batch, stack, FlashAttention…), at `base.seqLength`. */
export interface AdviseRequest {
  model: ModelConfig; base: ParallelConfig; gpus: number; hbmGib: number;
  /** Fraction of the HBM kept free. */
  margin: number;
  /** Global batch in sequences (the CLI's default: one per GPU). */
  gbs: number;
  /** The link within a node; between nodes `interNodeLink` (default InfiniBand NDR), nodes of `gpusPerNode` GPUs (default 8; TP at most that, a TP group that spans two nodes priced on the link between them). */
  link: Link; interNodeLink?: Link; gpusPerNode?: number;
}

export interface AdviseResult {
  /** Layouts evaluated (valid for the model). */
  all: number;
  /** Those that fit, fastest first; of those whose step times tie, the smaller peak first (byStepTime). */
  fitting: Candidate[];
  /** The layout with the smallest peak, fitting or not (null when no layout divides the model). */
  smallest: { c: Candidate; bytes: number } | null;
  /** Valid layouts left out because Megatron-LM cannot train them at any size (untrainable.ts), by reason; not in `all`. */
  untrainable: { why: string; layouts: number }[];
  /** Layouts of the GPUs that the model or the global batch does not divide (heads, groups, layers, the sequence over CP, the batch over DP), by reason, most first; not in `all`. */
  skipped: Skipped[];
}

/** A setting a skipped layout's reason points to, for each front end to name in its own words (AdviseWords): the global batch. */
export type SkipHint = 'global-batch';

/**
 * Layouts skipped for one reason: `why` in the search's words (the memory model's own name Megatron-LM's flags), and where
 * a setting of advise's own would change it, `hint`: which (the CLI says '--global-batch-size sets it', the page its field).
 */
export interface Skipped {
  why: string; layouts: number; hint?: SkipHint;
  /** The memory model's refusal's flags (InputError.flags), as data for a front end that points at its own controls (requestRefusal); absent for the global batch's reason. */
  flags?: string[];
}

/**
 * How a front end says what advise's shared lines point to (skippedLines, nothingFits, adviseForward.ts's wouldFitLines):
 * the CLI names its flags (src/cli/advise.ts), the page its fields (web/advise.ts).
 */
export interface AdviseWords {
  /** What sets each hint's setting, said in brackets after the reason: '--global-batch-size sets it'. */
  hints: Record<SkipHint, string>;
  /** Where every skipped layout's reason is listed, after 'and 2 more reasons' ('--json lists every skipped layout's'); null: nowhere more. */
  allSkipped: string | null;
  /** The advisor as this front end names it in a sentence: 'advise' (the command), 'the advisor' (the page's panel). */
  advisor: string;
  /** That `gpus` (MAX_GPUS) is the most advise takes: '--gpus 65536 is as many as advise takes'. */
  gpusAtMost: (gpus: number) => string;
  /** A predicted time (a step's, a part of it): the CLI's '82800 ms' (wholeMs, as all its step times), the page's '82.8 s' (its duration). */
  time: (ms: number) => string;
  /** A reason in the memory model's words (which name Megatron-LM's flags) as this front end says it; left out: as it is. */
  modelWords?: (why: string) => string;
}

/** A skipped layout's reason in a front end's words (`w`): the model's words as it says them, and what sets the hint's setting. */
export function skipText(u: Pick<Skipped, 'why' | 'hint'>, w: AdviseWords): string {
  const why = w.modelWords ? w.modelWords(u.why) : u.why;
  return u.hint ? `${why} (${w.hints[u.hint]})` : why;
}

/** A layout searched; `sp` (default: with TP) is sequence parallelism. */
export type Layout = { tp: number; sp?: boolean; cp: number; pp: number; vp?: number; dp: number; cpCommType: CpCommType | undefined; recompute: string; distributedOptimizer: boolean };

/**
 * The layouts a search evaluated that reasons() compares candidates with (those at CP = 1, and those without recompute;
 * valid for the model, fitting or not, trainable or not), by configuration (parKey): their peak and step time, looked up
 * rather than computed again. Only these numbers are kept (the rest of a layout that does not fit is let go), and, once
 * a reason has said it, what a CP = 1 layout that does not fit needs (many candidates share one).
 */
export type Evaluated = Map<string, { totalBytes: number; iterMs: number; needs?: string }>;

/** A configuration's searched settings (the rest is the request's base): one key per layout the search makes. */
const parKey = (p: ParallelConfig) =>
  `${p.tensorParallel}|${p.sequenceParallel}|${p.contextParallel}|${p.cpCommType ?? ''}|${p.pipelineParallel}|${p.virtualStages}|${p.dataParallel}|${recomputeSpec(p)}|${p.distributedOptimizer}`;

const divisors = (n: number) => Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);

/**
 * Every layout the GPUs and the model allow (the memory model's validate() decides), evaluated; each also put in `seen`, where given.
 * `fitOnly`: a search only for what fits (adviseForward.ts): a layout over the HBM is counted, not timed, and `smallest` is of those that fit.
 */
export function candidates(r: AdviseRequest, seen?: Evaluated, fitOnly = false): AdviseResult {
  const out: Candidate[] = [], left = new Map<string, number>(), skipped = new Map<string, Skipped>();
  let all = 0, smallest: { c: Candidate; bytes: number } | null = null;
  // The PyTorch AMP stack (DDP with PyTorch's ring) has no TP, PP, CP types or distributed optimizer: only CP × DP is searched.
  const torch = r.base.stack === 'torch-amp';
  for (const tp of divisors(r.gpus).filter((t) => t <= (torch ? 1 : r.gpusPerNode ?? GPUS_PER_NODE)))
    for (const cp of divisors(r.gpus / tp))
      for (const pp of divisors(r.gpus / (tp * cp)).filter((p) => !torch || p === 1)) {
        const dp = r.gpus / (tp * cp * pp);
        const batchWhy = r.gbs % (dp * r.base.microBatchSize) ? `global batch ${r.gbs} is not divisible by DP × micro batch ${dp * r.base.microBatchSize}` : null;
        // Sequence parallelism with TP wherever it splits s/CP over the TP ranks; TP without it where it does not.
        const sp = tp > 1 && Number.isInteger(r.base.seqLength / cp / tp);
        const stageLayers = r.model.numLayers / pp;
        for (const cpCommType of cp > 1 ? (torch ? (['p2p'] as const) : CP_COMM_TYPES) : [undefined])
          for (const vp of virtualChoices(pp, stageLayers))
            // full recompute's block counts are of a model chunk's layers (L/(PP·VP)), as Megatron-LM applies them
            for (const recompute of recomputeChoices(stageLayers / vp))
              for (const distributedOptimizer of dp * cp > 1 && !torch ? [false, true] : [false]) {
                const l = { tp, cp, pp, vp, dp, cpCommType, recompute, distributedOptimizer, sp };
                const par = layoutConfig(r, l), c = batchWhy ?? evaluate(r, l, par, fitOnly);
                if (typeof c === 'string' || c instanceof InputError) {
                  const why = typeof c === 'string' ? c : c.message;
                  const u = skipped.get(why) ?? { why, layouts: 0, ...(typeof c === 'string' ? { hint: 'global-batch' as const } : { flags: [...c.flags] }) };
                  u.layouts++;
                  skipped.set(why, u);
                  continue;
                }
                if (seen && typeof c === 'object' && (cp === 1 || c.recompute === 'none')) seen.set(parKey(par), { totalBytes: c.totalBytes, iterMs: c.iterMs });
                const why = untrainable(r.model, par);
                if (why) {
                  left.set(why, (left.get(why) ?? 0) + 1);
                  continue;
                }
                all++;
                if (typeof c === 'number') continue;   // fitOnly: over the HBM, not timed
                if (!smallest || c.totalBytes < smallest.bytes) smallest = { c, bytes: c.totalBytes };
                if (fits(r, c.totalBytes)) out.push(c);
              }
      }
  const byCount = (m: Map<string, number>) => [...m].map(([why, layouts]) => ({ why, layouts }));
  return {
    all, fitting: out.sort(byStepTime), smallest, untrainable: byCount(left),
    skipped: [...skipped.values()].sort((a, b) => b.layouts - a.layouts),
  };
}

/**
 * The memory model's refusal of the request itself, whatever the layout: every layout of the search (`res`) skipped for one
 * and the same refusal (none evaluated, none left out as untrainable, the global batch's reason not among them: the expert
 * bias with the softmax score function, a position table shorter than the sequence). As the InputError the model threw,
 * its flags with it, for a front end to say once beside its control (the page's advisor: web/advise.ts) rather than
 * as every layout's reason; null where the layouts differ (some evaluated, or skipped for other reasons).
 */
export function requestRefusal(res: AdviseResult): InputError | null {
  const [u, ...others] = res.skipped;
  if (!u || others.length || res.all || res.untrainable.length || u.hint || !u.flags) return null;
  return new InputError(u.why, { flags: u.flags });
}

/** A step time to 12 significant digits: two layouts equal in it tie (a host-bound step lasts its launches whatever the layout, up to rounding). */
const stepKey = (c: Pick<Candidate, 'iterMs'>) => Number(c.iterMs.toPrecision(12));

/** Whether two layouts' predicted step times tie (stepKey). */
export const sameStepTime = (a: Pick<Candidate, 'iterMs'>, b: Pick<Candidate, 'iterMs'>): boolean => stepKey(a) === stepKey(b);

/** advise's ranking: the faster first, and of two that tie (sameStepTime) the smaller peak: the same step for less memory. */
export const byStepTime = (a: Candidate, b: Candidate): number => stepKey(a) - stepKey(b) || a.totalBytes - b.totalBytes;

/**
 * The skipped layouts for a person, in a front end's words (`w`): reasons that differ only in their last number (the TP, CP
 * or PP size, the DP × micro batch) as one line with the numbers listed; at most `max` lines, then how many more.
 */
export function skippedLines(skipped: Skipped[], w: AdviseWords, max = 5): string[] {
  const groups = new Map<string, { head: string; tail?: string; hint?: SkipHint; layouts: number; values: string[] }>();
  for (const u of skipped) {
    const m = /^(.*?)(\d+)(\D*)$/.exec(u.why), key = `${m ? `${m[1]}\u0000${m[3]}` : u.why}\u0000${u.hint ?? ''}`;
    const g = groups.get(key) ?? { head: m ? m[1] : u.why, tail: m?.[3], hint: u.hint, layouts: 0, values: [] };
    g.layouts += u.layouts;
    if (m) g.values.push(m[2]);
    groups.set(key, g);
  }
  const lines = [...groups.values()].sort((a, b) => b.layouts - a.layouts).map((g) => {
    const nums = [...new Set(g.values)].sort((a, b) => Number(a) - Number(b)).join(', ');
    return `${counted(g.layouts, 'layout')} skipped: ${skipText({ why: g.tail === undefined ? g.head : `${g.head}${nums}${g.tail}`, hint: g.hint }, w)}`;
  });
  if (lines.length <= max) return lines;
  return [...lines.slice(0, max), `and ${lines.length - max} more reasons${w.allSkipped ? ` (${w.allSkipped})` : ''}`];
}

/**
 * The parallel configuration of a layout: the request's base with the searched settings replaced, and with a
 * global batch (`gbs`) the micro batches a step (what 1F1B's first stage can hold in flight).
 */
export function layoutConfig(r: Pick<AdviseRequest, 'base'> & { gbs?: number }, l: Layout): ParallelConfig {
  return {
    ...r.base, recomputeModules: undefined, recomputeMethod: undefined, recomputeNumLayers: undefined, ...parseRecomputeSpec(l.recompute),
    tensorParallel: l.tp, contextParallel: l.cp, pipelineParallel: l.pp, dataParallel: l.dp, sequenceParallel: l.tp > 1 && (l.sp ?? true),
    cpCommType: l.cpCommType, distributedOptimizer: l.distributedOptimizer, virtualStages: l.vp ?? 1,
    numMicrobatches: r.gbs !== undefined && Number.isInteger(r.gbs / (l.dp * r.base.microBatchSize)) ? r.gbs / (l.dp * r.base.microBatchSize) : undefined,
  };
}

/** A layout's step time for the request's global batch (`par`: layoutConfig's, DP of it), on the request's links. */
const stepTime = (r: AdviseRequest, par: ParallelConfig): IterationTime =>
  iterationTime(r.model, par, { link: r.link, interNodeLink: r.interNodeLink, gpusPerNode: r.gpusPerNode, microBatches: r.gbs / (par.dataParallel * par.microBatchSize) });

/**
 * A layout (its configuration `par`, layoutConfig's) with its peak and step time, or the model's refusal of it (validate()'s InputError);
 * `fitOnly`: only its peak (a number) where that is over the HBM.
 */
function evaluate(r: AdviseRequest, l: Layout, par: ParallelConfig, fitOnly: boolean): Candidate | InputError | number {
  let totalBytes: number, time: IterationTime;
  try {
    totalBytes = memoryBreakdown(r.model, par).totalBytes;
    if (fitOnly && !fits(r, totalBytes)) return totalBytes;
    time = stepTime(r, par);
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  return {
    tp: l.tp, sp: par.sequenceParallel, cp: l.cp, cpCommType: l.cpCommType ?? null, pp: l.pp, vp: par.virtualStages, dp: l.dp, recompute: recomputeSpec(par), distributedOptimizer: l.distributedOptimizer,
    iterMs: time.iterMs, totalBytes, tokensPerSecond: time.tokensPerSecond, tflopsPerGpu: time.tflopsPerGpu, commFraction: time.commFraction, time,
  };
}

const term = (t: IterationTime, name: string) => t.terms.find((x) => x.name === name)?.ms ?? 0;
const pctOf = (x: number, c: Candidate) => `${((100 * x) / c.iterMs).toFixed(0)}%`;

/**
 * What CP = 1 would be for this candidate (the same TP, PP, recompute and optimizer, DP × CP data-parallel ranks, with SP
 * where s splits over the TP ranks, as the search lays it out): what it needs where it does not fit, else whether it is
 * slower or faster (its step time, as the search computes it: looked up in `seen` where the search evaluated it) or
 * cannot split the global batch.
 */
function cpReason(r: AdviseRequest, c: Candidate, seen: Evaluated | undefined, t: AdviseWords['time']): string {
  const dp = c.dp * c.cp, one = layoutConfig(r, { ...c, cp: 1, dp, cpCommType: undefined, sp: c.tp > 1 && Number.isInteger(r.base.seqLength / c.tp) });
  const twin = seen?.get(parKey(one));
  try {
    const b = twin ? null : memoryBreakdown(r.model, one), total = twin?.totalBytes ?? b!.totalBytes;
    if (!fits(r, total)) {
      const needs = twin ? (twin.needs ??= needsOf(memoryBreakdown(r.model, one))) : needsOf(b!);
      return `CP=${c.cp}: at CP=1 the same layout needs ${needs}`;
    }
    if (r.gbs % (dp * one.microBatchSize)) return `CP=${c.cp}: at CP=1 the same layout fits (${gib(total)}), but its DP ${dp} × micro batch ${one.microBatchSize} does not divide the global batch ${r.gbs}`;
    const ms = twin?.iterMs ?? stepTime(r, one).iterMs;
    // Equal as the step times are printed (`t`): 'as fast as', not a 'faster' beside the same number.
    if (t(ms) === t(c.iterMs)) return `CP=${c.cp} is as fast as CP=1 here (the same layout at CP=1 fits too: ${gib(total)}, ${t(ms)})`;
    return ms < c.iterMs ? `CP=${c.cp} is slower than CP=1 here: the same layout at CP=1 fits (${gib(total)}) and takes ${t(ms)}`
      : `CP=${c.cp} is faster than CP=1 here (the same layout at CP=1 fits too: ${gib(total)}, ${t(ms)})`;
  } catch (e) {
    if (!(e instanceof InputError)) throw e;   // a bug, not a layout the model refuses
    return `CP=${c.cp}: CP=1 is not a valid layout here`;
  }
}

const gib = (bytes: number) => `${(bytes / GIB).toFixed(1)} GiB`;

/** What a layout that does not fit needs (`b`: its breakdown): its peak and its largest term, '131.2 GiB (largest: …, 40.0 GiB)'. */
function needsOf(b: ReturnType<typeof memoryBreakdown>): string {
  const big = [...b.layerGroups.flatMap((g) => g.terms.map((t) => ({ name: t.name, bytes: t.bytes * g.layers }))), ...b.outside, ...(b.peakTransient ? [{ name: b.peakTransient.name, bytes: b.peakTransient.netBytes }] : [])]
    .sort((x, y) => y.bytes - x.bytes)[0];
  return `${gib(b.totalBytes)} (largest: ${big.name}, ${gib(big.bytes)})`;
}

/**
 * What recompute costs this candidate: its step less the same layout's without recompute (as the search times it; looked
 * up in `seen` where the search evaluated it), which is more than the forward run again where it brings communication
 * again (TP, CP) and a longer pipeline bubble; and where that layout does not fit the HBM, its peak (why recompute).
 */
function recomputeReason(r: AdviseRequest, c: Candidate, seen: Evaluated | undefined, t: AdviseWords['time']): string {
  const none = layoutConfig(r, { ...c, cpCommType: c.cpCommType ?? undefined, recompute: 'none' }), twin = seen?.get(parKey(none));
  const without = twin?.iterMs ?? stepTime(r, none).iterMs, bytes = twin?.totalBytes ?? memoryBreakdown(r.model, none).totalBytes;
  const over = fits(r, bytes) ? '' : ` (does not fit: ${gib(bytes)})`;
  const cost = c.iterMs - without, again = term(c.time, 'recompute');
  return `recompute ${c.recompute} costs ${t(cost)} (${pctOf(cost, c)} of the step; without it ${t(without)}${over}${t(cost) !== t(again) ? `; the forward run again ${t(again)} of it` : ''})`;
}

/**
 * Why this candidate: what CP = 1 would need (or how it compares), what recompute costs, which communication is exposed.
 * `seen`: the search's layouts (candidates()), whose times the comparisons take rather than compute them again. `t`: times in
 * a front end's words (AdviseWords.time; the CLI's whole ms by default).
 */
export function reasons(r: AdviseRequest, c: Candidate, seen?: Evaluated, t: AdviseWords['time'] = wholeMs): string[] {
  const out: string[] = c.cp > 1 ? [cpReason(r, c, seen, t)] : [];
  if (c.recompute !== 'none') out.push(recomputeReason(r, c, seen, t));
  out.push(commReason(c, t));
  return out;
}

/** The kinds of communication (and the pipeline's fill and drain) a step may leave exposed, as its terms name them. */
const COMM_TERMS = ['tp-comm', 'cp-comm', 'ep-comm', 'dp-comm', 'pp-comm', 'pipeline-bubble'] as const;

/**
 * Which communication is not hidden: each kind over 3% of the step ('not hidden: tp-comm 5 ms (5%)'); else, where some is
 * exposed, that each kind is 3% of the step or less, naming them, as they add up to the layout's comm %, which may pass 3%
 * ('each kind of communication 3% of the step or less: tp-comm 2%, cp-comm 1%, dp-comm 1%', shares alone: small times
 * would read to a tenth of a ms on the page and to whole ms in the CLI); else that it is all hidden.
 */
function commReason(c: Candidate, t: AdviseWords['time']): string {
  const kinds = COMM_TERMS.map((n) => [n, term(c.time, n)] as const).filter(([, ms]) => ms > 0);
  const said = (list: typeof kinds) => list.map(([n, ms]) => `${n} ${t(ms)} (${pctOf(ms, c)})`).join(', ');
  const over = kinds.filter(([, ms]) => ms / c.iterMs > 0.03);
  if (over.length) return `not hidden: ${said(over)}`;
  return kinds.length ? `each kind of communication 3% of the step or less: ${kinds.map(([n, ms]) => `${n} ${pctOf(ms, c)}`).join(', ')}` : 'communication hidden';
}

/**
 * The links a request's groups run on, as advise's header and the page's caption say them: 'link nvlink-h200', and beyond one
 * node ' within nodes of 8 GPUs, ib-ndr between them' (groupLinks' rule: a group that spans nodes runs at the link between them).
 */
export const linksText = (r: Pick<AdviseRequest, 'gpus' | 'link' | 'interNodeLink' | 'gpusPerNode'>): string => {
  const node = r.gpusPerNode ?? GPUS_PER_NODE;
  return `link ${r.link.name}${r.gpus > node ? ` within nodes of ${node} GPUs, ${(r.interNodeLink ?? INTER_NODE_LINK).name} between them` : ''}`;
};

/**
 * The end of advise's header and the page's caption: the links, the global batch and the rates ('link nvlink-h200,
 * global batch 1 sequence; rates: NVIDIA H200 profile').
 */
export const setupText = (r: Pick<AdviseRequest, 'gpus' | 'link' | 'interNodeLink' | 'gpusPerNode' | 'gbs'>): string =>
  `${linksText(r)}, global batch ${counted(r.gbs, 'sequence')}; rates: ${H200.name} profile`;

/** A count of layouts left out, and why, in a front end's words: '1 layout left out: …'. */
export const leftOutText = (u: { layouts: number; why: string }, words: (why: string) => string = (x) => x): string => `${counted(u.layouts, 'layout')} left out: ${words(u.why)}`;

/** A time as the CLI prints every step time: whole ms ('82800 ms'). */
export const wholeMs = (ms: number): string => `${ms.toFixed(0)} ms`;

/** Whether a peak of `bytes` fits a GPU of the request: its HBM less the margin kept (fitsText's words). */
export const fits = (r: Pick<AdviseRequest, 'hbmGib' | 'margin'>, bytes: number): boolean => bytes <= r.hbmGib * GIB * (1 - r.margin);

/**
 * The share of the HBM a kept layout may fill, as advise's header and the page's caption say it: 'fits ≤ 90%'
 * for a margin of 0.1, 'fits ≤ 87.5%' for 0.125: the decimals the percentage needs, up to two.
 */
export const fitsText = (margin: number): string => `fits ≤ ${Number((100 * (1 - margin)).toFixed(2))}%`;

/** Tokens per second, scaled to K, M, G or T (one decimal) where that is at least 1: `371.1M tokens/s`, not `371140.2K`. */
export function tokensPerSecondText(n: number): string {
  const units = [[1, ''], [1e3, 'K'], [1e6, 'M'], [1e9, 'G'], [1e12, 'T']] as const;
  let i = 0;
  // The largest unit the value reaches, one up where the rounded value would read 1000 (999.96K is 1.0M).
  while (i + 1 < units.length && Math.abs(n) >= units[i + 1][0]) i++;
  if (i + 1 < units.length && Math.abs(Number((n / units[i][0]).toFixed(i ? 1 : 0))) >= 1000) i++;
  return `${(n / units[i][0]).toFixed(i ? 1 : 0)}${units[i][1]} tokens/s`;
}

/** A layout as the CLI prints it: `TP=2 CP=4 (p2p) PP=1 DP=1 recompute=selective distributed-optimizer`. */
export function layoutLabel(c: Omit<Candidate, 'time' | 'iterMs' | 'totalBytes' | 'tokensPerSecond' | 'tflopsPerGpu' | 'commFraction'>): string {
  return `TP=${c.tp}${c.tp > 1 && !c.sp ? ' (no SP)' : ''} CP=${c.cp}${c.cpCommType ? ` (${c.cpCommType})` : ''} PP=${c.pp}${c.vp > 1 ? ` VP=${c.vp}` : ''} DP=${c.dp} recompute=${c.recompute}${c.distributedOptimizer ? ' distributed-optimizer' : ''}`;
}

/** When nothing fits: the smallest layout and its peak, or that none divides the model (the most common reason in a front end's words, `w`). */
export function nothingFits(res: AdviseResult, w: AdviseWords): string {
  const s = res.smallest;
  if (s) return `nothing fits: the smallest is ${layoutLabel(s.c)} at ${(s.bytes / GIB).toFixed(1)} GiB`;
  // Every layout skipped: say the most common reason (the model, the sequence, or the global batch over DP × micro batch).
  const top = res.skipped[0], n = res.skipped.reduce((t, u) => t + u.layouts, 0);
  return `no layout of these GPUs can run this model${top ? `; the most common reason (${top.layouts} of ${n} skipped): ${skipText(top, w)}` : ''}`;
}

/** The step time of one configuration as advise computes it for that layout, and the global batch it assumes. */
export interface LayoutTime { time: IterationTime; gpus: number; microBatches: number; globalBatch: number }

/**
 * One configuration's step time with advise's default global batch, one sequence per GPU of the
 * layout (TP·CP·PP·DP): each data-parallel rank runs TP·CP·PP ÷ micro batch micro batches (rounded
 * up when the micro batch does not divide them, the global batch then said as it is). Throws
 * InputError as the memory model does.
 */
export function layoutTime(m: ModelConfig, par: ParallelConfig, link: Link = LINKS['nvlink-h200']): LayoutTime {
  const gpus = par.tensorParallel * par.contextParallel * par.pipelineParallel * par.dataParallel;
  const microBatches = Math.ceil(gpus / (par.dataParallel * par.microBatchSize));
  return { time: iterationTime(m, par, { link, microBatches }), gpus, microBatches, globalBatch: microBatches * par.microBatchSize * par.dataParallel };
}

/** What a configuration's recomputation saves in memory and costs in step time, against the same configuration without it (null without recompute). */
export interface RecomputeCost { savedBytes: number; costMs: number; costFraction: number; recomputeTermMs: number }

export function recomputeCost(m: ModelConfig, par: ParallelConfig, link: Link = LINKS['nvlink-h200']): RecomputeCost | null {
  if (par.recompute === 'none') return null;
  const none: ParallelConfig = { ...par, recompute: 'none', recomputeModules: undefined, recomputeMethod: undefined, recomputeNumLayers: undefined };
  const withIt = layoutTime(m, par, link).time, without = layoutTime(m, none, link).time;
  const costMs = withIt.iterMs - without.iterMs;
  return {
    savedBytes: memoryBreakdown(m, none).totalBytes - memoryBreakdown(m, par).totalBytes,
    costMs, costFraction: costMs / without.iterMs, recomputeTermMs: term(withIt, 'recompute'),
  };
}
