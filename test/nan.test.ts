/**
 * NaN / Inf propagation (issue 17): a NaN or Inf in Q, K, V or dO reaches exactly the outputs
 * the float64 reference (plain IEEE arithmetic of the untiled algorithm) says it reaches; masked
 * rows stay O = 0, LSE = −inf. `relErr` fails unless the kernel is NaN exactly where the
 * reference is NaN, so every comparison below checks the NaN pattern as well as the values.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { testDevices, tunedDevice } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape, AttentionOptions, Inputs, mergeRows, bits } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { MergeKernel } from '../src/kernels/merge.js';
import { FlashForward } from '../src/kernels/flashForward.js';
import { resolveOptions } from '../src/shape.js';
import { readback, storage, upload } from '../src/gpu/buffers.js';
import { attentionForward, attentionBackward, toF32, toPrecision } from '../src/kernels/attention.js';
import { Precision } from '../src/kernels/precision.js';
import { KernelPath } from '../src/kernels/pipeline.js';
import { ringAttention } from '../src/cp/launch/ringAttention.js';
import { LAYOUTS } from '../src/cp/plan/schedule.js';
import { referenceForward, referenceBackward } from '../src/reference/attention.js';
import { gradReference } from './gradRef.js';
import { randn } from '../src/reference/compare.js';
import { SGMM_FWD_PIPES, SGMM_FWD_TURNS, SGMM_SPILLS } from '../src/kernels/sgmmTiles.js';

let devs: FlashDevice[];
beforeAll(async () => {
  devs = await testDevices(3);
});

/**
 * A ring's forward over key chunks in turn, as chunks.ts encodes it: from O = 0, LSE = −inf, the
 * first chunk's rows written directly, each later chunk's merged into them in the epilogue.
 */
async function chunkedForward(dev: FlashDevice, s: (Nk: number) => AttentionShape, q: Float32Array, chunks: { k: Float32Array; v: Float32Array; n: number; offset: number }[], qPos: { offset: number; stride: number }) {
  const { D, Hq, Nq } = s(1);
  const fwd = await FlashForward.create(dev, D, { precision: 'f32', out: 'f32', grad: 'f32', merge: true });
  const acc = { o: upload(dev, new Float32Array(Hq * Nq * D), 'acc.o'), lse: upload(dev, new Float32Array(Hq * Nq).fill(-Infinity), 'acc.lse') };
  const temps: GPUBuffer[] = [upload(dev, q, 'q')];
  const enc = dev.device.createCommandEncoder();
  chunks.forEach((c, i) => {
    const b = { q: temps[0], k: upload(dev, c.k, 'k'), v: upload(dev, c.v, 'v'), ...acc };
    temps.push(b.k, b.v);
    const sh = s(c.n);
    fwd.encode(enc, b, sh, resolveOptions(sh, { causal: true, qPos, kPos: { offset: c.offset, stride: 1 } }), temps, undefined, true, i > 0);
  });
  dev.device.queue.submit([enc.finish()]);
  const o = new Float32Array(await readback(dev, acc.o, Hq * Nq * D * 4));
  const lse = new Float32Array(await readback(dev, acc.lse, Hq * Nq * 4));
  for (const b of [acc.o, acc.lse, ...temps]) dev.tracker.destroy(b);
  return { o, lse };
}

