/**
 * Ring steps dispatch only the row blocks some visible pair reaches (src/kernels/reach.ts): the
 * blocks' numbers; the backward kernels on a mask whose reached queries and keys both start
 * blocks into their buffers, adding onto gradients that were already there; the forward writing
 * only the reached blocks and the merge only the rows given (the untouched rows keep what they
 * held, bit for bit).
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { autoF16Path, testDevice } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape, mergeRows } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { FlashBackward } from '../src/kernels/flashBackward.js';
import { FlashForward } from '../src/kernels/flashForward.js';
import { activeBlocks } from '../src/kernels/reach.js';
import { attentionForward, toF32, toPrecision } from '../src/kernels/attention.js';
import { referenceForward } from '../src/reference/attention.js';
import { gradReference } from './gradRef.js';
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

  /** f32 on the portable kernels; f16 on the tensor cores where the adapter has them. */
  const kernelPaths = (): [Precision, 'subgroup-matrix' | 'scalar'][] =>
    [['f32', 'scalar'], ...(dev.hasF16 && autoF16Path(dev) === 'subgroup-matrix' ? [['f16', 'subgroup-matrix'] as [Precision, 'subgroup-matrix']] : [])];
  it('adds exactly the reference gradients onto what dQ, dK, dV held (f32 portable; f16 tensor cores where the adapter has them)', async () => {
    for (const [p, path] of kernelPaths()) {
      const x = makeInputs(s, SEED + 77);
      const r = refInputs(x, p);
      const f = await attentionForward(dev, s, x, { ...opts, precision: p });
      // Against the backward of its own inputs, the forward's O (checked there) among them (gradRef.ts).
      const ref = gradReference(s, r, opts, f.o, p, `${p} ${path}`);
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

  it('the forward writes only the reached blocks, writing or merging into what O and LSE hold', async () => {
    for (const [p, path] of kernelPaths()) {
      const x = makeInputs(s, SEED + 78);
      const r = refInputs(x, p);
      const ref = referenceForward(s, r.q, r.k, r.v, opts);
      const fwd = await FlashForward.create(dev, s.D, { precision: p, out: 'f32', grad: 'f32', merge: true }, path);
      expect(fwd.path).toBe(path);
      const held = { o: randn(numel(s, 'q'), SEED + 5), lse: randn(numel(s, 'lse'), SEED + 6) };
      for (const merge of [false, true]) {
        const b = { q: upload(dev, toPrecision(x.q, p), 'q'), k: upload(dev, toPrecision(x.k, p), 'k'), v: upload(dev, toPrecision(x.v, p), 'v'), o: upload(dev, held.o, 'o'), lse: upload(dev, held.lse, 'lse') };
        const temps: GPUBuffer[] = [];
        const enc = dev.device.createCommandEncoder();
        const { rows: [from, to] } = fwd.encode(enc, b, s, resolveOptions(s, opts), temps, undefined, true, merge);
        dev.device.queue.submit([enc.finish()]);
        const tag = `${p} ${path}${merge ? ' merging' : ''}`;
        expect([from, to], tag).toEqual([Math.floor(200 / fwd.plan.BR) * fwd.plan.BR, 400]);
        const o = new Float32Array(await readback(dev, b.o, held.o.byteLength)), lse = new Float32Array(await readback(dev, b.lse, held.lse.byteLength));
        // Merging: the held rows merged with the reference's (rows no key reaches keep theirs).
        const want = merge ? mergeRows(s.D, held, ref) : ref;
        for (let h = 0; h < s.Hq; h++) {
          const rowsOf = (a: Float32Array | Float64Array, w: number, i0: number, i1: number) => a.subarray((h * s.Nq + i0) * w, (h * s.Nq + i1) * w);
          expect(Array.from(rowsOf(o, s.D, 0, from)), `O below the reached blocks, head ${h}, ${tag}`).toEqual(Array.from(rowsOf(held.o, s.D, 0, from)));
          expect(Array.from(rowsOf(lse, 1, 0, from)), `LSE below the reached blocks, head ${h}, ${tag}`).toEqual(Array.from(rowsOf(held.lse, 1, 0, from)));
          expect(err(Float32Array.from(rowsOf(o, s.D, from, to)), Float64Array.from(rowsOf(want.o, s.D, from, to))), `O head ${h}, ${tag}`).toBeLessThanOrEqual(TOL[p].out);
          // Rows 200 on see keys; those of the reached blocks before them are masked (LSE = −inf), or keep the held LSE when merging.
          const l = rowsOf(lse, 1, from, to), rl = rowsOf(want.lse, 1, from, to);
          expect(Array.from(l, (v) => v === -Infinity), `masked rows, head ${h}, ${tag}`).toEqual(Array.from(rl, (v) => v === -Infinity));
          if (merge) expect(Array.from(l.subarray(0, 200 - from)), `merged rows no key reaches, head ${h}`).toEqual(Array.from(rowsOf(held.lse, 1, from, 200)));
          expect(err(Float32Array.from(l).filter(Number.isFinite), Float64Array.from(rl).filter(Number.isFinite)), `LSE head ${h}, ${tag}`).toBeLessThanOrEqual(TOL[p].out);
        }
        for (const t of [...temps, ...Object.values(b)]) dev.tracker.destroy(t);
      }
    }
  });
});
