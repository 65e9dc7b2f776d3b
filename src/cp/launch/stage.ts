/**
 * What every launcher does for each rank (in-process, multi-adapter, and each rank process): its
 * kernels on its device, and its steps' GPU times once the run has read its timer. With
 * rank/shard.ts (the shard loaded, the outputs allocated) and the rank program, this is a run's
 * life on one rank; the launchers differ only in where the ranks live and how they meet.
 */
import { FlashDevice, adapterName, captureErrors, checkDevice } from '../../gpu/device.js';
import { DeviceLostError, GPUValidationError } from '../../errors.js';
import { FlashBackward } from '../../kernels/flashBackward.js';
import { FlashForward } from '../../kernels/flashForward.js';
import { MergeKernel } from '../../kernels/merge.js';
import { Precision, elemBytes } from '../../kernels/precision.js';
import { KernelPath } from '../../kernels/pipeline.js';
import { RankKernels } from '../rank/rank.js';
import { StepRecord } from '../rank/timeline.js';
import { storage } from '../../gpu/buffers.js';
import { AttentionShape, resolveOptions } from '../../shape.js';
import { MaskOptions, maskOf } from '../../mask.js';
import { toHalfArray } from '../../f16.js';
import { HostTensor } from '../../kernels/attention.js';
import { Layout, Segment, shardLayout } from '../plan/schedule.js';
import { Link, Rate, predict } from '../plan/linkModel.js';
import { Problem } from '../rank/chunks.js';
import { ResolvedScheme } from '../schemes/registry.js';
import { checkLimits } from './dry.js';
import { RingTimeline } from '../rank/timeline.js';
import type { HostOutputs } from './hostIO.js';
import type { RingResult } from './ringAttention.js';

/**
 * Which kernels ran: tensor cores ('subgroup-matrix') or the portable ones ('scalar'), and why
 * not the former. Rank 0's: every rank resolves the same way on the same kind of adapter (a
 * multi-adapter run over different adapters may differ; each rank's kernels are its own).
 */
export interface RingKernels {
  forward: KernelPath;
  backward: KernelPath | null;
  /** Why 'auto' did not take the subgroup-matrix path, e.g. f32 data or no such feature (null when it did). */
  fallbackReason: string | null;
}

/**
 * A rank's kernels on its device: f32 partial results and gradients, the fastest exact path; built,
 * not yet run (warm runs them once; rankKernels does both).
 * `exactMax`: the forward's exact running row max (src/kernels/stale.ts), for V that needs it.
 */
export async function buildRankKernels(d: FlashDevice, D: number, p: Precision, backward: boolean, exactMax = false): Promise<RankKernels> {
  const types = { precision: p, out: 'f32' as const, grad: 'f32' as const };
  const path = 'auto';   // every mask, as attention.ts: tensor cores for f16 where the adapter has them
  return {
    fwd: await FlashForward.create(d, D, { ...types, merge: true }, path, { exactMax }),
    merge: await MergeKernel.create(d, D),
    bwd: backward ? await FlashBackward.create(d, D, types, path) : null,
  };
}

/**
 * Each rank's kernels on its device (`rankDevs[r]`; ranks sharing a device share its cached kernels),
 * ready for a run: built, every dispatch the ranks' programs will make checked against the devices'
 * grid limits, and every buffer they make against the buffer and binding sizes (checkLimits: a
 * LimitError before any GPU work), then run once (warm): the in-process ring's order (a rank
 * process checks its own rank, checkedRankKernels, and warms after every process has).
 */
export async function readyKernels(rankDevs: FlashDevice[], pb: Problem, shards: Segment[][], sch: ResolvedScheme, backward: boolean, p: Precision, exactMax: boolean): Promise<RankKernels[]> {
  const kernels = await Promise.all(rankDevs.map((d) => buildRankKernels(d, pb.shape.D, p, backward, exactMax)));
  await checkLimits(pb, shards, sch, backward, p, kernels);
  await Promise.all(rankDevs.map((d, r) => warm(d, kernels[r], pb.shape.D, p)));   // once per kernel (warm's cache)
  return kernels;
}

/**
 * Rank `rank`'s kernels on its device `dev`, built, and every dispatch and buffer of its own program
 * checked against that device's limits (checkLimits, the other ranks run dry unchecked): a rank
 * process's, which warms them (GPU work) only once every rank's process has passed its own check.
 */
export async function checkedRankKernels(dev: FlashDevice, rank: number, pb: Problem, shards: Segment[][], sch: ResolvedScheme, backward: boolean, p: Precision, exactMax: boolean): Promise<RankKernels> {
  const kernels = await buildRankKernels(dev, pb.shape.D, p, backward, exactMax);
  await checkLimits(pb, shards, sch, backward, p, shards.map((_, r) => (r === rank ? kernels : null)));
  return kernels;
}

/** A rank's kernels, built and run once (warm). */
export async function rankKernels(d: FlashDevice, D: number, p: Precision, backward: boolean, exactMax = false): Promise<RankKernels> {
  const k = await buildRankKernels(d, D, p, backward, exactMax);
  await warm(d, k, D, p);
  return k;
}

/** Each kernel's warm-up, once (kernels are cached per device, so one object per device and variant). */
const warmups = new WeakMap<object, Promise<void>>();

/**
 * One small untimed dispatch of each of a rank's kernels (64 rows of zeros), once per device and
 * kernel, before any step is timed. Drivers that compile a pipeline at its first dispatch (lavapipe
 * among them) would otherwise put the compile into the first step's GPU time, and into the link
 * model's prediction made from it (seconds on a CPU against milliseconds of work).
 */
