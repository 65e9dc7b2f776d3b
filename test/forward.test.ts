import { describe, expect, it, beforeAll } from 'vitest';
import { autoF16Path, testDevice, tunedDevice } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape, AttentionOptions, bits } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { attentionForward, HostTensor } from '../src/kernels/attention.js';
import { referenceForward } from '../src/reference/attention.js';
import { KernelPath } from '../src/kernels/pipeline.js';
import { Precision } from '../src/kernels/precision.js';
import { InputError, LimitError } from '../src/errors.js';
import { tuningFromEnv } from '../src/kernels/tuning.js';
import { planDeviceTiles } from '../src/kernels/tiles.js';

let dev: FlashDevice;
/** The portable kernels with pins, spelled as the pins' variables (FLASHRING_PORTABLE_*) spell them, on a device of their own. */
const portable = (pins: Record<string, string | undefined>) => tunedDevice(tuningFromEnv(pins));
/** Every (precision, kernel path) the adapter has. */
let paths: [Precision, KernelPath][];
beforeAll(async () => {
  dev = await testDevice();
  paths = [['f32', 'scalar']];
  if (dev.hasF16) paths.push(['f16', 'scalar']);
  if (dev.hasF16 && dev.hasSubgroupMatrix) paths.push(['f16', 'subgroup-matrix']);
  if (process.env.CI === 'true') expect(dev.hasF16, 'lavapipe in CI must offer shader-f16').toBe(true);
  console.log(`forward paths on ${dev.adapter.description}: ${paths.map((x) => x.join('/')).join(', ')}`);
});

async function check(s: AttentionShape, opts: AttentionOptions, p: Precision, seed: number, inScale = 1, path: KernelPath = 'scalar', on = dev) {
  const x = makeInputs(s, seed, inScale);
  const r = refInputs(x, p);
  const ref = referenceForward(s, r.q, r.k, r.v, opts);
  const got = await attentionForward(on, s, x, { ...opts, precision: p, path });
  expect(got.path).toBe(path);
  const tol = TOL[p].out;
  const eo = err(got.o, ref.o), el = err(got.lse, ref.lse);
  const tag = `${p}/${path} ${JSON.stringify(s)} ${JSON.stringify(opts)}`;
  expect(eo, `O rel err ${tag}`).toBeLessThanOrEqual(tol);
  expect(el, `LSE rel err ${tag}`).toBeLessThanOrEqual(tol);
  return { eo, el, got, ref };
}

const sq = (N: number, D: number, extra: Partial<AttentionShape> = {}): AttentionShape => ({ B: 1, Hq: 2, Hkv: 2, Nq: N, Nk: N, D, ...extra });

