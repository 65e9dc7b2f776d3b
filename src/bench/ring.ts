/**
 * Ring sweep: ringAttention for R ranks in one-device mode (the R ranks share the first device;
 * each rank's compute is timed alone, transfers are device copies) and each layout, at growing N: wall time per phase, the sum of GPU kernel times, the
 * unhidden transfer fraction, overlap efficiency, peak bytes per rank; and the single-device
 * kernel time on the same GPU for comparison. The largest N that runs is where the sweep stops.
 */
import { FlashDevice } from '../gpu/device.js';
import { ringAttention } from '../cp/launch/ringAttention.js';
import { Layout } from '../cp/plan/schedule.js';
import { AttentionShape, numel } from '../shape.js';
import { Precision } from '../kernels/precision.js';
import { toPrecision } from '../kernels/attention.js';
import { randn } from '../reference/compare.js';
import { warmUp } from './kernels.js';

export interface RingRow {
  R: number;
  layout: Layout;
  N: number; B: number; H: number; D: number;
  causal: boolean;
  precision: Precision;
  backward: boolean;
  fwdWallMs: number;
  bwdWallMs: number | null;
  gpuKernelMs: number | null;
  unhiddenFraction: number;
  overlapEfficiency: number;
  bytesMoved: number;
  peakBytesPerRank: number[];
  imbalance: number;
  error?: string;
}

/** One ring point; with `saveTimeline`, its timeline JSON (what the page's live panel shows) is handed to it. */
export async function ringPoint(
  devs: FlashDevice[], s: AttentionShape, layout: Layout, causal: boolean, p: Precision, backward: boolean, saveTimeline?: (json: string) => Promise<void>,
): Promise<RingRow> {
  const x = {
    q: toPrecision(randn(numel(s, 'q'), 21), p), k: toPrecision(randn(numel(s, 'kv'), 22), p), v: toPrecision(randn(numel(s, 'kv'), 23), p),
    ...(backward ? { dout: toPrecision(randn(numel(s, 'q'), 24), p) } : {}),
  };
  const base = { R: devs.length, layout, N: s.Nq, B: s.B, H: s.Hq, D: s.D, causal, precision: p, backward };
  // Warm-up: pipelines compile on first use, and GPU clocks ramp (warmUp).
  const opts = { causal, layout, precision: p, ranks: devs.length };
  await warmUp(devs[0], () => ringAttention([devs[0]], s, x, opts), 1, 20);
  const res = await ringAttention([devs[0]], s, x, opts);
  const tl = res.timeline;
  if (saveTimeline) await saveTimeline(JSON.stringify(tl));
  const gpu = tl.phases.flatMap((ph) => ph.steps.map((st) => st.gpuComputeMs));
  return {
    ...base,
    fwdWallMs: tl.phases[0].wallMs,
    bwdWallMs: tl.phases[1]?.wallMs ?? null,
    gpuKernelMs: gpu.every((g) => g !== null) ? gpu.reduce((a, b) => a + (b ?? 0), 0) : null,
    unhiddenFraction: tl.summary.unhiddenFraction,
    overlapEfficiency: tl.summary.overlapEfficiency,
    bytesMoved: tl.summary.bytesMoved,
    peakBytesPerRank: tl.ranks.map((r) => r.peakBytes),
    imbalance: tl.schedule.imbalance,
  };
}
