/**
 * What rank programs compute with: Q blocks (the rows a rank answers for, per segment of global
 * positions, with their f32 accumulators) and K/V chunks (the keys it holds at a step, with the
 * positions they came from). The encoders here call the existing kernels for every
 * (Q segment, K/V segment) pair the mask does not skip (src/mask.ts), with the segments' global
 * positions, so masking is exact wherever the tokens sit (documents are over global positions):
 *   forward   O, LSE ← merge((O, LSE), flash(Q, K, V))   (exact LSE merge in the forward's epilogue, common.wgsl lse_merge;
 *             after the last step, rows no step gave mass: NaN, merge.wgsl finalize)
 *   backward  dQ += ∂, dK/dV partial += ∂ (Δ = rowsum(dO ∘ O) computed once per Q segment)
 */
import { AttentionShape, ResolvedOptions, attentionPairFlops } from '../../shape.js';
import { BufRange } from '../transport/communicator.js';
import { Rank, TimestampFor } from './rank.js';
import { Segment, classifyPair } from '../plan/schedule.js';
import { noMask } from '../../mask.js';

/** Heads a block carries (a2a ranks hold a slice of them). */
export interface Heads {
  Hq: number;
  Hkv: number;
}

export interface QSeg {
  seg: Segment;
  q: GPUBuffer;
  /** f32 accumulators, [B, Hq, count, D] and [B, Hq, count] (O = 0 and LSE = −inf until written). */
  o: GPUBuffer;
  lse: GPUBuffer;
  /** Forward: no pair has written o/lse yet, so the next one writes them directly (no merge). */
  fresh?: boolean;
  dout?: GPUBuffer;
  delta?: GPUBuffer;
  dq?: GPUBuffer;
}

export interface QBlock {
  heads: Heads;
  segs: QSeg[];
}

/** K/V of one chunk, per segment [B, Hkv, count, D]; `from` names the rank it started on. */
export interface KVChunk {
  from: number;
  segs: Segment[];
  k: GPUBuffer[];
  v: GPUBuffer[];
}

/** dK/dV sums of one chunk, f32 per segment. */
export interface GradChunk {
  dk: GPUBuffer[];
  dv: GPUBuffer[];
}

/** What every rank program needs to know about the problem. */
export interface Problem {
  shape: AttentionShape;
  base: ResolvedOptions;
  /** Bytes per element of Q/K/V/dO. */
  eb: number;
}

const live = (Q: QBlock, kv: KVChunk, base: ResolvedOptions) =>
  Q.segs.flatMap((q) => kv.segs.map((ks, ki) => ({ q, ks, ki, ...classifyPair(q.seg, ks, base) }))).filter((x) => x.kind !== 'skip');

/** Pairs, visible scores and FLOPs (attentionPairFlops: 4·B·Hq·visible·D forward; ×2.5 backward) of Q segments against K/V segments. Pure. */
export function work(pb: Pick<Problem, 'shape' | 'base'>, h: Heads, qSegs: Segment[], kSegs: Segment[], backward = false): { pairs: number; visible: number; flops: number } {
  const ps = qSegs.flatMap((q) => kSegs.map((k) => classifyPair(q, k, pb.base))).filter((x) => x.kind !== 'skip');
  const visible = ps.reduce((a, p) => a + p.visible, 0);
  return { pairs: ps.length, visible, flops: attentionPairFlops(visible, pb.shape.B, h.Hq, pb.shape.D, backward ? 'bwd' : 'fwd') };
}

function pairShape(pb: Problem, h: Heads, q: Segment, k: Segment): AttentionShape {
  return { B: pb.shape.B, Hq: h.Hq, Hkv: h.Hkv, Nq: q.count, Nk: k.count, D: pb.shape.D };
}

/** A full pair runs with no mask at all; a masked one with every rule at the segments' positions. */
function pairOptions(base: ResolvedOptions, q: Segment, k: Segment, masked: boolean): ResolvedOptions {
  const pos = { qPos: q, kPos: k };
  return masked ? { ...base, ...pos } : { ...base, ...pos, ...noMask() };
}

