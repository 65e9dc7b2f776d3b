import { describe, expect, it, beforeAll } from 'vitest';
import { testDevice } from './gpu.js';
import { FlashDevice } from '../src/gpu/device.js';
import { GEMM_BINDINGS, GEMM_TILINGS, GEMM_F32_TILINGS, GemmKind, GemmTiling, buildGemm, buildGemmF32, encodeGemm, encodeGemmF32, gemmF32Fits, gemmF32Name, gemmF32Tile, gemmFits, gemmShapeError, gemmSource, gemmTile, gemmWorkgroupBytes, tilingName } from '../bench/ceiling/gemm.js';
import { readback, storage, upload } from '../src/gpu/buffers.js';
import { legacySgmmSpelling } from '../src/kernels/pipeline.js';
import { declaredBindings } from '../src/kernels/bindings.js';
import { CEILING_SHADERS } from '../bench/ceiling/shaders.js';
import { toPrecision } from '../src/kernels/attention.js';
import { randn, referenceInput, relErr } from '../src/reference/compare.js';
import { referenceMatmul } from '../src/reference/matmul.js';

// The ceiling probe's GEMM (bench/ceiling: node bench/ceiling/run.mjs; not part of the product)
// must be right before its speed means anything. It needs subgroup matrices, so it runs on GPUs
// that have them (the H200), not on lavapipe; there, CI only compiles it on the null backend
// (test/shaders.test.ts).
let dev: FlashDevice;
beforeAll(async () => {
  dev = await testDevice();
});

describe('tensor-core GEMM (ceiling probe)', () => {
  it('every tiling that fits matches float64 on fresh random f16 inputs', async (ctx) => {
    if (!dev.hasSubgroupMatrix) ctx.skip();
    const M = 256, N = 512, K = 96;
    const a = randn(M * K, Date.now() % 1000), b = randn(K * N, 7 + (Date.now() % 1000));
    const ref = referenceMatmul(referenceInput(a, 'f16'), referenceInput(b, 'f16'), M, K, N);
    let ran = 0;
    for (const t of GEMM_TILINGS) {
      if (gemmFits(dev, t) || gemmShapeError(t, M, N, K)) continue;
      const bufs = {
        dims: upload(dev, new Uint32Array([M, N, K, 0]), 'dims', GPUBufferUsage.UNIFORM),
        a: upload(dev, toPrecision(a, 'f16'), 'a'), b: upload(dev, toPrecision(b, 'f16'), 'b'), c: storage(dev, M * N * 4, 'c'),
      };
      const enc = dev.device.createCommandEncoder();
      encodeGemm(enc, dev, await buildGemm(dev, t), t, bufs, M, N, K);
      dev.device.queue.submit([enc.finish()]);
      const c = new Float32Array(await readback(dev, bufs.c, M * N * 4));
      for (const x of Object.values(bufs)) dev.tracker.destroy(x);
      expect(relErr(c, ref), tilingName(t)).toBeLessThanOrEqual(1e-5);
      ran++;
    }
    expect(ran).toBeGreaterThan(3);
    // Every variant ran (a variant none of whose tilings fits the shape would go unchecked).
    const ranKinds = new Set(GEMM_TILINGS.filter((t) => !gemmFits(dev, t) && !gemmShapeError(t, M, N, K)).map((t) => gemmTile(t).kind));
    expect([...ranKinds].sort()).toEqual(['direct', 'padded', 'padded-vec', 'padded3', 'staged']);
  });
  it('the three-stage kernel is right for 1 to 7 slices (prologue, wrap of the copies)', async (ctx) => {
    if (!dev.hasSubgroupMatrix) ctx.skip();
    const M = 128, N = 256;
    let ran = 0;
    for (const t of GEMM_TILINGS.filter((t) => gemmTile(t).kind === 'padded3')) {
      if (gemmFits(dev, t)) continue;
      const pipeline = await buildGemm(dev, t);
      for (let steps = 1; steps <= 7; steps++) {
        const K = steps * gemmTile(t).BK;
        if (gemmShapeError(t, M, N, K)) continue;
        const a = randn(M * K, 3 + steps), b = randn(K * N, 11 + steps);
        const ref = referenceMatmul(referenceInput(a, 'f16'), referenceInput(b, 'f16'), M, K, N);
        const bufs = {
          dims: upload(dev, new Uint32Array([M, N, K, 0]), 'dims', GPUBufferUsage.UNIFORM),
          a: upload(dev, toPrecision(a, 'f16'), 'a'), b: upload(dev, toPrecision(b, 'f16'), 'b'), c: storage(dev, M * N * 4, 'c'),
        };
        const enc = dev.device.createCommandEncoder();
        encodeGemm(enc, dev, pipeline, t, bufs, M, N, K);
        dev.device.queue.submit([enc.finish()]);
        const c = new Float32Array(await readback(dev, bufs.c, M * N * 4));
        for (const x of Object.values(bufs)) dev.tracker.destroy(x);
        expect(relErr(c, ref), `${tilingName(t)}, K = ${K}`).toBeLessThanOrEqual(1e-5);
        ran++;
      }
    }
    expect(ran).toBeGreaterThan(6);
  });
});

