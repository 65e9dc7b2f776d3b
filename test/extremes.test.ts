/**
 * Inputs at the edges of f32 and of the device's limits (an adversarial numerics review,
 * 2026-12-05; docs/numerics.md "Ranges"): the stale row max against V near f32's largest, the
 * grid limit per dispatch dimension, and the documented behaviour where f32 itself runs out.
 * Small shapes: lavapipe on 2 cores.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDevice } from './gpu.js';
import { err, makeInputs, SEED, TOL } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { FlashForward } from '../src/kernels/flashForward.js';
import { attentionBackward, attentionForward } from '../src/kernels/attention.js';
import { FlashBackward } from '../src/kernels/flashBackward.js';
import { LimitError } from '../src/errors.js';
import { contextParallel, ringAttention, ShardSource } from '../src/cp/launch/ringAttention.js';
import { hostSource, readAll } from '../src/cp/launch/hostIO.js';
import { referenceBackward, referenceForward } from '../src/reference/attention.js';
import { AttentionShape, resolveOptions } from '../src/shape.js';
import { readback, storage, upload } from '../src/gpu/buffers.js';
import { maxFinite, needsExactMax, needsExactMaxFor, STALE_DEFAULT } from '../src/kernels/stale.js';
import { attentionSource, attentionValues } from '../src/kernels/source.js';
import { portableValues, PORTABLE_FWD_CANDIDATES, portableTile } from '../src/kernels/tiles.js';
import { SHADERS } from '../src/kernels/shaders.js';
import { FORWARD_BINDINGS } from '../src/kernels/flashForward.js';
import { attentionCommand } from '../src/cli/attention.js';
import { encodeNpy, parseNpy } from '../src/cli/npy.js';

let dev: FlashDevice;
beforeAll(async () => {
  dev = await testDevice();
});

/** One query (q = e0) against N keys that score 0 but key `spike`, which scores `gap`; every V = vmag. */
function spikeInputs(N: number, D: number, spike: number, gap: number, vmag: number) {
  const q = new Float32Array(D);
  q[0] = 1;
  const k = new Float32Array(N * D);
  k[spike * D] = gap;
  return { q, k, v: new Float32Array(N * D).fill(vmag) };
}

