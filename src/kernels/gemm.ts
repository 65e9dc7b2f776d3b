/**
 * The tensor-core GEMM kernel module (shaders/gemm_sgmm.wgsl): C = A·B, f16 in, f32 out, on
 * subgroup matrices. Not an attention kernel: the bench's ceiling probe (bench/gemm.ts) times
 * it to show what subgroup matrices reach on a device at all.
 */
import { FlashDevice } from '../gpu/device.js';
import { buildSgmmPipelines } from './common.js';
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
  const bind = dev.device.createBindGroup({ label: 'gemm.bind', layout: pipeline.getBindGroupLayout(0), entries: [b.dims, b.a, b.b, b.c].map((buffer, binding) => ({ binding, resource: { buffer } })) });
  const pass = enc.beginComputePass({ label: 'gemm.pass', timestampWrites: tw });
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bind);
  pass.dispatchWorkgroups(N / BN, M / BM);
  pass.end();
}
