/**
 * A run's .npy outputs are written from the arrays' own bytes (src/cli/outputs.ts outputFiles, npy.ts npyParts):
 * each file's data is its header and a view of its tensor, not a copy of both in one buffer, which held every
 * output twice at the end of a run (4 × 2 GiB more for 2 GiB tensors with the backward).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeNpy, parseNpy } from '../src/cli/npy.js';
import { OutputPlan } from '../src/cli/files.js';
import { RUN_RECORD, outputFiles } from '../src/cli/outputs.js';

/** A run's description for its record (the command's own: runAbout in src/cli/attention.ts). */
const ABOUT = { inputs: {}, causal: false, window: null, documents: null, scale: 0.125, precisionRequest: 'f32', ring: null };
const RAN = { precision: 'f32' as const, adapter: 'test adapter', robust: false };

const dir = mkdtempSync(join(tmpdir(), 'flashring-copies-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('output arrays are not copied to be written', () => {
  const s = { B: 1, Hq: 4, Hkv: 2, Nq: 8, Nk: 16, D: 8 };
  const t = (n: number, k: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * k));
  const o = t(256, 1), dq = t(256, 2), dk = t(256, 3), dv = t(256, 4), lse = t(32, 5);

  it('each .npy is its header and a view of its own array', () => {
    const files = outputFiles(dir, s, RAN, { o, dq, dk, dv }, ABOUT, lse);
    for (const [name, arr] of [['o', o], ['dq', dq], ['dk', dk], ['dv', dv], ['lse', lse]] as const) {
      const data = files.find((f) => f.path === join(dir, `${name}.npy`))!.data;
      expect(Array.isArray(data), name).toBe(true);
      const [, body] = data as readonly Uint8Array[];
      expect(body.buffer, name).toBe(arr.buffer);
      expect(body.byteLength, name).toBe(arr.byteLength);
    }
  });

  it('what is written is the same .npy, byte for byte, as encodeNpy makes', async () => {
    const files = outputFiles(join(dir, 'run'), s, RAN, { o, dq, dk, dv }, ABOUT, lse);
    const plan = await OutputPlan.make([], [{ flag: 'out', path: join(dir, 'run'), kind: 'dir', names: ['o.npy', 'lse.npy', 'dq.npy', 'dk.npy', 'dv.npy', RUN_RECORD] }]);
    await plan.write(files);
    const shapes = { o: [1, 4, 8, 8], dq: [1, 4, 8, 8], dk: [1, 2, 16, 8], dv: [1, 2, 16, 8], lse: [1, 4, 8] };
    for (const [name, arr] of [['o', o], ['dq', dq], ['dk', dk], ['dv', dv], ['lse', lse]] as const) {
      const bytes = new Uint8Array(readFileSync(join(dir, 'run', `${name}.npy`)));
      expect(bytes, name).toEqual(encodeNpy({ dtype: 'f4', shape: shapes[name], data: arr }));
      expect(parseNpy(bytes).data, name).toEqual(arr);
    }
  });
});