describe('a ring step\'s forward merging into partial (O, LSE) results, with NaN and masked rows', () => {
  // Queries at positions 0, 2, 4, … (stride 2); keys split in two chunks at positions 3..12 and
  // 13..20. Causal: rows 0–1 see no key of either chunk (masked in both), rows 2–6 only the
  // first chunk (the second partial is masked), rows 7–11 both.
  const D = 24, H = 2;
  const s = (Nk: number): AttentionShape => ({ B: 1, Hq: H, Hkv: H, Nq: 12, Nk, D });
  const qPos = { offset: 0, stride: 2 };
  const chunks = [{ n: 10, offset: 3 }, { n: 8, offset: 13 }];
  // [name, poison, whether the reference output holds a NaN]
  const cases: [string, (x: { q: Float32Array; k: Float32Array[]; v: Float32Array[] }) => void, boolean][] = [
    ['finite', () => {}, false],
    ['NaN in K of the first chunk (row-wide NaN from key position 5 on)', (x) => { x.k[0][1 * 10 * D + 2 * D + 7] = NaN; }, true],
    ['NaN in V of the second chunk (one column NaN from key position 15 on)', (x) => { x.v[1][0 * 8 * D + 2 * D + 3] = NaN; }, true],
    ['NaN in Q of a row that sees both chunks', (x) => { x.q[0 * 12 * D + 9 * D + 11] = NaN; }, true],
    ['NaN in Q of a row masked in both chunks (stays masked)', (x) => { x.q[1 * 12 * D + 1 * D + 4] = NaN; }, false],
    ['NaN in K and V of the same chunk, and +Inf in V of the other', (x) => { x.k[1][5] = NaN; x.v[1][3 * D] = NaN; x.v[0][1 * 10 * D + 4 * D + 8] = Infinity; }, true],
  ];
  for (const [name, poison, hasNaN] of cases)
    it(name, async () => {
      const seed = SEED + name.length;
      const x = {
        q: randn(H * 12 * D, seed),
        k: chunks.map((c, i) => randn(H * c.n * D, seed + 10 + i)),
        v: chunks.map((c, i) => randn(H * c.n * D, seed + 20 + i)),
      };
      poison(x);
      const f64 = (a: Float32Array) => Float64Array.from(a);
      const parts = chunks.map((c, i) => ({ ...c, k: x.k[i], v: x.v[i] }));
      // The whole key set at once: what the merge must reproduce.
      const cat = (a: Float32Array[]) => {
        const out = new Float32Array(H * 18 * D);
        for (let h = 0; h < H; h++) out.set([...a[0].subarray(h * 10 * D, (h + 1) * 10 * D), ...a[1].subarray(h * 8 * D, (h + 1) * 8 * D)], h * 18 * D);
        return out;
      };
      const ref = referenceForward(s(18), f64(x.q), f64(cat(x.k)), f64(cat(x.v)), { causal: true, qPos, kPos: { offset: 3, stride: 1 } });
      // The chunks in both orders: the second merged into the first in the forward's epilogue.
      for (const order of [parts, [parts[1], parts[0]]]) {
        const got = await chunkedForward(devs[0], s, x.q, order, qPos);
        expect(err(got.o, ref.o), 'O').toBeLessThanOrEqual(TOL.f32.out);
        expect(err(got.lse, ref.lse), 'LSE').toBeLessThanOrEqual(TOL.f32.out);
        // Masked in both chunks: O = 0 and LSE = −inf exactly, whatever the inputs hold.
        for (const h of [0, 1])
          for (const i of [0, 1]) {
            expect(got.lse[h * 12 + i]).toBe(-Infinity);
            for (let d = 0; d < D; d++) expect(got.o[(h * 12 + i) * D + d]).toBe(0);
          }
      }
      expect(ref.o.some(Number.isNaN), 'the case puts NaN in the output or not').toBe(hasNaN);
    });

  it('the ring backward add keeps NaN', async () => {
    const dev = devs[0];
    const merge = await MergeKernel.create(dev, 8);
    const a = randn(40, SEED + 3), b = randn(40, SEED + 4);
    a[5] = NaN; b[17] = NaN; b[30] = Infinity;
    const acc = upload(dev, a, 'acc'), part = upload(dev, b, 'part');
    const temps: GPUBuffer[] = [];
    const enc = dev.device.createCommandEncoder();
    merge.encodeAdd(enc, acc, part, 5, temps);
    dev.device.queue.submit([enc.finish()]);
    const got = new Float32Array(await readback(dev, acc, 160));
    for (const x of [acc, part, ...temps]) dev.tracker.destroy(x);
    expect(err(got, Float64Array.from(a, (v, i) => Math.fround(v + b[i])))).toBe(0);
  });

  it('the merging forward (portable f32 at head dims 8 … 256; f16 on tensor cores at 64 and 128 where offered) and the add against the rules on the CPU', async () => {
    const dev = devs[0];
    const runs: [Precision, KernelPath, number][] = [8, 16, 24, 40, 64, 128, 136, 256].map((D) => ['f32', 'scalar', D]);
    if (dev.hasF16 && dev.hasSubgroupMatrix) runs.push(['f16', 'subgroup-matrix', 64], ['f16', 'subgroup-matrix', 128]);
    for (const [p, path, D] of runs) {
      // The inputs as the kernel sees them (f16-rounded for f16), and the reference on those.
      const round = (a: Float32Array) => Float32Array.from(toF32(toPrecision(a, p)));
      const f64 = (a: Float32Array) => Float64Array.from(round(a));
      const H = 2, Nq = 21, Nk = 9, rows = H * Nq;
      const sh: AttentionShape = { B: 1, Hq: H, Hkv: H, Nq, Nk, D };
      // Queries at positions 0 … 20, keys at 6 … 14, causal: rows 0–5 of each head see no key.
      const opts = resolveOptions(sh, { causal: true, qPos: { offset: 0, stride: 1 }, kPos: { offset: 6, stride: 1 } });
      const q = randn(rows * D, SEED + D), k = randn(H * Nk * D, SEED + D + 1), v = randn(H * Nk * D, SEED + D + 2);
      q[10 * D + 3] = NaN;   // head 0, row 10: a NaN score on the new side
      // What O and LSE hold: rows with no key (one the new side does not reach either, one it does),
      // a NaN LSE, a NaN element of O, rows without mass.
      const oa = randn(rows * D, SEED + D + 3), la = Float32Array.from(randn(rows, SEED + D + 4), (x) => 4 * x);
      for (const r of [2, 12]) { la[r] = -Infinity; oa.fill(0, r * D, r * D + D); }
      la[7] = NaN;
      oa[15 * D + D - 1] = NaN;
      // Rows held without mass (LSE = +inf: visible keys that all scored −inf in earlier steps), O = 0 · V: the
      // new side's rows replace them, but for a NaN element (0 · NaN) kept.
      for (const r of [13, 16]) { la[r] = Infinity; oa.fill(0, r * D, r * D + D); }
      oa[13 * D + 1] = NaN;
      const want = mergeRows(D, { o: oa, lse: la }, referenceForward(sh, f64(q), f64(k), f64(v), opts));
      const fwd = await FlashForward.create(dev, D, { precision: p, out: 'f32', grad: 'f32', merge: true }, path);
      expect(fwd.path).toBe(path);
      const merge = await MergeKernel.create(dev, D);
      const ob = randn(rows * D, SEED + D + 5);
      ob[5 * D + 1] = NaN;
      const bufs = { q: upload(dev, toPrecision(q, p), 'q'), k: upload(dev, toPrecision(k, p), 'k'), v: upload(dev, toPrecision(v, p), 'v'), o: upload(dev, oa, 'o'), lse: upload(dev, la, 'lse'), sum: upload(dev, oa, 'sum'), part: upload(dev, ob, 'part') };
      const temps: GPUBuffer[] = [];
      const enc = dev.device.createCommandEncoder();
      fwd.encode(enc, bufs, sh, opts, temps, undefined, true, true);
      merge.encodeAdd(enc, bufs.sum, bufs.part, rows, temps);
      dev.device.queue.submit([enc.finish()]);
      const got = { o: new Float32Array(await readback(dev, bufs.o, rows * D * 4)), lse: new Float32Array(await readback(dev, bufs.lse, rows * 4)), sum: new Float32Array(await readback(dev, bufs.sum, rows * D * 4)) };
      for (const x of [...Object.values(bufs), ...temps]) dev.tracker.destroy(x);
      const nan = (x: ArrayLike<number>) => Array.from(x, Number.isNaN);
      expect(nan(got.o), `O NaN at D=${D} ${p}`).toEqual(nan(want.o));
      expect(nan(got.lse), `LSE NaN at D=${D} ${p}`).toEqual(nan(want.lse));
      expect(nan(got.lse).filter(Boolean).length, `the NaN rows at D=${D} ${p}`).toBe(2);
      // Rows the new side does not reach keep what they held, bit for bit; row 2 stays masked.
      for (const r of [0, 1, 2, 3, 4, 5, 21, 26]) {
        expect(got.lse[r], `LSE row ${r} at D=${D}`).toBe(la[r]);
        expect(Array.from(got.o.subarray(r * D, r * D + D)), `O row ${r} at D=${D}`).toEqual(Array.from(oa.subarray(r * D, r * D + D)));
      }
      const finite = (x: ArrayLike<number>, w: Float64Array) => err(Float32Array.from(x, (v, i) => (Number.isNaN(w[i]) ? 0 : v)), w.map((v) => (Number.isNaN(v) ? 0 : v)));
      expect(finite(got.o, want.o), `O at D=${D} ${p}`).toBeLessThanOrEqual(TOL[p].out);
      expect(finite(got.lse.map((x) => (x === -Infinity ? 0 : x)), want.lse.map((x) => (x === -Infinity ? 0 : x))), `LSE at D=${D} ${p}`).toBeLessThanOrEqual(TOL[p].out);
      expect(nan(got.sum), `add NaN at D=${D}`).toEqual(Array.from(oa, (x, i) => Number.isNaN(x + ob[i])));
      expect(finite(got.sum, Float64Array.from(oa, (x, i) => Math.fround(x + ob[i]))), `add at D=${D}`).toBe(0);
    }
    // Merging needs f32 O.
    const f16o = await FlashForward.create(dev, 16, { precision: 'f32', out: 'f16', grad: 'f16', merge: true }, 'scalar');
    const sh: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq: 4, Nk: 4, D: 16 };
    const dummy = storage(dev, 1024, 'dummy');
    expect(() => f16o.encode(dev.device.createCommandEncoder(), { q: dummy, k: dummy, v: dummy, o: dummy, lse: dummy }, sh, resolveOptions(sh, {}), [], undefined, true, true)).toThrow(/internal error/);
    dev.tracker.destroy(dummy);
  });
});

