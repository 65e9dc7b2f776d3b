/**
 * The portable forward's f16 products (flash_fwd.wgsl PK; FLASHRING_PORTABLE_FWD_PRODUCTS) at the
 * edges of their range check, against float64 on the same f16-rounded inputs: a chunk's products
 * are summed in f16 only where Λ = scale · D · max|q| · max|k| (the chunk's maxima) is at most
 * PK_LOGIT (176) and columns · max|q| · max|k| at most PK_SUM (16384); P~ V's where Bc · 16 · max P~ ·
 * max|v| is at most PK_SUM_PV (32768; P~ is stored as 16 · P~). Inputs are built so that every chunk of every row and key holds its
 * maximum exactly (a value f16 represents), so Λ is known: just below a limit the error must show
 * that f16 sums ran (well above f32 products' error) and stay within the f16 contract; just above,
 * f32 products. (f16 products are opt-in: FLASHRING_PORTABLE_FWD_PRODUCTS=f16. The last test shows why:
 * inputs whose products cancel within a chunk take them past the contract well inside these limits.)
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
const PK_LOGIT = 176, PK_SUM = 16384, PK_SUM_PV = 32768, P_SCALE = 16;
let dev: FlashDevice;
/** Pairs of devices with f16 and f32 products: planned tiles, and 64-column chunks (the H200's at D = 64 and 128, where its tile is 128×32). */
const pairs: [string, FlashDevice, FlashDevice][] = [];
beforeAll(async () => {
  dev = await tunedDevice({ portableProducts: 'f16' });
  const wide = { portableForward: { rows: 64, cols: 32, chunk: 64 } } as const;
  pairs.push(['planned', dev, await testDevice()]);
  pairs.push(['64x32x64', await tunedDevice({ ...wide, portableProducts: 'f16' }), await tunedDevice(wide)]);
});

type Mag = number | ((row: number) => number);

/**
 * Rows of D values a · (0.5 + 0.5u), with random signs unless `positive`, and ±a at the first column of every
 * `cols`-column chunk; `a` may give each row its own magnitude.
 */
function rows(n: number, D: number, cols: number, a: Mag, seed: number, positive = false): Float32Array {
  const r = rng(seed), x = new Float32Array(n * D), at = typeof a === 'number' ? () => a : a;
  for (let i = 0; i < x.length; i++) x[i] = (positive || r() >= 0.5 ? 1 : -1) * at(Math.floor(i / D)) * ((i % D) % cols === 0 ? 1 : 0.5 + 0.5 * r());
  return x;
}

/**
 * O and LSE relative errors of the f16 forward on each device, all on the same inputs (rows above: q at magnitude a,
 * k at ak or a, v at av; 2 heads of 96 rows), built for the chunks the first device plans.
 */
async function run(devs: FlashDevice[], D: number, a: Mag, av: number, scale: number, o: { ak?: Mag; positive?: boolean; k?: (k: Float32Array) => void } = {}) {
  const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 96, Nk: 96, D };
  const cols = planDeviceTiles('fwd', D, 'f16', devs[0]).chunk ?? D;
  const x = { q: rows(192, D, cols, a, 1, o.positive), k: rows(192, D, cols, o.ak ?? a, 2, o.positive), v: rows(192, D, cols, av, 3), dout: new Float32Array(192 * D).fill(1) };
  o.k?.(x.k);
  const r = refInputs(x, 'f16');
  const ref = referenceForward(s, r.q, r.k, r.v, { scale });
  const out: { o: number; lse: number }[] = [];
  for (const on of devs) {
    const got = await attentionForward(on, s, x, { precision: 'f16', path: 'scalar', scale });
    out.push({ o: err(got.o, ref.o), lse: err(got.lse, ref.lse) });
  }
  return out;
}

