/**
 * One forward+backward on the GPU against the float64 reference, at a given shape, on fresh
 * random inputs: the self-test (`flashring selftest`) and the bench's correctness gate.
 */
import { FlashDevice } from '../gpu/device.js';
import { AttentionOptions, AttentionShape, numel } from '../shape.js';
import { referenceBackward, referenceForward } from '../reference/attention.js';
import { TOL, randn, referenceInput, relErr } from '../reference/compare.js';
import { attentionBackward, attentionForward, toF32 } from './attention.js';
import { KernelPath } from './pipeline.js';
import { Precision } from './precision.js';

export interface CheckResult {
  errO: number;
  errLSE: number;
  errDQ: number;
  errDK: number;
  errDV: number;
  /** Every error within the contract's tolerance for the precision. */
  ok: boolean;
}

/** `opts`: the mask (causal, window, documents) and scale, the precision, a seed, and a kernel path (default auto). */
export async function checkAgainstReference(
  dev: FlashDevice, s: AttentionShape, opts: AttentionOptions & { precision: Precision; seed: number; path?: KernelPath },
): Promise<CheckResult> {
  const { precision, seed, path, ...mask } = opts;
  const x = { q: randn(numel(s, 'q'), seed), k: randn(numel(s, 'kv'), seed + 1), v: randn(numel(s, 'kv'), seed + 2) };
  const dout = randn(numel(s, 'q'), seed + 3);
  const f = (a: Float32Array) => referenceInput(a, precision);
  const rf = referenceForward(s, f(x.q), f(x.k), f(x.v), mask);
  const fw = await attentionForward(dev, s, x, { ...mask, precision, path });
  // The backward against the float64 backward of its own inputs, O as the forward stored it among them (docs/numerics.md).
  const rb = referenceBackward(s, f(x.q), f(x.k), f(x.v), f(dout), mask, toF32(fw.o));
  const bw = await attentionBackward(dev, s, { ...x, o: fw.o, lse: fw.lse, dout }, { ...mask, precision, path });
  const r = {
    errO: relErr(toF32(fw.o), rf.o), errLSE: relErr(fw.lse, rf.lse),
    errDQ: relErr(toF32(bw.dq), rb.dq), errDK: relErr(toF32(bw.dk), rb.dk), errDV: relErr(toF32(bw.dv), rb.dv),
  };
  const tol = TOL[precision];
  return { ...r, ok: Math.max(r.errO, r.errLSE) <= tol.out && Math.max(r.errDQ, r.errDK, r.errDV) <= tol.grad };
}