/** Inputs with one element of `which` set to `value` (flat index `at`). */
function poisoned(s: AttentionShape, seed: number, which: keyof Inputs, at: number, value = NaN): Inputs {
  const x = makeInputs(s, seed);
  x[which][at] = value;
  return x;
}

describe('NaN through the ring (f32)', () => {
  // NaN in one element of K on one chunk, or of one Q row; R = 2 and 3; causal and not.
  const s: AttentionShape = { B: 1, Hq: 2, Hkv: 1, Nq: 45, Nk: 45, D: 16 };
  const spots: [string, keyof Inputs, number][] = [['K', 'k', 38 * 16 + 5], ['Q', 'q', 45 * 16 + 20 * 16 + 3]];
  for (const R of [2, 3])
    for (const causal of [false, true])
      for (const [what, which, at] of spots)
        it(`R=${R} ${causal ? 'causal' : 'full'}, NaN in ${what}, forward + backward`, async () => {
          const x = poisoned(s, SEED + R, which, at);
          const r = refInputs(x, 'f32');
          const rf = referenceForward(s, r.q, r.k, r.v, { causal });
          const rb = referenceBackward(s, r.q, r.k, r.v, r.dout, { causal });
          const layout = LAYOUTS[(R + (causal ? 1 : 0)) % LAYOUTS.length];
          const got = await ringAttention(devs.slice(0, R), s, x, { causal, layout, precision: 'f32' });
          const tag = `R=${R} ${layout} causal=${causal} NaN in ${what}`;
          expect(err(got.o, rf.o), `O ${tag}`).toBeLessThanOrEqual(TOL.f32.out);
          expect(err(got.lse, rf.lse), `LSE ${tag}`).toBeLessThanOrEqual(TOL.f32.out);
          for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k]!, rb[k]), `${k} ${tag}`).toBeLessThanOrEqual(TOL.f32.grad);
          // Causal, NaN in row 20 of Q: keys after 20 never see it, so part of dK stays finite.
          if (causal && what === 'Q') expect(rb.dk.some(Number.isFinite) && rb.dk.some(Number.isNaN)).toBe(true);
        });
});

