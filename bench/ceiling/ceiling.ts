/**
 * The ceiling probe (run.ts): the tensor-core GEMM (gemm.ts),
 * C = A·B in f16 with f32 accumulation, timed over several tilings. Its best TFLOP/s is what
 * subgroup matrices reach through WebGPU on this device at all; beside PyTorch's f16 matmul
 * (bench/peers/torch_sdpa.py --gemm) it shows how much of the gap to FlashAttention-2 is the
 * platform's rather than the attention kernels'. Each tiling (of every kernel variant: staged,
 * padded, direct, padded-vec; GEMM_TILINGS) is first checked against a float64 product of the
 * same f16 inputs at 256³ and timed only if its relative error is at most 1e-3.
 */
import { FlashDevice } from '../../src/gpu/device.js';
import { GpuTimer } from '../../src/gpu/timer.js';
import { readback, storage, upload } from '../../src/gpu/buffers.js';
import { GEMM_F32_TILINGS, GEMM_TILINGS, GemmF32Tiling, GemmTiling, buildGemm, gemmShapeError, buildGemmF32, encodeGemm, encodeGemmF32, gemmF32Fits, gemmF32Name, gemmF32Tile, gemmFits, tilingName } from './gemm.js';
import { toPrecision } from '../../src/kernels/attention.js';
import { randn, referenceInput, relErr } from '../../src/reference/compare.js';
import { referenceMatmul } from '../../src/reference/matmul.js';
import { median } from '../../src/stats.js';
import { warmUp } from '../../src/bench/kernels.js';

export interface CeilingRow {
  M: number;
  N: number;
  K: number;
  tiling: string;
  ms: number | null;
  tflops: number | null;
  /** Relative error against float64 at 256³ (null when the tiling could not run). */
  err: number | null;
  error?: string;
}

async function runGemm(
  dev: FlashDevice, pipeline: GPUComputePipeline, t: GemmTiling, M: number, N: number, K: number,
  A: Uint16Array, B: Uint16Array, reps: number,
): Promise<{ c: GPUBuffer; ms: number[] }> {
  const bufs = {
    dims: upload(dev, new Uint32Array([M, N, K, 0]), 'gemm.dims', GPUBufferUsage.UNIFORM),
    a: upload(dev, A, 'gemm.a'), b: upload(dev, B, 'gemm.b'), c: storage(dev, M * N * 4, 'gemm.c'),
  };
  try {
    return { c: bufs.c, ms: await timedPasses(dev, 'gemm', (enc, tw) => encodeGemm(enc, dev, pipeline, t, bufs, M, N, K, tw), reps) };
  } finally {
    for (const x of [bufs.dims, bufs.a, bufs.b]) dev.tracker.destroy(x);
  }
}

/** One pass of `encode` (reps 0: run once, untimed), or a warm-up and `reps` passes timed by GPU timestamps (ms each). */
async function timedPasses(dev: FlashDevice, label: string, encode: (enc: GPUCommandEncoder, tw?: GPUComputePassTimestampWrites) => void, reps: number): Promise<number[]> {
  const timer = new GpuTimer(dev, Math.max(reps, 1));
  const once = async (tw?: GPUComputePassTimestampWrites) => {
    const enc = dev.device.createCommandEncoder({ label });
    encode(enc, tw);
    dev.device.queue.submit([enc.finish()]);
    await dev.device.queue.onSubmittedWorkDone();
  };
  try {
    if (reps === 0) {
      await once();
      return [];
    }
    await warmUp(dev, once, 2, 200);
    for (let i = 0; i < reps; i++) await once(timer.writes(i, 0, 1));
    return await timer.read();
  } finally {
    timer.destroy();
  }
}
/** Checks, then times, every tiling that fits at M = N = K = `size` (a multiple of 256). */
export async function gemmCeiling(dev: FlashDevice, size: number, reps: number, onProgress?: (i: number, n: number, label: string) => void): Promise<CeilingRow[]> {
  if (size % 256 !== 0) throw new Error(`ceiling GEMM size ${size} must be a multiple of 256`);
  const rows: CeilingRow[] = [];
  const S = 256;
  const a32 = randn(S * S, 31), b32 = randn(S * S, 32);
  const ref = referenceMatmul(referenceInput(a32, 'f16'), referenceInput(b32, 'f16'), S, S, S);
  const big = [toPrecision(randn(size * size, 33), 'f16') as Uint16Array, toPrecision(randn(size * size, 34), 'f16') as Uint16Array];
  for (const [n, t] of GEMM_TILINGS.entries()) {
    onProgress?.(n, GEMM_TILINGS.length, tilingName(t));
    const row: CeilingRow = { M: size, N: size, K: size, tiling: tilingName(t), ms: null, tflops: null, err: null };
    rows.push(row);
    const unfit = gemmFits(dev, t) ?? gemmShapeError(t, S, S, S) ?? gemmShapeError(t, size, size, size);
    if (unfit) { row.error = unfit; continue; }
    try {
      const pipeline = await buildGemm(dev, t);
      const small = await runGemm(dev, pipeline, t, S, S, S, toPrecision(a32, 'f16') as Uint16Array, toPrecision(b32, 'f16') as Uint16Array, 0);
      row.err = relErr(new Float32Array(await readback(dev, small.c, S * S * 4)), ref);
      dev.tracker.destroy(small.c);
      if (!(row.err <= 1e-3)) { row.error = `wrong result (relative error ${row.err})`; continue; }
      const timed = await runGemm(dev, pipeline, t, size, size, size, big[0], big[1], reps);
      dev.tracker.destroy(timed.c);
      row.ms = median(timed.ms.filter((x) => Number.isFinite(x) && x > 0));
      if (row.ms !== null) row.tflops = (2 * size ** 3) / (row.ms * 1e-3) / 1e12;
    } catch (e) {
      row.error = (e as Error).message.slice(0, 300);
    }
  }
  onProgress?.(GEMM_TILINGS.length, GEMM_TILINGS.length, 'done');
  return rows;
}

