/**
 * a2a (DeepSpeed-Ulysses; Megatron-LM's `--cp-comm-type a2a`) and a2a+p2p (hierarchical:
 * `--hierarchical-context-parallel-sizes A,P`). Inside a group of A ranks an all-to-all turns
 * sequence shards into head shards: each rank then holds all of the group's tokens for Hq/A
 * query heads and Hkv/A key/value heads (GQA: both must divide). The P groups form a ring
 * (rank r is member r mod A of group ⌊r/A⌋ and rings with the ranks of the same member index).
 * Plain a2a is P = 1: no ring, attention over the whole sequence. After the attention another
 * all-to-all brings O and LSE (backward: dQ, dK, dV) back to the sequence shards.
 * The head-sharded buffers hold the group's tokens as runs of consecutive positions (schedule.ts
 * coalesce): the all-to-all writes each member's segment at its place in its run, so plain a2a
 * under zigzag or contiguous layouts attends one [B, H/A, N, D] block in one kernel call, not
 * (2R)² segment pairs of N/2R tokens (5.5× the R = 1 kernel time at R = 8 on the H200).
 */
import {
  GradChunk, Heads, KVChunk, Problem, QBlock, RankIO, RankProgram, allocGrad, freeChunk, releaseQ, rows,
} from '../rank/chunks.js';
import { Ring, ringBackward, ringBackwardSteps, ringForward } from './p2p.js';
import { Rank } from '../rank/rank.js';
import { Segment, coalesceMembers } from '../plan/schedule.js';

interface Kept {
  Q: QBlock;
  own: KVChunk;
}

/**
 * Where this rank sits: its a2a group, its member index, the ring across groups; the runs its
 * head-sharded buffers hold (its group's segments joined) and where each segment lands in them.
 */
function place(io: RankIO, A: number) {
  const P = io.shards.length / A, g = Math.floor(io.rank / A), a = io.rank % A;
  const group = Array.from({ length: A }, (_, i) => g * A + i);
  const groupRuns = (gi: number) => coalesceMembers(io.shards.slice(gi * A, gi * A + A));
  const ring: Ring = {
    members: Array.from({ length: P }, (_, i) => i * A + a), me: g, first: 1, lastHop: 'dkv-back',
    chunkSegs: (p) => groupRuns(p).runs, chunkRank: (p) => p * A + a,
  };
  return { group, ring, runs: groupRuns(g) };
}

interface Tensor { seq: GPUBuffer[]; heads: GPUBuffer[]; H: number; rowBytes: number }

/**
 * Sequence shards → head shards (`toHeads`) or back, for several tensors in one all-to-all.
 * `seq[s]` is this rank's segment s, [B, H, count, row]; `heads` the group's runs (place),
 * [B, H/A, run count, row].
 */
function exchange(ctx: Rank, pb: Problem, io: RankIO, A: number, ts: Tensor[], toHeads: boolean, tag: string) {
  const { group, runs } = place(io, A);
  const B = pb.shape.B;
  const me = io.rank % A;
  // Seq side: for member i, head block i of each run of my segments. Head side: member i's
  // segments' runs at their rows of the group's runs, my head block. Both list runs as runs.at does.
  const seqSide = group.map((_, i) => ts.flatMap((t) => io.shards[io.rank].flatMap((sg, s) => runs.at(me, s).flatMap((a) =>
    rows(t.seq[s], B, t.H, i * (t.H / A), t.H / A, sg.count, a.src0, a.count, t.rowBytes)))));
  const headSide = group.map((m, i) => ts.flatMap((t) => io.shards[m].flatMap((_, s) => runs.at(i, s).flatMap((a) =>
    rows(t.heads[a.run], B, t.H / A, 0, t.H / A, runs.runs[a.run].count, a.row0, a.count, t.rowBytes)))));
  return toHeads ? ctx.comm.allToAll(io.rank, group, seqSide, headSide, tag) : ctx.comm.allToAll(io.rank, group, headSide, seqSide, tag);
}

