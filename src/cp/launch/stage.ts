/**
 * What every launcher does for each rank (in-process, multi-adapter, and each rank process): its
 * kernels on its device, and its steps' GPU times once the run has read its timer. With
 * rank/shard.ts (the shard loaded, the outputs allocated) and the rank program, this is a run's
 * life on one rank; the launchers differ only in where the ranks live and how they meet.
 */
import { FlashDevice } from '../../gpu/device.js';
import { FlashBackward } from '../../kernels/flashBackward.js';
import { FlashForward } from '../../kernels/flashForward.js';
import { MergeKernel } from '../../kernels/merge.js';
import { Precision } from '../../kernels/precision.js';
import { KernelPath } from '../../kernels/pipeline.js';
import { RankKernels } from '../rank/rank.js';
import { StepRecord } from '../rank/timeline.js';

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

/** A rank's kernels on its device: f32 partial results and gradients, the fastest exact path. */
export async function rankKernels(d: FlashDevice, D: number, p: Precision, backward: boolean): Promise<RankKernels> {
  const types = { precision: p, out: 'f32' as const, grad: 'f32' as const };
  const path = 'auto';   // every mask, as attention.ts: tensor cores for f16 where the adapter has them
  return {
    fwd: await FlashForward.create(d, D, { ...types, merge: true }, path),
    merge: await MergeKernel.create(d, D),
    bwd: backward ? await FlashBackward.create(d, D, types, path) : null,
  };
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