// What can be checked without subgroup matrices: the specializer leaves valid-looking text
// for every tiling (full WGSL validation is bin/validate-shaders.mjs on Dawn's null backend,
// test/shaders.test.ts), the older builtin spelling rewrites every matrix call, and the
// numbers the host derives (tile, workgroup bytes, shape checks) agree with the kernels'.
describe('tensor-core GEMM variants (text, no GPU)', () => {
  const EXT = ['chromium_experimental_subgroup_matrix'];
  const count = (s: string, re: RegExp) => (s.match(re) ?? []).length;
  it('lists every variant, each tiling once, all within 48 KiB and 1024 invocations', () => {
    const kinds = new Set(GEMM_TILINGS.map((t) => gemmTile(t).kind));
    expect([...kinds].sort()).toEqual(['direct', 'padded', 'padded-vec', 'padded3', 'staged'] satisfies GemmKind[]);
    expect(new Set(GEMM_TILINGS.map(tilingName)).size).toBe(GEMM_TILINGS.length);
    for (const t of GEMM_TILINGS) {
      expect(gemmWorkgroupBytes(t), tilingName(t)).toBeLessThanOrEqual(49152);
      expect(gemmTile(t).WG, tilingName(t)).toBeLessThanOrEqual(1024);
      expect(8192 % gemmTile(t).BM + 8192 % gemmTile(t).BN + 8192 % gemmTile(t).BK + 256 % gemmTile(t).BM + 256 % gemmTile(t).BN, tilingName(t)).toBe(0);
    }
    // The padded-vec tilings come last: a wrong result there cannot take the others with it.
    const firstVec = GEMM_TILINGS.findIndex((t) => gemmTile(t).kind === 'padded-vec');
    expect(GEMM_TILINGS.slice(firstVec).every((t) => gemmTile(t).kind === 'padded-vec')).toBe(true);
  });
  it.each(GEMM_TILINGS.map((t) => [tilingName(t), t] as [string, GemmTiling]))('%s specializes to plausible WGSL', (_, t) => {
    const src = gemmSource(t, EXT);
    const { kind, BK } = gemmTile(t);
    const [SGM, SGN, TM, TN] = t;
    expect(src).not.toMatch(/\{\{|\}\}/);
    expect(src).toMatch(/^enable f16;\nenable chromium_experimental_subgroup_matrix;\ndiagnostic\(off, chromium\.subgroup_matrix_uniformity\);\n/);
    expect(count(src, /@compute @workgroup_size\(WG\)\s*fn main\(/g)).toBe(1);
    expect(src).toContain(`const SGM: u32 = ${SGM}u;`);
    expect(src).toContain(`const SGN: u32 = ${SGN}u;`);
    expect(src).toContain(`const TM: u32 = ${TM}u;`);
    expect(src).toContain(`const TN: u32 = ${TN}u;`);
    // One accumulator per result block, declared once and stored once; the products per K step.
    const steps = kind === 'staged' ? 1 : BK / 16;
    expect(count(src, /var c\d+_\d+ = AM\(\);/g)).toBe(TM * TN);
    expect(count(src, /= subgroupMatrixMultiplyAccumulate\(/g)).toBe(TM * TN * steps);
    expect(count(src, /subgroupMatrixStore<row_major>\(&c, /g)).toBe(TM * TN);
    expect(count(src, /subgroupMatrixLoad<LM, row_major>\(/g)).toBe(TM * steps);
    expect(count(src, /subgroupMatrixLoad<RM, row_major>\(/g)).toBe(TN * steps);
    for (let i = 0; i < TM; i++) for (let j = 0; j < TN; j++) expect(src).toContain(`c${i}_${j}`);
    // Workgroup memory only where the variant stages through it; the 16-byte-word staging
    // declares 16-byte elements.
    const wg = [...src.matchAll(/var<workgroup>\s+(\w+)\s*:\s*([^;]+);/g)].map((m) => `${m[1]}: ${m[2]}`);
    if (kind === 'direct') expect(wg).toEqual([]);
    else if (kind === 'padded-vec') expect(wg).toEqual(['As: array<vec4<u32>, 2u * A_TILE / 8u>', 'Bs: array<vec4<u32>, 2u * B_TILE / 8u>']);
    else if (kind === 'padded') expect(wg).toEqual(['As: array<f16, 2u * A_TILE>', 'Bs: array<f16, 2u * B_TILE>']);
    else if (kind === 'padded3') expect(wg).toEqual(['As: array<f16, 3u * A_TILE>', 'Bs: array<f16, 3u * B_TILE>']);
    else expect(wg).toEqual(['As: array<f16, BM * BK>', 'Bs: array<f16, BK * BN>']);
    if (kind === 'direct') expect(src).toMatch(/var<storage, read> a: array<f16>;/);
    // The pipelined variants: one barrier per slice (plus the prologue's). The double-buffered
    // kernel stashes the next slice before its barrier; the three-stage one fetches two slices
    // ahead and stashes after the barrier, into the third copy.
    if (kind === 'padded' || kind === 'padded-vec' || kind === 'padded3') {
      const loop = src.slice(src.indexOf('for (var t = 0u; t < steps; t++)'));
      expect(count(src, /workgroupBarrier\(\)/g)).toBe(2);
      expect(count(loop, /workgroupBarrier\(\)/g)).toBe(1);
      const [fetchAt, mmaAt, barrierAt, stashAt] = ['if (more) { fetch(', 'subgroupMatrixMultiplyAccumulate(', 'workgroupBarrier()', 'if (more) { stash('].map((x) => loop.indexOf(x));
      expect(Math.min(fetchAt, mmaAt, barrierAt, stashAt)).toBeGreaterThanOrEqual(0);
      expect(fetchAt).toBeLessThan(mmaAt);
      if (kind === 'padded3') {
        expect(loop).toContain('let cur = t % 3u;');
        expect(loop).toContain('if (more) { fetch(m0, n0, (t + 2u) * BK, tid); }');
        expect(loop).toContain('if (more) { stash((t + 2u) % 3u, tid); }');
        expect(barrierAt).toBeGreaterThan(mmaAt);
        expect(stashAt).toBeGreaterThan(barrierAt);
      } else {
        expect(loop).toContain('let cur = t % 2u;');
        expect(stashAt).toBeGreaterThan(mmaAt);
        expect(barrierAt).toBeGreaterThan(stashAt);
      }
    }
    // The older spelling (tried when the current one does not compile) rewrites every call.
    const legacy = legacySgmmSpelling(src);
    expect(legacy).not.toMatch(/subgroupMatrix(Load|Store)<[^>]*(row|col)_major>/);
    expect(count(legacy, /subgroupMatrixLoad<(LM|RM)>\([^,()]+, [^,()]+, false, [^,()]+\)/g)).toBe((TM + TN) * steps);
    // Balanced braces and parentheses (a cheap guard against a broken unroll).
    expect(count(src, /\{/g)).toBe(count(src, /\}/g));
    expect(count(src, /\(/g)).toBe(count(src, /\)/g));
  });
  it('every variant declares the bindings of GEMM_BINDINGS (its own element types: the table has none), from which its layout and bind groups are built', () => {
    for (const src of Object.values(CEILING_SHADERS)) expect(declaredBindings(src).map(({ type: _, ...e }) => e)).toEqual(GEMM_BINDINGS.entries);
  });
  it('the host refuses shapes that are not multiples of the tile, naming it', () => {
    const t: GemmTiling = [2, 2, 4, 4, 'padded', 32];
    expect(gemmShapeError(t, 256, 256, 256)).toBeNull();
    expect(gemmShapeError(t, 256, 256, 48)).toBe('256x256x48 is not a multiple of the tile 128x128x32');
    expect(gemmShapeError(t, 192, 256, 64)).toMatch(/not a multiple of the tile 128x128x32/);
    expect(gemmShapeError([2, 2, 4, 4], 128, 128, 16)).toMatch(/128x128x32/);
    expect(() => encodeGemm(null as never, null as never, null as never, t, null as never, 128, 128, 48)).toThrow(/GemmSgmm\[padded 2x2 subgroups, 4x4 blocks, BK 32\]: 128x128x48 is not a multiple of the tile 128x128x32/);
    expect(gemmWorkgroupBytes(t)).toBe(2 * 2 * (128 * 40 + 32 * 136));
    expect(gemmWorkgroupBytes([2, 2, 4, 4, 'direct', 32])).toBe(0);
    expect(gemmWorkgroupBytes([2, 2, 4, 4])).toBe(16384);
    // Three copies for the three-stage kernel: BK = 32 on a 128×128 tile is over 48 KiB (and
    // so not in the list), as is BK = 16 on 256×128.
    expect(gemmWorkgroupBytes([2, 2, 4, 4, 'padded3', 16])).toBe(3 * 2 * (128 * 24 + 16 * 136));
    expect(gemmWorkgroupBytes([2, 4, 4, 4, 'padded3', 16])).toBe(3 * 2 * (128 * 24 + 16 * 264));
    expect(gemmWorkgroupBytes([2, 2, 4, 4, 'padded3', 32])).toBe(3 * 2 * (128 * 40 + 32 * 136));
    expect(gemmWorkgroupBytes([2, 2, 4, 4, 'padded3', 32])).toBeGreaterThan(49152);
    expect(gemmWorkgroupBytes([4, 2, 4, 4, 'padded3', 16])).toBeGreaterThan(49152);
    expect(GEMM_TILINGS.filter((t) => gemmTile(t).kind === 'padded3').map(tilingName)).toEqual([
      'padded3 2x2 subgroups, 4x4 blocks, BK 16', 'padded3 2x4 subgroups, 4x4 blocks, BK 16',
    ]);
    const t3: GemmTiling = [2, 2, 4, 4, 'padded3', 16];
    expect(gemmShapeError(t3, 256, 256, 48)).toBeNull();
    expect(gemmShapeError(t3, 256, 256, 40)).toBe('256x256x40 is not a multiple of the tile 128x128x16');
    expect(() => encodeGemm(null as never, null as never, null as never, t3, null as never, 128, 128, 40)).toThrow(/GemmSgmm\[padded3 2x2 subgroups, 4x4 blocks, BK 16\]: 128x128x40/);
  });
});

describe('portable f32 GEMM (ceiling probe)', () => {
  it('every tiling matches float64 on fresh random f32 inputs', async () => {
    const M = 256, N = 256, K = 48;
    const a = randn(M * K, Date.now() % 1000), b = randn(K * N, 9 + (Date.now() % 1000));
    const ref = referenceMatmul(Float64Array.from(a), Float64Array.from(b), M, K, N);
    let ran = 0;
    const kinds = new Set<string>();
    for (const t of GEMM_F32_TILINGS) {
      const { BM, BN, BK, kind } = gemmF32Tile(t);
      if (gemmF32Fits(dev, t) || M % BM || N % BN || K % BK) continue;
      const bufs = {
        dims: upload(dev, new Uint32Array([M, N, K, 0]), 'dims', GPUBufferUsage.UNIFORM),
        a: upload(dev, a, 'a'), b: upload(dev, b, 'b'), c: storage(dev, M * N * 4, 'c'),
      };
      const enc = dev.device.createCommandEncoder();
      encodeGemmF32(enc, dev, await buildGemmF32(dev, t), t, bufs, M, N, K);
      dev.device.queue.submit([enc.finish()]);
      const c = new Float32Array(await readback(dev, bufs.c, M * N * 4));
      for (const x of Object.values(bufs)) dev.tracker.destroy(x);
      expect(relErr(c, ref), gemmF32Name(t)).toBeLessThanOrEqual(1e-5);
      ran++;
      kinds.add(kind);
    }
    expect(ran).toBeGreaterThan(3);
    expect([...kinds].sort(), 'both kinds (K = 48: an odd count of BK = 16 steps, so both halves of the prefetched buffers)').toEqual(['plain', 'prefetched', 'prefetched-1']);
  });
});
