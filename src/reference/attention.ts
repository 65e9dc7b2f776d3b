/**
 * Plain softmax attention in float64 on the CPU: the ground truth every kernel is tested against.
 * S = scale·QKᵀ (masked entries excluded), P = softmax(S), O = PV, LSE = log Σ_j exp(S_ij).
 * A fully masked row (no visible key: the mask, not the data) gives O = 0 and LSE = -inf.
 *
 * Non-finite inputs follow plain IEEE arithmetic of the untiled algorithm, as PyTorch's math
 * SDPA: the row max m is NaN when any visible score is NaN, P = exp(S − m) is evaluated for every
 * visible key (0·Inf = NaN is kept, never skipped), so a NaN or Inf in Q, K, V or dO reaches
 * every output it feeds. Kernels must give a non-finite value exactly where this does.
 */
import { AttentionOptions, AttentionShape, resolveOptions, validateShape, ResolvedOptions } from '../shape.js';
import { Mask } from '../mask.js';

export interface ForwardResult {
  o: Float64Array;
  lse: Float64Array;
}

export interface BackwardResult {
  dq: Float64Array;
  dk: Float64Array;
  dv: Float64Array;
}

/** Key j is visible to query i under the options' mask (src/mask.ts). */
export function isVisible(s: AttentionShape, o: ResolvedOptions, i: number, j: number): boolean {
  return new Mask(o, s.Nq, s.Nk).isVisible(i, j);
}

/**
 * Row of scores for query i of one head (-Infinity where masked, `visible` marks the rest);
 * returns the max over visible keys (NaN if any visible score is NaN), or null when no key is
 * visible (a masked row).
 */
function scoresRow(
  s: AttentionShape, o: ResolvedOptions, mask: Mask, q: ArrayLike<number>, k: ArrayLike<number>,
  qBase: number, kvBase: number, i: number, out: Float64Array, visible: Uint8Array,
): number | null {
  let m = -Infinity, any = false;
  const [lo, hi] = mask.keyRange(i);
  for (let j = 0; j < s.Nk; j++) {
    visible[j] = j >= lo && j < hi ? 1 : 0;
    if (!visible[j]) { out[j] = -Infinity; continue; }
    let dot = 0;
    const kb = kvBase + j * s.D;
    for (let d = 0; d < s.D; d++) dot += q[qBase + d] * k[kb + d];
    out[j] = dot * o.scale;
    if (!(out[j] <= m)) m = out[j]; // NaN wins: max(NaN, x) = NaN
    any = true;
  }
  return any ? m : null;
}

/**
 * For every query row (b, h, i), r = (b·Hq + h)·Nq + i its index in [B, Hq, Nq]: its scores and
 * visible keys into `row` and `vis` (scoresRow), then f(r, kvHead, m), kvHead the offset of its
 * K/V head (grouped-query: Hq/Hkv query heads per K/V head), m its max visible score (null: none).
 */
function eachScoredRow(
  s: AttentionShape, o: ResolvedOptions, q: ArrayLike<number>, k: ArrayLike<number>, row: Float64Array, vis: Uint8Array,
  f: (r: number, kvHead: number, m: number | null) => void,
): void {
  const mask = new Mask(o, s.Nq, s.Nk);
  const G = s.Hq / s.Hkv;
  for (let b = 0; b < s.B; b++)
    for (let h = 0; h < s.Hq; h++) {
      const kvHead = ((b * s.Hkv + Math.floor(h / G)) * s.Nk) * s.D;
      for (let i = 0; i < s.Nq; i++) {
        const r = (b * s.Hq + h) * s.Nq + i;
        f(r, kvHead, scoresRow(s, o, mask, q, k, r * s.D, kvHead, i, row, vis));
      }
    }
}