export function encodeForward(ctx: Rank, pb: Problem, enc: GPUCommandEncoder, temps: GPUBuffer[], tw: TimestampFor, Q: QBlock, kv: KVChunk, last = false): void {
  const ps = live(Q, kv, pb.base);
  const units = ps.length + (last ? Q.segs.length : 0);
  // A segment's first pair writes its O and LSE directly; later pairs merge their rows into them
  // in the forward's epilogue: no partial is written, no merge pass runs. Only the row blocks a
  // visible pair reaches run (O = 0, LSE = −inf stay where none does, and a merged row no key
  // reaches keeps its values). Every pair is a ring step: a row whose visible keys in it all score
  // −inf is written without mass (LSE = +inf), and after the last step (`last`) the finalize pass
  // turns the rows still without mass into NaN, as the untiled softmax's 0/0.
  ps.forEach(({ q, ks, ki, kind }, i) => {
    const first = !!q.fresh;
    q.fresh = false;
    ctx.kernels.fwd.encode(enc, { q: q.q, k: kv.k[ki], v: kv.v[ki], o: q.o, lse: q.lse }, pairShape(pb, Q.heads, q.seg, ks),
      pairOptions(pb.base, q.seg, ks, kind === 'masked'), temps, tw(i, units), true, !first);
  });
  if (last)
    Q.segs.forEach((q, i) => ctx.kernels.merge.encodeFinalize(enc, q.o, q.lse, pb.shape.B * Q.heads.Hq * q.seg.count, temps, tw(ps.length + i, units)));
}

/** Δ = rowsum(dO ∘ O) per Q segment (the backward kernel's preprocess pass alone). */
export function encodeDelta(ctx: Rank, pb: Problem, enc: GPUCommandEncoder, temps: GPUBuffer[], Q: QBlock, kv: KVChunk, g: GradChunk): void {
  for (const q of Q.segs)
    ctx.kernels.bwd!.encode(enc,
      { q: q.q, k: kv.k[0], v: kv.v[0], o: q.o, dout: q.dout!, lse: q.lse, delta: q.delta!, dq: q.dq!, dk: g.dk[0], dv: g.dv[0] },
      pairShape(pb, Q.heads, q.seg, q.seg), pb.base, temps, { dq: false, dkdv: false });
}

/** Which of the backward's passes to encode, and whether g starts from zero (else it holds a running sum). */
export interface BackwardPasses {
  only?: 'dq' | 'dkdv';
  clear?: boolean;
}

/**
 * dQ += ∂/∂Q and g += ∂/∂(K, V) over every live pair (g cleared first unless `clear` is false:
 * then the dK/dV pass adds onto the running sum g holds, so no separate add is needed); `only`
 * encodes one of the two passes.
 */
export function encodeBackward(ctx: Rank, pb: Problem, enc: GPUCommandEncoder, temps: GPUBuffer[], tw: TimestampFor, Q: QBlock, kv: KVChunk, g: GradChunk, p: BackwardPasses = {}): void {
  if (p.clear !== false && p.only !== 'dq') for (const b of [...g.dk, ...g.dv]) enc.clearBuffer(b);
  const ps = live(Q, kv, pb.base);
  ps.forEach(({ q, ks, ki, kind }, i) =>
    ctx.kernels.bwd!.encode(enc,
      { q: q.q, k: kv.k[ki], v: kv.v[ki], o: q.o, dout: q.dout!, lse: q.lse, delta: q.delta!, dq: q.dq!, dk: g.dk[ki], dv: g.dv[ki] },
      pairShape(pb, Q.heads, q.seg, ks), pairOptions(pb.base, q.seg, ks, kind === 'masked'), temps,
      { accumulate: true, skipPreprocess: true, dq: p.only !== 'dkdv', dkdv: p.only !== 'dq', timestampWrites: tw(i, ps.length) }));
}

/** acc += part for every segment of a chunk; its passes are units `unit0`… of `units` of the compute's timed interval. */
export function encodeAdd(ctx: Rank, pb: Problem, enc: GPUCommandEncoder, temps: GPUBuffer[], tw: TimestampFor, h: Heads, segs: Segment[], acc: GradChunk, part: GradChunk, unit0 = 0, units = 2 * segs.length): void {
  segs.forEach((sg, i) => {
    const rows = pb.shape.B * h.Hkv * sg.count;
    ctx.kernels.merge.encodeAdd(enc, acc.dk[i], part.dk[i], rows, temps, tw(unit0 + 2 * i, units));
    ctx.kernels.merge.encodeAdd(enc, acc.dv[i], part.dv[i], rows, temps, tw(unit0 + 2 * i + 1, units));
  });
}

/** Byte size of one segment of K/V (element type) or of dK/dV (f32). */
export const kvBytes = (pb: Problem, h: Heads, n: number) => pb.shape.B * h.Hkv * n * pb.shape.D * pb.eb;
export const gradBytes = (pb: Problem, h: Heads, n: number) => pb.shape.B * h.Hkv * n * pb.shape.D * 4;

/** Empty K/V slots for chunks of up to `maxSeg[i]` tokens in segment i. */
export function allocKV(ctx: Rank, pb: Problem, h: Heads, maxSeg: number[], label: string): KVChunk {
  return {
    from: -1, segs: [],
    k: maxSeg.map((n, i) => ctx.alloc(kvBytes(pb, h, n), `${label}.k${i}`)),
    v: maxSeg.map((n, i) => ctx.alloc(kvBytes(pb, h, n), `${label}.v${i}`)),
  };
}

