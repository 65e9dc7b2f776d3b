/**
 * p2p: the ring (ring-flash-attention; Megatron-LM's `--cp-comm-type p2p`). K/V travel one hop
 * per step, the next chunk's transfer posted before the current compute so it runs behind it.
 * Backward uses two rings: K/V as in the forward, and each chunk's running dK/dV sum one step
 * behind it, which the dK/dV pass adds onto in place (ringBackward); one last hop brings every
 * sum home.
 *
 * `ringForward`/`ringBackward` run over any group of ranks (a2a+p2p rings across a2a groups).
 */
import {
  GradChunk, KVChunk, Problem, QBlock, RankIO, RankProgram, allocGrad, allocKV, encodeBackward, encodeDelta, encodeForward,
  freeChunk, gradRanges, kvRanges, maxSegs, releaseQ, shardQ, work,
} from '../rank/chunks.js';
import { Pending } from '../transport/communicator.js';
import { Rank } from '../rank/rank.js';
import { StepLabel } from '../rank/timeline.js';
import { Segment } from '../plan/schedule.js';

/** A ring: its members in order, this rank's position, and each position's chunk. */
export interface Ring {
  members: number[];
  me: number;
  chunkSegs: (pos: number) => Segment[];
  /** The rank whose data a position's chunk holds (the timeline's kvFrom). */
  chunkRank: (pos: number) => number;
  /** Timeline step of the ring's first step (schemes that exchange before the ring start later). */
  first: number;
  /**
   * The backward's last hop, which brings each dK/dV sum to the rank its chunk started on: 'home' where that is the
   * rank's outputs (p2p), 'dkv-back' where it is a head shard that an all-to-all then takes home (a2a+p2p).
   */
  lastHop: Extract<StepLabel, 'home' | 'dkv-back'>;
}

/**
 * A ring step's label: 'ring' where K/V travel; a ring of one (p2p at R = 1, a2a) only attends the K/V it holds.
 */
const stepLabel = (P: number): StepLabel => (P > 1 ? 'ring' : 'attend');

/** Timeline steps of ringBackward: one per position, and the last hop of the sums where there is a ring (P > 1). */
export const ringBackwardSteps = (P: number): number => (P > 1 ? P + 1 : P);

const around = (g: Ring) => {
  const P = g.members.length;
  return { P, next: g.members[(g.me + 1) % P], prev: g.members[(g.me - 1 + P) % P], pos: (t: number) => (((g.me - t) % P) + P) % P };
};

export async function ringForward(ctx: Rank, pb: Problem, g: Ring, Q: QBlock, own: KVChunk): Promise<void> {
  const { P, next, prev, pos } = around(g);
  const chunks = g.members.map((_, i) => g.chunkSegs(i));
  const sizes = maxSegs(chunks);
  const spare = P > 1 ? [allocKV(ctx, pb, Q.heads, sizes, 'kvA'), allocKV(ctx, pb, Q.heads, sizes, 'kvB')] : [];
  let cur = own;
  for (let t = 0; t < P; t++) {
    const st = ctx.begin('forward', g.first + t, { label: stepLabel(P), kvFrom: g.chunkRank(pos(t)), overlapped: true, ...work(pb, Q.heads, Q.segs.map((q) => q.seg), cur.segs) });
    const into = t < P - 1 ? { ...spare[t % 2], from: g.chunkRank(pos(t + 1)), segs: g.chunkSegs(pos(t + 1)) } : null;
    const send = into && ctx.comm.sendRecv(ctx.index, next, kvRanges(pb, Q.heads, cur), prev, kvRanges(pb, Q.heads, into), `fwd.kv.${t}`);
    send?.catch(() => {}); // observed below; a failed compute must not leave it unhandled
    await ctx.compute(st, 'attend', (enc, temps, tw) => encodeForward(ctx, pb, enc, temps, tw, Q, cur, t === P - 1));
    if (send) await ctx.wait(st, send);
    ctx.end(st);
    if (into) cur = into;
  }
  for (const c of spare) freeChunk(ctx, c);
}

