/**
 * Keys whose scores are all −inf in one rank's chunk (an −inf in K): the ring's partials without
 * mass (common.wgsl no_mass_lse, lse_merge, merge.wgsl finalize). The untiled softmax gives such
 * keys weight 0, so a row that sees finite keys elsewhere is finite, and a row that sees only such
 * keys is 0/0: NaN in O, LSE and every gradient it reaches. Every scheme and layout must give what
 * the float64 reference and the single-device kernel give, NaN for NaN.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { testDevices, tunedDevice } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape, AttentionOptions, bits } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { ringAttention, ringAttentionWithBackwardO } from '../src/cp/launch/ringAttention.js';
import { LAYOUTS } from '../src/cp/plan/schedule.js';
import { schemeNames } from '../src/cp/schemes/registry.js';
import { attentionForward, attentionBackward, toF32, HostTensor } from '../src/kernels/attention.js';
import { referenceForward, referenceBackward } from '../src/reference/attention.js';
import { gradReference } from './gradRef.js';
import { MergeKernel } from '../src/kernels/merge.js';
import { upload, readback } from '../src/gpu/buffers.js';
import { randn } from '../src/reference/compare.js';

let one: FlashDevice;
beforeAll(async () => {
  [one] = await testDevices(1);
});

/**
 * Inputs where keys 0 … nInf−1 of head 0 score −inf against every query (k[j][0] = −inf, q[i][0] > 0);
 * head 1 (and others) as drawn.
 */
function inputs(s: AttentionShape, nInf: number, seed: number) {
  const x = makeInputs(s, seed);
  for (let i = 0; i < s.Nq; i++) x.q[i * s.D] = Math.abs(x.q[i * s.D]) + 0.25;
  for (let j = 0; j < nInf; j++) x.k[j * s.D] = -Infinity;
  return x;
}

const nanOf = (a: ArrayLike<number>) => Array.from(a, Number.isNaN);
const finitePart = (a: ArrayLike<number>, ref: Float64Array) => Float32Array.from(a, (v, i) => (Number.isNaN(ref[i]) ? 0 : v));
const zeroNaN = (ref: Float64Array) => ref.map((v) => (Number.isNaN(v) ? 0 : v));

/** NaN where the reference has NaN, and the rest within tolerance of it. */
function expectLike(name: string, got: HostTensor | Float32Array, ref: Float64Array, tol: number) {
  const g = got instanceof Uint16Array ? toF32(got) : got;
  expect(nanOf(g), `${name}: NaN where the reference has NaN`).toEqual(nanOf(ref));
  expect(err(finitePart(g, ref), zeroNaN(ref)), `${name}: the rest`).toBeLessThanOrEqual(tol);
}

/**
 * Single device and every scheme and layout at each R against the float64 reference: NaN where it has NaN, the
 * rest within f32's tolerance. `inf` lists head 0's keys that score −inf against every query.
 */
async function checkAll(s: AttentionShape, mask: AttentionOptions, inf: number[], seed: number, Rs: number[], nanRows: number) {
  const x = makeInputs(s, seed);
  for (let i = 0; i < s.Nq; i++) x.q[i * s.D] = Math.abs(x.q[i * s.D]) + 0.25;
  for (const j of inf) x.k[j * s.D] = -Infinity;
  const r = refInputs(x, 'f32');
  const rf = referenceForward(s, r.q, r.k, r.v, mask);
  const rb = referenceBackward(s, r.q, r.k, r.v, r.dout, mask);
  // The case is what it says: that many rows without mass (NaN), and finite rows beside them.
  expect(nanOf(rf.lse).filter(Boolean).length).toBe(nanRows);
  expect(rf.o.some(Number.isFinite)).toBe(true);
  const single = await attentionForward(one, s, x, { ...mask, precision: 'f32' });
  const singleB = await attentionBackward(one, s, { ...x, o: single.o, lse: single.lse }, { ...mask, precision: 'f32' });
  const tf = TOL.f32.out, tg = TOL.f32.grad;
  for (const [name, got, ref, tol] of [['O', single.o, rf.o, tf], ['LSE', single.lse, rf.lse, tf], ['dQ', singleB.dq, rb.dq, tg], ['dK', singleB.dk, rb.dk, tg], ['dV', singleB.dv, rb.dv, tg]] as const)
    expectLike(`single device ${name}`, got, ref, tol);
  for (const R of Rs)
    for (const scheme of schemeNames())
      for (const layout of LAYOUTS) {
        const tag = `${scheme} ${layout} R=${R}`;
        const sizes = scheme === 'a2a+p2p' ? { hierarchicalSizes: R === 4 ? '2,2' : `1,${R}` } : {};
        if (scheme.startsWith('a2a') && scheme !== 'a2a+p2p' && s.Hq % R) continue;   // a2a splits the heads
        const res = await ringAttention([one], s, x, { ...mask, precision: 'f32', ranks: R, scheme, layout, ...sizes });
        for (const [name, got, ref, tol] of [['O', res.o, rf.o, tf], ['LSE', res.lse, rf.lse, tf], ['dQ', res.dq!, rb.dq, tg], ['dK', res.dk!, rb.dk, tg], ['dV', res.dv!, rb.dv, tg]] as const)
          expectLike(`${tag} ${name}`, got, ref, tol);
        expect(one.tracker.snapshot().liveBuffers, tag).toBe(0);
      }
}