describe('the stale row max against V near f32\'s largest (shaders/flash_fwd.wgsl STALE, src/kernels/stale.ts)', () => {
  const D = 8, N = 128;
  const s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq: 1, Nk: N, D };
  const x = spikeInputs(N, D, 100, 7.9, 1.5e35);
  const ref = referenceForward(s, x.q, x.k, x.v, { scale: 1 });

  it('needsExactMax: Nk · e^8 · max|V| beyond f32, finite values only; f16 never', () => {
    expect(needsExactMax(N, x.v)).toBe(true);
    expect(needsExactMax(N, new Float32Array(N * D).fill(1e30))).toBe(false);
    expect(needsExactMax(N, Float32Array.from([1, Infinity, NaN]))).toBe(false);
    expect(needsExactMax(1e9, new Uint16Array([0x7bff]))).toBe(false);
    // From the largest |V| alone (a ShardSource's vMaxAbs): not known → exact for f32, never for f16.
    expect(maxFinite(x.v)).toBe(Math.fround(1.5e35));
    expect(maxFinite(new Uint16Array([0x7c00, 0xfbff, 0x3c00]))).toBe(65504);   // +Inf left out; −65504
    expect([needsExactMaxFor(N, 1.5e35), needsExactMaxFor(N, 1e30), needsExactMaxFor(N, undefined)]).toEqual([true, false, true]);
    expect([needsExactMaxFor(N, 1.5e35, true), needsExactMaxFor(N, undefined, true)]).toEqual([false, false]);
  });

  it('attentionForward: O = 1.5e35 (finite) where the stale max gave +Inf', async () => {
    const f = await attentionForward(dev, s, x, { scale: 1, precision: 'f32' });
    expect(err(f.o, ref.o)).toBeLessThanOrEqual(TOL.f32.out);
    expect(err(f.lse, ref.lse)).toBeLessThanOrEqual(TOL.f32.out);
  });

  /** The same keys and values with N query rows, each scoring the spike (the rings split the rows), and its float64 reference. */
  const everyRow = () => {
    const s2 = { ...s, Nq: N };
    const q = new Float32Array(N * D);
    for (let i = 0; i < N; i++) q[i * D] = 1;
    return { s2, q, r2: referenceForward(s2, q, x.k, x.v, { scale: 1 }) };
  };

  it('the ring (R = 2) likewise', async () => {
    const { s2, q, r2 } = everyRow();
    const f = await ringAttention([dev], s2, { q, k: x.k, v: x.v }, { ranks: 2, scale: 1, precision: 'f32' });
    expect(err(f.o, r2.o)).toBeLessThanOrEqual(TOL.f32.out);
  });

  it('contextParallel (ShardSource inputs, as bench/cp.ts calls it) decides from the source\'s vMaxAbs', async () => {
    const { s2, q, r2 } = everyRow();
    const run = async (src: ShardSource, exactMax?: boolean) => {
      let o!: Float32Array;
      const opts = { ranks: 2, scale: 1, precision: 'f32' as const, ...(exactMax === undefined ? {} : { exactMax }) };
      await contextParallel([dev], s2, src, opts, async (read) => void (o = (await readAll(s2, read, false)).o));
      return o;
    };
    const host = hostSource(s2, { q, k: x.k, v: x.v });
    expect(host.vMaxAbs).toBe(Math.fround(1.5e35));
    expect(err(await run(host), r2.o)).toBeLessThanOrEqual(TOL.f32.out);
    const { vMaxAbs: _, ...unsaid } = host;   // an f32 source that does not say: the exact max
    expect(err(await run(unsaid), r2.o)).toBeLessThanOrEqual(TOL.f32.out);
    expect(await run(host, false)).toContain(Infinity);   // the stale max, asked for: what the default gave before
  });

  it('on GPU buffers the stale max stays the default (+Inf here, documented); exactMax: true gives the exact O', async () => {
    const run = async (exactMax?: boolean) => {
      const fwd = await FlashForward.create(dev, D, { precision: 'f32', out: 'f32', grad: 'f32' }, 'scalar', exactMax === undefined ? {} : { exactMax });
      const b = { q: upload(dev, x.q, 'q'), k: upload(dev, x.k, 'k'), v: upload(dev, x.v, 'v'), o: storage(dev, D * 4, 'o'), lse: storage(dev, 4, 'lse') };
      const temps: GPUBuffer[] = [];
      const enc = dev.device.createCommandEncoder();
      fwd.encode(enc, b, s, resolveOptions(s, { scale: 1 }), temps);
      dev.device.queue.submit([enc.finish()]);
      const o = new Float32Array(await readback(dev, b.o, D * 4));
      for (const t of [...Object.values(b), ...temps]) dev.tracker.destroy(t);
      return o;
    };
    expect((await run())[0]).toBe(Infinity);
    expect(err(await run(true), ref.o)).toBeLessThanOrEqual(TOL.f32.out);
  });

  it('the default shader is today\'s: exactMax changes one line, STALE = 8.0 → 0.0', () => {
    for (const [BR, BC] of PORTABLE_FWD_CANDIDATES.slice(0, 3)) for (const unroll of [true, false]) {
      const plan = portableTile('fwd', [BR, BC, undefined], 64, 'f32', 49152, 256, 0);
      if ('why' in plan) continue;
      const code = (exact: boolean) =>
        attentionSource(SHADERS.flashFwd.workgroup, attentionValues(64, plan, { precision: 'f32', out: 'f32', grad: 'f32' }, unroll, portableValues('fwd', 64, plan, 'f32', exact)), FORWARD_BINDINGS).split('\n');
      const [a, b] = [code(false), code(true)];
      const diff = a.flatMap((l, i) => (l === b[i] ? [] : [[l, b[i]]]));
      expect(a.length).toBe(b.length);
      expect(diff.map(([l, m]) => [l.split('//')[0].trim(), m.split('//')[0].trim()])).toEqual([[`const STALE: f32 = ${STALE_DEFAULT};`, 'const STALE: f32 = 0.0;']]);
    }
  });
});

