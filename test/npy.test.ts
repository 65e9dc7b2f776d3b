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
      // A version 2 file cut after 10 bytes: its 4-byte header length is not all there.
      [rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4, 2).subarray(0, 10), /truncated header: a version 2 file needs 12 bytes/],
      [rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", f4), /4 unexpected bytes after the data/],
      [rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", f4), /bad shape/],
      [rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,,1), }", f4), /bad shape/],
      [rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (n,), }", f4), /bad shape/],
      [rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", f4), /too large/],
      [rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536, 65536), }", f4), /too large/],
      [rawNpy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", f4), /dtype '<c8' is not supported/],
      [rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4).subarray(0, 7), /magic/],
    ];
    for (const [bytes, re] of cases) {
      expect(() => parseNpy(bytes, 'x.npy')).toThrow(NpyError);
      expect(() => parseNpy(bytes, 'x.npy')).toThrow(re);
      expect(() => parseNpy(bytes, 'x.npy')).toThrow(/^x\.npy: /);
    }
  });

  it('refuses a header that gives a key twice (NumPy would read the last) or a key np.save does not write', () => {
    const f4 = new Uint8Array(new Float32Array([1, 2]).buffer);
    const cases: [string, RegExp][] = [
      ["{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'shape': (2,), }", /^x\.npy: the header gives 'shape' twice \(NumPy would read the last, so what the array is is unclear\): the file is damaged; save the array again with np\.save$/],
      ["{'descr': '<f2', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", /the header gives 'descr' twice/],
      ["{'descr': '<f4', 'fortran_order': True, 'fortran_order': False, 'shape': (2,), }", /the header gives 'fortran_order' twice/],
      ["{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1, }", /^x\.npy: unknown key 'extra' in the header \(np\.save writes only 'descr', 'fortran_order' and 'shape'\): save the array again with np\.save$/],
      ["{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } {'shape': (1,)}", /malformed header/],
      ["{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }", /malformed header/],
      ["{'descr': <f4, 'fortran_order': False, 'shape': (2,), }", /malformed header/],
      ["{'descr': '<f4', 'fortran_order': None, 'shape': (2,), }", /malformed header/],
      ["{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", /malformed header/],
    ];
    for (const [h, re] of cases) {
      expect(() => parseNpy(rawNpy(h, f4), 'x.npy'), h).toThrow(NpyError);
      expect(() => parseNpy(rawNpy(h, f4), 'x.npy'), h).toThrow(re);
    }
    // What literal_eval reads alike: double quotes, any order, no trailing comma.
    const a = parseNpy(rawNpy('{"shape": (2,), "fortran_order": False, "descr": "<f4"}', f4), 'x.npy');
    expect([...a.data]).toEqual([1, 2]);
  });

  it('random and damaged bytes give an NpyError, never another exception (seeded)', () => {
    const seed = 20261201;
    let st = seed;
    const rnd = () => ((st = (Math.imul(st, 1664525) + 1013904223) >>> 0) / 2 ** 32);
    const good = encodeNpy({ dtype: 'f4', shape: [2, 3], data: new Float32Array(6) });
    for (let i = 0; i < 3000; i++) {
      const b = rnd() < 0.5 ? Uint8Array.from({ length: Math.floor(rnd() * 160) }, () => Math.floor(rnd() * 256)) : good.slice(0, Math.floor(rnd() * (good.length + 8)));
      if (rnd() < 0.7 && b.length >= 8) b.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1 + Math.floor(rnd() * 3)], 0);
      if (b.length > 12 && rnd() < 0.5) b[8 + Math.floor(rnd() * (b.length - 8))] = Math.floor(rnd() * 256);
      try {
        parseNpy(b, 'r.npy');
      } catch (e) {
        expect(e, `seed ${seed}, case ${i}`).toBeInstanceOf(NpyError);
      }
    }
  });
});
