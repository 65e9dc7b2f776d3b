/**
 * A device profile's measured points → the time of one kernel. No rate is invented here: each
 * function reads the profile's points (devices.ts) and interpolates or fits them.
 *
 * GEMM: time = FLOPs / P + bytes / W (bytes = the three bf16 matrices), P and W fitted by least
 * squares on the relative error over the profile's shapes: one peak for large square GEMMs, and the
 * bytes term for the skinny ones (a small k or n moves more bytes per FLOP), which is the shape class
 * the profile shows to matter (460-757 TFLOP/s over its six shapes).
 * Batched GEMMs of the unfused attention: TFLOP/s by head dimension (each of the six batched GEMMs
 * of a layer moves about one s² matrix per 2·d FLOPs per score, so d sets the class), interpolated in
 * log d. FlashAttention: TFLOP/s by head dimension and a call's work (batch × heads × queries × keys), causal or not, interpolated in log.
 * The unfused attention's elementwise kernels over the scores: ms per 10⁹ scores as measured in steps.
 */
import type { BmmPoint, DeviceProfile, FlashPoint, GemmPoint } from './devices.js';
import type { ScoreKey } from './ops.js';

export interface GemmFit { secondsPerFlop: number; secondsPerByte: number }

const fits = new WeakMap<GemmPoint[], GemmFit>();

/** Least squares of Σ((a·F + c·B)/t − 1)² over the points (2×2 normal equations); c clamped at 0. */
export function fitGemm(points: GemmPoint[]): GemmFit {
  let xx = 0, xy = 0, yy = 0, x1 = 0, y1 = 0;
  for (const p of points) {
    const t = (2 * p.m * p.n * p.k) / (p.tflops * 1e12);
    const x = (2 * p.m * p.n * p.k) / t, y = gemmBytes(p.m, p.n, p.k) / t;
    xx += x * x; xy += x * y; yy += y * y; x1 += x; y1 += y;
  }
  const det = xx * yy - xy * xy;
  let a = (x1 * yy - y1 * xy) / det, c = (xx * y1 - xy * x1) / det;
  if (!(c > 0)) { c = 0; a = x1 / xx; }
  return { secondsPerFlop: a, secondsPerByte: c };
}

const gemmBytes = (m: number, n: number, k: number) => 2 * (m * k + k * n + m * n);

/** Milliseconds of one GEMM (m×k · k×n) at the profile's fitted rate. */
export function gemmMs(profile: DeviceProfile, m: number, n: number, k: number, fp32 = false): number {
  const pts = fp32 ? profile.gemmFp32 : profile.gemmBf16;
  let f = fits.get(pts);
  if (!f) fits.set(pts, (f = fitGemm(pts)));
  const bytes = gemmBytes(m, n, k) * (fp32 ? 2 : 1);
  return (2 * m * n * k * f.secondsPerFlop + bytes * f.secondsPerByte) * 1e3;
}

/** Linear interpolation of y over log x, clamped to the end points. */
function interpLog(pts: { x: number; y: number }[], x: number): number {
  const s = [...pts].sort((p, q) => p.x - q.x);
  if (x <= s[0].x) return s[0].y;
  if (x >= s[s.length - 1].x) return s[s.length - 1].y;
  const i = s.findIndex((p) => p.x >= x);
  const [p, q] = [s[i - 1], s[i]];
  if (q.x === p.x) return q.y;
  return p.y + ((q.y - p.y) * Math.log(x / p.x)) / Math.log(q.x / p.x);
}

/** Mean of the y of points that share an x (the profile measured some d at several shapes). */
function byX<T>(pts: T[], x: (p: T) => number, y: (p: T) => number): { x: number; y: number }[] {
  const m = new Map<number, number[]>();
  for (const p of pts) m.set(x(p), [...(m.get(x(p)) ?? []), y(p)]);
  return [...m.entries()].map(([k, v]) => ({ x: k, y: v.reduce((a, b) => a + b, 0) / v.length }));
}

/** TFLOP/s of the unfused attention's batched GEMMs at head dimension d. */
export function bmmTflops(profile: DeviceProfile, d: number): number {
  return interpLog(byX<BmmPoint>(profile.bmm, (p) => p.d, (p) => p.tflops), d);
}

/** Batch × heads of the calls the flash tables measured where a point does not say (B1 H16). */
const FLASH_TABLE_HEADS = 16;

/**
 * FlashAttention TFLOP/s (forward or backward) at head dimension d of a call of s queries and sk keys
 * (causal: bottom-right aligned, read as the square call of equal pairs, keys 2·sk − s), `heads` =
 * batch × heads of the call: read by the call's work heads·s·keys, interpolated in log among the points
 * of that mask. Measured across head counts for cuDNN only (H16 and H32: read by work, the H16 points
 * give the H32 forward within 13%, read by s alone within 26%; the backward within 23%, by s 21%, no
 * better: test/time.test.ts); the flash backend's points are all H16, so a call with other heads is
 * read by the same rule, unmeasured.
 */
export function flashTflops(profile: DeviceProfile, d: number, s: number, causal: boolean, pass: 'fwd' | 'bwd', backend: 'flash' | 'sdpa' = 'flash', heads = FLASH_TABLE_HEADS, sk = s): number {
  const pts = (backend === 'sdpa' ? profile.sdpaDefault : profile.flash).filter((p) => p.causal === causal);
  const rate = (p: FlashPoint) => (pass === 'fwd' ? p.fwdTflops : p.bwdTflops);
  const ds = [...new Set(pts.map((p) => p.d))];
  const work = (h: number, q: number, k: number) => h * q * (causal ? 2 * k - q : k);
  const atD = ds.map((dd) => ({
    x: dd,
    y: interpLog(byX(pts.filter((p) => p.d === dd), (p) => work(p.heads ?? FLASH_TABLE_HEADS, p.s, p.sk ?? p.s), rate), work(heads, s, sk)),
  }));
  return interpLog(atD, d);
}

/** Milliseconds per 10⁹ scores of one unfused-attention kernel call (the rates by row length s interpolated in log s, clamped). */
export function scoreMs(profile: DeviceProfile, key: ScoreKey, s: number): number {
  const r = profile.scores[key];
  return typeof r === 'number' ? r : interpLog(r.map((p) => ({ x: p.s, y: p.ms })), s);
}
