/**
 * The model against measurements: for each measured point (a CSV row or a Megatron-LM log), the
 * model's prediction for the same configuration, the error of the total and of the activations,
 * and the out-of-memory verdict against what happened. Used by `flashring replay --compare`,
 * `replay --json` and the page's replay panel.
 */
import { CsvRow } from './csv.js';
import { DEFAULT_VOCAB_SIZE, GIB, ModelConfig, MoeConfig, ParallelConfig, ffnWidth, memoryBreakdown, normName, optimizerStepBytes, parseRecomputeSpec, peakActivationBytes, positionEmbedding, positionRows } from './model.js';
import { OthersOom, ParseResult, configFromLog, unmodelledArgs } from './megatron.js';
import { maxOf } from '../stats.js';
import { InputError } from '../errors.js';
import { counted } from '../plural.js';

export interface Comparison {
  row: CsvRow;
  /** null when the model cannot take the point's configuration (the reason in `error`). */
  modelTotalGib: number | null;
  /** The activations' peak (peakActivationBytes): the optimizer step's temporary is no activation, and is said apart. */
  modelActivationGib: number | null;
  /** The optimizer step's temporary (--torch-optimizer, optimizerStepBytes; 0 for a fused Adam): optimizer memory, in the total. */
  modelOptimizerStepGib: number | null;
  modelFits: boolean | null;
  /** (model − measured) / measured; null without a measured value. */
  totalError: number | null;
  activationError: number | null;
  /** 'right' when the model's fits/does-not-fit matches what happened. */
  verdict: 'right' | 'says it fits, it ran out of memory' | 'says out of memory, it ran' | 'unknown';
  error?: string;
  /** What the point's log sets that changes memory and the model does not take (flag and value): no error or verdict taken then. */
  notModelled?: string[];
  /** The point's log ran out of memory because other processes held the GPU (megatron.ts OthersOom): no error or verdict taken then. */
  othersOom?: OthersOom;
}

/**
 * A comparison whose point says nothing of the model, its model figures kept and no error or OOM verdict taken: its log
 * sets what the model does not take (unmodelledArgs: FP8, grouped GEMM, …; the settings named, as the log's own
 * prediction does), or it ran out of memory because other processes held the GPU (the run says nothing of its own
 * configuration; their share kept to say why). Replay --compare and the page's replay take every point through it.
 */
export function withoutVerdict(c: Comparison, why: { notModelled?: readonly string[]; othersOom?: OthersOom | null }): Comparison {
  const notModelled = why.notModelled?.length ? [...why.notModelled] : undefined, othersOom = why.othersOom ?? undefined;
  if (!notModelled && !othersOom) return c;
  return { ...c, totalError: null, activationError: null, verdict: 'unknown', ...(notModelled ? { notModelled } : {}), ...(othersOom ? { othersOom } : {}) };
}

/** The point's configuration over the base flags (sequence, TP, CP, SP, recompute, micro batch): the base's where the row does not say. */
export function pointConfig(row: CsvRow, base: ParallelConfig): ParallelConfig {
  const rc = row.recompute
    ? { recomputeModules: undefined, recomputeMethod: undefined, recomputeNumLayers: undefined, ...parseRecomputeSpec(row.recompute, `recompute '${row.recompute}'`) }
    : {};
  return {
    ...base, ...rc,
    seqLength: row.seq_len, tensorParallel: row.tp ?? base.tensorParallel, contextParallel: row.cp ?? base.contextParallel,
    pipelineParallel: row.pp ?? base.pipelineParallel, sequenceParallel: row.sp ?? base.sequenceParallel, microBatchSize: row.micro_batch ?? base.microBatchSize,
  };
}

/** A point's comparison before the model's figures: none taken yet. */
export const unmodelledComparison = (row: CsvRow): Comparison =>
  ({ row, modelTotalGib: null, modelActivationGib: null, modelOptimizerStepGib: null, modelFits: null, totalError: null, activationError: null, verdict: 'unknown' });

