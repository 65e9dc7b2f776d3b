/**
 * Masks as one concept (src/mask.ts, mirrored in shaders/common.wgsl): causal, sliding window and
 * documents (cu_seqlens), alone and combined. First the TypeScript mask against the rules written
 * out plainly here, then the portable kernels (forward and backward, f32 and f16) against the
 * float64 reference for every kind and combination.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { autoF16Path, testDevice } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape, AttentionOptions } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { attentionForward, attentionBackward } from '../src/kernels/attention.js';
import { referenceForward } from '../src/reference/attention.js';
import { gradReference, gradErr } from './gradRef.js';
import { KernelPath } from '../src/kernels/pipeline.js';
import { Precision } from '../src/kernels/precision.js';
import { rng } from '../src/reference/compare.js';
import { Documents, Mask, MaskSpec, floorSum } from '../src/mask.js';
import { resolveOptions } from '../src/shape.js';
import { InputError } from '../src/errors.js';

/** Random document lengths summing to n (zeros and ones included). */
function randomLengths(n: number, r: () => number): number[] {
  const out: number[] = [];
  let left = n;
  while (left > 0) {
    const x = r();
    const len = Math.min(left, x < 0.15 ? 0 : x < 0.3 ? 1 : 1 + Math.floor(r() * Math.max(2, n / 3)));
    out.push(len);
    left -= len;
  }
  if (r() < 0.5) out.splice(Math.floor(r() * out.length), 0, 0);
  return out;
}

const cumulative = (lens: number[]) => Int32Array.from([0, ...lens.map((_, i) => lens.slice(0, i + 1).reduce((a, b) => a + b, 0))]);

/** Documents over Nq queries and Nk keys with the same count (lengths drawn independently). */
function randomDocs(Nq: number, Nk: number, r: () => number, sameLengths = false): Documents {
  const lq = randomLengths(Nq, r);
  if (sameLengths && Nq === Nk) return { cuQ: cumulative(lq), cuK: cumulative(lq) };
  const lk = randomLengths(Nk, r);
  while (lk.length < lq.length) lk.push(0);
  while (lq.length < lk.length) lq.push(0);
  return { cuQ: cumulative(lq), cuK: cumulative(lk) };
}

/** The rules as written in the issue, one pair at a time (no ranges, no search). */
function plainVisible(m: MaskSpec, i: number, j: number): boolean {
  // Two runs: rows from split on sit jump further.
  const at = (p: MaskSpec['qPos'], x: number) => p.offset + x * p.stride + (p.jump !== undefined && x >= p.split! ? p.jump : 0);
  let pq = at(m.qPos, i);
  const pk = at(m.kPos, j);
  if (m.docs) {
    const { cuQ, cuK } = m.docs;
    const inDoc = (cu: Int32Array, p: number) => {
      for (let d = 0; d + 1 < cu.length; d++) if (cu[d] <= p && p < cu[d + 1]) return d;
      return -1;
    };
    const d = inDoc(cuQ, pq);
    if (d < 0 || inDoc(cuK, pk) !== d) return false;
    pq += cuK[d + 1] - cuQ[d + 1];
  }
  if (m.causal && pk > pq) return false;
  if (m.window[0] >= 0 && pk < pq - m.window[0]) return false;
  if (m.window[1] >= 0 && pk > pq + m.window[1]) return false;
  return true;
}

function randomSpec(r: () => number, Nq: number, Nk: number): MaskSpec {
  const win = () => (r() < 0.3 ? -1 : Math.floor(r() * r() * 1.5 * Math.max(Nq, Nk)));
  const docs = r() < 0.5 ? randomDocs(Nq, Nk, r, r() < 0.5) : null;
  const strided = !docs && r() < 0.3;
  // Without documents (positions must stay inside them) sometimes two runs (a zigzag shard: rows from split on sit jump further).
  const pos = (n: number, offset: number) => {
    const p = strided ? { offset: Math.floor(r() * 4), stride: 1 + Math.floor(r() * 3) } : { offset, stride: 1 };
    return !docs && r() < 0.5 ? { ...p, split: Math.floor(r() * (n + 1)), jump: Math.floor(r() * 3 * n) } : p;
  };
  return { causal: r() < 0.5, window: r() < 0.7 ? [win(), win()] : [-1, -1], docs, qPos: pos(Nq, docs ? 0 : Nk - Nq), kPos: pos(Nk, 0) };
}