/**
 * The portable ceiling: the plain-WGSL f32 GEMM (shaders/gemm_f32.wgsl) over its tilings at
 * M = N = K = `size`, each first checked against float64 at 256³. Its best TFLOP/s is what plain
 * WGSL f32 arithmetic reaches on the device: the yardstick of the portable attention kernels.
 */
export async function gemmCeilingF32(dev: FlashDevice, size: number, reps: number, onProgress?: (i: number, n: number, label: string) => void): Promise<CeilingRow[]> {
  const rows: CeilingRow[] = [];
  const S = 256;
  const a32 = randn(S * S, 41), b32 = randn(S * S, 42);
  const ref = referenceMatmul(Float64Array.from(a32), Float64Array.from(b32), S, S, S);
  const big = [randn(size * size, 43), randn(size * size, 44)];
  const run = async (pipeline: GPUComputePipeline, t: GemmF32Tiling, n: number, A: Float32Array, B: Float32Array, timed: number) => {
    const bufs = { dims: upload(dev, new Uint32Array([n, n, n, 0]), 'gemmF32.dims', GPUBufferUsage.UNIFORM), a: upload(dev, A, 'gemmF32.a'), b: upload(dev, B, 'gemmF32.b'), c: storage(dev, n * n * 4, 'gemmF32.c') };
    try {
      const ms = await timedPasses(dev, 'gemmF32', (enc, tw) => encodeGemmF32(enc, dev, pipeline, t, bufs, n, n, n, tw), timed);
      return { c: timed === 0 ? new Float32Array(await readback(dev, bufs.c, n * n * 4)) : null, ms };
    } finally {
      for (const x of Object.values(bufs)) dev.tracker.destroy(x);
    }
  };
  for (const [n, t] of GEMM_F32_TILINGS.entries()) {
    onProgress?.(n, GEMM_F32_TILINGS.length, gemmF32Name(t));
    const row: CeilingRow = { M: size, N: size, K: size, tiling: gemmF32Name(t), ms: null, tflops: null, err: null };
    rows.push(row);
    const { BM, BN, BK } = gemmF32Tile(t);
    const unfit = gemmF32Fits(dev, t) ?? (size % BM || size % BN || size % BK || S % BM || S % BN ? `size ${size} is not a multiple of the tile` : null);
    if (unfit) { row.error = unfit; continue; }
    try {
      const pipeline = await buildGemmF32(dev, t);
      row.err = relErr((await run(pipeline, t, S, a32, b32, 0)).c!, ref);
      if (!(row.err <= 1e-5)) { row.error = `wrong result (relative error ${row.err})`; continue; }
      row.ms = median((await run(pipeline, t, size, big[0], big[1], reps)).ms.filter((x) => Number.isFinite(x) && x > 0));
      if (row.ms !== null) row.tflops = (2 * size ** 3) / (row.ms * 1e-3) / 1e12;
    } catch (e) {
      row.error = (e as Error).message.slice(0, 300);
    }
  }
  onProgress?.(GEMM_F32_TILINGS.length, GEMM_F32_TILINGS.length, 'done');
  return rows;
}
