/**
 * src/f16.ts against oracles of its own: known IEEE binary16 bit patterns, and a nearest-half
 * search written here from the format's definition (a half's exact value from its bits by integer
 * arithmetic; positive finite halves are ordered as their bits), with ties to the even pattern.
 * Every f16 comparison elsewhere takes both its kernel inputs and its reference inputs through
 * src/f16.ts, so a conversion bug there cannot show in them: it must show here.
 */
import { describe, expect, it } from 'vitest';
import { fromHalfArray, fromHalfBits, roundToHalf, toHalfArray, toHalfBits } from '../src/f16.js';
import { rng } from '../src/reference/compare.js';

/** The exact value of a half from its bits (binary16: 1 sign, 5 exponent, 10 mantissa bits; bias 15). */
function halfValue(h: number): number {
  const sign = h >> 15 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  if (e === 31) return m ? NaN : sign * Infinity;
  // Subnormal: m · 2^-24; normal: (1024 + m) · 2^(e − 25). Integers times powers of two: exact.
  return sign * (e === 0 ? m * 2 ** -24 : (1024 + m) * 2 ** (e - 25));
}

/** Positive finite halves by their bits 0 … 0x7BFF, and 2^16 where 0x7C00 (+inf) sits: the rounding's upper neighbour of 65504. */
const POS = Float64Array.from({ length: 0x7c01 }, (_, h) => (h === 0x7c00 ? 2 ** 16 : halfValue(h)));

/** The half nearest to a float32 value, ties to the even bit pattern; beyond 65520 (the midpoint to 2^16) infinity. */
function nearestHalf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 2 ** 16) return sign | 0x7c00;
  // The last bit pattern whose value is ≤ a (binary search on the ordered table).
  let lo = 0, hi = 0x7c00;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (POS[mid] <= a) lo = mid;
    else hi = mid;
  }
  // Differences of an f32 value and its neighbouring halves are exact in float64.
  const below = a - POS[lo], above = POS[lo + 1] - a;
  const h = below < above ? lo : above < below ? lo + 1 : lo % 2 === 0 ? lo : lo + 1;
  return sign | h;
}

const f32 = (x: number) => Math.fround(x);

