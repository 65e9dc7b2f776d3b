/**
 * The steps a scheme's rank programs take, planned without a GPU (pure): per phase, step and
 * rank the FLOPs, the bytes and messages it sends, and whether they run behind its compute.
 * The same numbers the programs report to the timeline (test/plan.test.ts holds them equal),
 * so the link model can predict a node the size of which no local run can reach (`cp-plan`).
 */
import { AttentionShape } from '../shape.js';
import { Documents } from '../mask.js';
import { Heads, Problem, work } from './chunks.js';
import { StepLike } from './linkModel.js';
import { Layout, Segment, coalesce, shardLayout } from './schedule.js';
import { Scheme } from './timeline.js';

export interface PlanInput {
  shape: AttentionShape;
  causal: boolean;
  /** Sliding window (default [-1, -1]) and documents over the sequence (default none). */
  window?: [number, number];
  docs?: Documents | null;
  layout: Layout;
  R: number;
  scheme: Scheme;
  /** [a2a group size A, ring size P] (p2p and all_gather: [1, R]). */
  hierarchy: [number, number];
  /** Bytes per element of Q/K/V/dO. */
  eb: number;
}

type Phase = 'forward' | 'backward';
const tokens = (segs: Segment[]) => segs.reduce((a, s) => a + s.count, 0);

function step(phase: Phase, stepNo: number, rank: number, flops: number, bytes: number, messages: number, overlapped: boolean): StepLike {
  return { phase, step: stepNo, rank, flops, computeMs: 0, gpuComputeMs: null, transferBytes: bytes, messages, overlapped };
}

interface RingPlan {
  x: PlanInput;
  pb: Pick<Problem, 'shape' | 'base'>;
  rank: number;
  h: Heads;
  qSegs: Segment[];
  P: number;
  me: number;
  chunk: (pos: number) => Segment[];
  first: number;
}

/** p2p.ts's ringForward/ringBackward: K/V one hop per step; dK/dV sums one step behind, then home. */
function ringSteps(g: RingPlan, phase: Phase): StepLike[] {
  const { x, P, me } = g;
  const { B, D } = x.shape;
  const kv = (pos: number) => 2 * B * g.h.Hkv * tokens(g.chunk(pos)) * D * x.eb;
  const grad = (pos: number) => 2 * B * g.h.Hkv * tokens(g.chunk(pos)) * D * 4;
  const pos = (t: number) => (((me - t) % P) + P) % P;
  const bwd = phase === 'backward';
  const out = Array.from({ length: P }, (_, t) => {
    const sendKv = t < P - 1, sendAcc = bwd && t > 0 && P > 1;
    const bytes = (sendKv ? kv(pos(t)) : 0) + (sendAcc ? grad(pos(t - 1)) : 0);
    return step(phase, g.first + t, g.rank, work(g.pb, g.h, g.qSegs, g.chunk(pos(t)), bwd).flops, bytes, +sendKv + +sendAcc, true);
  });
  if (bwd) out.push(step(phase, g.first + P, g.rank, 0, P > 1 ? grad(pos(P - 1)) : 0, P > 1 ? 1 : 0, false));
  return out;
}

/** ulysses.ts (p2p when A = 1, without the all-to-alls). */
function ulyssesSteps(x: PlanInput, shards: Segment[][], rank: number, pb: RingPlan['pb']): StepLike[] {
  const [A, P] = x.hierarchy;
  const { B, D, Hq, Hkv } = x.shape;
  const g = Math.floor(rank / A), a = rank % A;
  const groupSegs = (gi: number) => Array.from({ length: A }, (_, i) => shards[gi * A + i]).flat();
  const a2a = x.scheme !== 'p2p';
  const ring = (first: number): RingPlan => a2a
    ? { x, pb, rank, h: { Hq: Hq / A, Hkv: Hkv / A }, qSegs: groupSegs(g), P, me: g, chunk: groupSegs, first }
    : { x, pb, rank, h: { Hq, Hkv }, qSegs: shards[rank], P: x.R, me: rank, chunk: (p) => shards[p], first };
  if (!a2a) return [...ringSteps(ring(0), 'forward'), ...ringSteps(ring(0), 'backward')];
  const others = Array.from({ length: A }, (_, i) => i).filter((i) => i !== a);
  // What this rank sends to the other members: its own tokens (to heads) or theirs (back to sequence).
  const toHeads = (perToken: number) => others.length * tokens(shards[rank]) * perToken;
  const back = (perToken: number) => others.reduce((n, i) => n + tokens(shards[g * A + i]), 0) * perToken;
  const m = others.length;
  return [
    step('forward', 0, rank, 0, toHeads(B * D * x.eb * (Hq + 2 * Hkv) / A), m, false),
    ...ringSteps(ring(1), 'forward'),
    step('forward', P + 1, rank, 0, back(B * (Hq / A) * (D + 1) * 4), m, false),
    step('backward', 0, rank, 0, toHeads(B * D * x.eb * Hq / A), m, false),
    ...ringSteps(ring(1), 'backward'),
    step('backward', P + 2, rank, 0, back(B * D * 4 * (Hq + 2 * Hkv) / A), m, false),
  ];
}

/**
 * allGather.ts: K/V gathered once into runs (own shard copied locally, no link bytes); the Q shard
 * attends all of them in one step; the dK/dV partial's rows reduce-scattered home.
 */
function allGatherSteps(x: PlanInput, shards: Segment[][], rank: number, pb: RingPlan['pb']): StepLike[] {
  const { R } = x;
  const { B, D, Hq, Hkv } = x.shape;
  const h = { Hq, Hkv };
  const { runs } = coalesce(shards.flat());
  const grads = shards.reduce((n, s, c) => n + (c === rank ? 0 : 2 * B * Hkv * tokens(s) * D * 4), 0);
  return [
    step('forward', 0, rank, 0, (R - 1) * 2 * B * Hkv * tokens(shards[rank]) * D * x.eb, R - 1, false),
    step('forward', 1, rank, work(pb, h, shards[rank], runs).flops, 0, 0, false),
    step('backward', 0, rank, work(pb, h, shards[rank], runs, true).flops, 0, 0, false),
    step('backward', 1, rank, 0, grads, R - 1, false),
  ];
}

/** Every rank's steps, forward then backward. */
export function planSteps(x: PlanInput): StepLike[] {
  const shards = shardLayout(x.shape.Nq, x.R, x.layout);
  const pb = { shape: x.shape, base: { causal: x.causal, window: x.window ?? [-1, -1], docs: x.docs ?? null, scale: 1, qPos: { offset: 0, stride: 1 }, kPos: { offset: 0, stride: 1 } } };
  return Array.from({ length: x.R }, (_, r) => (x.scheme === 'all_gather' ? allGatherSteps(x, shards, r, pb) : ulyssesSteps(x, shards, r, pb))).flat();
}
