import { describe, expect, it, beforeAll } from 'vitest';
import { testDevice } from './gpu.js';
import { FlashDevice } from '../src/gpu/device.js';
import { GEMM_TILINGS, GEMM_F32_TILINGS, buildGemm, buildGemmF32, encodeGemm, encodeGemmF32, gemmF32Fits, gemmF32Name, gemmF32Tile, gemmFits, gemmTile, tilingName } from '../src/kernels/gemm.js';
import { readback, storage, upload } from '../src/gpu/buffers.js';
import { toPrecision } from '../src/kernels/attention.js';
import { randn, referenceInput, relErr } from '../src/reference/compare.js';
import { referenceMatmul } from '../src/reference/matmul.js';

// The ceiling probe's GEMM (bench --ceiling) must be right before its speed means anything.
// It needs subgroup matrices, so it runs on GPUs that have them (the H200), not on lavapipe;
// there, CI only compiles it on the null backend (test/shaders.test.ts).
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
      const { BM, BN } = gemmTile(t);
      if (gemmFits(dev, t) || M % BM || N % BN) continue;
      const bufs = {
        dims: upload(dev, new Uint32Array([M, N, K, 0]), 'dims', GPUBufferUsage.UNIFORM),
        a: upload(dev, toPrecision(a, 'f16'), 'a'), b: upload(dev, toPrecision(b, 'f16'), 'b'), c: storage(dev, M * N * 4, 'c'),
      };
      const enc = dev.device.createCommandEncoder();
      encodeGemm(enc, dev, await buildGemm(dev, t), t, bufs, M, N);
      dev.device.queue.submit([enc.finish()]);
      const c = new Float32Array(await readback(dev, bufs.c, M * N * 4));
      for (const x of Object.values(bufs)) dev.tracker.destroy(x);
      expect(relErr(c, ref), tilingName(t)).toBeLessThanOrEqual(1e-5);
      ran++;
    }
    expect(ran).toBeGreaterThan(3);
  });
});

describe('portable f32 GEMM (ceiling probe)', () => {
  it('every tiling matches float64 on fresh random f32 inputs', async () => {
    const M = 256, N = 256, K = 48;
    const a = randn(M * K, Date.now() % 1000), b = randn(K * N, 9 + (Date.now() % 1000));
    const ref = referenceMatmul(Float64Array.from(a), Float64Array.from(b), M, K, N);
    let ran = 0;
    for (const t of GEMM_F32_TILINGS) {
      const { BM, BN, BK } = gemmF32Tile(t);
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
    }
    expect(ran).toBeGreaterThan(3);
  });
});
