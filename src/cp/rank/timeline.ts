/**
 * The timeline: what every rank did, step by step. Rank programs report to a TimelineRecorder
 * (begin a step, compute, wait for transfers, end); the ring never times itself. The JSON the
 * result carries (`kind: "flashring.timeline"`) is what the CLI prints, the page draws and the
 * link model (./linkModel.ts) turns into the timeline R real GPUs would show.
 */
import { Precision } from '../../kernels/precision.js';
import { AttentionShape, attentionPairFlops } from '../../shape.js';
import { Layout, Segment } from '../plan/schedule.js';
import { MaskRules } from '../../mask.js';
import type { Prediction } from '../plan/linkModel.js';

export type Phase = 'forward' | 'backward';

export interface StepRecord {
  phase: Phase;
  step: number;
  rank: number;
  /** What the step does: one of STEP_LABELS, each said in STEP_MEANINGS. */
  label: string;
  /** The rank whose K/V this rank computes with at this step (−1 when it computes nothing). */
  kvFrom: number;
  /** Kernel launches (pairs not skipped), visible score entries and FLOPs of this step. */
  pairs: number;
  visible: number;
  flops: number;
  /** Whether this step's transfers run behind its compute (else they follow it). */
  overlapped: boolean;
  /** Host times in ms from the start of the phase. */
  start: number;
  computeEnd: number;
  transferEnd: number;
  end: number;
  computeMs: number;
  /** GPU time of the step's passes from timestamp queries (null without 'timestamp-query'). */
  gpuComputeMs: number | null;
  transferMs: number;
  transferBytes: number;
  /** Point-to-point messages of the step (each costs one link latency in the model). */
  messages: number;
  /** Transfer time not hidden behind this step's compute. */
  unhiddenMs: number;
  /** Time this rank waited for the slowest rank of the step. */
  idleMs: number;
}

export interface RingTimeline {
  kind: 'flashring.timeline';
  version: 2;
  createdAt: string;
  adapters: string[];
  /**
   * 'one-device': all ranks share one device (each rank's work timed alone); 'multi-adapter': one
   * device per rank in one process; 'processes': one process (and device) per rank.
   */
  mode: 'one-device' | 'multi-adapter' | 'processes';
  /**
   * One-device steps not waited for (RingOptions.pipelined): each is submitted once the work before
   * it has run, so a step's wall times span its encoding, that wait and its submission, not its
   * GPU time (gpuComputeMs, from timestamps, is that).
   */
  pipelined?: boolean;
  /** The scheme's name (src/cp/schemes/registry.ts). */
  scheme: string;
  /** a2a+p2p: [a2a group size, ring size]; others [R] or [R, 1]. */
  hierarchy: [number, number];
  R: number;
  layout: Layout;
  causal: boolean;
  precision: Precision;
  shape: AttentionShape;
  /**
   * Visible (query, key) scores per rank under the mask (causal, window, documents), counted in
   * one query head's pairs (a rank holding a share of the heads, as a2a's, counts that share),
   * and max/mean; `window` [left, right] (−1 = unbounded) and `documents` (0 = none) name the mask.
   */
  schedule: { workPerRank: number[]; imbalance: number; shards: Segment[][]; window?: [number, number]; documents?: number };
  phases: { phase: Phase; wallMs: number; steps: StepRecord[] }[];
  /** Bytes per rank from the rank's own ledger (buffers the ring allocated for it, incl. staging). */
  ranks: { rank: number; peakBytes: number; liveBytesAfter: number }[];
  summary: {
    computeMs: number;
    transferMs: number;
    unhiddenTransferMs: number;
    /** 1 − unhidden / transfer: the share of transfer time hidden behind compute. */
    overlapEfficiency: number;
    /** Unhidden transfer time over the summed step wall time of all ranks. */
    unhiddenFraction: number;
    bytesMoved: number;
  };
  /** What R real GPUs on a given link would show (linkModel.ts), when the run was given a link. */
  predicted?: Prediction;
}

/** Every label a step may have (a rank program's begin takes no other): the --timeline room check bounds a label by the longest. */
export const STEP_LABELS = ['ring', 'home', 'dkv-back', 'gather', 'attend', 'reduce-scatter', 'a2a-in', 'a2a-out'] as const;

export type StepLabel = (typeof STEP_LABELS)[number];

