/**
 * all_gather (Megatron-LM's `--cp-comm-type all_gather`, PyTorch's default rotate method,
 * Llama-3's CP): every rank gathers all K/V once, then attends its Q shard to them. Backward:
 * dQ locally; the dK/dV partial over all K/V goes back in pieces to the ranks the rows came from
 * (a reduce-scatter, as an all-to-all plus adds). Memory: the full K/V on every rank.
 *
 * The gathered K/V are runs of consecutive positions (schedule.ts coalesce, as ulysses.ts's head
 * shards): each rank's segments are written at their rows of the runs, its own shard too (a local
 * copy). Under zigzag or contiguous layouts that is one run of all N tokens, so the Q shard (one
 * segment, of two runs at zigzag) attends the whole K/V in one kernel call. Striped segments do
 * not meet: one run each.
 * The attention is one timeline step per pass whatever the number of runs.
 */
import { BufRange } from '../transport/communicator.js';
import {
  GradChunk, KVChunk, Problem, RankIO, RankProgram, allocGrad, allocKV, encodeAdd, encodeBackward, encodeDelta, encodeForward, freeChunk,
  releaseQ, rows, shardQ, work,
} from '../rank/chunks.js';
import { coalesceMembers } from '../plan/schedule.js';

/** All K/V, as runs (`segs`) of consecutive positions; `from` is this rank. */
type Gathered = KVChunk;

/** The runs every rank's segments form, and where segment s of rank r lands (its run, first row). */
const gathered = (io: RankIO) => coalesceMembers(io.shards);

/**
 * The ranges of rank r's segments in per-run buffers (`inRuns`: each run of a segment at its rows
 * of its output run) or in per-segment buffers of rank r's shard, for each tensor in turn (K then
 * V, or dK then dV), all Hkv heads: both ends of the gather and of the reduce-scatter list them
 * in this order.
 */
function segRanges(pb: Problem, io: RankIO, r: number, tensors: GPUBuffer[][], rowBytes: number, inRuns: boolean): BufRange[] {
  const { B, Hkv } = pb.shape;
  const g = gathered(io);
  return tensors.flatMap((bufs) => io.shards[r].flatMap((sg, s) => g.at(r, s).flatMap((a) => inRuns
    ? rows(bufs[a.run], B, Hkv, 0, Hkv, g.runs[a.run].count, a.row0, a.count, rowBytes)
    : rows(bufs[s], B, Hkv, 0, Hkv, sg.count, a.src0, a.count, rowBytes))));
}

export const allGather: RankProgram<Gathered> = {
  async forward(ctx, pb, io) {
    const me = io.rank, h = { Hq: pb.shape.Hq, Hkv: pb.shape.Hkv }, row = pb.shape.D * pb.eb;
    const group = io.shards.map((_, r) => r);
    const { runs } = gathered(io);
    const all: Gathered = { ...allocKV(ctx, pb, h, runs.map((s) => s.count), 'kvAll'), from: me, segs: runs };
    // An all-to-all that sends every member the same ranges: unlike allGather it copies the own
    // shard into its rows too (locally, no link bytes).
    const mine = segRanges(pb, io, me, [io.k, io.v], row, false);
    const st = ctx.begin('forward', 0, { label: 'gather' });
    await ctx.wait(st, ctx.comm.allToAll(me, group, group.map(() => mine), group.map((r) => segRanges(pb, io, r, [all.k, all.v], row, true)), 'fwd.gather'));
    ctx.end(st);
    const Q = shardQ(ctx, pb, io, 'forward');
    // kvFrom: this rank's own gathered buffers (the keys of every rank).
    const s = ctx.begin('forward', 1, { label: 'attend', kvFrom: me, ...work(pb, Q.heads, Q.segs.map((q) => q.seg), all.segs) });
    await ctx.compute(s, 'attend', (enc, temps, tw) => encodeForward(ctx, pb, enc, temps, tw, Q, all, true));
    ctx.end(s);
    releaseQ(ctx, Q);
    return all;
  },

  async backward(ctx, pb, io, all) {
    const me = io.rank, h = { Hq: pb.shape.Hq, Hkv: pb.shape.Hkv }, row = pb.shape.D * 4;
    const group = io.shards.map((_, r) => r);
    const Q = shardQ(ctx, pb, io, 'backward');
    const part: GradChunk = allocGrad(ctx, pb, h, all.segs.map((s) => s.count), 'dkvPart');
    const s = ctx.begin('backward', 0, { label: 'attend', kvFrom: me, ...work(pb, Q.heads, Q.segs.map((q) => q.seg), all.segs, true) });
    await ctx.compute(s, 'attend', (enc, temps, tw) => {
      encodeDelta(ctx, pb, enc, temps, Q, all, part);
      encodeBackward(ctx, pb, enc, temps, tw, Q, all, part);
    });
    ctx.end(s);
    // The gathered K/V are done with: freed before the reduce-scatter's buffers exist (the rank's ledger, rank/rank.ts).
    freeChunk(ctx, all);
    await ctx.settle();
    // Reduce-scatter: the rows of rank r's segments of the partial go to rank r, which adds the R
    // pieces of its own shard (its own piece copied straight into dK/dV).
    const own = io.shards[me];
    const home: GradChunk = { dk: io.dk, dv: io.dv };
    const inbox = group.map((r) => (r === me ? home : allocGrad(ctx, pb, h, own.map((sg) => sg.count), `dkvIn${r}`)));
    const st = ctx.begin('backward', 1, { label: 'reduce-scatter' });
    await ctx.wait(st, ctx.comm.allToAll(me, group, group.map((r) => segRanges(pb, io, r, [part.dk, part.dv], row, true)),
      inbox.map((g) => segRanges(pb, io, me, [g.dk, g.dv], row, false)), 'bwd.reduce'));
    const others = inbox.filter((g) => g !== home);
    await ctx.compute(st, 'add', (enc, temps, tw) => others.forEach((g, x) => encodeAdd(ctx, pb, enc, temps, tw, h, own, home, g, 2 * own.length * x, 2 * own.length * others.length)));
    ctx.end(st);
    for (const c of [part, ...others]) freeChunk(ctx, c);
    releaseQ(ctx, Q);
  },
};