describe('NaN on the tensor-core path (subgroup matrices, f16)', () => {
  // N = 100 is not a multiple of any tile; GQA 4:2; D = 64. One poisoned element per case.
  const s: AttentionShape = { B: 1, Hq: 4, Hkv: 2, Nq: 100, Nk: 100, D: 64 };
  const q = (h: number, i: number, d: number) => (h * 100 + i) * 64 + d;
  const spots: [string, keyof Inputs, number, number][] = [
    ['NaN in Q', 'q', q(1, 37, 5), NaN],
    ['NaN in K', 'k', q(0, 60, 9), NaN],
    ['NaN in V', 'v', q(1, 45, 2), NaN],
    ['NaN in dO', 'dout', q(2, 70, 11), NaN],
    ['+Inf in Q', 'q', q(3, 20, 0), Infinity],
  ];
  for (const causal of [false, true])
    for (const [what, which, at, value] of spots)
      it(`${causal ? 'causal' : 'full'}, ${what}: forward and backward`, async (ctx) => {
        const dev = devs[0];
        if (!dev.hasF16 || !dev.hasSubgroupMatrix) ctx.skip();
        const opts: AttentionOptions = { causal };
        const x = poisoned(s, SEED + at, which, at, value);
        const r = refInputs(x, 'f16');
        const rf = referenceForward(s, r.q, r.k, r.v, opts);
        const path = 'subgroup-matrix';
        const fwd = await attentionForward(dev, s, x, { ...opts, precision: 'f16', path });
        const tag = `${what} causal=${causal}`;
        expect(err(fwd.o, rf.o), `O ${tag}`).toBeLessThanOrEqual(TOL.f16.out);
        expect(err(fwd.lse, rf.lse), `LSE ${tag}`).toBeLessThanOrEqual(TOL.f16.out);
        const rb = gradReference(s, r, opts, fwd.o, 'f16', tag);   // the backward's own inputs, this O among them
        const got = await attentionBackward(dev, s, { ...x, o: fwd.o, lse: fwd.lse }, { ...opts, precision: 'f16', path });
        for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k], rb[k]), `${k} ${tag}`).toBeLessThanOrEqual(TOL.f16.grad);
      });
});

