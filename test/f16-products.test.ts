/**
 * The portable forward's f16 products (flash_fwd.wgsl PK; FLASHRING_PORTABLE_FWD_PRODUCTS) at the
 * edges of their range check, against float64 on the same f16-rounded inputs: a chunk's products
 * are summed in f16 only where Λ = scale · D · max|q| · max|k| (the chunk's maxima) is at most
 * PK_LOGIT (176) and columns · max|q| · max|k| at most PK_SUM (16384); P~ V's where Bc · max P~ ·
 * max|v| is at most PK_SUM.
 * Inputs are built so that every chunk of every row and key holds its maximum exactly (a value
 * f16 represents), so Λ is known: just below the limit the error must show that f16 sums ran
 * (well above f32 products' error) and stay within the f16 contract; just above, S's products in f32.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { testDevice, tunedDevice } from './gpu.js';
import { err, refInputs, TOL, AttentionShape } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { attentionForward } from '../src/kernels/attention.js';
import { referenceForward } from '../src/reference/attention.js';
import { planDeviceTiles } from '../src/kernels/tiles.js';
import { roundToHalf } from '../src/f16.js';
import { rng } from '../src/reference/compare.js';

const f16Round = (x: number) => roundToHalf(Float32Array.of(x))[0];

const PK_LOGIT = 176, PK_SUM = 16384;
let dev: FlashDevice;
/** Pairs of devices with f16 and f32 products: planned tiles, and 64-column chunks (the H200's at D = 64 and 128, where its tile is 128×32). */
const pairs: [string, FlashDevice, FlashDevice][] = [];
beforeAll(async () => {
  dev = await testDevice();
  const wide = { portableForward: { rows: 64, cols: 32, chunk: 64 } } as const;
  pairs.push(['planned', dev, await tunedDevice({ portableProducts: 'f32' })]);
  pairs.push(['64x32x64', await tunedDevice(wide), await tunedDevice({ ...wide, portableProducts: 'f32' })]);
});

/** Rows of D values a · (0.5 + 0.5u) with random signs, and ±a at the first column of every `cols`-column chunk. */
function rows(n: number, D: number, cols: number, a: number, seed: number): Float32Array {
  const r = rng(seed), x = new Float32Array(n * D);
  for (let i = 0; i < x.length; i++) x[i] = (r() < 0.5 ? -1 : 1) * a * ((i % D) % cols === 0 ? 1 : 0.5 + 0.5 * r());
  return x;
}

/** O and LSE relative errors of the f16 forward on `on`, inputs as above (q and k at magnitude a, v at av). */
async function run(on: FlashDevice, D: number, a: number, av: number, scale: number) {
  const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 96, Nk: 96, D };
  const cols = planDeviceTiles('fwd', D, 'f16', on).chunk ?? D;
  const x = { q: rows(192, D, cols, a, 1), k: rows(192, D, cols, a, 2), v: rows(192, D, cols, av, 3), dout: new Float32Array(192 * D).fill(1) };
  const r = refInputs(x, 'f16');
  const ref = referenceForward(s, r.q, r.k, r.v, { scale });
  const got = await attentionForward(on, s, x, { precision: 'f16', path: 'scalar', scale });
  return { o: err(got.o, ref.o), lse: err(got.lse, ref.lse) };
}

/** The f16 magnitude a whose Λ = scale · D · a² is closest to `lambda` from the given side. */
function magnitude(lambda: number, scale: number, D: number, below: boolean): number {
  let a = f16Round(Math.sqrt(lambda / (scale * D)));
  const lam = (x: number) => scale * D * x * x;
  const step = (x: number, up: boolean) => f16Round(x * (up ? 1 + 2 ** -10 : 1 - 2 ** -10));
  while (below ? lam(a) > lambda : lam(a) <= lambda) a = step(a, !below);
  return a;
}

