import { roundToHalf } from '../f16.js';

/**
 * The numeric contract: relative norm ‖x − ref‖ / ‖ref‖ over the entries where ref is finite.
 * Where ref is ±inf, x must equal it exactly, and where ref is NaN x must be NaN; NaN or Inf in
 * x where ref is finite gives Infinity (always a failure).
 */
export function relErr(x: ArrayLike<number>, ref: ArrayLike<number>): number {
  if (x.length !== ref.length) throw new Error(`relErr: length ${x.length} vs reference ${ref.length}`);
  let num = 0;
  let den = 0;
  for (let i = 0; i < ref.length; i++) {
    const r = ref[i];
    const a = x[i];
    if (!Number.isFinite(r)) {
      if (a !== r && !(Number.isNaN(r) && Number.isNaN(a))) return Infinity;
      continue;
    }
    if (!Number.isFinite(a)) return Infinity;
    num += (a - r) * (a - r);
    den += r * r;
  }
  if (den === 0) return num === 0 ? 0 : Infinity;
  return Math.sqrt(num / den);
}

/**
 * An input as the reference must see it for a precision: f16 kernels read f16-rounded inputs,
 * so the reference is taken on the same rounded values (the contract).
 */
export function referenceInput(a: Float32Array, precision: 'f32' | 'f16'): Float64Array {
  return precision === 'f16' ? roundToHalf(a) : Float64Array.from(a);
}

/** Tolerances of the numeric contract (DEVELOPERS.md). */
export const TOL = {
  f32: { out: 1e-5, grad: 1e-4 },
  f16: { out: 5e-3, grad: 2e-2 },
} as const;

/** Deterministic PRNG (mulberry32) so a failing case can be replayed from its seed. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal values (Box–Muller), times `scale`. Never zeros. */
export function randn(n: number, seed: number, scale = 1): Float32Array {
  const r = rng(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const u = Math.max(r(), 1e-12);
    const v = r();
    const mag = Math.sqrt(-2 * Math.log(u)) * scale;
    out[i] = mag * Math.cos(2 * Math.PI * v);
    if (i + 1 < n) out[i + 1] = mag * Math.sin(2 * Math.PI * v);
  }
  return out;
}

/** A seed that differs between runs (fresh inputs) but is printed so failures replay. */
export function freshSeed(): number {
  return (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) >>> 0;
}
