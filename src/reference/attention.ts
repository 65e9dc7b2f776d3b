/**
 * Plain softmax attention in float64 on the CPU: the ground truth every kernel is tested against.
 * S = scale·QKᵀ (masked entries excluded), P = softmax(S), O = PV, LSE = log Σ_j exp(S_ij).
 * A fully masked row gives O = 0 and LSE = -inf.
 */
import { AttentionOptions, AttentionShape, resolveOptions, validateShape, ResolvedOptions } from '../shape.js';

export interface ForwardResult {
  o: Float64Array;
  lse: Float64Array;
}

export interface BackwardResult {
  dq: Float64Array;
  dk: Float64Array;
  dv: Float64Array;
}

export function isVisible(o: ResolvedOptions, i: number, j: number): boolean {
  if (!o.causal) return true;
  return o.kPos.offset + j * o.kPos.stride <= o.qPos.offset + i * o.qPos.stride;
}

/** Row of scores for query i of one head, -Infinity where masked; returns the max. */
function scoresRow(
  s: AttentionShape, o: ResolvedOptions, q: ArrayLike<number>, k: ArrayLike<number>,
  qBase: number, kvBase: number, i: number, out: Float64Array,
): number {
  let m = -Infinity;
  for (let j = 0; j < s.Nk; j++) {
    if (!isVisible(o, i, j)) { out[j] = -Infinity; continue; }
    let dot = 0;
    const kb = kvBase + j * s.D;
    for (let d = 0; d < s.D; d++) dot += q[qBase + d] * k[kb + d];
    out[j] = dot * o.scale;
    if (out[j] > m) m = out[j];
  }
  return m;
}

export function referenceForward(
  s: AttentionShape, q: ArrayLike<number>, k: ArrayLike<number>, v: ArrayLike<number>, opts: AttentionOptions = {},
): ForwardResult {
  validateShape(s);
  const o = resolveOptions(s, opts);
  const G = s.Hq / s.Hkv;
  const out = new Float64Array(s.B * s.Hq * s.Nq * s.D);
  const lse = new Float64Array(s.B * s.Hq * s.Nq);
  const row = new Float64Array(s.Nk);
  for (let b = 0; b < s.B; b++)
    for (let h = 0; h < s.Hq; h++) {
      const kvHead = ((b * s.Hkv + Math.floor(h / G)) * s.Nk) * s.D;
      for (let i = 0; i < s.Nq; i++) {
        const r = (b * s.Hq + h) * s.Nq + i;
        const m = scoresRow(s, o, q, k, r * s.D, kvHead, i, row);
        if (m === -Infinity) { lse[r] = -Infinity; continue; }
        let l = 0;
        for (let j = 0; j < s.Nk; j++) {
          const p = Math.exp(row[j] - m);
          row[j] = p;
          l += p;
        }
        for (let j = 0; j < s.Nk; j++) {
          if (row[j] === 0) continue;
          const p = row[j] / l;
          const vb = kvHead + j * s.D;
          for (let d = 0; d < s.D; d++) out[r * s.D + d] += p * v[vb + d];
        }
        lse[r] = m + Math.log(l);
      }
    }
  return { o: out, lse };
}

/**
 * Gradients of a loss L given dO = ∂L/∂O:
 * P = exp(S - LSE), dV = Pᵀ dO, dP = dO Vᵀ, Δ_i = Σ_j P_ij dP_ij, dS = P ∘ (dP - Δ),
 * dQ = scale · dS K, dK = scale · dSᵀ Q (dK, dV summed over the query heads of a group).
 */
export function referenceBackward(
  s: AttentionShape, q: ArrayLike<number>, k: ArrayLike<number>, v: ArrayLike<number>,
  dout: ArrayLike<number>, opts: AttentionOptions = {},
): BackwardResult {
  validateShape(s);
  const o = resolveOptions(s, opts);
  const { lse } = referenceForward(s, q, k, v, opts);
  const G = s.Hq / s.Hkv;
  const dq = new Float64Array(s.B * s.Hq * s.Nq * s.D);
  const dk = new Float64Array(s.B * s.Hkv * s.Nk * s.D);
  const dv = new Float64Array(s.B * s.Hkv * s.Nk * s.D);
  const row = new Float64Array(s.Nk);
  const dp = new Float64Array(s.Nk);
  for (let b = 0; b < s.B; b++)
    for (let h = 0; h < s.Hq; h++) {
      const kvHead = ((b * s.Hkv + Math.floor(h / G)) * s.Nk) * s.D;
      for (let i = 0; i < s.Nq; i++) {
        const r = (b * s.Hq + h) * s.Nq + i;
        if (lse[r] === -Infinity) continue; // fully masked row: no gradient
        scoresRow(s, o, q, k, r * s.D, kvHead, i, row);
        let delta = 0;
        for (let j = 0; j < s.Nk; j++) {
          const p = row[j] === -Infinity ? 0 : Math.exp(row[j] - lse[r]);
          row[j] = p;
          let acc = 0;
          const vb = kvHead + j * s.D;
          for (let d = 0; d < s.D; d++) acc += dout[r * s.D + d] * v[vb + d];
          dp[j] = acc;
          delta += p * acc;
        }
        for (let j = 0; j < s.Nk; j++) {
          const p = row[j];
          if (p === 0) continue;
          const ds = p * (dp[j] - delta);
          const kb = kvHead + j * s.D;
          for (let d = 0; d < s.D; d++) {
            dv[kb + d] += p * dout[r * s.D + d];
            dq[r * s.D + d] += o.scale * ds * k[kb + d];
            dk[kb + d] += o.scale * ds * q[r * s.D + d];
          }
        }
      }
    }
  return { dq, dk, dv };
}
