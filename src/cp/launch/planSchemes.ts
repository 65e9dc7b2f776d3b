/**
 * A scheme planned for a node the size of which no local run may reach: the dry run's steps
 * (./dry.ts) timed by the link model (../plan/linkModel.ts) at a kernel rate, and each rank's peak
 * bytes. What `flashring cp-plan` prints and the page's CP panel draws.
 */
import { Precision } from '../../kernels/precision.js';
import { MaskOptions } from '../../mask.js';
import { AttentionShape } from '../../shape.js';
import { Scheme } from '../schemes/registry.js';
import { dryRun } from './dry.js';
import { Link, Prediction, Rate, predict } from '../plan/linkModel.js';
import { Layout } from '../plan/schedule.js';

export interface SchemePlanRequest {
  shape: AttentionShape;
  R: number;
  mask: MaskOptions;
  layout: Layout;
  precision: Precision;
  link: Link;
  /** Kernel TFLOP/s (one rate, or per phase). */
  rate: Rate;
}

export interface SchemePlan {
  scheme: Scheme;
  hierarchy: [number, number];
  predicted: Prediction;
  /** The attention's own buffers on the fullest rank, forward and backward (the dry run's ledger). */
  rankPeakBytes: number;
}

/**
 * One scheme's plan (`sizes`: its 'A,P' where it takes them); throws an InputError where the shape cannot take it.
 * A rank program's steps are linear in the micro batch: every buffer, transfer and FLOP is per sequence, and the
 * messages are not (test/cp-plan-hand.test.ts checks it against a dry run at B = 3). So the dry run runs at B = 1
 * and its bytes and FLOPs are scaled, which keeps a plan's cost (its transfers list B·H row ranges) from growing with B.
 */
export async function planScheme(req: SchemePlanRequest, scheme: Scheme, sizes?: string): Promise<SchemePlan> {
  const B = req.shape.B;
  const dry = await dryRun({ shape: { ...req.shape, B: 1 }, R: req.R, layout: req.layout, scheme, sizes, mask: req.mask, precision: req.precision });
  const steps = dry.steps.map((s) => ({ ...s, flops: s.flops * B, transferBytes: s.transferBytes * B }));
  return {
    scheme, hierarchy: dry.hierarchy, predicted: predict(steps, req.R, req.link, req.rate),
    rankPeakBytes: B * Math.max(...dry.ranks.map((r) => r.peakBytes)),
  };
}