describe('rows without mass and very negative scores: the single-device call and the ring', () => {
  const s: AttentionShape = { B: 1, Hq: 4, Hkv: 4, Nq: 24, Nk: 24, D: 8 };
  const first6 = [0, 1, 2, 3, 4, 5];
  it('every scheme and layout at R = 2 and 4, non-causal (every row finite)', () => checkAll(s, {}, first6, SEED + 7, [2, 4], 0));
  it('every scheme and layout at R = 2 and 4, causal (rows 0–5 see only −inf keys: NaN)', () => checkAll(s, { causal: true }, first6, SEED + 8, [2, 4], 6));
  it('documents: each document\'s first key −inf (its first row sees only it), every scheme and layout at R = 2, 3 and 4', () => {
    // A step may hold a row's first key alone (no mass there) while another holds none of its keys (−inf):
    // the merge of the two must keep the row without mass, and a later step's finite keys give it mass.
    const cu = new Int32Array([0, 5, 11, 17, 24]);
    return checkAll(s, { causal: true, docs: { cuQ: cu, cuK: cu } }, [0, 5, 11, 17], SEED + 9, [2, 3, 4], 4);
  });
  it('a sliding window: rows whose window holds only −inf keys, every scheme and layout at R = 2 and 4', () =>
    // Window 1 to the left, causal: row i sees keys i−1 and i. Keys 8, 9 and 16, 17 −inf: rows 9 and 17 see nothing else.
    checkAll(s, { causal: true, window: [1, 0] }, [8, 9, 16, 17], SEED + 10, [2, 4], 2));

  it('f16: the planned kernels (tensor cores where offered) and the portable f16 products, single device and p2p / all_gather rings', async () => {
    if (!one.hasF16) return expect(process.env.CI).not.toBe('true');
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 40, Nk: 40, D: 16 };
    const x = inputs(s, 10, SEED + 21);
    const r = refInputs(x, 'f16');
    const causal = true;
    const rf = referenceForward(s, r.q, r.k, r.v, { causal });
    expect(nanOf(rf.lse).filter(Boolean).length).toBe(10);
    const tf = TOL.f16.out, tg = TOL.f16.grad;
    for (const [tag, dev] of [['planned', one], ['f16 products', await tunedDevice({ portableProducts: 'f16' })]] as const) {
      const single = await attentionForward(dev, s, x, { causal, precision: 'f16' });
      expectLike(`${tag} single device O`, single.o, rf.o, tf);
      expectLike(`${tag} single device LSE`, single.lse, rf.lse, tf);
      for (const scheme of ['p2p', 'all_gather'] as const)
        for (const layout of ['contiguous', 'zigzag'] as const) {
          const { result: res, backwardO } = await ringAttentionWithBackwardO([dev], s, x, { causal, precision: 'f16', ranks: 4, scheme, layout });
          const t = `${tag} ${scheme} ${layout}`;
          // The gradients against the backward of the ranks' own inputs: O as they kept it (f32), checked there (gradRef.ts).
          const rb = gradReference(s, r, { causal }, backwardO, 'f16', t);
          for (const [name, got, ref, tol] of [['O', res.o, rf.o, tf], ['LSE', res.lse, rf.lse, tf], ['dQ', res.dq!, rb.dq, tg], ['dK', res.dk!, rb.dk, tg], ['dV', res.dv!, rb.dv, tg]] as const)
            expectLike(`${t} ${name}`, got, ref, tol);
        }
    }
  });

  it('finite scores however negative (down to −1.6e30, f32, portable kernels): the whole call and the ring\'s merges keep every key', async () => {
    // Unit q, k near −1 and a huge scale: every score near −8e29 or −1.6e30, with small differences between
    // keys. (An adversarial review found the running max starting at −1e30 and the merge reading LSEs at or
    // below −5e29 as masked: NaN, and a silently wrong O.) The tensor-core kernels hold masked scores as
    // −1e30 and keep that limit (docs/numerics.md).
    const s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq: 8, Nk: 8, D: 16 };
    const q = new Float32Array(128).fill(1), v = randn(128, SEED + 31);
    const k = Float32Array.from({ length: 128 }, (_, i) => -(1 + 0.01 * (i % 5)));
    for (const scale of [5e28, 1e29]) {
      const rf = referenceForward(s, Float64Array.from(q), Float64Array.from(k), Float64Array.from(v), { scale });
      expect(rf.lse[0]).toBeLessThan(-5e29);
      const single = await attentionForward(one, s, { q, k, v }, { scale, precision: 'f32', path: 'scalar' });
      expect(err(single.o, rf.o), `single device, scale ${scale}`).toBeLessThanOrEqual(TOL.f32.out);
      expect(err(single.lse, rf.lse), `single device, scale ${scale}`).toBeLessThanOrEqual(TOL.f32.out);
      for (const scheme of ['p2p', 'all_gather'] as const) {
        // Forward only: at these magnitudes f32 gradients are not meaningful (docs/numerics.md, very negative scores).
        const res = await ringAttention([one], s, { q, k, v }, { scale, precision: 'f32', ranks: 2, scheme, layout: 'contiguous' });
        expect(err(res.o, rf.o), `${scheme}, scale ${scale}`).toBeLessThanOrEqual(TOL.f32.out);
        expect(err(res.lse, rf.lse), `${scheme}, scale ${scale}`).toBeLessThanOrEqual(TOL.f32.out);
      }
    }
  });

  for (const [D, rows] of [[24, 37], [256, 301], [8, 777]])
  it(`the finalize pass at D = ${D}, ${rows} rows: rows at LSE = +inf become NaN (O and LSE), every other row is left bit for bit`, async () => {
    // A workgroup holds 256 / (D/4) rows: all 37 in one at D = 24; 76 workgroups of 4 at D = 256 and 7 of 128 at
    // D = 8, each with a partial last one.
    const merge = await MergeKernel.create(one, D);
    const o = randn(rows * D, SEED + 11), lse = randn(rows, SEED + 12);
    const inf = [0, 5, 6, 20, 36, rows - 1, rows - 5, Math.floor(rows / 2)];
    for (const r of inf) lse[r] = Infinity;
    lse[3] = -Infinity; o.fill(0, 3 * D, 4 * D);   // a masked row stays masked
    lse[9] = NaN;                                    // a NaN row stays NaN
    o[12 * D + 2] = NaN;                             // and a NaN element stays
    const bo = upload(one, o, 'o'), bl = upload(one, lse, 'lse');
    const temps: GPUBuffer[] = [];
    const enc = one.device.createCommandEncoder();
    merge.encodeFinalize(enc, bo, bl, rows, temps);
    one.device.queue.submit([enc.finish()]);
    const go = new Float32Array(await readback(one, bo, rows * D * 4)), gl = new Float32Array(await readback(one, bl, rows * 4));
    for (const b of [bo, bl, ...temps]) one.tracker.destroy(b);
    for (let r = 0; r < rows; r++) {
      const row = go.subarray(r * D, r * D + D);
      if (inf.includes(r)) {
        expect(Number.isNaN(gl[r]), `LSE row ${r}`).toBe(true);
        expect(row.every(Number.isNaN), `O row ${r}`).toBe(true);
      } else {
        expect(bits(gl.subarray(r, r + 1)), `LSE row ${r}`).toEqual(bits(lse.subarray(r, r + 1)));
        expect(bits(row), `O row ${r}`).toEqual(bits(o.subarray(r * D, r * D + D)));
      }
    }
  });
});