export function compareOne(row: CsvRow, model: ModelConfig, par: ParallelConfig, hbmGib: number): Comparison {
  // ran: out of memory only where the row says so (fits false); an empty total is an unknown peak
  const ran = row.fits === false ? false : row.total_gib !== null ? true : row.fits;
  const base = unmodelledComparison(row);
  let b;
  try {
    b = memoryBreakdown(model, pointConfig(row, par));
  } catch (e) {
    if (!(e instanceof InputError)) throw e; // a bug, not a point the model refuses
    return { ...base, error: e.message };
  }
  const total = b.totalBytes / GIB, act = peakActivationBytes(b) / GIB, hbm = row.hbm_gib ?? hbmGib;
  const fits = total <= hbm;
  const err = (m: number, x: number | null | undefined) => (x === null || x === undefined || x === 0 ? null : (m - x) / x);
  const known = ran !== null;
  return {
    ...base, modelTotalGib: total, modelActivationGib: act, modelOptimizerStepGib: optimizerStepBytes(b) / GIB, modelFits: fits,
    totalError: ran ? err(total, row.total_gib) : null, activationError: ran ? err(act, row.activation_gib) : null,
    verdict: !known ? 'unknown' : fits === ran ? 'right' : fits ? 'says it fits, it ran out of memory' : 'says out of memory, it ran',
  };
}

export function comparePoints(rows: CsvRow[], model: ModelConfig, par: ParallelConfig, hbmGib: number): Comparison[] {
  return rows.map((r) => compareOne(r, model, par, hbmGib));
}

/** A log's own prediction: the model from the log's argument dump beside its measured peak. */
export interface LogPrediction {
  model: ModelConfig;
  parallel: ParallelConfig;
  totalBytes: number;
  /** The activations' peak (peakActivationBytes), without the optimizer step's temporary. */
  activationBytes: number;
  /** The optimizer step's temporary (optimizerStepBytes; 0 for a fused Adam). */
  optimizerStepBytes: number;
  fits: boolean | null;
  measuredGib: number | null;
  totalError: number | null;
  notes: string[];
  /** Arguments of the log that change memory and that the model does not take (flag and value); when any, totalError is null. */
  notModelled: string[];
}

export function predictFromLog(res: ParseResult, hbmGib: number | null): LogPrediction | { error: string } {
  const c = configFromLog(res);
  if ('error' in c) return c;
  const notModelled = unmodelledArgs(res.args);
  let b;
  try {
    b = memoryBreakdown(c.model, c.par);
  } catch (e) {
    // (an argument the model does not take, e.g. expert tensor parallelism other than TP, named first: it is why)
    return { error: `${notModelled.length ? `not modelled: ${notModelled.join(' ')}; ` : ''}the model cannot take this log's arguments: ${(e as Error).message}` };
  }
  const measured = res.point.peakMaxAllocatedGiB;
  const notes = notModelled.length ? [...c.notes, `not modelled: ${notModelled.join(' ')} (the prediction is not comparable with this run)`] : c.notes;
  return {
    model: c.model, parallel: c.par, totalBytes: b.totalBytes, activationBytes: peakActivationBytes(b), optimizerStepBytes: optimizerStepBytes(b),
    fits: hbmGib === null ? null : b.totalBytes / GIB <= hbmGib, measuredGib: measured,
    totalError: measured === null || notModelled.length ? null : (b.totalBytes / GIB - measured) / measured, notes, notModelled,
  };
}

/** Layers, hidden size, heads and vocabulary of a measured model, as far as a file says them. */
export interface ModelSize { layers?: number; hidden?: number; heads?: number; vocab?: number }

/** The model a CSV row names in its source ("… GPT 8L h=4096 a=32 vocab=8192 …"), or null. */
export function sourceModel(source: string): ModelSize | null {
  const m = /\b(\d+)L h=(\d+) a=(\d+)(?: vocab=(\d+))?/.exec(source);
  return m ? { layers: +m[1], hidden: +m[2], heads: +m[3], vocab: m[4] === undefined ? undefined : +m[4] } : null;
}

/** What differs (layers, hidden, heads, vocabulary padded as Megatron-LM pads it) from `ref`, each as "layers 4 (<refName>: 8)". */
export function modelDiff(x: ModelSize, ref: ModelConfig, refName: string): string[] {
  const out: string[] = [];
  const cmp = (what: string, a: number | undefined, b: number) => { if (a !== undefined && a !== b) out.push(`${what} ${a} (${refName}: ${b})`); };
  cmp('layers', x.layers, ref.numLayers);
  cmp('hidden', x.hidden, ref.hiddenSize);
  cmp('heads', x.heads, ref.numAttentionHeads);
  const rv = ref.vocabSize ?? DEFAULT_VOCAB_SIZE;
  if (x.vocab !== undefined && Math.ceil(x.vocab / 128) !== Math.ceil(rv / 128)) out.push(`vocab ${x.vocab} (${refName}: ${rv})`);
  return out;
}

