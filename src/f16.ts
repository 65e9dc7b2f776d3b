/** IEEE half-precision conversion (round to nearest, ties to even), of any number (float64 included). */
const f32 = new Float32Array(1);

/** Largest finite f16 value. */
export const HALF_MAX = 65504;

const u32 = new Uint32Array(f32.buffer);

/**
 * The half nearest to x, ties to even. x goes through f32 first, which is exact for f32 data; for a
 * float64 x that f32 rounds onto a midpoint between two halves, the side x lies on decides (rounding
 * twice would take the even half: 1 + 2^-11 + 2^-40 would give 1, not 1 + 2^-10). Halves and their
 * midpoints are f32 values, so only there can the two roundings part.
 */
export function toHalfBits(x: number): number {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // inf / nan
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow -> inf
  if (e <= 0) {
    if (e < -10) return sign; // underflow -> 0
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && tieUp(x, h))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && tieUp(x, h))) h++;
  return sign | h;
}

/**
 * At an f32 value midway between two halves (f32[0], x's f32 rounding): to even where x is that midpoint, else away
 * from zero where x lies beyond it. Read only at such a tie, so the common path pays nothing for float64 inputs.
 */
function tieUp(x: number, h: number): boolean {
  return f32[0] === x ? (h & 1) === 1 : Math.abs(x) > Math.abs(f32[0]);
}

export function fromHalfBits(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 0x1f) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

export function toHalfArray(x: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = toHalfBits(x[i]);
  return out;
}

export function fromHalfArray(h: Uint16Array): Float32Array {
  const out = new Float32Array(h.length);
  for (let i = 0; i < h.length; i++) out[i] = fromHalfBits(h[i]);
  return out;
}

/** Rounds every element to the nearest f16 value (as float64), for references on f16 inputs. */
export function roundToHalf(x: ArrayLike<number>): Float64Array {
  const out = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = fromHalfBits(toHalfBits(x[i]));
  return out;
}