describe('the grid limit per dispatch dimension (planUnits, checkGrid)', () => {
  const big = 70000;   // beyond 65535, every adapter's maxComputeWorkgroupsPerDimension

  it(`B = ${big} runs in several unit groups, forward and backward, as the reference`, async () => {
    expect(dev.device.limits.maxComputeWorkgroupsPerDimension).toBeLessThan(big);
    const s: AttentionShape = { B: big, Hq: 1, Hkv: 1, Nq: 1, Nk: 2, D: 8 };
    const x = makeInputs(s, SEED);
    const r = referenceBackward(s, x.q, x.k, x.v, x.dout);
    const f = await attentionForward(dev, s, x, { precision: 'f32' });
    const ref = referenceForward(s, x.q, x.k, x.v);
    expect(err(f.o, ref.o)).toBeLessThanOrEqual(TOL.f32.out);
    expect(err(f.lse, ref.lse)).toBeLessThanOrEqual(TOL.f32.out);
    const g = await attentionBackward(dev, s, { ...x, o: f.o, lse: f.lse }, { precision: 'f32' });
    for (const [a, b] of [[g.dq, r.dq], [g.dk, r.dk], [g.dv, r.dv]] as const) expect(err(a, b)).toBeLessThanOrEqual(TOL.f32.grad);
  });

  it(`Hq / Hkv = ${big} is one LimitError naming the limit, before any GPU work; so are B or Hq beyond it in the ring`, async () => {
    const s: AttentionShape = { B: 1, Hq: big, Hkv: 1, Nq: 1, Nk: 1, D: 8 };
    const x = makeInputs(s, SEED);
    dev.tracker.resetPeak();
    for (const call of [() => attentionForward(dev, s, x), () => attentionBackward(dev, s, { ...x, o: x.q, lse: new Float32Array(big) })])
      await expect(call()).rejects.toThrow(new RegExp(`^${big} query heads in one dispatch need ${big} workgroups.*maxComputeWorkgroupsPerDimension.*split the query heads over calls; with grouped K/V heads, repeating each K/V head`));
    expect(dev.tracker.snapshot().largestBuffer).toBe(0);   // no buffer was made
    for (const rs of [{ ...s, Nq: 2, Nk: 2 }, { ...s, B: big, Hq: 1, Nq: 2, Nk: 2 }]) {
      const y = makeInputs(rs, SEED);
      await expect(ringAttention([dev], rs, y, { ranks: 2, layout: 'contiguous' })).rejects.toThrow(LimitError);
    }
  });

  it('row blocks beyond the limit: a LimitError that says to split the sequence (the kernels\' own check)', async () => {
    const fwd = await FlashForward.create(dev, 8, { precision: 'f32', out: 'f32', grad: 'f32' });
    const bwd = await FlashBackward.create(dev, 8, { precision: 'f32', out: 'f32', grad: 'f32' });
    const N = 65536 * 256;
    const s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq: N, Nk: N, D: 8 };
    for (const k of [fwd, bwd]) expect(() => k.checkGrid(s)).toThrow(/^blocks of \d+ (query rows|keys) \(N[qk] = 16777216\) need \d+ workgroups.*--cp/);
  });

  it('the ring\'s row blocks beyond the limit: a LimitError before any GPU work (no buffer, no submission), every scheme', async () => {
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 1024, Nk: 1024, D: 8 };
    const x = makeInputs(s, SEED);
    await ringAttention([dev], s, x, { ranks: 2, precision: 'f32' });   // the kernels built and warmed at the device's own limits
    // Dawn gives no device a limit below the default (65535), so this device says 2: its rows
    // need more blocks (a segment of 256 rows) while its heads (2) and batch (1) fit.
    const max = 2;
    const gpuWork = await withLimits(dev, { maxComputeWorkgroupsPerDimension: max }, async () => {
      for (const scheme of ['p2p', 'all_gather', 'a2a'])
        await expect(ringAttention([dev], s, x, { ranks: 2, precision: 'f32', scheme })).rejects.toThrow(/^blocks of \d+ query rows \(Nq = \d+\) need \d+ workgroups.*this device allows 2 \(maxComputeWorkgroupsPerDimension\)/);
    });
    expect(dev.device.limits.maxComputeWorkgroupsPerDimension).toBeGreaterThan(max);
    expect(gpuWork).toBe(0);
  });

  it('the ring\'s buffers beyond the buffer or binding size: a LimitError naming the buffer before any GPU work, every scheme', async () => {
    // Zigzag over 2 ranks: each rank's shard is one segment of 512 rows (two runs of 256), so rank
    // 0's Q buffer (the first buffer its program makes, and the first a pass binds) holds 2 heads ×
    // 512 rows × 8 × 4 bytes.
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 1024, Nk: 1024, D: 8 };
    const x = makeInputs(s, SEED);
    await ringAttention([dev], s, x, { ranks: 2, precision: 'f32' });   // the kernels built and warmed at the device's own limits
    // a2a's first pass binds its head group's Q instead (1 head × 1024 rows: as many bytes).
    const q0 = 2 * 512 * 8 * 4, max = q0 - 4;
    const bound = { p2p: 'q0', all_gather: 'q0', a2a: 'qH0' } as const;
    for (const [limit, where] of [['maxBufferSize', ''], ['maxStorageBufferBindingSize', ' in one binding']]) {
      const gpuWork = await withLimits(dev, { [limit]: max }, async () => {
        for (const scheme of ['p2p', 'all_gather', 'a2a'] as const)
          await expect(ringAttention([dev], s, x, { ranks: 2, precision: 'f32', scheme })).rejects.toThrow(
            new RegExp(`^the ring's buffer rank0\\.${where ? bound[scheme] : 'q0'} needs ${q0} bytes${where}; .* allows ${max} \\(${limit}\\): run over more ranks \\(--cp R`));
      });
      expect(gpuWork, limit).toBe(0);
    }
    // At exactly the Q buffer's size the binding check lets Q pass and stops at the first larger
    // buffer a pass binds (all_gather's gathered K/V, 1024 rows), still before any GPU work.
    const gpuWork = await withLimits(dev, { maxStorageBufferBindingSize: q0 }, () =>
      expect(ringAttention([dev], s, x, { ranks: 2, precision: 'f32', scheme: 'all_gather' })).rejects.toThrow(new RegExp(`^the ring's buffer rank0\\.kvAll\\.k\\d needs ${2 * q0} bytes in one binding`)));
    expect(gpuWork).toBe(0);
  });
});