/** A fraction as a signed percentage, '+1.2%' or '-3.4%'; '' for null. */
export const pct = (x: number | null) => (x === null ? '' : `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`);

/** A log's measured configuration: its model, and its parallel settings (those a row does not carry). */
export interface MeasuredSetup { model: ModelConfig; parallel: ParallelConfig }

/** A setting a measured point does not carry itself: how it reads, and the fields that hold it. */
interface Setting { flag: string; show: (m: ModelConfig, p: ParallelConfig) => string; model?: (keyof ModelConfig)[]; parallel?: (keyof ParallelConfig)[] }

/** A boolean flag as given or not: `--swiglu`, or `no --swiglu`. */
const given = (flag: string, on: boolean) => (on ? flag : `no ${flag}`);
const moeFlags = (e: MoeConfig | undefined) => (e
  ? `--num-experts ${e.numExperts} --moe-router-topk ${e.routerTopk}${e.ffnHiddenSize ? ` --moe-ffn-hidden-size ${e.ffnHiddenSize}` : ''}` +
    `${e.sharedExpertSize ? ` --moe-shared-expert-intermediate-size ${e.sharedExpertSize}` : ''}${e.capacityFactor ? ` --moe-expert-capacity-factor ${e.capacityFactor}` : ''}` +
    `${e.dispatcher ? ` --moe-token-dispatcher-type ${e.dispatcher}` : ''}${e.scoreFunction ? ` --moe-router-score-function ${e.scoreFunction}` : ''}` +
    `${e.expertBias ? ' --moe-router-enable-expert-bias' : ''}`
  : 'no --num-experts (dense)');

/**
 * Every setting the model takes beyond what a measured point carries itself (its sequence, TP, CP,
 * PP, SP, recompute and micro batch), shown as the `flashring memory` flags that give it (the
 * defaults the model fills in made explicit), with the fields that hold it (to swap one setting
 * alone: memoryDiff).
 */
