/**
 * What a backward's gradients are judged against (docs/numerics.md, the backward's reference), one helper for every
 * test file that compares gradients with the float64 reference at f16, or at a precision it is given.
 */
import { expect } from 'vitest';
import { referenceBackward, referenceForward, BackwardResult } from '../src/reference/attention.js';
import { HostTensor, toF32 } from '../src/kernels/attention.js';
import { Precision } from '../src/kernels/precision.js';
import { AttentionOptions, AttentionShape } from '../src/shape.js';
import { err, TOL } from './cases.js';

/** The inputs as the reference sees them (refInputs: f16-rounded for f16). */
export interface RefInputs {
  q: ArrayLike<number>;
  k: ArrayLike<number>;
  v: ArrayLike<number>;
  dout: ArrayLike<number>;
}

/**
 * The gradients' reference: where the exact gradient is finite, the float64 backward of the kernel's own inputs, O
 * as the backward was handed it among them (Δ = rowsum(dO ∘ O) from that O, as the kernels and FlashAttention take
 * it: referenceBackward's givenO); where the exact gradient is NaN or ±Inf, that value in its place. At f16 the
 * stored O's rounding alone can move dQ and dK past the tolerance from the exact gradients where dS = P ∘ (dP − Δ)
 * cancels. Honest only while that O is the forward's within its tolerance: `o` is checked here against the exact
 * forward at `p`'s tolerance (`what` names the case in the message).
 */
export function gradReference(s: AttentionShape, r: RefInputs, opts: AttentionOptions, o: HostTensor, p: Precision, what = ''): BackwardResult {
  const handed = toF32(o);
  expect(err(handed, referenceForward(s, r.q, r.k, r.v, opts).o), `the O the backward was handed ${what}`).toBeLessThanOrEqual(TOL[p].out);
  const exact = referenceBackward(s, r.q, r.k, r.v, r.dout, opts);
  const given = referenceBackward(s, r.q, r.k, r.v, r.dout, opts, handed);
  const place = (e: Float64Array, g: Float64Array) => e.map((y, i) => (Number.isFinite(y) ? g[i] : y));
  return { dq: place(exact.dq, given.dq), dk: place(exact.dk, given.dk), dv: place(exact.dv, given.dv) };
}

/**
 * The relative norm of the contract; where the reference gradient is identically zero (one visible key: the
 * softmax is constant, so dQ = dK = 0) it is undefined, and the error is measured against the scale of the same
 * backward's dV instead: ‖x‖ / ‖dV_ref‖.
 */
export function gradErr(x: HostTensor, ref: Float64Array, scaleRef: Float64Array): number {
  const norm = (a: ArrayLike<number>) => Math.sqrt(Array.from(a).reduce((t, v) => t + v * v, 0));
  if (norm(ref) > 0) return err(x, ref);
  const xs = toF32(x);
  if (!xs.every(Number.isFinite)) return Infinity;
  return norm(xs) / norm(scaleRef);
}
