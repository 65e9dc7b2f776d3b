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
import { testDevice } from './gpu.js';
import { makeInputs, SEED } from './cases.js';

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