const SETTINGS: Setting[] = [
  { flag: '--num-layers', show: (m) => `--num-layers ${m.numLayers}`, model: ['numLayers'] },
  { flag: '--hidden-size', show: (m) => `--hidden-size ${m.hiddenSize}`, model: ['hiddenSize'] },
  { flag: '--num-attention-heads', show: (m) => `--num-attention-heads ${m.numAttentionHeads}`, model: ['numAttentionHeads'] },
  { flag: '--num-query-groups', show: (m) => `--num-query-groups ${m.numQueryGroups ?? m.numAttentionHeads}`, model: ['numQueryGroups'] },
  { flag: '--ffn-hidden-size', show: (m) => `--ffn-hidden-size ${ffnWidth(m)}`, model: ['ffnHiddenSize'] },
  { flag: '--swiglu', show: (m) => given('--swiglu', !!m.swiglu), model: ['swiglu'] },
  { flag: '--vocab-size', show: (m) => `--vocab-size ${m.vocabSize ?? DEFAULT_VOCAB_SIZE}`, model: ['vocabSize'] },
  { flag: '--untie-embeddings-and-output-weights', show: (m) => given('--untie-embeddings-and-output-weights', !!m.untieEmbeddings), model: ['untieEmbeddings'] },
  { flag: '--position-embedding-type', show: (m) => `--position-embedding-type ${positionEmbedding(m)}`, model: ['positionEmbedding'] },
  // Said where it changes the table: a learned one of more rows than the setup's sequence (its default, the sequence's own).
  { flag: '--max-position-embeddings', show: (m, p) => (positionRows(m, p.seqLength) > p.seqLength ? `--max-position-embeddings ${m.maxPositionEmbeddings}` : 'no --max-position-embeddings'), model: ['maxPositionEmbeddings'] },
  { flag: '--disable-bias-linear', show: (m) => given('--disable-bias-linear', m.biasLinear === false), model: ['biasLinear'] },
  { flag: '--normalization', show: (m) => `--normalization ${normName(m)}`, model: ['rmsNorm'] },
  { flag: '--attention-dropout', show: (m) => `--attention-dropout ${m.attentionDropout ?? 0.1}`, model: ['attentionDropout'] },
  { flag: '--hidden-dropout', show: (m) => `--hidden-dropout ${m.hiddenDropout ?? 0.1}`, model: ['hiddenDropout'] },
  // Megatron-LM's bias_activation_fusion, said as the flag the activation reads
  { flag: '--no-bias-swiglu-fusion', show: (m) => given(m.swiglu ? '--no-bias-swiglu-fusion' : '--no-bias-gelu-fusion', m.biasActivationFusion === false), model: ['biasActivationFusion'] },
  { flag: '--num-experts', show: (m) => moeFlags(m.moe), model: ['moe'] },
  { flag: '--fp32-params', show: (m) => given('--fp32-params', m.paramPrecision === 'amp'), model: ['paramPrecision'] },
  { flag: '--stack', show: (_, p) => `--stack ${p.stack ?? 'megatron'}`, parallel: ['stack'] },
  { flag: '--use-flash-attn', show: (_, p) => (p.flashAttention ? '--use-flash-attn' : '--no-use-flash-attn'), parallel: ['flashAttention'] },
  { flag: '--use-distributed-optimizer', show: (_, p) => given('--use-distributed-optimizer', p.distributedOptimizer), parallel: ['distributedOptimizer'] },
  { flag: '--data-parallel-size', show: (_, p) => `--data-parallel-size ${p.dataParallel}`, parallel: ['dataParallel'] },
  { flag: '--num-layers-per-virtual-pipeline-stage', show: (m, p) => (p.virtualStages > 1 ? `--num-layers-per-virtual-pipeline-stage ${m.numLayers}/(PP·${p.virtualStages})` : 'no --num-layers-per-virtual-pipeline-stage'), parallel: ['virtualStages'] },
  { flag: '--cp-comm-type', show: (_, p) => `--cp-comm-type ${p.cpCommType ?? 'p2p'}`, parallel: ['cpCommType'] },
  { flag: '--fp32-residual-connection', show: (_, p) => given('--fp32-residual-connection', !!p.fp32Residual), parallel: ['fp32Residual'] },
  { flag: '--torch-optimizer', show: (_, p) => given('--torch-optimizer', !!p.torchOptimizer), parallel: ['torchOptimizer'] },
  { flag: '--expert-model-parallel-size', show: (_, p) => `--expert-model-parallel-size ${p.expertParallel ?? 1}`, parallel: ['expertParallel'] },
  // The micro batches a step (with a pipeline: how many are in flight), said as the count the global batch gives: the
  // global batch alone would hide it where the two setups' micro batch or DP differ (a point's micro batch is its own).
  { flag: '--global-batch-size for', show: (_, p) => (p.numMicrobatches === undefined ? 'no --global-batch-size' : `--global-batch-size for ${p.numMicrobatches} micro batches`), parallel: ['numMicrobatches'] },
];

/** `x` with one setting taken from `ref` (its fields, undefined ones too: the model's default then). */
function withSetting(x: MeasuredSetup, ref: MeasuredSetup, s: Setting): MeasuredSetup {
  const pick = <T extends object>(from: T, keys: (keyof T)[] = []) => Object.fromEntries(keys.map((k) => [k, from[k]])) as Partial<T>;
  return { model: { ...x.model, ...pick(ref.model, s.model) }, parallel: { ...x.parallel, ...pick(ref.parallel, s.parallel) } };
}

/** A setting that differs, and the compared value said beside the measured one (said()). */
interface Differing { s: Setting; theirs: string; follows: boolean }

/**
 * The settings in which a measured setup differs from the compared one. A default that follows another setting (the
 * query groups follow the heads, the position embedding SwiGLU, the FFN width the hidden size) is shown as the compared
 * setup gives it, and may come to differ only once those settings are taken from the measured setup (the log's 4 heads
 * with 1 query group against a compared 1 head with the default groups): taken in turn until nothing more differs, so
 * that the flags named are enough to give the measured setup. Such a one is marked `follows`.
 */