/**
 * Runs `fn` with `dev` reporting `limits` in place of its own (Dawn gives no device limits below
 * the defaults, so the test device says them), counting the buffers made and the submissions
 * meanwhile: what it returns. Everything is put back after.
 */
async function withLimits(dev: FlashDevice, limits: Partial<Record<keyof GPUSupportedLimits, number>>, fn: () => Promise<unknown>): Promise<number> {
  const fake = new Proxy(dev.device.limits, { get: (t, k) => (k in limits ? limits[k as keyof typeof limits] : (t as unknown as Record<string | symbol, unknown>)[k]) });
  let gpuWork = 0;
  const { createBuffer, queue } = dev.device, submit = queue.submit;
  const undo: (() => void)[] = [];
  const patch = (o: object, k: string, value: unknown) => {
    const was = Object.getOwnPropertyDescriptor(o, k);
    Object.defineProperty(o, k, { value, configurable: true, writable: true });
    undo.push(() => (was ? Object.defineProperty(o, k, was) : delete (o as Record<string, unknown>)[k]));
  };
  patch(dev.device, 'limits', fake);
  patch(dev.device, 'createBuffer', (d: GPUBufferDescriptor) => (gpuWork++, createBuffer.call(dev.device, d)));
  patch(queue, 'submit', (c: GPUCommandBuffer[]) => (gpuWork++, submit.call(queue, c)));
  try {
    await fn();
  } finally {
    for (const u of undo.reverse()) u();
  }
  return gpuWork;
}

