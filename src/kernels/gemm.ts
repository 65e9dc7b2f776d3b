/**
 * The ceiling GEMM kernel modules, not attention kernels: the bench's ceiling probe
 * (bench/gemm.ts) times them to show what a device reaches at all. The tensor-core GEMM
 * (shaders/gemm_sgmm.wgsl): C = A·B, f16 in, f32 out, on subgroup matrices; the portable f32
 * GEMM (shaders/gemm_f32.wgsl, below): plain WGSL, register-tiled.
 */
import { FlashDevice } from '../gpu/device.js';
import { buildPipeline, buildSgmmPipelines } from './pipeline.js';
import { specialize } from './specialize.js';
import { SHADERS } from './shaders.js';

/** Subgroups (rows × columns) and 16×16 result blocks per subgroup (rows × columns). */
export type GemmTiling = [SGM: number, SGN: number, TM: number, TN: number];
export const GEMM_TILINGS: GemmTiling[] = [[2, 2, 2, 2], [2, 2, 4, 2], [2, 2, 2, 4], [4, 2, 2, 2], [2, 4, 2, 2], [2, 2, 4, 4], [1, 1, 4, 4], [2, 1, 4, 4], [4, 4, 2, 2]];

/** K step of the kernel (BK in the shader). */
export const GEMM_BK = 32;
export const gemmTile = ([SGM, SGN, TM, TN]: GemmTiling) => ({ BM: 16 * TM * SGM, BN: 16 * TN * SGN, WG: 32 * SGM * SGN });
export const tilingName = (t: GemmTiling) => `${t[0]}x${t[1]} subgroups, ${t[2]}x${t[3]} blocks`;

/** The specialized source of one tiling (`enables` from the pipeline builder's spelling attempts). */
export function gemmSource(t: GemmTiling, enables: string[]): string {
  const head = ['enable f16;', ...enables.map((e) => `enable ${e};`), 'diagnostic(off, chromium.subgroup_matrix_uniformity);'].join('\n');
  return `${head}\n${specialize(SHADERS.gemmSgmm, { SGM: t[0], SGN: t[1], TM: t[2], TN: t[3] })}`;
}

/** Whether a tiling fits the device (workgroup memory and invocations). */
export function gemmFits(dev: FlashDevice, t: GemmTiling): string | null {
  const { BM, BN, WG } = gemmTile(t);
  const bytes = (BM * GEMM_BK + GEMM_BK * BN) * 2;
  const lim = dev.device.limits;
  if (bytes > lim.maxComputeWorkgroupStorageSize) return `needs ${bytes} bytes of workgroup memory (device: ${lim.maxComputeWorkgroupStorageSize})`;
  if (WG > lim.maxComputeInvocationsPerWorkgroup) return `needs ${WG} invocations (device: ${lim.maxComputeInvocationsPerWorkgroup})`;
  return null;
}

/** Builds the pipeline of one tiling (trying the spellings of the subgroup-matrix builtins). */
export async function buildGemm(dev: FlashDevice, t: GemmTiling): Promise<GPUComputePipeline> {
  const [pipeline] = await buildSgmmPipelines(dev, `GemmSgmm[${tilingName(t)}]`, (extra) => gemmSource(t, extra), ['main']);
  return pipeline;
}

/** Encodes C = A·B (M, N, K multiples of the tiling's BM, BN and 32); `dims` holds [M, N, K, 0] as u32. */
export function encodeGemm(
  enc: GPUCommandEncoder, dev: FlashDevice, pipeline: GPUComputePipeline, t: GemmTiling,
  b: { dims: GPUBuffer; a: GPUBuffer; b: GPUBuffer; c: GPUBuffer }, M: number, N: number, tw?: GPUComputePassTimestampWrites,
): void {
  const { BM, BN } = gemmTile(t);
  dispatchGemm(enc, dev, pipeline, 'gemm', b, N / BN, M / BM, tw);
}