describe('the mask (src/mask.ts) against the plain rules', () => {
  it('keyRange, tileClass and querySpan agree with pair-by-pair visibility (random masks)', () => {
    const r = rng(SEED);
    for (let t = 0; t < 300; t++) {
      const Nq = 1 + Math.floor(r() * 60), Nk = 1 + Math.floor(r() * 60);
      const spec = randomSpec(r, Nq, Nk);
      const m = new Mask(spec, Nq, Nk);
      const tag = `case ${t} seed ${SEED}: ${JSON.stringify({ Nq, Nk, ...spec, docs: spec.docs && { q: [...spec.docs.cuQ], k: [...spec.docs.cuK] } })}`;
      let prev = [0, 0];
      for (let i = 0; i < Nq; i++) {
        const [lo, hi] = m.keyRange(i);
        for (let j = 0; j < Nk; j++) expect(j >= lo && j < hi, `${tag} i=${i} j=${j}`).toBe(plainVisible(spec, i, j));
        expect(lo >= prev[0] && hi >= prev[1], `${tag}: ranges never decrease (row ${i})`).toBe(true);
        prev = [lo, hi];
      }
      for (const [BR, BC] of [[4, 4], [8, 16], [16, 8]]) {
        for (let i0 = 0; i0 < Nq; i0 += BR)
          for (let j0 = 0; j0 < Nk + BC; j0 += BC) {
            const cls = m.tileClass(i0, i0 + BR, j0, j0 + BC);
            let seen = 0, all = 0;
            for (let i = i0; i < Math.min(i0 + BR, Nq); i++)
              for (let j = j0; j < j0 + BC; j++) {
                all++;
                if (j < Nk && plainVisible(spec, i, j)) seen++;
              }
            if (cls === 'skip') expect(seen, `${tag} tile ${i0},${j0} skipped with visible pairs`).toBe(0);
            if (cls === 'full') expect(seen, `${tag} tile ${i0},${j0} full with hidden pairs`).toBe(all);
            if (seen === all && all > 0) expect(cls, `${tag} tile ${i0},${j0}`).toBe('full');
          }
        for (let j0 = 0; j0 < Nk; j0 += BC) {
          const [a, b] = m.querySpan(j0, j0 + BC);
          for (let i = 0; i < Nq; i++) {
            let sees = false;
            for (let j = j0; j < Math.min(j0 + BC, Nk); j++) sees ||= plainVisible(spec, i, j);
            if (sees) expect(i >= a && i < b, `${tag} row ${i} sees keys ${j0}.. but is outside the span [${a}, ${b})`).toBe(true);
          }
        }
      }
    }
  });

  it('visiblePairs (closed form without documents) counts the plain rules\' pairs of any row range (random masks, strides, two runs, windows past every position)', () => {
    const r = rng(SEED + 1);
    for (let t = 0; t < 1500; t++) {
      const Nq = 1 + Math.floor(r() * 70), Nk = 1 + Math.floor(r() * 70);
      const spec = randomSpec(r, Nq, Nk);
      if (r() < 0.2) spec.window = [r() < 0.5 ? 1 << 30 : spec.window[0], r() < 0.5 ? 1 << 30 : spec.window[1]];
      // Strides and offsets of both sides drawn apart (a ring pairs a striped shard with contiguous keys).
      if (!spec.docs && r() < 0.4) spec.kPos = { ...spec.kPos, offset: Math.floor(r() * 9) - 4, stride: 1 + Math.floor(r() * 4) };
      const m = new Mask(spec, Nq, Nk);
      const i0 = r() < 0.5 ? 0 : Math.floor(r() * Nq), i1 = r() < 0.5 ? Nq : i0 + Math.floor(r() * (Nq + 5 - i0));
      let plain = 0;
      for (let i = i0; i < Math.min(i1, Nq); i++) for (let j = 0; j < Nk; j++) if (plainVisible(spec, i, j)) plain++;
      expect(m.visiblePairs(i0, i1), `case ${t}: ${JSON.stringify({ Nq, Nk, i0, i1, ...spec, docs: !!spec.docs })}`).toBe(plain);
    }
  });

  it('floorSum: Σ_{t<n} ⌊(a·t + b)/m⌋ as summed term by term', () => {
    const r = rng(SEED + 2);
    for (let t = 0; t < 2000; t++) {
      const n = Math.floor(r() * 40), m = 1 + Math.floor(r() * 30), a = Math.floor(r() * 80), b = Math.floor(r() * 200);
      let plain = 0;
      for (let i = 0; i < n; i++) plain += Math.floor((a * i + b) / m);
      expect(floorSum(n, m, a, b), JSON.stringify({ n, m, a, b })).toBe(plain);
    }
    // A 1M-token causal call: N(N+1)/2 pairs, exact.
    const N = 1 << 20;
    expect(new Mask({ causal: true, window: [-1, -1], docs: null, qPos: { offset: 0, stride: 1 }, kPos: { offset: 0, stride: 1 } }, N, N).visiblePairs()).toBe((N * (N + 1)) / 2);
  });

  it('with documents of equal q/k lengths, tiles of different documents are skipped', () => {
    const docs = { cuQ: Int32Array.from([0, 16, 32, 48]), cuK: Int32Array.from([0, 16, 32, 48]) };
    const m = new Mask(resolveOptions({ B: 1, Hq: 1, Hkv: 1, Nq: 48, Nk: 48, D: 8 }, { docs }), 48, 48);
    for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) expect(m.tileClass(16 * a, 16 * a + 16, 16 * b, 16 * b + 16)).toBe(a === b ? 'full' : 'skip');
  });

  it('bad masks are one-line input errors', () => {
    const s = { B: 1, Hq: 1, Hkv: 1, Nq: 10, Nk: 10, D: 8 };
    const bad: [AttentionOptions, RegExp][] = [
      [{ window: [-2, 0] }, /window left must be an integer >= -1/],
      [{ window: [0, 1.5] }, /window right must be an integer >= -1/],
      [{ docs: { cuQ: Int32Array.from([1, 10]), cuK: Int32Array.from([0, 10]) } }, /cu_seqlens_q must start at 0/],
      [{ docs: { cuQ: Int32Array.from([0, 6, 4, 10]), cuK: Int32Array.from([0, 3, 6, 10]) } }, /cu_seqlens_q decreases at entry 2/],
      [{ docs: { cuQ: Int32Array.from([0, 9]), cuK: Int32Array.from([0, 10]) } }, /cu_seqlens_q ends at 9 but the sequence has 10 tokens/],
      [{ docs: { cuQ: Int32Array.from([0, 10]), cuK: Int32Array.from([0, 5, 10]) } }, /cu_seqlens_q has 1 document but cu_seqlens_k 2/],
      [{ docs: { cuQ: Float64Array.from([0, 10]) as unknown as Int32Array, cuK: Int32Array.from([0, 10]) } }, /cu_seqlens_q must be int32/],
    ];
    for (const [o, re] of bad) expect(() => resolveOptions(s, o)).toThrow(re);
    for (const [o] of bad) expect(() => resolveOptions(s, o)).toThrow(InputError);
  });
});