describe('flashring attention: packed documents with B > 1 (every batch entry the same documents, as the library)', () => {
  /** An int32 .npy of `values` (encodeNpy writes floats: its header, retyped). */
  function int32Npy(values: number[]): Uint8Array {
    const f = Buffer.from(encodeNpy({ dtype: 'f4', shape: [values.length], data: new Float32Array(values.length) }));
    const header = f.toString('latin1').replace("'descr': '<f4'", "'descr': '<i4'");
    const headLen = header.indexOf('\n') + 1;
    return Buffer.concat([Buffer.from(header.slice(0, headLen), 'latin1'), Buffer.from(Int32Array.from(values).buffer)]);
  }

  it('one device and --cp 2 give the reference\'s O and LSE', async () => {
    const s: AttentionShape = { B: 2, Hq: 2, Hkv: 1, Nq: 31, Nk: 31, D: 16 };
    const cu = [0, 4, 4, 19, 31];
    const x = makeInputs(s, SEED);
    const dir = mkdtempSync(join(tmpdir(), 'flashring-extremes-'));
    const dims = (h: number) => [s.B, h, s.Nq, s.D];
    writeFileSync(join(dir, 'q.npy'), encodeNpy({ dtype: 'f4', shape: dims(s.Hq), data: x.q }));
    writeFileSync(join(dir, 'k.npy'), encodeNpy({ dtype: 'f4', shape: dims(s.Hkv), data: x.k }));
    writeFileSync(join(dir, 'v.npy'), encodeNpy({ dtype: 'f4', shape: dims(s.Hkv), data: x.v }));
    writeFileSync(join(dir, 'cu.npy'), int32Npy(cu));
    const ref = referenceForward(s, x.q, x.k, x.v, { causal: true, docs: { cuQ: Int32Array.from(cu), cuK: Int32Array.from(cu) } });
    for (const extra of [[], ['--cp', '2']]) {
      const out = join(dir, `out${extra.length}`);
      const files = ['q', 'k', 'v'].flatMap((n) => [`--${n}`, join(dir, `${n}.npy`)]);
      expect(await attentionCommand([...files, '--cu-seqlens', join(dir, 'cu.npy'), '--causal', '--out', out, ...extra])).toBe(0);
      const o = parseNpy(readFileSync(join(out, 'o.npy')));
      const lse = parseNpy(readFileSync(join(out, 'lse.npy')));
      expect(o.shape).toEqual(dims(s.Hq));
      expect(err(o.data as Float32Array, ref.o)).toBeLessThanOrEqual(TOL.f32.out);
      expect(err(lse.data as Float32Array, ref.lse)).toBeLessThanOrEqual(TOL.f32.out);
    }
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('where f32 itself runs out: the documented behaviour, pinned (docs/numerics.md "Ranges")', () => {
  const D = 8, N = 4;
  const s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq: N, Nk: N, D };

  /** Every query e0; keys `low` score −gap, the others 0; V = 0.5 but V[inf][2] = +Inf. */
  function underflowCase(gap: number, low: number[], inf: number) {
    const q = new Float32Array(N * D);
    for (let i = 0; i < N; i++) q[i * D] = 1;
    const k = new Float32Array(N * D);
    for (const j of low) k[j * D] = -gap;
    // V differs key by key, so the finite columns check each key's weight, not only the normalization (a constant V did).
    const v = Float32Array.from({ length: N * D }, (_, e) => 0.25 + ((Math.floor(e / D) * 7 + (e % D) * 3) % 11) / 10);
    v[inf * D + 2] = Infinity;
    return { q, k, v, ref: referenceForward(s, q, k, v, { scale: 1 }) };
  }
  const column = (o: ArrayLike<number>, c: number) => Array.from({ length: N }, (_, i) => o[i * D + c]);

  it('+Inf in V on a key 120 below the row max: NaN where float64 gives +Inf (its weight underflows f32); 50 below: +Inf', async () => {
    for (const [gap, want] of [[50, Infinity], [120, NaN]]) {
      const x = underflowCase(gap, [1], 1);
      const f = await attentionForward(dev, s, x, { scale: 1, precision: 'f32' });
      expect(column(x.ref.o, 2)).toEqual(Array(N).fill(Infinity));
      expect(column(f.o, 2)).toEqual(Array(N).fill(want));
      expect(err(Float32Array.from(column(f.o, 0)), Float64Array.from(column(x.ref.o, 0)))).toBeLessThanOrEqual(TOL.f32.out);
    }
  });

  it('the ring\'s merge likewise: a step 120 below the other, with +Inf in its V, gives NaN', async () => {
    const x = underflowCase(120, [0, 1], 1);
    const f = await ringAttention([dev], s, x, { ranks: 2, layout: 'contiguous', scale: 1, precision: 'f32' });
    expect(column(x.ref.o, 2)).toEqual(Array(N).fill(Infinity));
    expect(column(f.o, 2)).toEqual(Array(N).fill(NaN));
  });

  it('q · k that overflows f32 before the scale gives NaN rows, though scale · q · k is finite', async () => {
    const q = new Float32Array(N * D).fill(1e19), k = new Float32Array(N * D).fill(1e19), v = makeInputs(s, SEED).v;
    const ref = referenceForward(s, q, k, v, { scale: 1e-12 });
    expect(ref.o.every(Number.isFinite)).toBe(true);
    const f = await attentionForward(dev, s, { q, k, v }, { scale: 1e-12, precision: 'f32' });
    expect(Array.from(f.o).every(Number.isNaN)).toBe(true);
    expect(Array.from(f.lse).every(Number.isNaN)).toBe(true);
  });
});
