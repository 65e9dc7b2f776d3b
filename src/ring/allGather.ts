/**
 * all_gather (Megatron-LM's `--cp-comm-type all_gather`, PyTorch's default rotate method,
 * Llama-3's CP): every rank gathers all K/V once, then attends its Q shard to each chunk in
 * turn. Backward: dQ locally; each chunk's dK/dV partial goes back to the rank it came from
 * (a reduce-scatter, as an all-to-all plus adds). Memory: the full K/V on every rank.
 */
import {
  GradChunk, KVChunk, RankProgram, allocGrad, allocKV, encodeAdd, encodeBackward, encodeDelta, encodeForward, freeChunk, gradRanges, kvRanges,
  releaseQ, shardQ, work,
} from './chunks.js';

/** Every rank's K/V chunk, in rank order (the own one on the shard's buffers). */
type Gathered = KVChunk[];

export const allGather: RankProgram<Gathered> = {
  async forward(ctx, pb, io) {
    const R = io.shards.length, me = io.rank, h = { Hq: pb.shape.Hq, Hkv: pb.shape.Hkv };
    const all = io.shards.map((_, r) => r);
    const chunks: Gathered = io.shards.map((segs, r) =>
      r === me ? { from: r, segs, k: io.k, v: io.v } : { ...allocKV(ctx, pb, h, segs.map((s) => s.count), `kv${r}`), from: r, segs });
    const st = ctx.begin('forward', 0, { label: 'gather' });
    await ctx.wait(st, ctx.comm.allGather(me, all, kvRanges(pb, h, chunks[me]), chunks.map((c) => kvRanges(pb, h, c)), 'fwd.gather'));
    ctx.end(st);
    const Q = shardQ(ctx, pb, io, 'forward');
    for (let t = 0; t < R; t++) {
      const cur = chunks[(me - t + R) % R];
      const s = ctx.begin('forward', t + 1, { label: 'attend', kvFrom: cur.from, ...work(pb, Q.heads, Q.segs.map((q) => q.seg), cur.segs) });
      await ctx.compute(s, 'attend', (enc, temps, tw) => encodeForward(ctx, pb, enc, temps, tw, Q, cur));
      ctx.end(s);
    }
    releaseQ(ctx, Q);
    return chunks;
  },

  async backward(ctx, pb, io, chunks) {
    const R = io.shards.length, me = io.rank, h = { Hq: pb.shape.Hq, Hkv: pb.shape.Hkv };
    const Q = shardQ(ctx, pb, io, 'backward');
    const parts: GradChunk[] = chunks.map((c) => allocGrad(ctx, pb, h, c.segs.map((s) => s.count), `dkvPart${c.from}`));
    for (let t = 0; t < R; t++) {
      const cur = chunks[(me - t + R) % R];
      const s = ctx.begin('backward', t, { label: 'attend', kvFrom: cur.from, ...work(pb, Q.heads, Q.segs.map((q) => q.seg), cur.segs, true) });
      await ctx.compute(s, 'attend', (enc, temps, tw) => {
        if (t === 0) encodeDelta(ctx, pb, enc, temps, Q, cur, parts[cur.from]);
        encodeBackward(ctx, pb, enc, temps, tw, Q, cur, parts[cur.from]);
      });
      ctx.end(s);
    }
    // Reduce-scatter: partial r goes to rank r, which adds the R partials of its own chunk.
    const own = io.shards[me];
    const home: GradChunk = { dk: io.dk, dv: io.dv };
    const inbox = chunks.map((_, r) => (r === me ? home : allocGrad(ctx, pb, h, own.map((s) => s.count), `dkvIn${r}`)));
    const st = ctx.begin('backward', R, { label: 'reduce-scatter' });
    await ctx.wait(st, ctx.comm.allToAll(me, chunks.map((c) => c.from), chunks.map((c) => gradRanges(pb, h, parts[c.from], c.segs)),
      inbox.map((g) => gradRanges(pb, h, g, own)), 'bwd.reduce'));
    await ctx.compute(st, 'add', (enc, temps) => inbox.forEach((g, r) => r !== me && encodeAdd(ctx, pb, enc, temps, h, own, home, g)));
    ctx.end(st);
    for (const c of [...parts, ...inbox.filter((g) => g !== home), ...chunks.filter((c) => c.from !== me)]) freeChunk(ctx, c);
    releaseQ(ctx, Q);
  },
};