describe('the tensor-core backward: a non-finite value in a full tile, partial tiles after it', () => {
  // Full tiles neither take nor read the non-finite vote (flash_bwd_sgmm.wgsl stash_rows, rare_tile):
  // each partial tile reads its own. (Until 7c26263 a full tile's vote was left standing for the next
  // partial tile.) Causal, N = 300, tiles of 16 and 128 rows a workgroup
  // (pinned): dkdv's first key block visits its diagonal Q tiles (partial), Q rows 128-287 (full:
  // they see all 128 keys), then rows 288-299 (partial, past Nq); dq's row blocks from 128 on see
  // keys 0-127 in full tiles before their diagonal ones. Poisoned: Q and dO at row 200, K at key 60.
  const s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq: 300, Nk: 300, D: 64 };
  const spots: [string, keyof Inputs, number][] = [['Q', 'q', 200 * 64 + 7], ['dO', 'dout', 200 * 64 + 9], ['K', 'k', 60 * 64 + 3]];
  for (const [what, which, at] of spots)
    it(`NaN in ${what}: dQ, dK, dV NaN exactly where the reference says`, async (ctx) => {
      if (!devs[0].hasF16 || !devs[0].hasSubgroupMatrix) ctx.skip();
      const dev = await tunedDevice({ sgmmBackward: { subgroups: 8, rows: 16 } });
      const opts: AttentionOptions = { causal: true };
      const x = poisoned(s, SEED + at, which, at);
      const r = refInputs(x, 'f16');
      const rf = referenceForward(s, r.q, r.k, r.v, opts);
      const fwd = await attentionForward(dev, s, x, { ...opts, precision: 'f16', path: 'subgroup-matrix' });
      expect(err(fwd.o, rf.o), `O NaN in ${what}`).toBeLessThanOrEqual(TOL.f16.out);
      const rb = gradReference(s, r, opts, fwd.o, 'f16', `NaN in ${what}`);   // the backward's own inputs, this O among them
      const got = await attentionBackward(dev, s, { ...x, o: fwd.o, lse: fwd.lse }, { ...opts, precision: 'f16', path: 'subgroup-matrix' });
      for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k], rb[k]), `${k} NaN in ${what}`).toBeLessThanOrEqual(TOL.f16.grad);
      // Causal: the poison reaches only part of the gradients (of dQ alone where it is in K), so a
      // leak through a masked entry would show.
      const all = [rb.dq, rb.dk, rb.dv].flatMap((a) => Array.from(a));
      expect(all.some(Number.isFinite) && all.some(Number.isNaN), 'both finite and NaN in the reference').toBe(true);
    });
  // The cases above cannot show a lost vote (what a partial tile after the full one writes is NaN in
  // the reference anyway). Here, with a window of 200, dkdv's first key block (keys 0-127) visits full
  // Q tiles 128-176 (dO's NaN at row 150 among them: a full tile, no vote), a partial tile 192 (finite:
  // the matrix path), then partial tile 240, whose own NaN (dO at row 250, column 20) must send it down
  // the scalar path: row 250 sees keys 50-250, so dV[0..49][20] stays finite and dV[50..127][20] is
  // NaN; a vote lost there would leak NaN into the finite part through the masked entries' products.
  it('a window: a NaN in a full tile, then a partial tile with its own NaN (dV finite exactly where the reference is)', async (ctx) => {
    const opts: AttentionOptions = { causal: true, window: [200, 0] };
    const x = poisoned(s, SEED + 250, 'dout', 150 * 64 + 9);
    x.dout[250 * 64 + 20] = NaN;
    const r = refInputs(x, 'f16');
    const exact = referenceBackward(s, r.q, r.k, r.v, r.dout, opts);
    // The case's premise, checked on every machine: the reference is finite and NaN where the comment says.
    expect(Number.isFinite(exact.dv[10 * 64 + 20]) && Number.isNaN(exact.dv[100 * 64 + 20]), 'the reference: dV[10][20] finite, dV[100][20] NaN').toBe(true);
    if (!devs[0].hasF16 || !devs[0].hasSubgroupMatrix) ctx.skip();
    const dev = await tunedDevice({ sgmmBackward: { subgroups: 8, rows: 16 } });
    const p = { ...opts, precision: 'f16' as const, path: 'subgroup-matrix' as const };
    const fwd = await attentionForward(dev, s, x, p);
    const rb = gradReference(s, r, opts, fwd.o, 'f16');   // the backward's own inputs, this O (checked there) among them
    const got = await attentionBackward(dev, s, { ...x, o: fwd.o, lse: fwd.lse }, p);
    for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k], rb[k]), k).toBeLessThanOrEqual(TOL.f16.grad);
  });
});