describe('portable forward: f16 products at the edges of their range check', () => {
  for (const D of [32, 64, 128, 256]) {
    it(`D=${D}: Λ just below ${PK_LOGIT} sums in f16 within the contract; just above, f32 products (planned tiles, and 64-column chunks)`, async () => {
      if (!dev.hasF16) return;   // no shader-f16 (CI requires it: test/forward.test.ts)
      for (const [tiles, f16, f32] of pairs) {
        if (D < 64 && tiles !== 'planned') continue;   // 64-column chunks need D ≥ 64
        const cols = planDeviceTiles('fwd', D, 'f16', f16).chunk ?? D;
        const scale = 1 / Math.sqrt(D);
        const aIn = magnitude(PK_LOGIT, scale, D, true), aOut = magnitude(PK_LOGIT, scale, D, false);
        const inF16 = await run(f16, D, aIn, 1, scale), inF32 = await run(f32, D, aIn, 1, scale);
        const outF16 = await run(f16, D, aOut, 1, scale), outF32 = await run(f32, D, aOut, 1, scale);
        const tag = JSON.stringify({ D, tiles, cols, aIn, aOut, inF16, inF32, outF16, outF32 });
        console.log(`f16 products at the edge: ${tag}`);
        for (const e of [inF16, inF32, outF16, outF32]) {
          expect(e.o, tag).toBeLessThanOrEqual(TOL.f16.out);
          expect(e.lse, tag).toBeLessThanOrEqual(TOL.f16.out);
        }
        // S's f16 sums give an error 14–25× f32 products' on lavapipe; above the edge S takes f32
        // products and only P~ V stays in f16 (P~ rounded, V's range allows it: up to 2× here).
        expect(inF16.o, `below the edge S's f16 sums ran: ${tag}`).toBeGreaterThan(6 * inF32.o);
        expect(outF16.o, `above the edge S's f32 products ran: ${tag}`).toBeLessThan(3 * outF32.o);
      }
    });
  }

  it(`P~ V: f16 sums where Bc · max P~ · max|v| ≤ ${PK_SUM}, f32 products beyond; a tiny scale with large q, k keeps S's in f32 (no f16 sum past ${PK_SUM})`, async () => {
    if (!dev.hasF16) return;
    const D = 64, scale = 1 / Math.sqrt(D);
    const [, f16, f32] = pairs[0];
    const Bc = planDeviceTiles('fwd', D, 'f16', f16).BC;
    // q and k small (|S| < 0.25: S's f16 sums add little, and max P~ ≤ e^0.5): with |v| ≤ 1 P~ V's f16
    // sums run and their error shows; with max|v| past PK_SUM / Bc they cannot, and f32 products run.
    const errs = async (av: number) => ({ f16: await run(f16, D, 0.25, av, scale), f32: await run(f32, D, 0.25, av, scale) });
    const small = await errs(1), large = await errs(f16Round((1.01 * PK_SUM) / Bc));
    const tag = JSON.stringify({ Bc, small, large });
    console.log(`P~ V at its edge: ${tag}`);
    for (const e of [small.f16, small.f32, large.f16, large.f32]) {
      expect(e.o, tag).toBeLessThanOrEqual(TOL.f16.out);
      expect(e.lse, tag).toBeLessThanOrEqual(TOL.f16.out);
    }
    expect(small.f16.o, `f16 sums ran: ${tag}`).toBeGreaterThan(3 * small.f32.o);   // 4.6× on lavapipe
    expect(large.f16.o, `f32 products ran: ${tag}`).toBeLessThan(2 * large.f32.o);   // 1.4×: P~ rounded to f16
    // Λ = 1e-4 · 64 · 60² is small, but 60² · cols is past PK_SUM: S's f16 sums could overflow.
    const e = await run(f16, D, 60, 1, 1e-4);
    expect(e.o).toBeLessThanOrEqual(TOL.f16.out);
    expect(e.lse).toBeLessThanOrEqual(TOL.f16.out);
  });
});