describe('f16 conversion against known bit patterns', () => {
  const known: [number, number][] = [
    [0, 0x0000], [1, 0x3c00], [-1, 0xbc00], [-2, 0xc000], [2, 0x4000], [0.5, 0x3800], [3, 0x4200], [-0.25, 0xb400],
    [65504, 0x7bff], [-65504, 0xfbff], [2 ** -14, 0x0400], [2 ** -24, 0x0001], [1023 * 2 ** -24, 0x03ff], [2 ** -15, 0x0200],
    [1 + 2 ** -10, 0x3c01], [0.333251953125, 0x3555], [1024, 0x6400], [2048 + 2, 0x6801], [Infinity, 0x7c00], [-Infinity, 0xfc00],
  ];
  it('exact halves: both directions', () => {
    for (const [x, h] of known) {
      expect(toHalfBits(x), `toHalfBits(${x})`).toBe(h);
      expect(fromHalfBits(h), `fromHalfBits(0x${h.toString(16)})`).toBe(x);
    }
    // Signed zero both ways; NaN both ways (a NaN pattern: exponent all ones, mantissa not zero).
    expect(toHalfBits(-0)).toBe(0x8000);
    expect(Object.is(fromHalfBits(0x8000), -0)).toBe(true);
    expect(Object.is(fromHalfBits(0x0000), 0)).toBe(true);
    const n = toHalfBits(NaN);
    expect(n & 0x7c00).toBe(0x7c00);
    expect(n & 0x03ff).not.toBe(0);
    for (const h of [0x7e00, 0x7c01, 0xfe00, 0x7fff, 0xffff]) expect(fromHalfBits(h), `0x${h.toString(16)}`).toBeNaN();
  });

  it('rounding: to nearest, ties to even, at the subnormal end and at the top of the range', () => {
    // Ties between two halves go to the even pattern.
    expect(toHalfBits(1 + 2 ** -11)).toBe(0x3c00);            // 1 and 1+2^-10: even 0x3C00
    expect(toHalfBits(1 + 3 * 2 ** -11)).toBe(0x3c02);        // 1+2^-10 and 1+2^-9: even 0x3C02
    expect(toHalfBits(-(1 + 2 ** -11))).toBe(0xbc00);
    expect(toHalfBits(2048 + 1)).toBe(0x6800);                // 2048 and 2050: even
    expect(toHalfBits(2048 + 3)).toBe(0x6802);                // 2050 and 2052: even 2052
    // Not a tie: to the nearer.
    expect(toHalfBits(f32(1 + 2 ** -11 + 2 ** -20))).toBe(0x3c01);
    expect(toHalfBits(f32(1 + 2 ** -11 - 2 ** -20))).toBe(0x3c00);
    expect(toHalfBits(f32(1 + 2 ** -12))).toBe(0x3c00);
    // Below the least subnormal 2^-24: 2^-25 is the tie between 0 and 2^-24 (to even: 0); anything above it rounds up.
    expect(toHalfBits(2 ** -25)).toBe(0x0000);
    expect(toHalfBits(-(2 ** -25))).toBe(0x8000);
    expect(toHalfBits(1.5 * 2 ** -25)).toBe(0x0001);
    expect(toHalfBits(-1.5 * 2 ** -25)).toBe(0x8001);
    expect(toHalfBits(0.75 * 2 ** -24)).toBe(0x0001);
    expect(toHalfBits(f32(2 ** -25 + 2 ** -40))).toBe(0x0001);
    expect(toHalfBits(f32(2 ** -25 - 2 ** -40))).toBe(0x0000);
    expect(toHalfBits(2 ** -26)).toBe(0x0000);
    expect(toHalfBits(1e-30)).toBe(0x0000);
    expect(toHalfBits(3 * 2 ** -25)).toBe(0x0002);            // tie between 1 and 2 ·2^-24: even 2
    expect(toHalfBits(5 * 2 ** -25)).toBe(0x0002);            // tie between 2 and 3 ·2^-24: even 2
    // The subnormal/normal boundary: 2^-14 − 2^-25 is the tie between 0x03FF and 0x0400 (even 0x0400).
    expect(toHalfBits(2 ** -14 - 2 ** -25)).toBe(0x0400);
    expect(toHalfBits(2 ** -14 - 2 ** -24)).toBe(0x03ff);
    // The top: 65519 → 65504; 65520 is the tie between 65504 (odd) and 2^16 (even: +inf).
    expect(toHalfBits(65519)).toBe(0x7bff);
    expect(toHalfBits(65520)).toBe(0x7c00);
    expect(toHalfBits(-65520)).toBe(0xfc00);
    expect(toHalfBits(1e6)).toBe(0x7c00);
    expect(toHalfBits(3.4e38)).toBe(0x7c00);
    // Mantissa carry into the exponent: 2 − 2^-11, the tie between 2 − 2^-10 (0x3FFF, odd) and 2, rounds up to 2.
    expect(toHalfBits(2 - 2 ** -11)).toBe(0x4000);
    expect(toHalfBits(2 - 2 ** -10 - 2 ** -13)).toBe(0x3fff);
  });
});