function differs(x: MeasuredSetup, ref: MeasuredSetup): Differing[] {
  const out: Differing[] = [];
  let r = ref;
  for (;;) {
    const more = SETTINGS.filter((s) => !out.some((d) => d.s === s) && s.show(x.model, x.parallel) !== s.show(r.model, r.parallel));
    if (!more.length) return out;
    out.push(...more.map((s) => ({ s, theirs: s.show(r.model, r.parallel), follows: r !== ref })));
    r = more.reduce((acc, s) => withSetting(acc, x, s), r);
  }
}

/**
 * "--ffn-hidden-size 5120 (compared: 6144)", "--swiglu (compared: no --swiglu)": the measured setup's flags, the compared value
 * beside; a default that follows the settings before it, "--num-query-groups 1 (compared: its default, 4 with the flags before)".
 */
function said(d: Differing, x: MeasuredSetup, refName: string): string {
  const { s, theirs } = d, mine = s.show(x.model, x.parallel);
  const value = theirs.startsWith(`${s.flag} `) && mine.startsWith(`${s.flag} `) ? theirs.slice(s.flag.length + 1) : theirs;
  return `${mine} (${refName}: ${d.follows ? `its default, ${value} with the flags before` : value})`;
}

/** Every setting that differs between a measured setup and the compared one, each as said() says it. */
export function setupDiff(x: MeasuredSetup, ref: MeasuredSetup, refName: string): string[] {
  return differs(x, ref).map((d) => said(d, x, refName));
}

/** The model's total for a row under a setup (null when the model cannot take it: an InputError; anything else is a bug and thrown). */
function totalUnder(row: CsvRow, s: MeasuredSetup): number | null {
  try {
    return memoryBreakdown(s.model, pointConfig(row, s.parallel)).totalBytes;
  } catch (e) {
    if (e instanceof InputError) return null;
    throw e;
  }
}

/**
 * The settings that differ and change the model's total at this point: each taken alone from the
 * compared setup into the measured one (the CP comm type at CP = 1, a dropout of 0.05 against 0.1,
 * DP without the distributed optimizer change nothing and are not named). Where the totals differ
 * but no setting alone moves it (DP and the distributed optimizer together), every differing one.
 */
export function memoryDiff(row: CsvRow, setup: MeasuredSetup, ref: MeasuredSetup, refName: string): string[] {
  const own = totalUnder(row, setup);
  if (own === totalUnder(row, ref)) return [];
  const all = differs(setup, ref), named = all.filter((d) => totalUnder(row, withSetting(setup, ref, d.s)) !== own);
  // The settings named must be enough: the compared setup with them taken from the log gives the log's total.
  // Where they are not (DP and the distributed optimizer move it only together), add those that move the rest.
  const from = (xs: Differing[]) => totalUnder(row, xs.reduce((x, d) => withSetting(x, setup, d.s), ref));
  let now = from(named);
  while (now !== own) {
    const more = all.filter((d) => !named.includes(d) && from([...named, d]) !== now);
    if (!more.length) break;
    named.push(...more);
    now = from(named);
  }
  // Said in the order differs() found them: a default that follows other settings after them.
  return (now === own ? all.filter((d) => named.includes(d)) : all).map((d) => said(d, setup, refName));
}

/**
 * One line per measured setup that differs from the compared one in a way that changes the model's
 * answer (its errors are then against another model than the one measured): what `replay --compare`
 * says beside its table. A point from a log with an argument dump is compared on every setting
 * (`setups[i]`), and the line says how far the model under the log's own setup is from the compared
 * one; a CSV row on what its source names (layers, hidden, heads, vocabulary).
 */