let dev: FlashDevice;
let precisions: Precision[];
let tensorCores = false;
beforeAll(async () => {
  dev = await testDevice();
  precisions = dev.hasF16 ? ['f32', 'f16'] : ['f32'];
  tensorCores = autoF16Path(dev) === 'subgroup-matrix';
  console.log(`mask tests on ${dev.adapter.description}: ${precisions.join(', ')} portable${tensorCores ? ', f16 subgroup-matrix' : ''}`);
});

/**
 * Forward (and backward) under a mask; `path` unset is 'auto': tensor cores for f16 where the
 * adapter has them and the head dim is a multiple of 16, as without a mask.
 */
async function checkBoth(s: AttentionShape, opts: AttentionOptions, p: Precision, seed: number, backward = true, path?: KernelPath) {
  const x = makeInputs(s, seed);
  const r = refInputs(x, p);
  const tag = `${p}/${path ?? 'auto'} ${JSON.stringify(s)} ${JSON.stringify({ ...opts, docs: opts.docs && { q: [...opts.docs.cuQ], k: [...opts.docs.cuK] } })} seed ${seed}`;
  const ref = referenceForward(s, r.q, r.k, r.v, opts);
  const fwd = await attentionForward(dev, s, x, { ...opts, precision: p, path });
  const expected = path ?? (p === 'f16' && tensorCores && s.D % 16 === 0 ? 'subgroup-matrix' : 'scalar');
  expect(fwd.path, 'auto takes the path it takes without a mask').toBe(expected);
  expect(err(fwd.o, ref.o), `O ${tag}`).toBeLessThanOrEqual(TOL[p].out);
  expect(err(fwd.lse, ref.lse), `LSE ${tag}`).toBeLessThanOrEqual(TOL[p].out);
  if (!backward) return;
  // Against the backward of its own inputs, this O among them (gradRef.ts): documents that leave one query row with two
  // keys (FLASHRING_TEST_SEED=768650, documents not causal) put f16's dQ 0.23 from the exact gradients, 1.6e-4 from this.
  const rb = gradReference(s, r, opts, fwd.o, p, tag);
  const got = await attentionBackward(dev, s, { ...x, o: fwd.o, lse: fwd.lse }, { ...opts, precision: p, path });
  expect(got.path).toBe(expected);
  for (const k of ['dq', 'dk', 'dv'] as const) expect(gradErr(got[k], rb[k], rb.dv), `${k} ${tag}`).toBeLessThanOrEqual(TOL[p].grad);
}