/**
 * What a step of each label does, whichever scheme takes it: the CLI says them under its table (src/cli/ringCli.ts
 * TIMELINE_COLUMNS), docs/ring.md the same. 'ring' and 'home' only where K/V go round a ring of ranks: a ring of one
 * (a2a, p2p at R = 1) attends what it holds and has no last hop; a2a+p2p's last hop ends at head shards, not home.
 */
export const STEP_MEANINGS: Record<StepLabel, string> = {
  ring: "attention on the K/V chunk in hand while the next arrives from the ring's previous rank (p2p; a2a+p2p: across groups)",
  home: "the dK/dV sums' last hop, to the ranks whose K/V they are (p2p)",
  'dkv-back': "a2a+p2p's last hop: the dK/dV sums back to the head shards they started on (a2a-out takes them home)",
  gather: "every rank's K/V to every rank (all_gather)",
  attend: "attention on K/V this rank holds, nothing sent (all_gather's gathered K/V; a2a's head shard; one rank)",
  'reduce-scatter': 'the dK/dV pieces sent to the ranks they belong to and added there (all_gather)',
  'a2a-in': 'all-to-all from sequence shards to head shards (backward: dO)',
  'a2a-out': 'all-to-all from head shards back to sequence shards (O and LSE; backward: dQ, dK, dV)',
};

/**
 * What a run of one rank is, whatever its mode (one-device, or one rank process): one device, no ring, no
 * transfer. The CLI's timeline header and the page say it so (a mode alone would describe ranks placed apart).
 */
export const ONE_RANK = 'one rank: no ring, nothing sent';

/**
 * One rank's transfers, as the CLI's summary and the page's overlap row say them: it sends nothing to another rank, but a
 * scheme may still copy its own K/V (all_gather's gather, a2a's exchange with itself), time the summary counts unhidden.
 */
export const oneRankTransfers = (s: Pick<RingTimeline['summary'], 'unhiddenFraction'>): string =>
  `one rank sends nothing${s.unhiddenFraction > 0 ? `; copying its own K/V took ${(100 * s.unhiddenFraction).toFixed(1)}% of step time` : ''}`;

/** What a rank says when it starts a step. */
export interface StepInfo {
  label: StepLabel;
  kvFrom?: number;
  pairs?: number;
  visible?: number;
  flops?: number;
  overlapped?: boolean;
}

/** An open step: the rank program fills in compute and transfers, then ends it. */
export class OpenStep {
  readonly start = performance.now();
  computeEnd = 0;
  computeMs = 0;
  /** GPU timer intervals of this step's compute submissions. */
  gpuIntervals: number[] = [];
  transfers: { bytes: number; messages: number; start: number; end: number }[] = [];
  constructor(readonly phase: Phase, readonly step: number, readonly rank: number, readonly info: StepInfo) {}
}

export class TimelineRecorder {
  private t0 = new Map<Phase, number>();
  private wall = new Map<Phase, number>();
  readonly records: (StepRecord & { gpuIntervals: number[] })[] = [];
  private done = new Map<string, number>();
  /** performance.now() of the last step any rank ended (the orchestrator's hang watchdog). */
  lastProgress = performance.now();

  constructor(
    readonly R: number, private steps: Record<Phase, number>,
    private onStep?: (ev: { phase: Phase; step: number; steps: number }) => void,
  ) {}

  begin(phase: Phase, step: number, rank: number, info: StepInfo): OpenStep {
    if (!this.t0.has(phase)) this.t0.set(phase, performance.now());
    return new OpenStep(phase, step, rank, info);
  }

  end(st: OpenStep): void {
    const t0 = this.t0.get(st.phase)!, now = performance.now();
    const computeEnd = st.computeEnd || st.start;
    const transferEnd = Math.max(computeEnd, ...st.transfers.map((x) => x.end));
    const i = st.info;
    const transferMs = st.transfers.reduce((a, x) => a + (x.end - x.start), 0);
    this.records.push({
      phase: st.phase, step: st.step, rank: st.rank, label: i.label, kvFrom: i.kvFrom ?? -1,
      pairs: i.pairs ?? 0, visible: i.visible ?? 0, flops: i.flops ?? 0, overlapped: i.overlapped ?? false,
      start: st.start - t0, computeEnd: computeEnd - t0, transferEnd: transferEnd - t0, end: now - t0,
      computeMs: st.computeMs, gpuComputeMs: null, gpuIntervals: st.gpuIntervals,
      transferMs, transferBytes: st.transfers.reduce((a, x) => a + x.bytes, 0),
      messages: st.transfers.reduce((a, x) => a + x.messages, 0),
      // A transfer posted beside compute is hidden up to the compute's end; one that is not
      // (a gather, a reduce-scatter, the last hop home) is exposed whole.
      unhiddenMs: i.overlapped ? Math.max(0, transferEnd - computeEnd) : transferMs, idleMs: 0,
    });
    this.wall.set(st.phase, now - t0);
    this.lastProgress = now;
    const key = `${st.phase}:${st.step}`, n = (this.done.get(key) ?? 0) + 1;
    this.done.set(key, n);
    if (n === this.R) this.onStep?.({ phase: st.phase, step: st.step, steps: this.steps[st.phase] });
  }