describe('the tensor-core forward in every order of its tile steps (sgmmForwardPipe)', () => {
  // N = 150: five K/V tiles of 32 (prefetch two ahead, both vote parities); causal + window:
  // tiles with masked entries; a NaN in V at a key some rows of its tile cannot see (the rare
  // scalar O += P V path), and finite data.
  for (const D of [64, 128])
    for (const poison of [false, true])
      it(`D=${D}, ${poison ? 'NaN in V of a masked tile' : 'finite'}: PIPE 0 and 2 give bitwise the same O and LSE, within tolerance`, async (ctx) => {
        const dev = devs[0];
        if (!dev.hasF16 || !dev.hasSubgroupMatrix) ctx.skip();
        const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 150, Nk: 150, D };
        const opts: AttentionOptions = { causal: true, window: [40, 0] };
        const at = (1 * 150 + 70) * D + 3;   // head 1, key 70: hidden from rows past 110 and before 70
        const x = poison ? poisoned(s, SEED + D, 'v', at, NaN) : makeInputs(s, SEED + D);
        const r = refInputs(x, 'f16');
        const rf = referenceForward(s, r.q, r.k, r.v, opts);
        const outs = [];
        for (const pipe of SGMM_FWD_PIPES) {
          const got = await attentionForward(await tunedDevice({ sgmmForwardPipe: pipe }), s, x, { ...opts, precision: 'f16', path: 'subgroup-matrix' });
          expect(err(got.o, rf.o), `O PIPE ${pipe}`).toBeLessThanOrEqual(TOL.f16.out);
          expect(err(got.lse, rf.lse), `LSE PIPE ${pipe}`).toBeLessThanOrEqual(TOL.f16.out);
          outs.push(got);
        }
        for (const got of outs.slice(1)) {
          expect(bits(got.o).equals(bits(outs[0].o)), 'O bitwise').toBe(true);
          expect(bits(got.lse).equals(bits(outs[0].lse)), 'LSE bitwise').toBe(true);
        }
      });
});

