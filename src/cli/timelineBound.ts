/**
 * The most bytes a ring's --timeline file can take, known before the run: what the disk-room check counts
 * (src/cli/files.ts checkRooms). The file is JSON.stringify(timeline, null, 1) (src/cli/ringCli.ts); its
 * structure follows from the run's facts (R, the scheme's steps per rank, the backward, the layout's shards,
 * the link), and only its figures and its adapter names wait for the run. The bound is that structure
 * written with every figure at the widest a number is in JSON and every step's label at the longest a step
 * has (STEP_LABELS), so no run writes more, but for the adapter names: those not known yet count as empty
 * (the CLI checks once before any device, without them, and again with them once its devices are there; in
 * --cp-mode processes once every rank process has reported its adapter, before any GPU work). About 1.5
 * times the file (test/timeline-bound.test.ts), where the old count (400 bytes a step record) was about 0.6.
 */
import { Precision } from '../kernels/precision.js';
import { AttentionShape } from '../shape.js';
import { Link } from '../cp/plan/linkModel.js';
import { Layout, Segment, shardLayout } from '../cp/plan/schedule.js';
import { Phase, RingTimeline, STEP_LABELS, StepRecord } from '../cp/rank/timeline.js';

/** The widest a number is written in JSON: 25 characters (a sign, "0.", five zeros, 17 significant digits). */
export const WIDEST_NUMBER = -0.0000030881858664335103;
const W = WIDEST_NUMBER;
/** The latest date toISOString writes: the widest createdAt. */
const LATEST_DATE = new Date(8.64e15).toISOString();
const LONGEST_LABEL = STEP_LABELS.reduce((a, b) => (b.length > a.length ? b : a));

export interface TimelinePlan {
  R: number;
  mode: RingTimeline['mode'];
  pipelined: boolean;
  scheme: string;
  layout: Layout;
  precision: Precision;
  shape: AttentionShape;
  /** Step records per rank in each phase (the scheme's steps: registry.ts resolveScheme). */
  steps: Record<Phase, number>;
  backward: boolean;
  /** Each rank's adapter's name where known; a missing or empty one counts as empty. */
  adapters: string[];
  link?: Link;
  computeTflops?: number;
}

/** A step record of `phase` at its widest. */
function widestStep(phase: Phase): StepRecord {
  return {
    phase, step: W, rank: W, label: LONGEST_LABEL, kvFrom: W, pairs: W, visible: W, flops: W, overlapped: false,
    start: W, computeEnd: W, transferEnd: W, end: W, computeMs: W, gpuComputeMs: W, transferMs: W, transferBytes: W, messages: W, unhiddenMs: W, idleMs: W,
  };
}

/** The prediction's part at its widest (linkModel.ts predict): one figure per step of each phase. */
function widestPrediction(p: TimelinePlan, phases: Phase[]): RingTimeline['predicted'] {
  const stepMs = phases.map((phase) => ({ phase, stepMs: new Array<number>(p.steps[phase]).fill(W), exposedCommMs: W }));
  return {
    link: p.link!, compute: p.computeTflops === undefined ? { source: 'measured' } : { source: 'tflops', tflops: W }, R: W, phases: stepMs,
    stepMs: stepMs.flatMap((x) => x.stepMs), totalMs: W, exposedCommMs: W, transferMs: W, overlapEfficiency: W, commFraction: W, tflopsPerGpu: W,
  };
}

/** The run's timeline at its widest, with `records[i]` step records in its i-th phase. */
function widestTimeline(p: TimelinePlan, shards: Segment[][], records: number[]): RingTimeline {
  const phases: Phase[] = p.backward ? ['forward', 'backward'] : ['forward'];
  const shape = Object.fromEntries(Object.entries(p.shape).map(([k, v]) => [k, typeof v === 'number' ? W : v])) as unknown as AttentionShape;
  return {
    kind: 'flashring.timeline', version: 2, createdAt: LATEST_DATE, adapters: Array.from({ length: p.R }, (_, r) => p.adapters[r] ?? ''),
    mode: p.mode, ...(p.pipelined ? { pipelined: true } : {}), scheme: p.scheme, hierarchy: [W, W], R: W, layout: p.layout, causal: false, precision: p.precision, shape,
    schedule: { workPerRank: new Array<number>(p.R).fill(W), imbalance: W, shards, window: [W, W], documents: W },
    phases: phases.map((phase, i) => ({ phase, wallMs: W, steps: new Array<StepRecord>(records[i]).fill(widestStep(phase)) })),
    ranks: Array.from({ length: p.R }, () => ({ rank: W, peakBytes: W, liveBytesAfter: W })),
    summary: { computeMs: W, transferMs: W, unhiddenTransferMs: W, overlapEfficiency: W, unhiddenFraction: W, bytesMoved: W },
    ...(p.link ? { predicted: widestPrediction(p, phases) } : {}),
  };
}

/**
 * The most bytes (UTF-8) the run's --timeline file takes, its adapter names counted as given. The file is
 * written with one record per rank and step of each phase; the bound writes the widest timeline with one
 * record a phase and adds, for each further record, what one more widest record adds (every record the same
 * text, so that is exact for the widest file, without writing all of it).
 */
export function timelineBound(p: TimelinePlan): number {
  const shards = shardLayout(p.shape.Nq, p.R, p.layout);
  const bytes = (records: number[]) => new TextEncoder().encode(JSON.stringify(widestTimeline(p, shards, records), null, 1)).length;
  const counts = (p.backward ? [p.steps.forward, p.steps.backward] : [p.steps.forward]).map((n) => p.R * n);
  const one = counts.map(() => 1), base = bytes(one);
  return counts.reduce((sum, n, i) => sum + (n - 1) * (bytes(one.map((x, j) => (j === i ? 2 : x))) - base), base);
}