export function warm(d: FlashDevice, k: RankKernels, D: number, p: Precision): Promise<void> {
  const key = (k.bwd ?? k.fwd).built;   // a backward run's warm-up covers the forward; a forward-only run after it warms again (harmless)
  let w = warmups.get(key);
  if (!w) {
    w = warmOnce(d, k, D, p).catch((e) => {
      warmups.delete(key);   // a later run tries again (a lost device's kernels are not reused)
      throw e;
    });
    warmups.set(key, w);
  }
  return w;
}

/** How long a step (or the kernels' warm-up) may take before the device counts as hung, unless a run says otherwise. */
export const STEP_TIMEOUT_MS = 120_000;

/** What a warm-up's errors name. */
const WARM_UP = 'kernel warm-up';

async function warmOnce(d: FlashDevice, k: RankKernels, D: number, p: Precision): Promise<void> {
  const eb = elemBytes(p);
  const made: GPUBuffer[] = [];
  const mk = (bytes: number, name: string) => (made.push(storage(d, bytes, `warm.${name}`)), made[made.length - 1]);
  const call = (n: number) => ({
    s: { B: 1, Hq: 1, Hkv: 1, Nq: n, Nk: n, D },
    b: {
      q: mk(n * D * eb, 'q'), k: mk(n * D * eb, 'k'), v: mk(n * D * eb, 'v'), dout: mk(n * D * eb, 'dout'),
      o: mk(n * D * 4, 'o'), lse: mk(n * 4, 'lse'), delta: mk(n * 4, 'delta'), dq: mk(n * D * 4, 'dq'), dk: mk(n * D * 4, 'dk'), dv: mk(n * D * 4, 'dv'),
    },
  });
  const temps: GPUBuffer[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    // Encoded and submitted inside error scopes, checked after the wait: an error here is the
    // warm-up's, not reported later as a step's.
    const submitted = captureErrors(d.device, () => {
      const enc = d.device.createCommandEncoder({ label: 'rank.warm' });
      const { s, b } = call(64);
      const o = resolveOptions(s, {});
      k.fwd.encode(enc, b, s, o, temps);
      k.bwd?.encode(enc, b, s, o, temps, { accumulate: true });
      // The tensor-core backward's staged epilogue, which calls with under 16 gradient rows take (FlashBackward.encode).
      if (k.bwd?.path === 'subgroup-matrix') {
        const few = call(8);
        k.bwd.encode(enc, few.b, few.s, resolveOptions(few.s, {}), temps, { accumulate: true });
      }
      k.merge.encodeAdd(enc, b.dq, b.dk, 64, temps);
      k.merge.encodeFinalize(enc, b.o, b.lse, 64, temps);
      d.device.queue.submit([enc.finish()]);
    });
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeviceLostError(`the kernels' first run on ${adapterName(d.adapter)} did not finish within ${STEP_TIMEOUT_MS / 1000} s (a hung device?)`)), STEP_TIMEOUT_MS);
    });
    await Promise.race([d.device.queue.onSubmittedWorkDone(), hung]);
    const errors = await submitted.errors;
    checkDevice(d, WARM_UP);
    if (errors.length) throw new GPUValidationError(WARM_UP, errors.join('; '));
  } finally {
    clearTimeout(timer);
    for (const x of [...made, ...temps]) d.tracker.destroy(x);
  }
}

/** Which kernels a rank's contexts run (rank 0's). */
export function kernelsOf(k: RankKernels): RingKernels {
  return { forward: k.fwd.path, backward: k.bwd?.path ?? null, fallbackReason: k.fwd.fallbackReason ?? k.bwd?.fallbackReason ?? null };
}

/**
 * A step's GPU time: the sum of its timer intervals (null on a device without timestamp queries,
 * or where one of its computes found no interval left: rank.ts timerIntervals).
 */
export function stepGpuTime(r: StepRecord & { gpuIntervals: number[] }, dev: FlashDevice, intervals: number[]): void {
  const known = dev.hasTimestamps && r.gpuIntervals.every((k) => k >= 0);
  r.gpuComputeMs = known ? r.gpuIntervals.reduce((a, k) => a + (Number.isNaN(intervals[k]) ? 0 : intervals[k]), 0) : null;
}

/**
 * What a run of R ranks starts from, in every launcher: the mask over the whole sequence with the
 * scale (documents are over the whole sequence's positions, which every chunk keeps: src/mask.ts),
 * the problem the rank programs take, and each rank's shard.
 */
export function ringProblem(s: AttentionShape, opts: MaskOptions & { scale?: number }, R: number, layout: Layout, p: Precision): { pb: Problem; shards: Segment[][] } {
  const base = resolveOptions(s, { ...maskOf(opts), scale: opts.scale });
  return { pb: { shape: s, base, eb: elemBytes(p) }, shards: shardLayout(s.Nq, R, layout) };
}

/** The timeline's prediction on `opts.link` where one is given (what R GPUs on it would show), in every launcher. */
export function predictOn(timeline: RingTimeline, opts: { link?: Link; computeTflops?: Rate }): RingTimeline {
  if (opts.link) timeline.predicted = predict(timeline.phases.flatMap((ph) => ph.steps), timeline.R, opts.link, opts.computeTflops);
  return timeline;
}

/** A run's result, in every launcher: O and the gradients in the run's precision (f16 bits for f16), LSE in f32. */
export function ringResult(out: HostOutputs, p: Precision, timeline: RingTimeline, kernels: RingKernels): RingResult {
  const cast = (a: Float32Array): HostTensor => (p === 'f16' ? toHalfArray(a) : a);
  return { o: cast(out.o), lse: out.lse, precision: p, timeline, kernels, ...(out.grads ? { dq: cast(out.grads.dq), dk: cast(out.grads.dk), dv: cast(out.grads.dv) } : {}) };
}