/** One pass of a GEMM pipeline over its four bindings (dims, A, B, C), one workgroup per block of C. */
function dispatchGemm(
  enc: GPUCommandEncoder, dev: FlashDevice, pipeline: GPUComputePipeline, label: string,
  b: { dims: GPUBuffer; a: GPUBuffer; b: GPUBuffer; c: GPUBuffer }, groupsX: number, groupsY: number, tw?: GPUComputePassTimestampWrites,
): void {
  const bind = dev.device.createBindGroup({ label: `${label}.bind`, layout: pipeline.getBindGroupLayout(0), entries: [b.dims, b.a, b.b, b.c].map((buffer, binding) => ({ binding, resource: { buffer } })) });
  const pass = enc.beginComputePass({ label: `${label}.pass`, timestampWrites: tw });
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bind);
  pass.dispatchWorkgroups(groupsX, groupsY);
  pass.end();
}

/**
 * The portable ceiling probe (shaders/gemm_f32.wgsl): C = A·B in f32 on plain WGSL, register-
 * tiled. Tilings [TMV, TNV, BK]: a 16×16 workgroup owns a (64·TMV)×(64·TNV) block of C and
 * walks K in steps of BK (BK·16·TMV and BK·16·TNV must be multiples of 256).
 */
export type GemmF32Tiling = [TMV: number, TNV: number, BK: number];
export const GEMM_F32_TILINGS: GemmF32Tiling[] = [[2, 2, 16], [2, 2, 8], [4, 2, 8], [2, 4, 8], [1, 1, 16], [2, 1, 16], [1, 2, 16]];
export const gemmF32Tile = ([TMV, TNV, BK]: GemmF32Tiling) => ({ BM: 64 * TMV, BN: 64 * TNV, BK });
export const gemmF32Name = (t: GemmF32Tiling) => `f32 ${64 * t[0]}x${64 * t[1]} block, BK ${t[2]}`;

/** Whether an f32 tiling fits the device (workgroup memory, 256 invocations). */
export function gemmF32Fits(dev: FlashDevice, t: GemmF32Tiling): string | null {
  const { BM, BN, BK } = gemmF32Tile(t);
  const bytes = BK * (BM + BN) * 4;
  const lim = dev.device.limits;
  if (bytes > lim.maxComputeWorkgroupStorageSize) return `needs ${bytes} bytes of workgroup memory (device: ${lim.maxComputeWorkgroupStorageSize})`;
  if (lim.maxComputeInvocationsPerWorkgroup < 256) return `needs 256 invocations (device: ${lim.maxComputeInvocationsPerWorkgroup})`;
  return null;
}

export function gemmF32Source(t: GemmF32Tiling): string {
  return specialize(SHADERS.gemmF32, { TMV: t[0], TNV: t[1], BK: t[2] });
}

export async function buildGemmF32(dev: FlashDevice, t: GemmF32Tiling): Promise<GPUComputePipeline> {
  return buildPipeline(dev, `GemmF32[${gemmF32Name(t)}]`, gemmF32Source(t));
}

/** Encodes C = A·B in f32 (M, N, K multiples of the tiling's BM, BN, BK); `dims` holds [M, N, K, 0] as u32. */
export function encodeGemmF32(
  enc: GPUCommandEncoder, dev: FlashDevice, pipeline: GPUComputePipeline, t: GemmF32Tiling,
  b: { dims: GPUBuffer; a: GPUBuffer; b: GPUBuffer; c: GPUBuffer }, M: number, N: number, K: number, tw?: GPUComputePassTimestampWrites,
): void {
  const { BM, BN, BK } = gemmF32Tile(t);
  if (M % BM || N % BN || K % BK) throw new Error(`GemmF32: ${M}x${N}x${K} is not a multiple of the tile ${BM}x${BN}x${BK}`);
  dispatchGemm(enc, dev, pipeline, 'gemmF32', b, N / BN, M / BM, tw);
}