describe('FlashAttention forward vs float64 reference', () => {
  const grid: [string, AttentionShape, AttentionOptions][] = [
    ['N=1', sq(1, 32), {}],
    ['N=17 causal', sq(17, 32), { causal: true }],
    ['N=127 D=64', sq(127, 64), {}],
    ['N=127 D=64 causal', sq(127, 64), { causal: true }],
    ['N=513 D=8 causal', sq(513, 8, { Hq: 1, Hkv: 1 }), { causal: true }],
    ['N=64 (multiple of the tile) D=80', sq(64, 80), {}],
    ['N=33 D=128 causal', sq(33, 128), { causal: true }],
    ['N=20 D=256', sq(20, 256, { Hq: 1, Hkv: 1 }), {}],
    ['Nq<Nk causal (bottom-right)', { B: 1, Hq: 2, Hkv: 2, Nq: 19, Nk: 45, D: 32 }, { causal: true }],
    ['Nq>Nk causal (masked rows)', { B: 1, Hq: 1, Hkv: 1, Nq: 40, Nk: 23, D: 32 }, { causal: true }],
    ['GQA 6:2 B=2', { B: 2, Hq: 6, Hkv: 2, Nq: 31, Nk: 31, D: 32 }, { causal: true }],
    ['MQA 4:1', { B: 1, Hq: 4, Hkv: 1, Nq: 21, Nk: 37, D: 16 }, {}],
    ['scale 0.3', sq(29, 32), { scale: 0.3 }],
    ['striped positions', { B: 1, Hq: 1, Hkv: 1, Nq: 24, Nk: 24, D: 32 }, { causal: true, qPos: { offset: 1, stride: 4 }, kPos: { offset: 2, stride: 4 } }],
    ['zigzag shards (two runs of positions)', { B: 1, Hq: 2, Hkv: 1, Nq: 37, Nk: 30, D: 32 }, { causal: true, qPos: { offset: 3, stride: 1, split: 21, jump: 40 }, kPos: { offset: 0, stride: 1, split: 12, jump: 33 } }],
    ['two runs at stride 3, window (20, 0)', { B: 1, Hq: 1, Hkv: 1, Nq: 29, Nk: 33, D: 16 }, { causal: true, window: [20, 0], qPos: { offset: 5, stride: 3, split: 11, jump: 14 }, kPos: { offset: 1, stride: 3, split: 20, jump: 8 } }],
  ];
  for (const [name, s, opts] of grid) {
    it(name, async () => {
      for (const [p, path] of paths) if (path === 'scalar' || s.D % 16 === 0) await check(s, opts, p, SEED + name.length, 1, path);
    });
  }

  it('large logits (inputs ×8) stay exact', async () => {
    // D = 128 too: there the tensor-core forward splits O between two subgroups, whose rescale path large logits take.
    for (const D of [64, 128]) for (const [p, path] of paths) await check(sq(70, D), { causal: true }, p, SEED + 5 + D, 8, path);
  });

  it('a fully masked row gives O = 0 and LSE = -inf, never NaN', async () => {
    const s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq: 20, Nk: 8, D: 16 };
    for (const [p, path] of paths) {
      const { got } = await check(s, { causal: true }, p, SEED + 7, 1, path);
      for (let i = 0; i < 12; i++) expect(got.lse[i]).toBe(-Infinity);
      for (let i = 0; i < 12 * 16; i++) expect(got.o[i]).toBe(0);
      expect(Number.isFinite(got.lse[12])).toBe(true);
    }
  });

  it('NaN and Inf in one element of Q, K or V propagate exactly as the reference defines', async () => {
    const s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq: 37, Nk: 37, D: 16 };
    for (const causal of [false, true]) for (const t of ['q', 'k', 'v'] as const) for (const bad of [NaN, Infinity, -Infinity]) {
      const x = makeInputs(s, SEED + 31);
      x[t][20 * 16 + 3] = bad;   // row 20: causal leaves rows/keys on both sides of it
      for (const [p, path] of paths) {
        if (path !== 'scalar') continue;
        const r = refInputs(x, p);
        const ref = referenceForward(s, r.q, r.k, r.v, { causal });
        const got = await attentionForward(dev, s, x, { causal, precision: p, path });
        const tag = `${p} ${t}=${bad} causal=${causal}`;
        expect(err(got.o, ref.o), `O ${tag}`).toBeLessThanOrEqual(TOL[p].out);
        expect(err(got.lse, ref.lse), `LSE ${tag}`).toBeLessThanOrEqual(TOL[p].out);
        expect(ref.o.some((y) => !Number.isFinite(y)), `the case reaches an output ${tag}`).toBe(true);
      }
    }
  });

  it('the workgroup-memory row reduction and pinned tiles give the same results', async () => {
    for (const [reduce, tile] of [['workgroup', ''], ['workgroup', '16x8'], ['', '8x4'], ['', '64x32']]) {
      const on = await portable({ FLASHRING_PORTABLE_REDUCE: reduce, FLASHRING_PORTABLE_FWD: tile });
      await check(sq(45, 32), { causal: true }, 'f32', SEED + 41, 1, 'scalar', on);
      if (tile !== '64x32') await check(sq(30, 64), {}, 'f32', SEED + 42, 1, 'scalar', on); // 64x32 at D = 64 needs more than lavapipe's 32 KiB
    }
  });

  it('the prefetch (forwardPrefetch = 1, and 2: K and V only) gives bitwise the O and LSE of none, and matches the reference', async () => {
    // A chunked tile (four chunks: Q restaged per tile, several A(c); Nq != Nk, grouped heads) and,
    // at D = 16, one chunk with tiles skipped inside the range (documents: the next visited tile is
    // found past them). Each variant is a cold compile on a CPU adapter: four cases, three variants.
    const docs = { cuQ: new Int32Array([0, 37, 90, 150]), cuK: new Int32Array([0, 37, 90, 150]) };
    const cases: [AttentionShape, AttentionOptions, Precision][] = [
      [{ B: 2, Hq: 4, Hkv: 2, Nq: 75, Nk: 61, D: 64 }, { causal: true }, 'f32'],
      // D = 16 with the 16-column chunk: one chunk (Q staged once; only K/V prefetched).
      [{ B: 1, Hq: 2, Hkv: 1, Nq: 150, Nk: 150, D: 16 }, { causal: true, docs }, 'f32'],
      // f16 storage with f16 products (opt-in): the K and V maxima are taken as words are stashed (PF = 1) or
      // staged (0), over four chunks and over one with skipped tiles.
      [{ B: 2, Hq: 4, Hkv: 2, Nq: 75, Nk: 61, D: 64 }, { causal: true }, 'f16'],
      [{ B: 1, Hq: 2, Hkv: 1, Nq: 150, Nk: 150, D: 16 }, { causal: true, docs }, 'f16'],
    ];
    for (const tile of ['32x16x16']) for (const [s, o, p] of cases) {
      if (p === 'f16' && !dev.hasF16) continue;
      const out: { o: HostTensor; lse: Float32Array }[] = [];
      for (const pf of ['0', '1', '2']) out.push((await check(s, o, p, SEED + 71 + s.D, 1, 'scalar', await portable({ FLASHRING_PORTABLE_FWD: tile, FLASHRING_PORTABLE_FWD_PREFETCH: pf, FLASHRING_PORTABLE_FWD_PRODUCTS: p === 'f16' ? 'f16' : undefined }))).got);
      for (const k of [1, 2]) {
        expect(bits(out[k].o).equals(bits(out[0].o)), `O ${p} D=${s.D} tile '${tile}' prefetch ${k}`).toBe(true);
        expect(bits(out[k].lse).equals(bits(out[0].lse)), `LSE ${p} D=${s.D} tile '${tile}' prefetch ${k}`).toBe(true);
      }
    }
    expect(() => tuningFromEnv({ FLASHRING_PORTABLE_FWD_PREFETCH: '3' })).toThrow(InputError);
    await expect(tunedDevice({ forwardPrefetch: 3 as 0 })).rejects.toThrow(/FLASHRING_PORTABLE_FWD_PREFETCH='3'/);
  });

  it('P~ in Q\'s workgroup array (sharedP) gives bitwise the O and LSE of its own array, and matches the reference', async () => {
    // Four chunks (Q staged every tile; Nq != Nk, grouped heads, causal) without the prefetch and with both kinds; f16 storage with
    // f16 products (P~ in f16, Q's word type); and D = 128 as planned here, where 64-column chunks fit lavapipe's 32 KiB
    // only shared, against 32-column chunks unshared: a window and documents (masked and skipped tiles).
    const docs = { cuQ: new Int32Array([0, 37, 90, 100]), cuK: new Int32Array([0, 37, 90, 100]) };
    const cases: [AttentionShape, AttentionOptions, Precision, Record<string, string>][] = [
      [{ B: 2, Hq: 4, Hkv: 2, Nq: 75, Nk: 61, D: 64 }, { causal: true }, 'f32', { FLASHRING_PORTABLE_FWD: '32x16x16' }],
      [{ B: 2, Hq: 4, Hkv: 2, Nq: 75, Nk: 61, D: 64 }, { causal: true }, 'f32', { FLASHRING_PORTABLE_FWD: '32x16x16', FLASHRING_PORTABLE_FWD_PREFETCH: '1' }],
      [{ B: 2, Hq: 4, Hkv: 2, Nq: 75, Nk: 61, D: 64 }, { causal: true }, 'f32', { FLASHRING_PORTABLE_FWD: '32x16x16', FLASHRING_PORTABLE_FWD_PREFETCH: '2' }],
      [{ B: 2, Hq: 4, Hkv: 2, Nq: 75, Nk: 61, D: 64 }, { causal: true }, 'f16', { FLASHRING_PORTABLE_FWD: '32x16x16', FLASHRING_PORTABLE_FWD_PRODUCTS: 'f16' }],
      [{ B: 1, Hq: 2, Hkv: 1, Nq: 100, Nk: 100, D: 128 }, { causal: true, window: [40, 0], docs }, 'f32', {}],
    ];
    for (const [s, o, p, pin] of cases) {
      if (p === 'f16' && !dev.hasF16) continue;
      const out: { o: HostTensor; lse: Float32Array }[] = [];
      for (const shared of ['0', '1']) {
        const on = await portable({ ...pin, FLASHRING_PORTABLE_FWD_SHARED_P: shared });
        expect(planDeviceTiles('fwd', s.D, p, on).sharedP, `shared '${shared}' D=${s.D}`).toBe(shared === '0' ? undefined : true);
        out.push((await check(s, o, p, SEED + 81 + s.D, 1, 'scalar', on)).got);
      }
      const tag = `${p} D=${s.D} ${JSON.stringify(pin)}`;
      expect(bits(out[1].o).equals(bits(out[0].o)), `O ${tag}`).toBe(true);
      expect(bits(out[1].lse).equals(bits(out[0].lse)), `LSE ${tag}`).toBe(true);
    }
    expect(() => tuningFromEnv({ FLASHRING_PORTABLE_FWD_SHARED_P: 'yes' })).toThrow(InputError);
  });

  it('f16 words widened to f32 as staged (forwardWideStage) give bitwise the O and LSE of f16 words staged, and match the reference', async () => {
    if (!dev.hasF16) return;
    // f16 storage with f32 products (the default): chunks staged every tile with each prefetch, grouped heads, Nq != Nk;
    // whole rows; D = 128 as planned here, with a window and documents, and with P~ in Q's array (which f16 words staged
    // as f16 cannot share).
    const docs = { cuQ: new Int32Array([0, 37, 90, 100]), cuK: new Int32Array([0, 37, 90, 100]) };
    const cases: [AttentionShape, AttentionOptions, Record<string, string>][] = [
      [{ B: 2, Hq: 4, Hkv: 2, Nq: 75, Nk: 61, D: 64 }, { causal: true }, { FLASHRING_PORTABLE_FWD: '32x16x16', FLASHRING_PORTABLE_FWD_PREFETCH: '0' }],
      [{ B: 2, Hq: 4, Hkv: 2, Nq: 75, Nk: 61, D: 64 }, { causal: true }, { FLASHRING_PORTABLE_FWD: '32x16x16', FLASHRING_PORTABLE_FWD_PREFETCH: '1' }],
      [{ B: 2, Hq: 4, Hkv: 2, Nq: 75, Nk: 61, D: 64 }, { causal: true }, { FLASHRING_PORTABLE_FWD: '32x16x16', FLASHRING_PORTABLE_FWD_PREFETCH: '2' }],
      [{ B: 1, Hq: 2, Hkv: 1, Nq: 100, Nk: 100, D: 16 }, { causal: true, docs }, {}],
      [{ B: 1, Hq: 2, Hkv: 1, Nq: 100, Nk: 100, D: 128 }, { causal: true, window: [40, 0], docs }, {}],
      [{ B: 1, Hq: 2, Hkv: 1, Nq: 100, Nk: 100, D: 128 }, { window: [30, 30] }, { FLASHRING_PORTABLE_FWD: '32x16x64', FLASHRING_PORTABLE_FWD_SHARED_P: '1', FLASHRING_PORTABLE_FWD_PREFETCH: '1' }],
    ];
    for (const [s, o, pin] of cases) {
      const out: { o: HostTensor; lse: Float32Array }[] = [];
      for (const wide of ['0', '1']) {
        const on = await portable({ ...pin, FLASHRING_PORTABLE_FWD_WIDE: wide });
        const plan = planDeviceTiles('fwd', s.D, 'f16', on);
        expect(plan.wideStage, `wide '${wide}' D=${s.D}`).toBe(wide === '0' ? undefined : true);
        if (pin.FLASHRING_PORTABLE_FWD_SHARED_P === '1') expect(plan.sharedP, `shared, wide '${wide}'`).toBe(wide === '0' ? undefined : true);
        out.push((await check(s, o, 'f16', SEED + 95 + s.D, 1, 'scalar', on)).got);
      }
      const tag = `D=${s.D} ${JSON.stringify(pin)}`;
      expect(bits(out[1].o).equals(bits(out[0].o)), `O ${tag}`).toBe(true);
      expect(bits(out[1].lse).equals(bits(out[0].lse)), `LSE ${tag}`).toBe(true);
    }
    // Ignored where there is nothing to widen (f32 storage) or the products read f16 words (f16 products).
    const on = await portable({ FLASHRING_PORTABLE_FWD_WIDE: '1' }), pk = await portable({ FLASHRING_PORTABLE_FWD_WIDE: '1', FLASHRING_PORTABLE_FWD_PRODUCTS: 'f16' });
    expect(planDeviceTiles('fwd', 64, 'f32', on).wideStage).toBeUndefined();
    expect(planDeviceTiles('fwd', 64, 'f16', pk).wideStage).toBeUndefined();
    expect(() => tuningFromEnv({ FLASHRING_PORTABLE_FWD_WIDE: '2' })).toThrow(InputError);
  });

  it('pinned tiles, both row reductions: rows and keys past the tile, rows with no key', async () => {
    // Row reduction, Br×Bc×chunk, precision, shape, causal. N is no multiple of Br or Bc (rows
    // and keys past the end); Nq > Nk under the causal mask leaves the first Nq − Nk rows with no
    // key (O = 0, LSE = −inf), across whole row blocks and inside one.
    const cases: [string, string, Precision, AttentionShape, boolean][] = [
      ['', '64x32x32', 'f32', sq(70, 64), false],
      ['', '64x32x32', 'f32', sq(70, 64), true],
      ['', '64x32x32', 'f32', { B: 1, Hq: 2, Hkv: 1, Nq: 90, Nk: 37, D: 64 }, true],
      ['workgroup', '16x8x32', 'f32', { B: 1, Hq: 1, Hkv: 1, Nq: 45, Nk: 23, D: 32 }, true],
      ['workgroup', '16x8x32', 'f32', sq(45, 32), false],
      ['workgroup', '64x32x64', 'f16', sq(70, 64), false],
      ['workgroup', '64x32x64', 'f16', sq(70, 64), true],
    ];
    for (const [i, [reduce, tile, p, s, causal]] of cases.entries()) {
      if (p === 'f16' && !paths.some(([q, path]) => q === 'f16' && path === 'scalar')) continue;   // no shader-f16 (CI requires it)
      const { got } = await check(s, { causal }, p, SEED + 60 + i, 1, 'scalar', await portable({ FLASHRING_PORTABLE_REDUCE: reduce, FLASHRING_PORTABLE_FWD: tile }));
      if (s.Nq > s.Nk && causal) expect(got.lse[0]).toBe(-Infinity);
    }
    // RR = 8 (a fourth number) was removed: the pin says what it takes.
    expect(() => tuningFromEnv({ FLASHRING_PORTABLE_FWD: '64x32x32x8' })).toThrow(/FLASHRING_PORTABLE_FWD='64x32x32x8': give BRxBC or BRxBCxCHUNK/);
  });

  it('f16 storage staged as vec4<f16> words: planned and whole-row tiles, both row reductions, inputs of a few hundred', async () => {
    if (!paths.some(([p, path]) => p === 'f16' && path === 'scalar')) return;   // no shader-f16 (CI requires it)
    // Planned tiles (f32 products, the default), and 64×32 in whole
    // rows at D = 64 (64-column chunks at 128), which fits lavapipe's 32 KiB only with f16 words.
    for (const pins of [{}, { FLASHRING_PORTABLE_REDUCE: 'workgroup', FLASHRING_PORTABLE_FWD: '64x32x64' }]) {
      const on = await portable(pins);
      for (const D of [64, 128]) for (const causal of [false, true]) await check(sq(70, D), { causal }, 'f16', SEED + 43 + D, 1, 'scalar', on);
    }
    // |q|, |k| up to ~500 with f16 products (opt-in): the range check keeps f32 products (f16 sums would pass 65504).
    await check(sq(40, 64), { causal: true }, 'f16', SEED + 44, 128, 'scalar', await portable({ FLASHRING_PORTABLE_FWD_PRODUCTS: 'f16' }));
  });

  it('splits tensors larger than one binding and still matches', async () => {
    const s: AttentionShape = { B: 2, Hq: 4, Hkv: 2, Nq: 24, Nk: 24, D: 16 };
    const x = makeInputs(s, SEED + 9);
    const r = refInputs(x, 'f32');
    const ref = referenceForward(s, r.q, r.k, r.v);
    // One unit holds 2·24·16·4 = 3072 bytes: a 4000-byte cap forces 4 dispatches.
    const got = await attentionForward(dev, s, x, { precision: 'f32', maxBindingBytes: 4000 });
    expect(err(got.o, ref.o)).toBeLessThanOrEqual(TOL.f32.out);
    expect(err(got.lse, ref.lse)).toBeLessThanOrEqual(TOL.f32.out);
    await expect(attentionForward(dev, s, x, { precision: 'f32', maxBindingBytes: 1000 })).rejects.toThrow(LimitError);
    await expect(attentionForward(dev, s, x, { precision: 'f32', maxBindingBytes: 1000 })).rejects.toThrow('Split the sequence with the ring (--cp) instead.');
    // Q and K/V of different lengths: the ring takes one length, so it is not offered (it refused what it was told to do).
    const t: AttentionShape = { ...s, Nk: 20 };
    await expect(attentionForward(dev, t, makeInputs(t, SEED + 9), { precision: 'f32', maxBindingBytes: 1000 }))
      .rejects.toThrow('The ring (--cp), which splits a sequence, takes Q and K/V of one length (here 24 and 20): this shape does not run on this device.');
  });

  it('with onProgress a pass runs in groups of units, says each, and gives the same bits (forward and backward)', async () => {
    const s: AttentionShape = { B: 3, Hq: 4, Hkv: 2, Nq: 20, Nk: 20, D: 16 };   // 6 (batch, K/V head) units
    const x = makeInputs(s, SEED + 19);
    const whole = await attentionForward(dev, s, x, { precision: 'f32', causal: true });
    const said: [number, number][] = [];
    const grouped = await attentionForward(dev, s, x, { precision: 'f32', causal: true, onProgress: (d, t) => said.push([d, t]) });
    expect(said[0]).toEqual([1, 6]);   // the first group: at most 1/64 of the units, at least one
    expect(said.at(-1)).toEqual([6, 6]);
    for (let i = 1; i < said.length; i++) expect(said[i][0]).toBeGreaterThan(said[i - 1][0]);
    expect(bits(grouped.o)).toEqual(bits(whole.o));
    expect(bits(grouped.lse)).toEqual(bits(whole.lse));
    const { attentionBackward } = await import('../src/kernels/attention.js');
    const t = { ...x, o: whole.o, lse: whole.lse };
    const bw = await attentionBackward(dev, s, t, { precision: 'f32', causal: true });
    const bsaid: number[] = [];
    const bg = await attentionBackward(dev, s, t, { precision: 'f32', causal: true, onProgress: (d) => bsaid.push(d) });
    expect([bsaid[0], bsaid.at(-1)]).toEqual([1, 6]);
    for (const k of ['dq', 'dk', 'dv'] as const) expect(bits(bg[k])).toEqual(bits(bw[k]));
  });

  it('no buffer grows faster than N (no N×N scores)', async () => {
    const sizes: number[] = [];
    for (const N of [64, 128, 256]) {
      const s = sq(N, 32, { Hq: 1, Hkv: 1 });
      dev.tracker.resetPeak();
      await attentionForward(dev, s, makeInputs(s, SEED + N), { precision: 'f32' });
      sizes.push(dev.tracker.snapshot().largestBuffer);
    }
    expect(sizes[1]).toBe(2 * sizes[0]);
    expect(sizes[2]).toBe(2 * sizes[1]);
    expect(dev.tracker.snapshot().liveBuffers).toBe(0);
  });

  it('auto picks subgroup matrices for f16 exactly where the adapter has them', async () => {
    const s = sq(40, 32);
    const got = await attentionForward(dev, s, makeInputs(s, SEED + 21), { precision: 'f16' });
    expect(got.path).toBe(autoF16Path(dev));
    if (!dev.hasSubgroupMatrix)
      await expect(attentionForward(dev, s, makeInputs(s, 1), { precision: 'f16', path: 'subgroup-matrix' })).rejects.toThrow(/subgroup-matrix forward cannot run/);
  });

  it('bad input gives clear errors', async () => {
    const s = sq(8, 16);
    const x = makeInputs(s, 1);
    await expect(attentionForward(dev, { ...s, D: 12 }, x)).rejects.toThrow(/multiple of 8/);
    await expect(attentionForward(dev, { ...s, D: 264 }, x)).rejects.toThrow(/at most 256/);
    await expect(attentionForward(dev, { ...s, Hq: 3, Hkv: 2 }, x)).rejects.toThrow(/multiple of key\/value heads/);
    await expect(attentionForward(dev, { ...s, Nq: 0 }, x)).rejects.toThrow(/empty tensors/);
    await expect(attentionForward(dev, s, { ...x, k: x.k.subarray(1) })).rejects.toThrow(/K has 255 elements; shape \[1,2,8,16\] needs 256/);
    await expect(attentionForward(dev, s, { ...x, q: new Float64Array(256) as unknown as Float32Array })).rejects.toThrow(InputError);
    await expect(attentionForward(dev, s, x, { scale: NaN })).rejects.toThrow(/scale must be a positive number within float32's range/);
  });
});
