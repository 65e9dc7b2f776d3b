/**
 * Precision follows the data in the library: 'auto' (the default) computes f32 for Float32Array
 * inputs and f16 for Uint16Array (half bits) inputs where the device has shader-f16; f16 asked
 * for with f32 values beyond float16's range is an error naming the tensor.
 */
import { describe, expect, it } from 'vitest';
import { attentionBackward, attentionForward } from '../src/kernels/attention.js';
import { resolvePrecision } from '../src/kernels/precision.js';
import { toHalfArray } from '../src/f16.js';
import { InputError } from '../src/errors.js';
import { referenceBackward, referenceForward } from '../src/reference/attention.js';
import { testDevice } from './gpu.js';
import { err, makeInputs, refInputs, SEED, TOL } from './cases.js';

describe('precision auto follows the inputs', () => {
  const s = { B: 1, Hq: 2, Hkv: 1, Nq: 24, Nk: 24, D: 16 };

  it('f32 in → f32 computed and returned, forward and backward', async () => {
    const dev = await testDevice();
    const x = makeInputs(s, SEED + 31);
    const fwd = await attentionForward(dev, s, x);
    expect(fwd.precision).toBe('f32');
    expect(fwd.o).toBeInstanceOf(Float32Array);
    const bwd = await attentionBackward(dev, s, { ...x, o: fwd.o, lse: fwd.lse });
    expect(bwd.precision).toBe('f32');
    expect(bwd.dq).toBeInstanceOf(Float32Array);
  });

  it('f16 bits in → f16 where the device has shader-f16 (else f32)', async () => {
    const dev = await testDevice();
    const x = makeInputs(s, SEED + 32);
    const h = { q: toHalfArray(x.q), k: toHalfArray(x.k), v: toHalfArray(x.v) };
    const fwd = await attentionForward(dev, s, h, { precision: 'auto' });
    expect(fwd.precision).toBe(dev.hasF16 ? 'f16' : 'f32');
    expect(fwd.o).toBeInstanceOf(dev.hasF16 ? Uint16Array : Float32Array);
    // Mixed inputs are not all f16: f32.
    expect(resolvePrecision(dev, 'auto', [h.q, x.k, h.v])).toBe('f32');
    expect(resolvePrecision(dev, 'auto')).toBe('f32');
    // The numbers: against float64 attention on the same f16-rounded inputs, at the tolerance of the precision computed.
    const r = refInputs(x, 'f16');
    const ref = referenceForward(s, r.q, r.k, r.v);
    expect(err(fwd.o, ref.o)).toBeLessThanOrEqual(TOL[fwd.precision].out);
    expect(err(fwd.lse, ref.lse)).toBeLessThanOrEqual(TOL[fwd.precision].out);
  });

  it('f16 bits computed in f32 (asked for, or mixed with f32 inputs): the half values decoded, checked against float64', async () => {
    const dev = await testDevice();
    const x = makeInputs(s, SEED + 34);
    const h = { q: toHalfArray(x.q), k: toHalfArray(x.k), v: toHalfArray(x.v), dout: toHalfArray(x.dout) };
    const r = refInputs(x, 'f16'); // the values the half bits hold, in float64
    const ref = referenceForward(s, r.q, r.k, r.v), refB = referenceBackward(s, r.q, r.k, r.v, r.dout);
    // All half bits, f32 asked for: computed and returned in f32.
    const fwd = await attentionForward(dev, s, h, { precision: 'f32' });
    expect(fwd.precision).toBe('f32');
    expect(fwd.o).toBeInstanceOf(Float32Array);
    expect(err(fwd.o, ref.o)).toBeLessThanOrEqual(TOL.f32.out);
    expect(err(fwd.lse, ref.lse)).toBeLessThanOrEqual(TOL.f32.out);
    const bwd = await attentionBackward(dev, s, { ...h, o: fwd.o, lse: fwd.lse }, { precision: 'f32' });
    expect(bwd.precision).toBe('f32');
    for (const g of ['dq', 'dk', 'dv'] as const) expect(err(bwd[g], refB[g]), g).toBeLessThanOrEqual(TOL.f32.grad);
    // Mixed under 'auto' (half Q, V and dO, f32 K and O): f32, each tensor read as the values it holds.
    const mixed = { q: h.q, k: x.k, v: h.v };
    const refM = referenceForward(s, r.q, x.k, r.v);
    const fm = await attentionForward(dev, s, mixed);
    expect(fm.precision).toBe('f32');
    expect(fm.o).toBeInstanceOf(Float32Array);
    expect(err(fm.o, refM.o)).toBeLessThanOrEqual(TOL.f32.out);
    expect(err(fm.lse, refM.lse)).toBeLessThanOrEqual(TOL.f32.out);
    const refMB = referenceBackward(s, r.q, x.k, r.v, r.dout);
    const bm = await attentionBackward(dev, s, { ...mixed, o: fm.o, lse: fm.lse, dout: h.dout });
    expect(bm.precision).toBe('f32');
    for (const g of ['dq', 'dk', 'dv'] as const) expect(err(bm[g], refMB[g]), g).toBeLessThanOrEqual(TOL.f32.grad);
  });

  it('f16 asked for: a finite value beyond ±65504 is an error naming the tensor', async () => {
    const dev = await testDevice();
    if (!dev.hasF16) return expect(resolvePrecision(dev, 'auto', [new Uint16Array(1)])).toBe('f32');
    const x = makeInputs(s, SEED + 33);
    const v = x.v.slice();
    v[3] = -70000;
    await expect(attentionForward(dev, s, { ...x, v }, { precision: 'f16' })).rejects.toThrow(InputError);
    await expect(attentionForward(dev, s, { ...x, v }, { precision: 'f16' })).rejects.toThrow(/^V holds -70000 \(element 3\), beyond float16's range/);
    v[3] = 65504; // the largest half: fine
    expect((await attentionForward(dev, s, { ...x, v }, { precision: 'f16' })).precision).toBe('f16');
  });
});