describe('f16 conversion against a nearest-half search', () => {
  it('every half, every midpoint between neighbours and the float32 values either side of it, both signs', () => {
    const miss: string[] = [];
    const check = (x: number) => {
      const want = nearestHalf(x), got = toHalfBits(x);
      if (got !== want && miss.length < 10) miss.push(`toHalfBits(${x}) = 0x${got.toString(16)}, want 0x${want.toString(16)}`);
    };
    for (let h = 0; h < 0x7c00; h++) {
      const a = POS[h], b = POS[h + 1], mid = (a + b) / 2; // a midpoint has 12 significant bits: a float32
      for (const x of [a, mid, f32(mid - mid * 2 ** -22), f32(mid + mid * 2 ** -22)]) {
        check(x);
        check(-x);
      }
      // fromHalfBits: the exact value, both signs.
      if (fromHalfBits(h) !== a || fromHalfBits(h | 0x8000) !== -a) miss.push(`fromHalfBits(0x${h.toString(16)}) = ${fromHalfBits(h)}, want ${a}`);
    }
    expect(miss).toEqual([]);
  });

  it('random float32 values over the whole range (random bits), and dense near the subnormal range', () => {
    const r = rng(0x5eed);
    const bits = new Uint32Array(1), view = new Float32Array(bits.buffer);
    const miss: string[] = [];
    for (let i = 0; i < 200_000; i++) {
      // Exponents spread over all of float32's (inf/NaN too), or held near half's subnormals (2^-27 … 2^-13).
      const e = i % 2 ? Math.floor(r() * 256) : 100 + Math.floor(r() * 15);
      bits[0] = ((r() < 0.5 ? 1 : 0) << 31) | (e << 23) | Math.floor(r() * 2 ** 23);
      const x = view[0], want = nearestHalf(x), got = toHalfBits(x);
      if (Number.isNaN(x)) expect((got & 0x7c00) === 0x7c00 && (got & 0x3ff) !== 0).toBe(true);
      else if (got !== want && miss.length < 10) miss.push(`toHalfBits(${x}) = 0x${got.toString(16)}, want 0x${want.toString(16)}`);
    }
    expect(miss).toEqual([]);
  });

  it('float64 values round once, not through float32: next to a midpoint the side they lie on decides', () => {
    // f32 rounds each of these onto a midpoint between two halves; ties-to-even there would take the wrong half.
    const cases: [number, number][] = [
      [1 + 2 ** -11 + 2 ** -40, 0x3c01], [1 + 2 ** -11 - 2 ** -40, 0x3c00],      // f32: 1 + 2^-11, the tie (even 0x3C00)
      [1 + 3 * 2 ** -11 - 2 ** -40, 0x3c01], [1 + 3 * 2 ** -11 + 2 ** -40, 0x3c02],
      [-(1 + 2 ** -11 + 2 ** -40), 0xbc01],
      [65520 - 2 ** -20, 0x7bff], [65520 + 2 ** -20, 0x7c00],                     // the top: 65504, or +inf beyond 65520
      [2 ** -25 + 2 ** -60, 0x0001], [2 ** -25 - 2 ** -60, 0x0000],              // the least subnormal's tie with 0
      [3 * 2 ** -25 - 2 ** -60, 0x0001], [2 ** -14 - 2 ** -25 - 2 ** -60, 0x03ff],
    ];
    for (const [x, want] of cases) {
      expect(f32(x) !== x, `${x} is not an f32`).toBe(true);
      expect(toHalfBits(x), `toHalfBits(${x})`).toBe(want);
    }
    // And the f32 values themselves (the midpoints) still tie to even.
    expect(toHalfBits(1 + 2 ** -11)).toBe(0x3c00);
    expect(toHalfBits(65520)).toBe(0x7c00);
    expect(Array.from(toHalfArray(Float64Array.from(cases, (c) => c[0])))).toEqual(cases.map((c) => c[1]));
  });

  it('the array forms and roundToHalf are the scalar conversions element by element', () => {
    const x = Float32Array.from([1, -2, 65504, 65520, 2 ** -25, 1.5 * 2 ** -25, -0, 1 + 2 ** -11, 0.1, -7.3e-6, Infinity]);
    const h = toHalfArray(x);
    expect(Array.from(h)).toEqual(Array.from(x, (v) => nearestHalf(v)));
    expect(Array.from(fromHalfArray(h))).toEqual(Array.from(h, halfValue));
    expect(Array.from(roundToHalf(x))).toEqual(Array.from(x, (v) => halfValue(nearestHalf(v))));
    expect(Object.is(roundToHalf([-0])[0], -0)).toBe(true);
  });
});
