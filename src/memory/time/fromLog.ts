/**
 * A Megatron-LM log → its iteration-time prediction (from its own argument dump) and its measured
 * steady iteration time (the median of the iterations after warm-up). Used by `replay --json`
 * (prediction.iterMs) and by the checks against real runs (test/time.test.ts).
 */
import { median } from '../../stats.js';
import { counted } from '../../plural.js';
import { activationFusionFromArgs, configFromLog, type MegatronArgs, type ParseResult } from '../megatron.js';
import { exposedLaunchMs, type IterationTime, type TimeOptions, type TimeTerm } from './iteration.js';
import { iterationTime } from './step.js';
import { H200 } from './devices.js';

/** Iterations Megatron-LM's first steps spend on warm-up (CUDA context, cuBLAS handles, the allocator): 1 and 2 run 5-50× slower. */
export const WARMUP_ITERATIONS = 2;

/** What the time model reads of a dump beyond the memory model's configuration: the fusion flags and the micro batches per iteration. */
export function timeOptionsFromArgs(args: MegatronArgs): TimeOptions {
  const num = (k: string) => (args[k] === undefined || args[k] === 'None' ? undefined : Number(args[k]));
  const gbs = num('global_batch_size'), mbs = num('micro_batch_size') ?? 1, dp = num('data_parallel_size') ?? 1;
  return {
    fusion: { biasDropout: args.bias_dropout_fusion === undefined ? undefined : args.bias_dropout_fusion === 'True', biasActivation: activationFusionFromArgs(args) },
    microBatches: gbs ? Math.max(1, Math.round(gbs / (mbs * dp))) : 1,
  };
}

/** Batches a PyTorch DataLoader holds ready: its workers × prefetch_factor (2, PyTorch's default); none without workers. */
const prefetchedBatches = (args: MegatronArgs) => {
  const workers = Number(args.num_workers ?? 2);
  return 2 * (Number.isInteger(workers) && workers >= 0 ? workers : 2);
};

/**
 * The model's iteration time for a log's own arguments, or why there is none: the median over the
 * log's iterations after warm-up, as the measurement is taken. Where the data loader builds the
 * attention mask (a bool [b, 1, s, s] per micro batch on the GPU; 4·s² bytes a sample in the loader),
 * each micro batch's mask is copied to the GPU in the step (term 'mask-copy', pinned, at the
 * profile's htodGBs), and where the loader hands a batch over slower than a step runs, the step waits
 * for it once the prefetched batches are used up: a log measuring more iterations than the loader
 * holds ready runs at the loader's pace (term 'data-loader'); a shorter one never waits.
 */
export function predictTimeFromLog(res: ParseResult, opts: TimeOptions = {}): IterationTime | { error: string } {
  const c = configFromLog(res);
  if ('error' in c) return c;
  const o = { ...timeOptionsFromArgs(res.args), ...opts };
  let t: IterationTime;
  try {
    t = iterationTime(c.model, c.par, o);
  } catch (e) {
    return { error: `the time model cannot take this log's arguments: ${(e as Error).message}` };
  }
  if (res.args.create_attention_mask_in_dataloader !== 'True') return t;
  const profile = o.profile ?? H200, samples = (o.microBatches ?? 1) * c.par.microBatchSize;
  const copyMs = (samples * c.par.seqLength ** 2) / (profile.htodGBs * 1e6);
  const copy = { name: 'mask-copy' as const, ms: copyMs, what: `the data loader's ${counted(samples, 'bool attention mask')} copied to the GPU (${profile.htodGBs} GB/s, pinned)` };
  t = withTerm(t, copy, 'gpu');
  if (steadyIterMs(res).iterations <= prefetchedBatches(res.args)) return t;
  const maskGB = (samples * 4 * c.par.seqLength ** 2) / 1e9;
  const wait = maskGB * profile.loaderMaskMsPerGB - t.iterMs;
  if (wait <= 0) return t;
  const term = { name: 'data-loader' as const, ms: wait, what: `waiting for the data loader's ${maskGB.toFixed(2)} GB attention mask (${profile.loaderMaskMsPerGB} ms per GB)` };
  return withTerm(t, term, 'host');
}