function within(tag: string, ...es: { o: number; lse: number }[]) {
  for (const e of es) {
    expect(e.o, tag).toBeLessThanOrEqual(TOL.f16.out);
    expect(e.lse, tag).toBeLessThanOrEqual(TOL.f16.out);
  }
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
        const scale = 1 / Math.sqrt(D);
        const aIn = magnitude(PK_LOGIT, scale, D, true), aOut = magnitude(PK_LOGIT, scale, D, false);
        const [inF16, inF32] = await run([f16, f32], D, aIn, 1, scale);
        const [outF16, outF32] = await run([f16, f32], D, aOut, 1, scale);
        const tag = JSON.stringify({ D, tiles, cols: planDeviceTiles('fwd', D, 'f16', f16).chunk, aIn, aOut, inF16, inF32, outF16, outF32 });
        console.log(`f16 products at the edge: ${tag}`);
        within(tag, inF16, inF32, outF16, outF32);
        // S's f16 sums give an error 9–25× f32 products' on lavapipe; above the edge S takes f32
        // products and only P~ V stays in f16 (P~ rounded, V's range allows it: up to 2.2× here).
        expect(inF16.o, `below the edge S's f16 sums ran: ${tag}`).toBeGreaterThan(6 * inF32.o);
        expect(outF16.o, `above the edge S's f32 products ran: ${tag}`).toBeLessThan(3 * outF32.o);
      }
    });
  }

  it('decides each K/V tile and each invocation\'s rows apart (maxima reset between tiles, also with fewer invocations than chunks)', async () => {
    if (!dev.hasF16) return;
    const D = 64, scale = 1 / Math.sqrt(D);
    const aIn = magnitude(PK_LOGIT, scale, D, true), aOut = magnitude(PK_LOGIT, scale, D, false);
    // Planned tiles, and 4×4 in 4-column chunks: one invocation, 16 chunks (its resets loop over the chunks).
    const tiny = { portableForward: { rows: 4, cols: 4, chunk: 4 } } as const;
    for (const [tiles, f16, f32] of [pairs[0], ['4x4x4', await tunedDevice({ ...tiny, portableProducts: 'f16' }), await tunedDevice(tiny)] as const]) {
      const { BC: Bc, chunk } = planDeviceTiles('fwd', D, 'f16', f16), cols = chunk ?? D;
      // K: the first tile of each head far beyond the edge by one element a key and chunk (2·aOut in each chunk's
      // first column, the rest shrunk tenfold, so that its scores stay small beside the others' and O is the later
      // tiles'), the others just below it. Were a tile's maximum kept for the next (no reset), every later tile
      // would take f32 products and the error would fall to f32's.
      const bigFirstTile = (k: Float32Array) => {
        for (let j = 0; j < 192; j++) if (j % 96 < Bc) for (let d = 0; d < D; d++) k[j * D + d] = d % cols === 0 ? Math.sign(k[j * D + d]) * 2 * aOut : k[j * D + d] / 10;
      };
      // V far past P~ V's limit keeps those products in f32 on both devices (but where max P~ < 1e-3, whose
      // weight is negligible): S's sums alone make the difference.
      const vBig = f16Round(Math.min(60000, (1000 * PK_SUM_PV) / (P_SCALE * Bc)));
      const [tileF16, tileF32] = await run([f16, f32], D, aIn, vBig, scale, { k: bigFirstTile });
      // Q: rows 0–3 of each head far beyond the edge. They are the first rows of four invocations (rows
      // ty + TY·rr), which take f32 products for all their rows; the other invocations' rows stay below the edge.
      const firstRows = (row: number) => (row % 96 < 4 ? 4 * aOut : aIn);
      const [rowF16, rowF32] = await run([f16, f32], D, firstRows, vBig, scale, { ak: aIn });
      const tag = JSON.stringify({ tiles, Bc, tileF16, tileF32, rowF16, rowF32 });
      console.log(`f16 products per tile and per rows: ${tag}`);
      within(tag, tileF16, tileF32, rowF16, rowF32);
      expect(tileF16.o, `tiles after one beyond the edge sum in f16: ${tag}`).toBeGreaterThan(4 * tileF32.o);
      if (tiles === 'planned') expect(rowF16.o, `rows beside rows beyond the edge sum in f16: ${tag}`).toBeGreaterThan(4 * rowF32.o);
    }
  });

  it(`P~ V: f16 sums where Bc · ${P_SCALE} · max P~ · max|v| ≤ ${PK_SUM_PV}, f32 products beyond`, async () => {
    if (!dev.hasF16) return;
    const D = 64, scale = 1 / Math.sqrt(D), [, f16, f32] = pairs[0];
    const Bc = planDeviceTiles('fwd', D, 'f16', f16).BC;
    // q and k small (|S| < 0.25: S's f16 sums add little, and max P~ between e^-0.5 and 1): with |v| ≤ 1 P~ V's
    // f16 sums run and their error shows; with max|v| twice the limit they cannot, and f32 products run.
    const [smallF16, smallF32] = await run([f16, f32], D, 0.25, 1, scale);
    const [largeF16, largeF32] = await run([f16, f32], D, 0.25, f16Round((2 * PK_SUM_PV) / (P_SCALE * Bc)), scale);
    const tag = JSON.stringify({ Bc, smallF16, smallF32, largeF16, largeF32 });
    console.log(`P~ V at its edge: ${tag}`);
    within(tag, smallF16, smallF32, largeF16, largeF32);
    expect(smallF16.o, `f16 sums ran: ${tag}`).toBeGreaterThan(3 * smallF32.o);   // 4.6× on lavapipe, 3.9× on the H200
    expect(largeF16.o, `f32 products ran: ${tag}`).toBeLessThan(2 * largeF32.o);   // 1.4×: P~ rounded to f16
  });

  it(`a tiny scale with large positive q and k keeps S's products in f32: no f16 sum past ${PK_SUM}`, async () => {
    if (!dev.hasF16) return;
    // Λ = 2e-5 · 64 · 200² is far below PK_LOGIT, but every product is 1e4 to 4e4 and of one sign: a chunk's f16
    // sum would pass 65504 (Inf) without the PK_SUM limit.
    const [e] = await run([dev], 64, 200, 1, 2e-5, { positive: true });
    within(JSON.stringify(e), e);
  });

  it('a P~ too small for f16 still multiplies an infinite V into ±Inf, as in f32', async () => {
    if (!dev.hasF16) return;
    // One head, q = 1 everywhere; key 0 scores 16, key 5 scores −9 (P~ = e^-25 ≈ 1.4e-11: 16 · P~ is below f16's
    // least subnormal), the rest 0. V[5][0] = +Inf: every row's O[0] is +Inf in the reference.
    const D = 64, N = 40, s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq: N, Nk: N, D };
    const q = new Float32Array(N * D).fill(1), k = new Float32Array(N * D), v = rows(N, D, D, 1, 7);
    k.fill(2, 0, D);
    k.fill(-1.125, 5 * D, 6 * D);
    v[5 * D] = Infinity;
    const x = { q, k, v, dout: new Float32Array(N * D).fill(1) };
    const r = refInputs(x, 'f16');
    const ref = referenceForward(s, r.q, r.k, r.v);
    const got = await attentionForward(dev, s, x, { precision: 'f16', path: 'scalar' });
    expect(ref.o[0]).toBe(Infinity);
    expect(err(got.o, ref.o)).toBeLessThanOrEqual(TOL.f16.out);   // ±Inf must match exactly (relErr)
    expect(err(got.lse, ref.lse)).toBeLessThanOrEqual(TOL.f16.out);
  });

  it('many keys far below the row max add no bias (65536 keys at 25 and at 17.3 nats below one key)', async () => {
    if (!dev.hasF16) return;
    // One head, 4 rows, q = 1; key 0 scores 25 or 17.3 above the rest (all 0); V one-signed in [0.5, 1]. Storing the
    // tiny P~ as anything but their rounding (a floor, say) would add Nk times that floor to O.
    const D = 64, Nk = 65536, s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq: 4, Nk, D };
    for (const gap of [25, 17.3]) {
      const k = new Float32Array(Nk * D);
      k.fill(gap / 8, 0, D);   // scale 1/8: S_0 = 8 · mean(k_0) = gap
      const x = { q: new Float32Array(4 * D).fill(1), k, v: rows(Nk, D, D, 1, 9, true), dout: new Float32Array(4 * D).fill(1) };
      const r = refInputs(x, 'f16');
      const ref = referenceForward(s, r.q, r.k, r.v);
      const got = await attentionForward(dev, s, x, { precision: 'f16', path: 'scalar' });
      const e = { o: err(got.o, ref.o), lse: err(got.lse, ref.lse) };
      console.log(`many keys ${gap} nats below: ${JSON.stringify(e)}`);
      // lavapipe: 1.6e-7 and 1.9e-4. (A floor at f16's least subnormal, which a review measured adding 5e-3 at
      // 65536 keys before P~ was stored as 16 · P~, does not show here on lavapipe, which seems to flush f16
      // subnormals in its arithmetic: this bounds the error, it does not catch such a floor.)
      expect(e.o, `gap ${gap}`).toBeLessThanOrEqual(gap === 25 ? 5e-5 : 1e-3);
      expect(e.lse, `gap ${gap}`).toBeLessThanOrEqual(TOL.f16.out);   // S's one-signed f16 sums: 9e-4 at 17.3
    }
  });
  it('why they are opt-in: products that cancel within a chunk pass the contract well inside the limits; f32 products (the default) hold it', async () => {
    if (!dev.hasF16) return;
    // q constant; each key's products one-signed in the first half of every chunk and of the other sign in the
    // second (an adversarial review's case): a lane's f16 sum grows to half the chunk's |products| and then
    // cancels, so its rounding (2^-11 of the largest partial sum, not of the result) is far larger than random
    // signs give. Λ ≈ 80, well below PK_LOGIT.
    const D = 32, N = 96, s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: N, Nk: N, D };
    const [, f16, f32] = pairs[0];
    const cols = planDeviceTiles('fwd', D, 'f16', f16).chunk ?? D, scale = 1 / Math.sqrt(D), a = f16Round(Math.sqrt(80 / (scale * D)));
    const r = rng(80);
    const k = Float32Array.from({ length: 2 * N * D }, (_, i) => ((i % D) % cols < cols / 2 ? 1 : -1) * a * (0.5 + 0.5 * r()));
    const x = { q: new Float32Array(2 * N * D).fill(a), k, v: rows(2 * N, D, D, 1, 81), dout: new Float32Array(2 * N * D).fill(1) };
    const ri = refInputs(x, 'f16');
    const ref = referenceForward(s, ri.q, ri.k, ri.v);
    const [e16, e32] = await Promise.all([f16, f32].map(async (d) => err((await attentionForward(d, s, x, { precision: 'f16', path: 'scalar' })).o, ref.o)));
    console.log(`cancelling products: O error with f16 products ${e16.toExponential(2)}, f32 products ${e32.toExponential(2)}`);
    expect(e32).toBeLessThanOrEqual(TOL.f16.out);   // lavapipe: 2.3e-4
    expect(e16, 'the range check let f16 sums run').toBeGreaterThan(10 * e32);   // lavapipe: 1.4e-2, past the contract
  });
});