export function allocGrad(ctx: Rank, pb: Problem, h: Heads, maxSeg: number[], label: string): GradChunk {
  return {
    dk: maxSeg.map((n, i) => ctx.alloc(gradBytes(pb, h, n), `${label}.dk${i}`)),
    dv: maxSeg.map((n, i) => ctx.alloc(gradBytes(pb, h, n), `${label}.dv${i}`)),
  };
}

export function freeChunk(ctx: Rank, c: { k?: GPUBuffer[]; v?: GPUBuffer[]; dk?: GPUBuffer[]; dv?: GPUBuffer[] }): void {
  for (const b of [...(c.k ?? []), ...(c.v ?? []), ...(c.dk ?? []), ...(c.dv ?? [])]) ctx.release(b);
}

/** The ranges of a chunk's K and V (or dK and dV) for a transfer. */
export function kvRanges(pb: Problem, h: Heads, c: KVChunk, segs = c.segs) {
  return segs.flatMap((sg, i) => [{ buffer: c.k[i], bytes: kvBytes(pb, h, sg.count) }, { buffer: c.v[i], bytes: kvBytes(pb, h, sg.count) }]);
}

export function gradRanges(pb: Problem, h: Heads, g: GradChunk, segs: Segment[]) {
  return segs.flatMap((sg, i) => [{ buffer: g.dk[i], bytes: gradBytes(pb, h, sg.count) }, { buffer: g.dv[i], bytes: gradBytes(pb, h, sg.count) }]);
}

/**
 * Rows row0 … row0 + count − 1 of heads h0 … h0 + Hl − 1 of a [B, H, n, row] buffer, one range
 * per (batch, head), so both ends of an exchange match item by item (a segment written at its
 * rows of a run on one end, a whole segment buffer on the other).
 */
export const rows = (buf: GPUBuffer, B: number, H: number, h0: number, Hl: number, n: number, row0: number, count: number, rowBytes: number): BufRange[] =>
  Array.from({ length: B * Hl }, (_, x) => ({ buffer: buf, offset: ((Math.floor(x / Hl) * H + h0 + (x % Hl)) * n + row0) * rowBytes, bytes: count * rowBytes }));

/** Largest token count per segment index over chunks. */
export function maxSegs(chunks: Segment[][]): number[] {
  const out: number[] = [];
  for (const c of chunks) c.forEach((s, i) => (out[i] = Math.max(out[i] ?? 0, s.count)));
  return out;
}

/**
 * A rank's sequence shard as the orchestrator hands it over (one buffer per segment, all heads)
 * and where a scheme leaves its results: O and LSE after the forward (LSE starts at −inf),
 * dQ, dK and dV (f32) after the backward.
 */
export interface RankIO {
  rank: number;
  /** Every rank's shard (the layout), so a rank knows what it receives. */
  shards: Segment[][];
  q: GPUBuffer[];
  k: GPUBuffer[];
  v: GPUBuffer[];
  dout: GPUBuffer[] | null;
  o: GPUBuffer[];
  lse: GPUBuffer[];
  dq: GPUBuffer[];
  dk: GPUBuffer[];
  dv: GPUBuffer[];
}

/** A CP scheme: what one rank does, forward then backward (with what the forward kept). */
export interface RankProgram<S = unknown> {
  forward(ctx: Rank, pb: Problem, io: RankIO): Promise<S>;
  backward(ctx: Rank, pb: Problem, io: RankIO, kept: S): Promise<void>;
}

/** A Q block over the sequence shard's own buffers. */
export function shardQ(ctx: Rank, pb: Problem, io: RankIO, phase: 'forward' | 'backward'): QBlock {
  const h = { Hq: pb.shape.Hq, Hkv: pb.shape.Hkv };
  const segs = io.shards[io.rank];
  return {
    heads: h,
    segs: segs.map((seg, i) => ({
      seg, q: io.q[i], o: io.o[i], lse: io.lse[i], fresh: phase === 'forward',
      ...(phase === 'backward' ? { dout: io.dout![i], dq: io.dq[i], delta: ctx.alloc(pb.shape.B * h.Hq * seg.count * 4, `delta${i}`) } : {}),
    })),
  };
}

/** Frees a Q block's scratch (Δ); its Q, O, LSE, dO, dQ belong to whoever made them. */
export function releaseQ(ctx: Rank, Q: QBlock): void {
  for (const b of Q.segs.map((s) => s.delta)) if (b) ctx.release(b);
  for (const s of Q.segs) delete s.delta;
}
