/**
 * Attention problem description shared by the reference, the kernels and the ring.
 * Layout [B, H, N, D], row-major. Grouped-query heads: Hq is a multiple of Hkv and query head
 * hq reads K/V head floor(hq / (Hq / Hkv)).
 *
 * Positions: token i of the Q chunk sits at qPos.offset + i * qPos.stride, token j of the K/V
 * chunk at kPos.offset + j * kPos.stride; a chunk of two runs adds `jump` from row `split` on.
 * The mask (causal, sliding window, documents) is
 * defined on positions in src/mask.ts. The defaults (q offset Nk - Nq, stride 1; k offset 0,
 * stride 1) give FlashAttention-2's bottom-right alignment when Nq != Nk; with documents the q
 * offset defaults to 0 (each document is aligned bottom-right on its own).
 */
import { InputError } from './errors.js';
import { MaskOptions, MaskSpec, POS_MAX, Positions, checkDocuments, checkWindow } from './mask.js';

export type { Positions } from './mask.js';

export interface AttentionShape {
  B: number;
  Hq: number;
  Hkv: number;
  Nq: number;
  Nk: number;
  D: number;
}

/** The mask (causal, window, documents: src/mask.ts), the scale and the token positions of a call. */
export interface AttentionOptions extends MaskOptions {
  /** Softmax scale; defaults to 1/sqrt(D). */
  scale?: number;
  qPos?: Positions;
  kPos?: Positions;
}

export interface ResolvedOptions extends MaskSpec {
  scale: number;
}

export const MAX_HEAD_DIM = 256;
/** Largest finite float32, and its smallest normal number. */
export const F32_MAX = 3.4028234663852886e38;
export const F32_MIN_NORMAL = 1.1754943508222875e-38;

const isPosInt = (x: number) => Number.isInteger(x) && x >= 1;

export function validateShape(s: AttentionShape): void {
  for (const k of ['B', 'Hq', 'Hkv', 'Nq', 'Nk', 'D'] as const) {
    if (!isPosInt(s[k])) throw new InputError(`${k} must be a positive integer (empty tensors are not supported), got ${s[k]}`);
  }
  if (s.Hq % s.Hkv !== 0)
    throw new InputError(`query heads (${s.Hq}) must be a multiple of key/value heads (${s.Hkv}) for grouped-query attention`);
  if (s.D % 8 !== 0 || s.D > MAX_HEAD_DIM)
    throw new InputError(`head dim D=${s.D} is not supported: it must be a multiple of 8, at most ${MAX_HEAD_DIM}`);
}

export function resolveOptions(s: AttentionShape, o: AttentionOptions = {}): ResolvedOptions {
  const scale = o.scale ?? 1 / Math.sqrt(s.D);
  // The kernels hold the scale in f32: beyond its range it becomes Inf (all-NaN outputs) or a
  // denormal (flushed to 0 on GPUs: uniform attention), neither what was asked.
  if (!(scale >= F32_MIN_NORMAL && scale <= F32_MAX))
    throw new InputError(`softmax scale must be a positive number within float32's range (${F32_MIN_NORMAL.toPrecision(3)} to ${F32_MAX.toPrecision(3)}), got ${o.scale}`);
  const window = checkWindow(o.window ?? [-1, -1]);
  const docs = o.docs ?? null;
  // With given positions (the ring's chunks) the documents cover the whole sequence, not the chunk.
  if (docs) checkDocuments(docs, o.qPos ? undefined : s.Nq, o.kPos ? undefined : s.Nk);
  const qPos = o.qPos ?? { offset: docs ? 0 : s.Nk - s.Nq, stride: 1 };
  const kPos = o.kPos ?? { offset: 0, stride: 1 };
  for (const [n, p, rows] of [['qPos', qPos, s.Nq], ['kPos', kPos, s.Nk]] as const) {
    if (!Number.isInteger(p.offset) || !Number.isInteger(p.stride) || p.stride < 1)
      throw new InputError(`${n} needs an integer offset and a stride >= 1, got ${JSON.stringify(p)}`);
    if ((p.split === undefined) !== (p.jump === undefined) || (p.jump !== undefined && !(Number.isInteger(p.split) && p.split! >= 0 && Number.isInteger(p.jump) && p.jump >= 0)))
      throw new InputError(`${n}: a chunk of two runs needs both split and jump, integers >= 0, got ${JSON.stringify(p)}`);
    if (Math.abs(p.offset) >= POS_MAX || p.stride >= POS_MAX || (p.jump ?? 0) >= POS_MAX)
      throw new InputError(`${n}: positions must stay below ${POS_MAX} (offset, stride and jump), got ${JSON.stringify(p)}`);
    // The kernels hold positions in i32 and the mask's closed forms count on them staying in range.
    const last = p.offset + (rows - 1) * p.stride + (p.jump !== undefined && p.split! < rows ? p.jump : 0);
    if (last >= POS_MAX) throw new InputError(`${n}: the last of ${rows} positions would be ${last}; positions must stay below ${POS_MAX}, got ${JSON.stringify(p)}`);
  }
  return { causal: !!o.causal, window, docs, scale, qPos, kPos };
}

export function numel(s: AttentionShape, which: 'q' | 'kv' | 'lse'): number {
  if (which === 'q') return s.B * s.Hq * s.Nq * s.D;
  if (which === 'kv') return s.B * s.Hkv * s.Nk * s.D;
  return s.B * s.Hq * s.Nq;
}

/**
 * FLOPs of attention over `pairs` (query, key) pairs a head, B·H heads, head dim D: the forward's two
 * matmuls (QKᵀ and PV) are 4·pairs·D a head; the backward's (S again, dP, dV, dQ, dK) 2.5× that;
 * forward + backward 3.5×. Where a mask hides pairs, `pairs` is those it leaves visible.
 */
export function attentionPairFlops(pairs: number, B: number, H: number, D: number, pass: 'fwd' | 'bwd' | 'fwd+bwd' = 'fwd'): number {
  const f = 4 * B * H * pairs * D;
  return pass === 'fwd' ? f : pass === 'bwd' ? 2.5 * f : 3.5 * f;
}

/** attentionPairFlops of a whole call: Nq·Nk pairs, halved for causal (square case). */
export function attentionFlops(s: AttentionShape, causal: boolean, pass: 'fwd' | 'bwd' | 'fwd+bwd' = 'fwd'): number {
  return attentionPairFlops(s.Nq * s.Nk * (causal ? 0.5 : 1), s.B, s.Hq, s.D, pass);
}
