import { describe, expect, it } from 'vitest';
import { referenceBackward, referenceForward } from '../src/reference/attention.js';
import { randn, relErr } from '../src/reference/compare.js';
import { AttentionShape, AttentionOptions } from '../src/shape.js';
import { SEED } from './cases.js';

// Fresh each run and printed (test/cases.ts); FLASHRING_TEST_SEED=<it> repeats a draw.
const seed = SEED;

function inputs(s: AttentionShape, sd: number) {
  return {
    q: Float64Array.from(randn(s.B * s.Hq * s.Nq * s.D, sd)),
    k: Float64Array.from(randn(s.B * s.Hkv * s.Nk * s.D, sd + 1)),
    v: Float64Array.from(randn(s.B * s.Hkv * s.Nk * s.D, sd + 2)),
    g: Float64Array.from(randn(s.B * s.Hq * s.Nq * s.D, sd + 3)),
  };
}

describe('float64 reference attention', () => {
  it('LSE equals log Σ exp of the scaled scores, O is the softmax average of V', () => {
    const s = { B: 1, Hq: 2, Hkv: 1, Nq: 5, Nk: 7, D: 8 };
    const { q, k, v } = inputs(s, seed);
    const { o, lse } = referenceForward(s, q, k, v);
    for (let h = 0; h < 2; h++)
      for (let i = 0; i < 5; i++) {
        const r = h * 5 + i;
        const sc: number[] = [];
        for (let j = 0; j < 7; j++) {
          let d = 0;
          for (let x = 0; x < 8; x++) d += q[r * 8 + x] * k[j * 8 + x];
          sc.push(d / Math.sqrt(8));
        }
        const l = Math.log(sc.reduce((a, x) => a + Math.exp(x), 0));
        expect(lse[r]).toBeCloseTo(l, 12);
        for (let x = 0; x < 8; x++) {
          let acc = 0;
          for (let j = 0; j < 7; j++) acc += Math.exp(sc[j] - l) * v[j * 8 + x];
          expect(o[r * 8 + x]).toBeCloseTo(acc, 12);
        }
      }
  });

  it('causal mask is bottom-right aligned when Nq != Nk; fully masked rows give O = 0, LSE = -inf', () => {
    // Nq > Nk: the first Nq - Nk rows see no key at all.
    const s = { B: 1, Hq: 1, Hkv: 1, Nq: 6, Nk: 4, D: 8 };
    const { q, k, v, g } = inputs(s, seed + 10);
    const { o, lse } = referenceForward(s, q, k, v, { causal: true });
    expect(lse[0]).toBe(-Infinity);
    expect(lse[1]).toBe(-Infinity);
    expect(Number.isFinite(lse[2])).toBe(true);
    for (let x = 0; x < 16; x++) expect(o[x]).toBe(0);
    // Row 2 sees exactly key 0: O = V[0].
    for (let x = 0; x < 8; x++) expect(o[2 * 8 + x]).toBeCloseTo(v[x], 14);
    const gr = referenceBackward(s, q, k, v, g, { causal: true });
    for (let x = 0; x < 16; x++) expect(gr.dq[x]).toBe(0);
    expect([...gr.dq, ...gr.dk, ...gr.dv].every(Number.isFinite)).toBe(true);
  });

  it('positions: a chunk at an offset masks against global positions', () => {
    const s = { B: 1, Hq: 1, Hkv: 1, Nq: 3, Nk: 3, D: 8 };
    const { q, k, v } = inputs(s, seed + 20);
    // Queries at positions 10, 12, 14; keys at 11, 13, 15: query i sees keys 0..i-1.
    const opts: AttentionOptions = { causal: true, qPos: { offset: 10, stride: 2 }, kPos: { offset: 11, stride: 2 } };
    const { lse, o } = referenceForward(s, q, k, v, opts);
    expect(lse[0]).toBe(-Infinity);
    for (let x = 0; x < 8; x++) expect(o[8 + x]).toBeCloseTo(v[x], 14);
  });

  it('Δ from a given O (the backward of its own inputs): the exact O gives the exact gradients; a perturbed O moves dQ and dK by P ∘ (−δΔ) only, dV not at all', () => {
    const s = { B: 1, Hq: 2, Hkv: 1, Nq: 5, Nk: 5, D: 8 };
    const { q, k, v, g } = inputs(s, seed + 40);
    const exact = referenceBackward(s, q, k, v, g, { causal: true }), { o } = referenceForward(s, q, k, v, { causal: true });
    const same = referenceBackward(s, q, k, v, g, { causal: true }, o);
    for (const x of ['dq', 'dk', 'dv'] as const) expect(relErr(same[x], exact[x]), x).toBeLessThan(1e-13);
    const moved = Float64Array.from(o, (y, i) => (i === 3 * 8 + 2 ? y + 1e-3 : y)); // row 3, column 2 of the first head
    const off = referenceBackward(s, q, k, v, g, { causal: true }, moved);
    expect(relErr(off.dv, exact.dv)).toBeLessThan(1e-13);
    // Only row 3's Δ moved, by δΔ = dO[3, 2] · 1e-3: dS_3j = P_3j (dP_3j − Δ_3) moves by −P_3j δΔ, so dQ_3 by
    // scale · Σ_j (−P_3j δΔ) k_j and dK_j by scale · (−P_3j δΔ) q_3 (causal: j ≤ 3; one K/V head), nothing else.
    // Predicted exactly, not by a size threshold (a draw with a small dO[3, 2] moved dQ by less than 1e-6 of its norm).
    const { lse } = referenceForward(s, q, k, v, { causal: true }), scale = 1 / Math.sqrt(8), dDelta = g[3 * 8 + 2] * 1e-3;
    expect(Math.abs(dDelta)).toBeGreaterThan(0);
    const dot = (a: ArrayLike<number>, i: number, b: ArrayLike<number>, j: number) => { let x = 0; for (let d = 0; d < 8; d++) x += a[i * 8 + d] * b[j * 8 + d]; return x; };
    const P3 = [0, 1, 2, 3].map((j) => Math.exp(scale * dot(q, 3, k, j) - lse[3]));
    const wantDq = exact.dq.slice(), wantDk = exact.dk.slice();
    for (let j = 0; j <= 3; j++) for (let d = 0; d < 8; d++) {
      wantDq[3 * 8 + d] -= scale * P3[j] * dDelta * k[j * 8 + d];
      wantDk[j * 8 + d] -= scale * P3[j] * dDelta * q[3 * 8 + d];
    }
    for (let i = 0; i < wantDq.length; i++) expect(Math.abs(off.dq[i] - wantDq[i]), `dq[${i}]`).toBeLessThan(1e-13 * (1 + Math.abs(wantDq[i])));
    for (let i = 0; i < wantDk.length; i++) expect(Math.abs(off.dk[i] - wantDk[i]), `dk[${i}]`).toBeLessThan(1e-13 * (1 + Math.abs(wantDk[i])));
    expect(relErr(off.dq, exact.dq)).toBeGreaterThan(0);
  });

  const grid: [string, AttentionShape, AttentionOptions][] = [
    ['plain', { B: 1, Hq: 1, Hkv: 1, Nq: 4, Nk: 5, D: 8 }, {}],
    ['causal GQA', { B: 2, Hq: 4, Hkv: 2, Nq: 5, Nk: 5, D: 8 }, { causal: true }],
    ['causal Nq<Nk, custom scale', { B: 1, Hq: 2, Hkv: 1, Nq: 3, Nk: 6, D: 8 }, { causal: true, scale: 0.7 }],
  ];
  for (const [name, s, opts] of grid) {
    it(`gradients match central finite differences (${name})`, () => {
      const { q, k, v, g } = inputs(s, seed + 30);
      const loss = (qq: Float64Array, kk: Float64Array, vv: Float64Array) => {
        const { o } = referenceForward(s, qq, kk, vv, opts);
        let l = 0;
        for (let i = 0; i < o.length; i++) l += o[i] * g[i];
        return l;
      };
      const an = referenceBackward(s, q, k, v, g, opts);
      const h = 1e-6;
      for (const [name2, x, grad] of [['q', q, an.dq], ['k', k, an.dk], ['v', v, an.dv]] as const) {
        const num = new Float64Array(x.length);
        for (let i = 0; i < x.length; i++) {
          const keep = x[i];
          x[i] = keep + h;
          const lp = loss(q, k, v);
          x[i] = keep - h;
          const lm = loss(q, k, v);
          x[i] = keep;
          num[i] = (lp - lm) / (2 * h);
        }
        expect(relErr(grad, num), `d${name2}`).toBeLessThan(1e-7);
      }
    });
  }
});