export function otherModelNotes(rows: CsvRow[], ref: MeasuredSetup, setups: readonly (MeasuredSetup | null)[] = [], labels: readonly string[] = []): string[] {
  const groups = new Map<string, { n: number; shifts: number[]; names: string[] }>();
  rows.forEach((r, i) => {
    const setup = setups[i], size = setup ? null : sourceModel(r.source);
    const diff = setup ? memoryDiff(r, setup, ref, 'compared') : size ? modelDiff(size, ref.model, 'compared') : [];
    if (!diff.length) return;
    const own = setup ? totalUnder(r, setup) : null, theirs = setup ? totalUnder(r, ref) : null;
    const g = groups.get(diff.join(', ')) ?? { n: 0, shifts: [], names: [] };
    g.n++;
    if (labels[i] !== undefined) g.names.push(labels[i]);
    if (own !== null && theirs !== null) g.shifts.push(theirs / own - 1);
    groups.set(diff.join(', '), g);
  });
  return [...groups].map(([diff, { n, shifts, names }]) => {
    const lo = Math.min(...shifts), hi = Math.max(...shifts);
    const shift = shifts.length ? `; the compared model's total is ${pct(lo)}${hi !== lo ? ` to ${pct(hi)}` : ''} off the model under the log's own arguments (replay without --compare prints that prediction)` : '';
    const which = names.length ? ` (${names.slice(0, 3).join(', ')}${names.length > 3 ? ` and ${names.length - 3} more` : ''})` : '';
    const [its, it] = n === 1 ? ['its error is', 'it with its'] : ['their errors are', 'them with their'];
    return `${counted(n, 'point')}${which} measured another setup than the one compared, with ${diff}: ${its} against the wrong model${shift}; give --compare those flags to compare ${it} own model`;
  });
}

/** Markdown table of comparisons (the CLI's --compare); `labels` name each point (its file, or file: line), else its CSV line. */
export function comparisonTable(cs: Comparison[], labels: readonly string[] = []): string {
  const out = ['| point | seq_len | CP | recompute | measured total GiB | model total GiB | error | measured activation GiB | model activation GiB | error | model optimizer step GiB | OOM verdict |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|'];
  for (const [i, c] of cs.entries()) {
    const r = c.row;
    const meas = c.othersOom ? 'OOM (other processes)' : r.fits === false ? 'OOM' : r.total_gib?.toFixed(1) ?? '?';
    const verdict = c.othersOom ? `not a verdict (other processes held ${c.othersOom.otherGiB.toFixed(1)} GiB)` : c.verdict;
    const not = c.notModelled ? `not comparable (not modelled: ${c.notModelled.join(' ')})` : null;
    out.push(`| ${(labels[i] ?? r.line ?? '').replace(/\|/g, '\\|')} | ${r.seq_len} | ${r.cp ?? '?'} | ${r.recompute ?? '?'} | ${meas} | ${c.modelTotalGib?.toFixed(1) ?? `- (${c.error})`} | ${not ?? pct(c.totalError)} | ` +
      `${r.activation_gib?.toFixed(1) ?? ''} | ${c.modelActivationGib?.toFixed(1) ?? ''} | ${pct(c.activationError)} | ${c.modelOptimizerStepGib?.toFixed(1) ?? ''} | ${verdict} |`);
  }
  const f = comparisonFigures(cs), largest = (x: number | null) => (x === null ? '-' : (x * 100).toFixed(1) + '%');
  out.push('', `${counted(cs.length, 'point')}: largest total error ${largest(f.largestTotal)}, largest activation error ${largest(f.largestActivation)}, ${counted(f.wrong, 'wrong OOM verdict')}` +
    `${f.notCompared ? `; ${counted(f.notCompared, 'point')} not compared (${f.notCompared === 1 ? 'its log sets' : 'their logs set'} what the model does not take)` : ''}` +
    `${f.othersOom ? `; ${counted(f.othersOom, 'point')} out of memory because other processes held the GPU (not a verdict, not compared)` : ''}`);
  return out.join('\n');
}

/**
 * What a set of comparisons sums up to, for replay --compare's line and the page's replay summary, each in its own
 * words: the largest total and activation errors (absolute; null where none was taken), the wrong out-of-memory
 * verdicts, the points not compared (their logs set what the model does not take: withoutVerdict), and those whose
 * out-of-memory other processes caused (withoutVerdict too).
 */
export function comparisonFigures(cs: readonly Comparison[]): { largestTotal: number | null; largestActivation: number | null; wrong: number; notCompared: number; othersOom: number } {
  const largest = (xs: (number | null)[]) => {
    const a = xs.filter((x): x is number => x !== null).map(Math.abs);
    return a.length ? maxOf(a) : null;
  };
  return {
    largestTotal: largest(cs.map((c) => c.totalError)), largestActivation: largest(cs.map((c) => c.activationError)),
    wrong: cs.filter((c) => c.verdict !== 'right' && c.verdict !== 'unknown').length, notCompared: cs.filter((c) => c.notModelled).length,
    othersOom: cs.filter((c) => c.othersOom).length,
  };
}
