/**
 * Accumulating backward steps (the ring's) dispatch only the row blocks some visible pair reaches
 * (FlashBackward.encode, activeBlocks): the blocks' numbers, and the kernels on a mask whose
 * reached queries and keys both start blocks into their buffers, adding onto gradients that were
 * already there (the untouched rows keep them bit for bit).
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { autoF16Path, testDevice } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { FlashBackward, activeBlocks } from '../src/kernels/flashBackward.js';
import { attentionForward, toF32, toPrecision } from '../src/kernels/attention.js';
import { referenceBackward } from '../src/reference/attention.js';
import { storage, upload, readback } from '../src/gpu/buffers.js';
import { AttentionOptions, numel, resolveOptions } from '../src/shape.js';
import { Precision } from '../src/kernels/precision.js';
import { randn } from '../src/reference/compare.js';

let dev: FlashDevice;
beforeAll(async () => {
  dev = await testDevice();
});

// Keys 0..199 at positions 0..199, keys 200..399 at 500..699; query i at 300 + i; causal with a
// window of 50: query i sees keys [max(200, i − 50), i] for i ≥ 200 and none before. So queries
// 200..399 and keys 200..399 are reached; blocks below both are not.
const s: AttentionShape = { B: 1, Hq: 2, Hkv: 1, Nq: 400, Nk: 400, D: 16 };
const opts: AttentionOptions = { causal: true, window: [50, 0], qPos: { offset: 300, stride: 1 }, kPos: { offset: 0, stride: 1, split: 200, jump: 300 } };

describe('accumulating backward steps dispatch only the blocks a visible pair reaches', () => {
  it('activeBlocks: the reached blocks when accumulating, all of them otherwise', () => {
    const o = resolveOptions(s, opts);
    expect(activeBlocks(s, o, true, 64, 64)).toEqual({ q: [3, 7], k: [3, 7] });
    expect(activeBlocks(s, o, true, 128, 128)).toEqual({ q: [1, 4], k: [1, 4] });
    expect(activeBlocks(s, o, false, 128, 128)).toEqual({ q: [0, 4], k: [0, 4] });
    // A zigzag rank's step on a later chunk (R = 2, N = 1200): its second run alone sees the keys.
    const z = { B: 1, Hq: 1, Hkv: 1, Nq: 600, Nk: 600, D: 16 };
    const zo = resolveOptions(z, { causal: true, qPos: { offset: 0, stride: 1, split: 300, jump: 600 }, kPos: { offset: 300, stride: 1, split: 300, jump: 0 } });
    expect(activeBlocks(z, zo, true, 128, 128)).toEqual({ q: [2, 5], k: [0, 5] });
    // Not causal, a window of (50, 0): the same reach (the window bounds it from above as well).
    const nc = resolveOptions(s, { ...opts, causal: false });
    expect(activeBlocks(s, nc, true, 64, 64)).toEqual({ q: [3, 7], k: [3, 7] });
    // Nothing visible: nothing dispatched.
    const none = resolveOptions(z, { causal: true, qPos: { offset: 0, stride: 1 }, kPos: { offset: 1000, stride: 1 } });
    expect(activeBlocks(z, none, true, 128, 128)).toEqual({ q: [0, 0], k: [0, 0] });
  });

  const paths: [Precision, 'subgroup-matrix' | 'scalar'][] = [['f32', 'scalar']];
  it('adds exactly the reference gradients onto what dQ, dK, dV held (f32 portable; f16 tensor cores where the adapter has them)', async () => {
    if (dev.hasF16 && autoF16Path(dev) === 'subgroup-matrix') paths.push(['f16', 'subgroup-matrix']);
    for (const [p, path] of paths) {
      const x = makeInputs(s, SEED + 77);
      const r = refInputs(x, p);
      const ref = referenceBackward(s, r.q, r.k, r.v, r.dout, opts);
      const f = await attentionForward(dev, s, x, { ...opts, precision: p });
      const bwd = await FlashBackward.create(dev, s.D, { precision: p, out: 'f32', grad: 'f32' }, path);
      expect(bwd.path).toBe(path);
      const held = { dq: randn(numel(s, 'q'), SEED + 1), dk: randn(numel(s, 'kv'), SEED + 2), dv: randn(numel(s, 'kv'), SEED + 3) };
      const up = (a: Float32Array | Uint16Array, label: string) => upload(dev, a, label);
      const b = {
        q: up(toPrecision(x.q, p), 'q'), k: up(toPrecision(x.k, p), 'k'), v: up(toPrecision(x.v, p), 'v'), dout: up(toPrecision(x.dout, p), 'dout'),
        o: up(Float32Array.from(toF32(f.o)), 'o'), lse: up(f.lse, 'lse'), delta: storage(dev, numel(s, 'lse') * 4, 'delta'),
        dq: up(held.dq, 'dq'), dk: up(held.dk, 'dk'), dv: up(held.dv, 'dv'),
      };
      const temps: GPUBuffer[] = [];
      const enc = dev.device.createCommandEncoder();
      bwd.encode(enc, b, s, resolveOptions(s, opts), temps, { accumulate: true });
      dev.device.queue.submit([enc.finish()]);
      for (const g of ['dq', 'dk', 'dv'] as const) {
        const got = new Float32Array(await readback(dev, b[g], held[g].byteLength));
        const added = Float64Array.from(got, (y, i) => y - held[g][i]);
        expect(err(Float32Array.from(added), ref[g]), `${g} ${p} ${path}`).toBeLessThanOrEqual(TOL[p].grad);
        // Rows no pair reaches (queries and keys below 200) keep what they held, bit for bit.
        const untouched = 200 * s.D;
        for (let h = 0; h < (g === 'dq' ? s.Hq : s.Hkv); h++) {
          const at = h * s.Nq * s.D;
          expect(Array.from(got.subarray(at, at + untouched)), `${g} head ${h}`).toEqual(Array.from(held[g].subarray(at, at + untouched)));
        }
      }
      for (const t of [...temps, ...Object.values(b)]) dev.tracker.destroy(t);
    }
  });
});