describe('the tensor-core forward with its row blocks taking turns through one S and P block (sgmmForwardTurns)', () => {
  // N = 150 in K/V tiles of 16; causal + window: tiles with masked entries. Finite data; Q times 6, so that row
  // maxima rise by more than 2^8 from tile to tile (O rescaled through the S block, one phase at a time); a NaN in
  // V at a key some rows of its tile cannot see (the rare scalar O += P V, P put back phase by phase). Two row
  // blocks a subgroup, 4 and 8 subgroups, both orders of the tile steps: the same arithmetic, so the same bits in
  // either order. Taking turns, two lanes share a row (one at once), so ℓ sums in another order: not the same bits.
  const cases: [string, (x: Inputs) => void][] = [
    ['finite', () => {}],
    ['Q × 6 (maxima raised)', (x) => x.q.forEach((v, k) => (x.q[k] = 6 * v))],
    ['NaN in V of a masked tile', (x) => (x.v[(1 * 150 + 70) * 64 + 3] = NaN)],
  ];
  for (const SG of [4, 8])
    for (const [what, change] of cases)
      it(`D=64 ${SG}×16×2, ${what}: O and LSE within tolerance taking turns and not, the same bits in either step order`, async (ctx) => {
        const dev = devs[0];
        if (!dev.hasF16 || !dev.hasSubgroupMatrix) ctx.skip();
        const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 150, Nk: 150, D: 64 };
        const opts: AttentionOptions = { causal: true, window: [40, 0] };
        const x = makeInputs(s, SEED + 300 + SG);
        change(x);
        const r = refInputs(x, 'f16');
        const rf = referenceForward(s, r.q, r.k, r.v, opts);
        for (const sgmmForwardTurns of SGMM_FWD_TURNS) {
          const outs = [];
          for (const sgmmForwardPipe of SGMM_FWD_PIPES) {
            const tuned = await tunedDevice({ sgmmForward: { subgroups: SG, rows: 16, rowBlocks: 2 }, sgmmForwardPipe, sgmmForwardTurns });
            const got = await attentionForward(tuned, s, x, { ...opts, precision: 'f16', path: 'subgroup-matrix' });
            const how = `PIPE ${sgmmForwardPipe}, turns ${sgmmForwardTurns}`;
            expect(err(got.o, rf.o), `O ${how}`).toBeLessThanOrEqual(TOL.f16.out);
            expect(err(got.lse, rf.lse), `LSE ${how}`).toBeLessThanOrEqual(TOL.f16.out);
            outs.push(got);
          }
          expect(bits(outs[1].o).equals(bits(outs[0].o)), `O bitwise, turns ${sgmmForwardTurns}`).toBe(true);
          expect(bits(outs[1].lse).equals(bits(outs[0].lse)), `LSE bitwise, turns ${sgmmForwardTurns}`).toBe(true);
        }
      });
});

