import { describe, expect, it } from 'vitest';
import { encodeNpy, parseNpy } from '../src/cli/npy.js';
import { NpyError } from '../src/errors.js';

function rawNpy(header: string, data: Uint8Array, version = 1): Uint8Array {
  const pre = version === 1 ? 10 : 12;
  let h = header;
  h += ' '.repeat((64 - ((pre + h.length + 1) % 64)) % 64) + '\n';
  const out = new Uint8Array(pre + h.length + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0]);
  const dv = new DataView(out.buffer);
  if (version === 1) dv.setUint16(8, h.length, true);
  else dv.setUint32(8, h.length, true);
  for (let i = 0; i < h.length; i++) out[pre + i] = h.charCodeAt(i);
  out.set(data, pre + h.length);
  return out;
}

describe('.npy', () => {
  it('round-trips f32, f16 and f64 with their shapes', () => {
    for (const arr of [
      { dtype: 'f4' as const, shape: [2, 3, 4], data: Float32Array.from({ length: 24 }, (_, i) => i * 0.5 - 3) },
      { dtype: 'f2' as const, shape: [5], data: Uint16Array.from([0x3c00, 0xc000, 0x7bff, 1, 0x8000]) },
      { dtype: 'f8' as const, shape: [1, 2], data: Float64Array.from([Math.PI, -1e300]) },
    ]) {
      const bytes = encodeNpy(arr);
      expect((10 + new DataView(bytes.buffer).getUint16(8, true)) % 64).toBe(0);
      const back = parseNpy(bytes);
      expect(back.dtype).toBe(arr.dtype);
      expect(back.shape).toEqual(arr.shape);
      expect([...back.data]).toEqual([...arr.data]);
    }
  });

  it('reads version 2 headers and scalar shapes written by NumPy', () => {
    const d = new Float32Array([7.5]);
    const a = parseNpy(rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", new Uint8Array(d.buffer), 2));
    expect(a.shape).toEqual([]);
    expect(a.data[0]).toBe(7.5);
  });

  it('rejects malformed files with a clear error', () => {
    const f4 = new Uint8Array(new Float32Array([1, 2]).buffer);
    const cases: [Uint8Array, RegExp][] = [
      [new Uint8Array([1, 2, 3]), /magic/],
      [rawNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", f4), /dtype '<i4' is not supported/],
      [rawNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", f4), /big-endian/],
      [rawNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", f4), /Fortran-order/],
      [rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4), /truncated data/],
      [rawNpy("{'shape': (2,), }", f4), /malformed header/],
      [rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4).subarray(0, 20), /truncated header/],
    ];
    for (const [bytes, re] of cases) {
      expect(() => parseNpy(bytes, 'x.npy')).toThrow(NpyError);
      expect(() => parseNpy(bytes, 'x.npy')).toThrow(re);
    }
  });
});
