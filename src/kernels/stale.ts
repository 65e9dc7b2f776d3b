/**
 * The portable forward's stale row max (shaders/flash_fwd.wgsl STALE): a row's running max m is
 * raised only when a tile's max exceeds it by more than STALE (natural log), so its weights
 * P~ = exp(S − m) reach e^STALE and its f32 accumulator Σ P~ · V reaches Nk · e^STALE · max|V|,
 * where FlashAttention-2's exact running max (P~ ≤ 1) bounds it by Nk · max|V|. With the default
 * 8 that is ~2981× less headroom: one key scoring 7.9 above 127 others, all V = 1.5e35, gave
 * O = +Inf where the exact O is 1.5e35 (an adversarial review, 2026-12-05).
 *
 * STALE = 0 is the exact running max. The host entries, which see V, build that variant where
 * the bound could pass f32's largest (needsExactMaxFor: attentionForward from its V, needsExactMax;
 * the rings from their ShardSource's vMaxAbs: ringAttention, contextParallel,
 * ringAttentionProcesses); a caller of FlashForward on GPU buffers asks for it with
 * `exactMax: true` (default false: the stale max, fewer rescales). The tensor-core forward
 * (flash_fwd_sgmm.wgsl, TH = 8) is f16-only: there |V| ≤ 65504, and Nk · 2^8 · 65504 passes f32's
 * largest only beyond 2e31 keys, so it keeps its stale max.
 */
import { F32_MAX } from '../shape.js';
import { HALF_MAX, fromHalfBits } from '../f16.js';

/** The stale max's threshold (natural log), as the shader's specialization value. */
export const STALE_DEFAULT = '8.0';
/** The exact running max. */
export const STALE_EXACT = '0.0';

/** STALE's specialization value for a forward built with or without the exact running max. */
export const staleValue = (exactMax: boolean): string => (exactMax ? STALE_EXACT : STALE_DEFAULT);

/**
 * Largest finite |x| of f32 data, or of f16 data given as Uint16Array bits (NaN and ±Inf left
 * out: they propagate as they would anyway).
 */
export function maxFinite(x: Float32Array | Uint16Array): number {
  if (!(x instanceof Float32Array)) {
    let bits = 0;
    for (let i = 0; i < x.length; i++) {
      const b = x[i] & 0x7fff;
      if (b > bits && b < 0x7c00) bits = b;
    }
    return fromHalfBits(bits);
  }
  let m = 0;
  for (let i = 0; i < x.length; i++) {
    const a = Math.abs(x[i]);
    if (a > m && a !== Infinity) m = a;
  }
  return m;
}

/**
 * Whether the stale max could overflow the f32 accumulator: Nk · e^STALE · max|V| (with 1% for
 * rounding) beyond f32's largest, from what is known of V: `vMaxAbs`, its largest finite |V|
 * (undefined: not known, so the exact max, unless the kernels read f16: `f16`, where |V| ≤ 65504
 * and Nk · e^8 · 65504 passes f32's largest only beyond 1.7e30 keys). The one decision of every
 * host entry (attentionForward through needsExactMax, the rings from their ShardSource's vMaxAbs).
 */
export function needsExactMaxFor(Nk: number, vMaxAbs: number | undefined, f16 = false): boolean {
  const m = f16 ? Math.min(vMaxAbs ?? HALF_MAX, HALF_MAX) : vMaxAbs ?? Infinity;
  return Nk * Math.exp(Number(STALE_DEFAULT)) * m * 1.01 > F32_MAX;
}

/** needsExactMaxFor on host data in the kernels' precision: f32 values (scanned), or f16 bits (|V| ≤ 65504, not scanned). */
export const needsExactMax = (Nk: number, v: Float32Array | Uint16Array): boolean =>
  v instanceof Float32Array ? needsExactMaxFor(Nk, maxFinite(v)) : needsExactMaxFor(Nk, undefined, true);