/**
 * The backward ring. Each chunk's running dK/dV sum travels one hop behind it, and the dK/dV pass
 * adds onto it in place: at each step dQ runs first, while the sum for the chunk in hand arrives
 * (sent by prev at the end of its step), then dK/dV onto that sum, which goes on to next. So no
 * step clears a scratch sum or runs a separate add, and a rank holds two sums (one being sent
 * while the next arrives); a ring of one sums straight into home and records no last hop, which
 * would move nothing (ringBackwardSteps).
 */
export async function ringBackward(ctx: Rank, pb: Problem, g: Ring, Q: QBlock, own: KVChunk, home: GradChunk): Promise<void> {
  const { P, next, prev, pos } = around(g);
  const h = Q.heads;
  const sizes = maxSegs(g.members.map((_, i) => g.chunkSegs(i)));
  const spare = P > 1 ? [allocKV(ctx, pb, h, sizes, 'kvA'), allocKV(ctx, pb, h, sizes, 'kvB')] : [];
  const sums = P > 1 ? [allocGrad(ctx, pb, h, sizes, 'dkvA'), allocGrad(ctx, pb, h, sizes, 'dkvB')] : [home];
  let cur = own;
  let acc: Pending | null = null; // the running sum for `cur`, into sums[t % 2]
  for (let t = 0; t < P; t++) {
    const st = ctx.begin('backward', g.first + t, { label: stepLabel(P), kvFrom: g.chunkRank(pos(t)), overlapped: true, ...work(pb, Q.heads, Q.segs.map((q) => q.seg), cur.segs, true) });
    const into = t < P - 1 ? { ...spare[t % 2], from: g.chunkRank(pos(t + 1)), segs: g.chunkSegs(pos(t + 1)) } : null;
    const send = into && ctx.comm.sendRecv(ctx.index, next, kvRanges(pb, h, cur), prev, kvRanges(pb, h, into), `bwd.kv.${t}`);
    send?.catch(() => {});
    const sum = sums[t % 2];
    await ctx.compute(st, 'attend', (enc, temps, tw) => {
      if (t === 0) encodeDelta(ctx, pb, enc, temps, Q, own, sum);
      encodeBackward(ctx, pb, enc, temps, tw, Q, cur, sum, { only: 'dq' });
    });
    if (acc) await ctx.wait(st, acc);
    // The chunk's first step (its own rank's) starts its sum from zero; later ones add onto it.
    await ctx.compute(st, 'attend', (enc, temps, tw) => encodeBackward(ctx, pb, enc, temps, tw, Q, cur, sum, { only: 'dkdv', clear: t === 0 }));
    // The sum for `cur` goes on with it; the last one goes to the rank the chunk started on.
    if (P > 1) {
      acc = ctx.comm.sendRecv(ctx.index, next, gradRanges(pb, h, sum, cur.segs), prev, gradRanges(pb, h, t < P - 1 ? sums[(t + 1) % 2] : home, g.chunkSegs(pos(t + 1))), `bwd.dkv.${t}`);
      acc.catch(() => {});
    }
    if (send) await ctx.wait(st, send);
    ctx.end(st);
    if (into) cur = into;
  }
  if (acc) {
    const st = ctx.begin('backward', g.first + P, { label: g.lastHop, kvFrom: g.chunkRank(g.me) });
    await ctx.wait(st, acc);
    ctx.end(st);
  }
  for (const c of [...spare, ...(P > 1 ? sums : [])]) freeChunk(ctx, c);
}

/** The ring over all ranks, on the sequence shards themselves. */
export const p2p: RankProgram<null> = {
  async forward(ctx, pb, io) {
    const Q = shardQ(ctx, pb, io, 'forward');
    await ringForward(ctx, pb, wholeRing(io), Q, ownChunk(io));
    releaseQ(ctx, Q);
    return null;
  },
  async backward(ctx, pb, io) {
    const Q = shardQ(ctx, pb, io, 'backward');
    await ringBackward(ctx, pb, wholeRing(io), Q, ownChunk(io), { dk: io.dk, dv: io.dv });
    releaseQ(ctx, Q);
  },
};

function wholeRing(io: RankIO): Ring {
  return { members: io.shards.map((_, r) => r), me: io.rank, chunkSegs: (p) => io.shards[p], chunkRank: (p) => p, first: 0, lastHop: 'home' };
}

function ownChunk(io: RankIO): KVChunk {
  return { from: io.rank, segs: io.shards[io.rank], k: io.k, v: io.v };
}