  /** performance.now() when a phase's first step began (undefined before it). */
  phaseStart(phase: Phase): number | undefined {
    return this.t0.get(phase);
  }

  /** Phases in order with idle time per step (wait for the slowest rank of that step). */
  phases(): RingTimeline['phases'] {
    const out: RingTimeline['phases'] = [];
    for (const phase of ['forward', 'backward'] as Phase[]) {
      const steps = this.records.filter((r) => r.phase === phase);
      if (!steps.length) continue;
      out.push({ phase, wallMs: this.wall.get(phase) ?? 0, steps: withIdle(steps).map(({ gpuIntervals: _, ...r }) => r) });
    }
    return out;
  }
}

/** One phase's steps in (step, rank) order, each with the time it waited for the slowest rank of its step. */
export function withIdle<T extends StepRecord>(steps: T[]): T[] {
  const sorted = [...steps].sort((a, b) => a.step - b.step || a.rank - b.rank);
  for (const r of sorted) r.idleMs = Math.max(...sorted.filter((x) => x.step === r.step).map((x) => x.end)) - r.end;
  return sorted;
}

/** What a run says about itself besides its steps and its mask (every mode fills it alike). */
export type RunFacts = Pick<RingTimeline, 'adapters' | 'mode' | 'pipelined' | 'scheme' | 'hierarchy' | 'R' | 'layout' | 'precision' | 'shape' | 'ranks'>;

/**
 * The timeline of a run: its facts, its mask (`rules`: causal, window, documents over the whole
 * sequence) and shards, each rank's work as its forward steps did it and the balance, the phases and
 * their summary.
 */
export function makeTimeline(facts: RunFacts, rules: MaskRules, shards: Segment[][], phases: RingTimeline['phases']): RingTimeline {
  const work = rankWork(facts, phases);
  const mean = work.reduce((a, b) => a + b, 0) / work.length;
  return {
    kind: 'flashring.timeline', version: 2, createdAt: new Date().toISOString(), ...facts, causal: rules.causal,
    schedule: {
      workPerRank: work.map(Math.round), imbalance: mean > 0 ? Math.max(...work) / mean : 1, shards,
      window: rules.window, documents: rules.docs ? rules.docs.cuQ.length - 1 : 0,
    },
    phases, summary: summarize(phases),
  };
}

/**
 * Each rank's visible scores as its forward steps did them: their FLOPs (4·B·heads·visible·D)
 * over 4·B·Hq·D. For p2p and all_gather that is a sequence shard against the keys it meets; for a2a
 * a head shard over the group's tokens. No forward step recorded: no work.
 */
function rankWork(facts: RunFacts, phases: RingTimeline['phases']): number[] {
  const steps = phases.find((ph) => ph.phase === 'forward')?.steps ?? [];
  const per = attentionPairFlops(1, facts.shape.B, facts.shape.Hq, facts.shape.D);
  return Array.from({ length: facts.R }, (_, r) => steps.filter((st) => st.rank === r).reduce((a, st) => a + st.flops, 0) / per);
}

export function summarize(phases: RingTimeline['phases']): RingTimeline['summary'] {
  const all = phases.flatMap((ph) => ph.steps);
  const sum = (f: (r: StepRecord) => number) => all.reduce((a, r) => a + f(r), 0);
  const transferMs = sum((r) => r.transferMs), unhidden = sum((r) => r.unhiddenMs), wall = sum((r) => r.end - r.start);
  return {
    computeMs: sum((r) => r.computeMs), transferMs, unhiddenTransferMs: unhidden,
    overlapEfficiency: transferMs > 0 ? Math.max(0, 1 - unhidden / transferMs) : 1,
    unhiddenFraction: wall > 0 ? unhidden / wall : 0,
    bytesMoved: sum((r) => r.transferBytes),
  };
}
