/**
 * `flashring attention --precision f16` on float64 .npy inputs rounds each value to f16 once, as
 * numpy's astype(float16) does, not through float32 first (where a value next to a midpoint between two
 * halves lands on it and ties to even: 1 + 2^-11 + 2^-40 became 1, not 1 + 2^-10).
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeNpy, parseNpy } from '../src/cli/npy.js';
import { flashring } from './cli-run.js';

const attention = flashring('attention');

describe('float64 inputs computed in f16', () => {
  it('one key: O is V, each value rounded to f16 once from its float64', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashring-f64-half-'));
    try {
      const D = 8;
      // Each f32-rounds onto a midpoint between two halves; the correct half is the one on x's side.
      const v = [1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -11 - 2 ** -40, -(1 + 3 * 2 ** -11 - 2 ** -40), 2 ** -25 + 2 ** -60,
        1024 + 0.5 + 2 ** -30, 0.5, -2, 3];
      const want = [0x3c01, 0x3c00, 0xbc01, 0x0001, 0x6401, 0x3800, 0xc000, 0x4200];
      const npy = (name: string, data: number[]) =>
        writeFileSync(join(dir, name), encodeNpy({ dtype: 'f8', shape: [1, 1, 1, D], data: Float64Array.from(data) }));
      npy('q.npy', [1, 0, 0, 0, 0, 0, 0, 0]);
      npy('k.npy', [0.5, 0, 0, 0, 0, 0, 0, 0]);
      npy('v.npy', v);
      const out = join(dir, 'out');
      const r = await attention(['--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy'), '--out', out, '--precision', 'f16']);
      expect(r.code, r.err).toBe(0);
      const o = parseNpy(new Uint8Array(readFileSync(join(out, 'o.npy'))));
      expect(o.dtype).toBe('f2');
      expect(Array.from(o.data as Uint16Array).map((h) => `0x${h.toString(16)}`)).toEqual(want.map((h) => `0x${h.toString(16)}`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