describe('the tensor-core backward against float64 with a NaN in a masked tile', () => {
  // N = 150: nine tiles of 16 and a partial tenth; GQA 4:2, so dkdv's loop crosses from one query
  // head to the next; causal + window: tiles with masked entries. One NaN in Q, dO, K or V of row / key
  // 70 (head 1), seen by rows 70–110 only: tiles holding rows or keys that cannot see it take the rare
  // scalar path where their vote says so (dkdv votes on Q and dO, dq on K only: a NaN in V must reach
  // dQ through dP alone, and a partial dq tile with it takes the tensor-core path).
  const spots: [string, keyof Inputs | null][] = [['finite', null], ['NaN in Q', 'q'], ['NaN in dO', 'dout'], ['NaN in K', 'k'], ['NaN in V', 'v']];
  const tiles: [number, number, number][] = [[64, 4, 16], [64, 8, 16], [128, 8, 16]];
  for (const [D, SG, T] of tiles)
    for (const [what, which] of spots)
      it(`D=${D} ${SG}×${T}, ${what}: dQ, dK, dV within tolerance, NaN exactly where the reference has it; the same bits with one spill block or two`, async (ctx) => {
        const dev = devs[0];
        if (!dev.hasF16 || !dev.hasSubgroupMatrix) ctx.skip();
        const s: AttentionShape = { B: 1, Hq: 4, Hkv: 2, Nq: 150, Nk: 150, D };
        const opts: AttentionOptions = { causal: true, window: [40, 0] };
        const x = which ? poisoned(s, SEED + D + SG, which, (150 + 70) * D + 3) : makeInputs(s, SEED + D + SG);
        const r = refInputs(x, 'f16');
        const p = { ...opts, precision: 'f16' as const, path: 'subgroup-matrix' as const };
        const fwd = await attentionForward(await tunedDevice({ sgmmBackward: { subgroups: SG, rows: T } }), s, x, p);
        const rb = gradReference(s, r, opts, fwd.o, 'f16', what);   // the backward's own inputs, this O (checked there) among them
        // Both kernels with one spill block a subgroup and with two (sgmmDqSpill, sgmmKvSpill): the same arithmetic
        // in the same order, so the same bits.
        const outs = [];
        for (const spill of SGMM_SPILLS) {
          const dev = await tunedDevice({ sgmmBackward: { subgroups: SG, rows: T }, sgmmDqSpill: spill, sgmmKvSpill: spill });
          const got = await attentionBackward(dev, s, { ...x, o: fwd.o, lse: fwd.lse }, p);
          for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k], rb[k]), `${k}, spill ${spill}`).toBeLessThanOrEqual(TOL.f16.grad);
          outs.push(got);
        }
        for (const k of ['dq', 'dk', 'dv'] as const) expect(bits(outs[1][k]).equals(bits(outs[0][k])), `${k} bitwise, one spill block and two`).toBe(true);
      });
});