const one = (N: number, D = 16, extra: Partial<AttentionShape> = {}): AttentionShape => ({ B: 1, Hq: 1, Hkv: 1, Nq: N, Nk: N, D, ...extra });

describe('portable kernels under every mask kind vs the float64 reference (forward and backward)', () => {
  const r = rng(SEED ^ 0x5eed);
  const docs = (Nq: number, Nk = Nq, same = Nq === Nk) => randomDocs(Nq, Nk, r, same);
  const cases: [string, AttentionShape, AttentionOptions][] = [
    // Several heads: the LSE of one query with one key is one score, whose relative error alone
    // is ill-conditioned (a score near 0 after cancellation in q·k); 8 of them are not.
    ['N=1 window (0, 0)', one(1, 16, { B: 2, Hq: 4, Hkv: 4 }), { window: [0, 0] }],
    ['window (3, 0), smaller than a tile', one(70), { window: [3, 0] }],
    ['window (5, 7), not causal', one(100, 16, { Hq: 2, Hkv: 2 }), { window: [5, 7] }],
    ['causal + window (16, -1)', one(130), { causal: true, window: [16, -1] }],
    ['window (1000, 1000), larger than N', one(50), { window: [1000, 1000] }],
    ['window (-1, 2) right only', one(45), { window: [-1, 2] }],
    ['Nq<Nk causal + window (10, 0), bottom-right', { B: 1, Hq: 2, Hkv: 1, Nq: 30, Nk: 77, D: 16 }, { causal: true, window: [10, 0] }],
    ['Nq>Nk window (4, 4): masked rows', { B: 1, Hq: 1, Hkv: 1, Nq: 60, Nk: 25, D: 16 }, { causal: true, window: [4, 4] }],
    ['documents, equal lengths', one(120), { docs: docs(120) }],
    ['documents causal, equal lengths, B=2', one(97, 16, { B: 2 }), { causal: true, docs: docs(97) }],
    ['documents causal, q/k lengths differ (bottom-right, empty, masked rows)', { B: 1, Hq: 2, Hkv: 2, Nq: 90, Nk: 110, D: 16 }, { causal: true, docs: docs(90, 110) }],
    ['documents not causal, q/k lengths differ', { B: 1, Hq: 1, Hkv: 1, Nq: 64, Nk: 40, D: 16 }, { docs: docs(64, 40) }],
    ['documents + causal + window (7, 0), GQA 4:2', { B: 1, Hq: 4, Hkv: 2, Nq: 150, Nk: 150, D: 16 }, { causal: true, window: [7, 0], docs: docs(150) }],
    ['documents + window (2, 3), not causal', one(80), { window: [2, 3], docs: docs(80) }],
    ['a document with queries but no keys (masked rows)', one(40), { causal: true, docs: { cuQ: Int32Array.from([0, 10, 25, 40]), cuK: Int32Array.from([0, 15, 15, 40]) } }],
    ['zigzag shards (two runs) + window (20, 0) + documents', { B: 1, Hq: 2, Hkv: 1, Nq: 40, Nk: 36, D: 16 },
      { causal: true, window: [20, 0], docs: { cuQ: Int32Array.from([0, 30, 70, 100]), cuK: Int32Array.from([0, 30, 70, 100]) }, qPos: { offset: 4, stride: 1, split: 18, jump: 55 }, kPos: { offset: 10, stride: 1, split: 20, jump: 30 } }],
    ['chunk positions (stride 3) + window (9, 0) + documents', { B: 1, Hq: 1, Hkv: 1, Nq: 33, Nk: 33, D: 16 },
      { causal: true, window: [9, 0], docs: { cuQ: Int32Array.from([0, 40, 41, 100]), cuK: Int32Array.from([0, 40, 41, 100]) }, qPos: { offset: 2, stride: 3 }, kPos: { offset: 1, stride: 3 } }],
  ];
  for (const [name, s, opts] of cases)
    it(name, async () => {
      for (const p of precisions) await checkBoth(s, opts, p, SEED + name.length);
      // Where f16 'auto' takes the tensor cores (the H200), the portable f16 kernels asked for explicitly.
      if (tensorCores) await checkBoth(s, opts, 'f16', SEED + name.length, true, 'scalar');
    });

  it('N=500: documents + causal + window (64, 0), forward and backward in f32, forward in f16', async () => {
    const s = one(500, 8);
    const opts = { causal: true, window: [64, 0] as [number, number], docs: docs(500) };
    await checkBoth(s, opts, 'f32', SEED + 7);
    if (precisions.includes('f16')) await checkBoth(s, opts, 'f16', SEED + 8, false);
  });

  it('NaN and Inf in keys and values reach only the rows that see them (documents + window)', async () => {
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 1, Nq: 60, Nk: 60, D: 16 };
    const docs = { cuQ: Int32Array.from([0, 20, 21, 45, 60]), cuK: Int32Array.from([0, 20, 21, 45, 60]) };
    const opts: AttentionOptions = { causal: true, window: [6, 0], docs };
    for (const p of precisions) {
      const x = makeInputs(s, SEED + 61);
      x.k[30 * 16 + 2] = NaN;        // key 30 (document 2): rows 30..36 see it
      x.v[50 * 16 + 7] = Infinity;   // key 50 (document 3): rows 50..56 see it
      const r = refInputs(x, p);
      const ref = referenceForward(s, r.q, r.k, r.v, opts);
      expect(ref.o.some(Number.isNaN) && ref.o.some(Number.isFinite), 'the case reaches some rows, not all').toBe(true);
      const f = await attentionForward(dev, s, x, { ...opts, precision: p });
      expect(err(f.o, ref.o), `O ${p}`).toBeLessThanOrEqual(TOL[p].out);
      expect(err(f.lse, ref.lse), `LSE ${p}`).toBeLessThanOrEqual(TOL[p].out);
      const rb = gradReference(s, r, opts, f.o, p, p);
      const b = await attentionBackward(dev, s, { ...x, o: f.o, lse: f.lse }, { ...opts, precision: p });
      for (const g of ['dq', 'dk', 'dv'] as const) expect(err(b[g], rb[g]), `${g} ${p}`).toBeLessThanOrEqual(TOL[p].grad);
    }
  });

  it("'auto' takes the same path under every mask (tensor cores for f16 where the adapter has them)", async () => {
    const s = one(20);
    const x = makeInputs(s, SEED);
    const p: Precision = precisions.includes('f16') ? 'f16' : 'f32';
    const tc = p === 'f16' ? autoF16Path(dev) : 'scalar';
    expect((await attentionForward(dev, s, x, { causal: true, precision: p })).path).toBe(tc);
    expect((await attentionForward(dev, s, x, { causal: true, window: [3, 0], precision: p })).path).toBe(tc);
    expect((await attentionForward(dev, s, x, { docs: { cuQ: Int32Array.from([0, 9, 20]), cuK: Int32Array.from([0, 9, 20]) }, precision: p })).path).toBe(tc);
  });
});