/**
 * A prediction with one more term added to its GPU or host side; the rates over the step follow its new
 * length. A GPU term of a step whose host overlaps the GPU first hides more of the host's launches.
 */
function withTerm(t: IterationTime, term: TimeTerm, side: 'gpu' | 'host'): IterationTime {
  const gpuMs = t.gpuMs + (side === 'gpu' ? term.ms : 0);
  const hidden = exposedLaunchMs(t.hostSerial, t.launchMs, gpuMs) - exposedLaunchMs(t.hostSerial, t.launchMs, t.gpuMs);
  const hostMs = t.hostMs + hidden + (side === 'host' ? term.ms : 0);
  const iterMs = gpuMs + hostMs, k = t.iterMs / iterMs;
  const terms = t.terms.map((x) => (x.name === 'host' ? { ...x, ms: x.ms + hidden } : x));
  return {
    ...t, iterMs, terms: [...terms, term], gpuMs, hostMs,
    commFraction: t.commMs / iterMs, tflopsPerGpu: t.tflopsPerGpu * k, tokensPerSecond: t.tokensPerSecond * k,
  };
}

/**
 * The measured steady iteration time: the median of the iterations after warm-up (null when none),
 * over how many reports, and the first and last iteration they cover (null when none).
 */
export function steadyIterMs(res: ParseResult, warmup = WARMUP_ITERATIONS): { ms: number | null; iterations: number; from: number | null; to: number | null } {
  const its = res.iterations.filter((r) => r.iteration > warmup && r.elapsedMs !== null);
  return { ms: median(its.map((r) => r.elapsedMs!)), iterations: its.length, from: its[0]?.iteration ?? null, to: its.at(-1)?.iteration ?? null };
}

/** The fewest iterations after the warm-up (WARMUP_ITERATIONS) a step time is taken from: the stored timing logs have 4 to 36. */
export const MIN_TIMED_ITERATIONS = 3;

/**
 * Why a run's step times are not time data, or null, from the run's own lines (in a log of several
 * runs, each is judged apart). A step run under the saved-tensor tracer (bench/megatron/trace.py, in
 * the command line the run opens with) is a memory run: the 2026-12-02 campaign's runs, the only
 * ones stored, ran that way up to 8 at once on one GPU, and timed alone the same configurations were
 * up to 61% faster (test/time.test.ts). Also a step time of fewer than MIN_TIMED_ITERATIONS
 * iterations after the warm-up: one step's time, not a steady median (the 2026-12-01 memory runs:
 * 3 iterations each, 4–5 runs at once). The one rule replay's notes and the time tests use.
 */
export function notTimeData(res: ParseResult): string | null {
  if (res.commands.some((c) => /\/bench\/megatron\/trace\.py\b/.test(c)))
    return 'not time data: this step ran under the saved-tensor tracer (bench/megatron/trace.py), as the memory campaign ran, up to 8 runs sharing one GPU; its step time says little of the model';
  const n = steadyIterMs(res).iterations;
  if (n > 0 && n < MIN_TIMED_ITERATIONS)
    return `not time data: ${n === 1 ? 'one iteration' : `${n} iterations`} after the first ${WARMUP_ITERATIONS}, one step's time rather than a steady median; a step time needs ${MIN_TIMED_ITERATIONS} or more (--train-iters ${WARMUP_ITERATIONS + MIN_TIMED_ITERATIONS} or more)`;
  return null;
}

/**
 * A memory prediction of `replay` (compare.ts predictFromLog) with the time model's iteration time
 * beside its totalBytes: iterMs (null with iterMsNote when the time model cannot take the log).
 */
export function withIterMs<P extends object>(prediction: P, res: ParseResult): P | (P & { iterMs: number | null; iterMsNote?: string }) {
  if ('error' in prediction) return prediction;
  const t = predictTimeFromLog(res);
  return 'error' in t ? { ...prediction, iterMs: null, iterMsNote: t.error } : { ...prediction, iterMs: t.iterMs };
}