export function referenceForward(
  s: AttentionShape, q: ArrayLike<number>, k: ArrayLike<number>, v: ArrayLike<number>, opts: AttentionOptions = {},
): ForwardResult {
  validateShape(s);
  const o = resolveOptions(s, opts);
  const out = new Float64Array(s.B * s.Hq * s.Nq * s.D);
  const lse = new Float64Array(s.B * s.Hq * s.Nq);
  const row = new Float64Array(s.Nk);
  const vis = new Uint8Array(s.Nk);
  eachScoredRow(s, o, q, k, row, vis, (r, kvHead, m) => {
    if (m === null) { lse[r] = -Infinity; return; }
    let l = 0;
    for (let j = 0; j < s.Nk; j++) {
      if (!vis[j]) continue;
      const p = Math.exp(row[j] - m);
      row[j] = p;
      l += p;
    }
    for (let j = 0; j < s.Nk; j++) {
      if (!vis[j]) continue;
      const p = row[j] / l;
      const vb = kvHead + j * s.D;
      for (let d = 0; d < s.D; d++) out[r * s.D + d] += p * v[vb + d];
    }
    lse[r] = m + Math.log(l);
  });
  return { o: out, lse };
}

/**
 * Gradients of a loss L given dO = ∂L/∂O:
 * P = exp(S - LSE), dV = Pᵀ dO, dP = dO Vᵀ, Δ_i = Σ_j P_ij dP_ij, dS = P ∘ (dP - Δ),
 * dQ = scale · dS K, dK = scale · dSᵀ Q (dK, dV summed over the query heads of a group).
 * `givenO`: Δ_i = Σ_d dO_id O_id from this O instead (the forward's output as a backward kernel is handed it, stored
 * in its precision: FlashAttention's preprocessing), the exact backward of those inputs. Where dP_ij ≈ Δ_i, dS cancels,
 * and O's rounding to f16 moves the gradient more than the f16 contract allows (test/backward.test.ts, NaN and Inf).
 */
export function referenceBackward(
  s: AttentionShape, q: ArrayLike<number>, k: ArrayLike<number>, v: ArrayLike<number>,
  dout: ArrayLike<number>, opts: AttentionOptions = {}, givenO?: ArrayLike<number>,
): BackwardResult {
  validateShape(s);
  const o = resolveOptions(s, opts);
  const { lse } = referenceForward(s, q, k, v, opts);
  const dq = new Float64Array(s.B * s.Hq * s.Nq * s.D);
  const dk = new Float64Array(s.B * s.Hkv * s.Nk * s.D);
  const dv = new Float64Array(s.B * s.Hkv * s.Nk * s.D);
  const row = new Float64Array(s.Nk);
  const vis = new Uint8Array(s.Nk);
  const dp = new Float64Array(s.Nk);
  eachScoredRow(s, o, q, k, row, vis, (r, kvHead, m) => {
    if (m === null) return; // masked row: no gradient
    let delta = 0;
    for (let j = 0; j < s.Nk; j++) {
      if (!vis[j]) continue;
      const p = Math.exp(row[j] - lse[r]);
      row[j] = p;
      let acc = 0;
      const vb = kvHead + j * s.D;
      for (let d = 0; d < s.D; d++) acc += dout[r * s.D + d] * v[vb + d];
      dp[j] = acc;
      delta += p * acc;
    }
    if (givenO) {
      delta = 0;
      for (let d = 0; d < s.D; d++) delta += dout[r * s.D + d] * givenO[r * s.D + d];
    }
    for (let j = 0; j < s.Nk; j++) {
      if (!vis[j]) continue;
      const p = row[j];
      const ds = p * (dp[j] - delta);
      const kb = kvHead + j * s.D;
      for (let d = 0; d < s.D; d++) {
        dv[kb + d] += p * dout[r * s.D + d];
        dq[r * s.D + d] += o.scale * ds * k[kb + d];
        dk[kb + d] += o.scale * ds * q[r * s.D + d];
      }
    }
  });
  return { dq, dk, dv };
}