function headBuffers(ctx: Rank, pb: Problem, segs: Segment[], H: number, rowBytes: number, label: string): GPUBuffer[] {
  return segs.map((sg, i) => ctx.alloc(pb.shape.B * H * sg.count * rowBytes, `${label}${i}`));
}

export function ulysses(A: number): RankProgram<Kept> {
  return {
    async forward(ctx, pb, io) {
      const { ring, runs: { runs: segs } } = place(io, A);
      const { Hq, Hkv, D, B } = pb.shape;
      const h: Heads = { Hq: Hq / A, Hkv: Hkv / A };
      const row = D * pb.eb;
      const q = headBuffers(ctx, pb, segs, h.Hq, row, 'qH'), k = headBuffers(ctx, pb, segs, h.Hkv, row, 'kH'), v = headBuffers(ctx, pb, segs, h.Hkv, row, 'vH');
      const st = ctx.begin('forward', 0, { label: 'a2a-in' });
      await ctx.wait(st, exchange(ctx, pb, io, A, [{ seq: io.q, heads: q, H: Hq, rowBytes: row }, { seq: io.k, heads: k, H: Hkv, rowBytes: row }, { seq: io.v, heads: v, H: Hkv, rowBytes: row }], true, 'fwd.a2a-in'));
      ctx.end(st);
      const Q: QBlock = {
        heads: h,
        segs: segs.map((seg, i) => ({
          seg, q: q[i], o: ctx.alloc(B * h.Hq * seg.count * D * 4, `oH${i}`),
          lse: ctx.filled(B * h.Hq * seg.count, -Infinity, `lseH${i}`), fresh: true,
        })),
      };
      const own: KVChunk = { from: io.rank, segs, k, v };
      await ringForward(ctx, pb, ring, Q, own);
      const out = ctx.begin('forward', ring.members.length + 1, { label: 'a2a-out' });
      await ctx.wait(out, exchange(ctx, pb, io, A, [{ seq: io.o, heads: Q.segs.map((s) => s.o), H: Hq, rowBytes: D * 4 }, { seq: io.lse, heads: Q.segs.map((s) => s.lse), H: Hq, rowBytes: 4 }], false, 'fwd.a2a-out'));
      ctx.end(out);
      releaseQ(ctx, Q);
      return { Q, own };
    },

    async backward(ctx, pb, io, { Q, own }) {
      const { ring, runs: { runs: segs } } = place(io, A);
      const { Hq, Hkv, D, B } = pb.shape;
      const h = Q.heads;
      const P = ring.members.length;
      const dout = headBuffers(ctx, pb, segs, h.Hq, D * pb.eb, 'doutH');
      const st = ctx.begin('backward', 0, { label: 'a2a-in' });
      await ctx.wait(st, exchange(ctx, pb, io, A, [{ seq: io.dout!, heads: dout, H: Hq, rowBytes: D * pb.eb }], true, 'bwd.a2a-in'));
      ctx.end(st);
      Q.segs.forEach((s, i) => {
        s.dout = dout[i];
        s.dq = ctx.alloc(B * h.Hq * s.seg.count * D * 4, `dqH${i}`);
        s.delta = ctx.alloc(B * h.Hq * s.seg.count * 4, `deltaH${i}`);
      });
      const home: GradChunk = allocGrad(ctx, pb, h, segs.map((s) => s.count), 'dkvH');
      await ringBackward(ctx, pb, ring, Q, own, home);
      const out = ctx.begin('backward', ring.first + ringBackwardSteps(P), { label: 'a2a-out' });
      await ctx.wait(out, exchange(ctx, pb, io, A, [
        { seq: io.dq, heads: Q.segs.map((s) => s.dq!), H: Hq, rowBytes: D * 4 },
        { seq: io.dk, heads: home.dk, H: Hkv, rowBytes: D * 4 }, { seq: io.dv, heads: home.dv, H: Hkv, rowBytes: D * 4 },
      ], false, 'bwd.a2a-out'));
      ctx.end(out);
      releaseQ(ctx, Q);
      for (const b of Q.segs.flatMap((s) => [s.q, s.o, s.lse, s.dout, s.dq])) if (b) ctx.release(b);
      freeChunk(ctx, { ...own, ...home });
    },
  };
}
