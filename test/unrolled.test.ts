/**
 * The portable kernels in the form GPUs compile them: the specializer unrolls their {{#loop}}s and
 * rt() bounds on every adapter but a CPU one (src/kernels/source.ts attentionValues), so lavapipe
 * alone would leave the unrolled forward, backward and Δ untested (a review dropped the last iteration
 * of an unrolled loop and every test still passed). Here a lavapipe device is presented as a GPU
 * (isCPU false: the unrolled source, the GPU's prefetch default) and both passes are checked against
 * the float64 reference, with masks, at the contract's tolerances, in each precision the adapter has (the
 * exact text of the unrolling is test/specialize.test.ts's).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { testDevice } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, type AttentionShape, type AttentionOptions } from './cases.js';
import type { FlashDevice } from '../src/gpu/device.js';
import { attentionBackward, attentionForward } from '../src/kernels/attention.js';
import { referenceForward } from '../src/reference/attention.js';
import { gradReference } from './gradRef.js';
import type { Precision } from '../src/kernels/precision.js';

let gpuLike: FlashDevice;
let precisions: Precision[];
beforeAll(async () => {
  const dev = await testDevice({ tuning: { path: 'scalar' } });
  gpuLike = Object.create(dev, { isCPU: { value: false, enumerable: true } }) as FlashDevice;
  precisions = dev.hasF16 ? ['f32', 'f16'] : ['f32'];
});

/** One shape with every mask concept at once (the unrolled compile is slow on lavapipe: one case keeps the suite within its minutes). */
const CASES: [AttentionShape, AttentionOptions][] = [
  [{ B: 1, Hq: 2, Hkv: 1, Nq: 45, Nk: 45, D: 32 }, { causal: true, window: [9, 0], docs: { cuQ: Int32Array.from([0, 17, 45]), cuK: Int32Array.from([0, 17, 45]) } }],
];

describe('the portable kernels unrolled, as a GPU runs them, against the float64 reference (lavapipe presented as a GPU)', () => {
  for (const [i, [s, opts]] of CASES.entries())
    it(`D=${s.D} ${JSON.stringify(opts, (_, v) => (v instanceof Int32Array ? [...v] : v))}: forward and backward`, async () => {
      for (const p of precisions) {
        const x = makeInputs(s, SEED + i, 1);
        const r = refInputs(x, p);
        const refF = referenceForward(s, r.q, r.k, r.v, opts);
        const fwd = await attentionForward(gpuLike, s, x, { ...opts, precision: p, path: 'scalar' });
        expect(fwd.path).toBe('scalar');
        expect(err(fwd.o, refF.o), `O ${p}`).toBeLessThanOrEqual(TOL[p].out);
        expect(err(fwd.lse, refF.lse), `LSE ${p}`).toBeLessThanOrEqual(TOL[p].out);
        // The gradients against the backward of its own inputs, this O among them (gradRef.ts).
        const ref = gradReference(s, r, opts, fwd.o, p, p);
        const got = await attentionBackward(gpuLike, s, { ...x, o: fwd.o, lse: fwd.lse }, { ...opts, precision: p, path: 'scalar' });
        for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k], ref[k]), `${k} ${p}`).toBeLessThanOrEqual(TOL[p].grad);
      }
    }, 300_000);
});
