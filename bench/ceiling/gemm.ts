/**
 * The ceiling GEMM kernel modules, not attention kernels: the ceiling probe (ceiling.ts, run by
 * run.ts) times them to show what a device reaches at all. The tensor-core GEMM
 * (shaders/gemm_sgmm.wgsl here): C = A·B, f16 in, f32 out, on subgroup matrices; the portable f32
 * GEMM (shaders/gemm_f32.wgsl, below): plain WGSL, register-tiled. Built with the product's
 * pipeline helpers and binding tables (src/kernels/pipeline.ts, bindings.ts).
 */
import { FlashDevice } from '../../src/gpu/device.js';
import { buildPipeline, buildSgmmPipelines } from '../../src/kernels/pipeline.js';
import { specialize } from '../../src/kernels/specialize.js';
import { bindGroup, bindingTable, pipelineLayout } from '../../src/kernels/bindings.js';
import { CEILING_SHADERS as SHADERS } from './shaders.js';

/** Every GEMM variant's bindings: the dims [M, N, K, 0], A, B, C. */
export const GEMM_BINDINGS = bindingTable('Gemm', [[0, 'dims', 'uniform'], [1, 'a', 'read'], [2, 'b', 'read'], [3, 'c', 'read_write']]);
/** The buffers of one GEMM, by their binding names. */
export type GemmBuffers = { dims: GPUBuffer; a: GPUBuffer; b: GPUBuffer; c: GPUBuffer };

/**
 * How a variant feeds its matrix loads:
 * - 'staged' (shaders/gemm_sgmm.wgsl): workgroup slices of BK = 32, unpadded, single-buffered,
 *   two barriers per slice (the first kernel; kept for comparison);
 * - 'direct' (gemm_sgmm_direct.wgsl): straight from the storage buffers, no workgroup memory;
 * - 'padded' (gemm_sgmm_padded.wgsl + gemm_stage_f16.wgsl): padded rows, double-buffered, one
 *   barrier per slice, stores of 8 f16;
 * - 'padded3' (gemm_sgmm_padded3.wgsl): padded rows, three copies of each slice (a three-stage
 *   pipeline: slice t + 2 fetched before the products of slice t, stored after the barrier that
 *   closes them), one barrier per slice that waits for no global load;
 * - 'padded-vec' (the same + gemm_stage_vec.wgsl): the slices as 16-byte words, one store per
 *   word; experimental (see that file), last in the list.
 */
export type GemmKind = 'staged' | 'direct' | 'padded' | 'padded3' | 'padded-vec';

/**
 * Subgroups (rows × columns), 16×16 result blocks per subgroup (rows × columns), the variant
 * ('staged' when left out) and the K step BK (32 when left out; 'staged' takes only 32).
 */
export type GemmTiling = [SGM: number, SGN: number, TM: number, TN: number, kind?: GemmKind, BK?: number];
export const GEMM_TILINGS: GemmTiling[] = [
  [2, 2, 2, 2], [2, 2, 4, 2], [2, 2, 2, 4], [4, 2, 2, 2], [2, 4, 2, 2], [2, 2, 4, 4], [1, 1, 4, 4], [2, 1, 4, 4], [4, 4, 2, 2],
  // Padded, double-buffered workgroup slices: 128×128 tiles from 4 or 8 subgroups, and
  // 256×128 / 128×256 from 8 subgroups of 4×4 blocks (BK = 16 to fit two copies in 48 KiB).
  [2, 2, 4, 4, 'padded', 32], [2, 4, 4, 2, 'padded', 32], [4, 2, 2, 4, 'padded', 32], [2, 2, 4, 4, 'padded', 16],
  [4, 2, 4, 4, 'padded', 16], [2, 4, 4, 4, 'padded', 16], [2, 2, 2, 2, 'padded', 64],
  // Around the best of the H200's first sweep (2×2 subgroups of 4×4 blocks, BK 16, 191 TFLOP/s):
  // smaller workgroups (more of them resident per SM) and 4×2 / 2×4 blocks.
  [2, 1, 4, 4, 'padded', 16], [1, 2, 4, 4, 'padded', 16], [1, 1, 4, 4, 'padded', 16], [2, 2, 4, 2, 'padded', 16], [2, 2, 2, 4, 'padded', 16],
  // Three-stage (triple-buffered) padded slices around the best double-buffered tiling. Three
  // copies at BK = 16: 31488 bytes (128×128 tile), 43776 (128×256); [2, 2, 4, 4] at BK = 32
  // would need 56832 and 256×128 at BK = 16 49920, over 48 KiB.
  [2, 2, 4, 4, 'padded3', 16], [2, 4, 4, 4, 'padded3', 16],
  // Loads straight from the storage buffers (L1/L2 for reuse).
  [2, 2, 4, 4, 'direct', 32], [2, 2, 4, 4, 'direct', 16], [1, 1, 4, 4, 'direct', 32], [2, 4, 4, 2, 'direct', 32],
  [4, 2, 2, 4, 'direct', 32], [4, 2, 4, 4, 'direct', 16], [4, 4, 2, 2, 'direct', 32],
  // Last: the experimental 16-byte-word staging.
  [2, 2, 4, 4, 'padded-vec', 32], [2, 4, 4, 2, 'padded-vec', 32], [4, 2, 4, 4, 'padded-vec', 16],
  [2, 2, 4, 4, 'padded-vec', 16], [2, 1, 4, 4, 'padded-vec', 16],
];

/** K step of the 'staged' kernel (BK in shaders/gemm_sgmm.wgsl). */
export const GEMM_BK = 32;
export const gemmKind = (t: GemmTiling): GemmKind => t[4] ?? 'staged';
export const gemmTile = ([SGM, SGN, TM, TN, kind = 'staged', BK = GEMM_BK]: GemmTiling) =>
  ({ BM: 16 * TM * SGM, BN: 16 * TN * SGN, BK, WG: 32 * SGM * SGN, kind });
export const tilingName = (t: GemmTiling) => {
  const base = `${t[0]}x${t[1]} subgroups, ${t[2]}x${t[3]} blocks`;
  const { kind, BK } = gemmTile(t);
  return kind === 'staged' ? base : `${kind} ${base}, BK ${BK}`;
};

/** Bytes of workgroup memory a tiling declares. */
export function gemmWorkgroupBytes(t: GemmTiling): number {
  const { BM, BN, BK, kind } = gemmTile(t);
  if (kind === 'direct') return 0;
  if (kind === 'staged') return (BM * GEMM_BK + GEMM_BK * BN) * 2;
  const copies = kind === 'padded3' ? 3 : 2;           // 'padded', 'padded-vec': two
  return copies * (BM * (BK + 8) + BK * (BN + 8)) * 2;   // rows padded by 8 halves
}

/** The specialized source of one tiling (`enables` from the pipeline builder's spelling attempts). */
export function gemmSource(t: GemmTiling, enables: string[]): string {
  const head = ['enable f16;', ...enables.map((e) => `enable ${e};`), 'diagnostic(off, chromium.subgroup_matrix_uniformity);'].join('\n');
  const { BK, kind } = gemmTile(t);
  const shape = { SGM: t[0], SGN: t[1], TM: t[2], TN: t[3] };
  if (kind === 'staged') {
    if (BK !== GEMM_BK) throw new Error(`GemmSgmm: the staged kernel has BK = ${GEMM_BK}, not ${BK}`);
    return `${head}\n${specialize(SHADERS.gemmSgmm, shape)}`;
  }
  if (BK % 16 || BK < 16) throw new Error(`GemmSgmm: BK = ${BK} is not a positive multiple of 16`);
  const src = { direct: SHADERS.gemmSgmmDirect, padded: SHADERS.gemmSgmmPadded, padded3: SHADERS.gemmSgmmPadded3, 'padded-vec': SHADERS.gemmSgmmPaddedVec }[kind];
  return `${head}\n${specialize(src, { ...shape, KS: BK / 16 })}`;
}

/** Whether a tiling fits the device (workgroup memory and invocations). */
export function gemmFits(dev: FlashDevice, t: GemmTiling): string | null {
  const { WG } = gemmTile(t);
  const bytes = gemmWorkgroupBytes(t);
  const lim = dev.device.limits;
  if (bytes > lim.maxComputeWorkgroupStorageSize) return `needs ${bytes} bytes of workgroup memory (device: ${lim.maxComputeWorkgroupStorageSize})`;
  if (WG > lim.maxComputeInvocationsPerWorkgroup) return `needs ${WG} invocations (device: ${lim.maxComputeInvocationsPerWorkgroup})`;
  return null;
}

/** Why M×N×K cannot run on a tiling (not multiples of its BM, BN, BK), or null. */
export function gemmShapeError(t: GemmTiling, M: number, N: number, K: number): string | null {
  const { BM, BN, BK } = gemmTile(t);
  return M % BM || N % BN || K % BK ? `${M}x${N}x${K} is not a multiple of the tile ${BM}x${BN}x${BK}` : null;
}

/** Builds the pipeline of one tiling (trying the spellings of the subgroup-matrix builtins). */
export async function buildGemm(dev: FlashDevice, t: GemmTiling): Promise<GPUComputePipeline> {
  const [pipeline] = await buildSgmmPipelines(dev, `GemmSgmm[${tilingName(t)}]`, (extra) => gemmSource(t, extra), ['main'], pipelineLayout(dev, GEMM_BINDINGS));
  return pipeline;
}

/**
 * Encodes C = A·B (M, N, K multiples of the tiling's BM, BN, BK: the kernels index without
 * bounds checks, so any other shape is refused here); `dims` holds [M, N, K, 0] as u32.
 */
export function encodeGemm(
  enc: GPUCommandEncoder, dev: FlashDevice, pipeline: GPUComputePipeline, t: GemmTiling,
  b: GemmBuffers, M: number, N: number, K: number, tw?: GPUComputePassTimestampWrites,
): void {
  const bad = gemmShapeError(t, M, N, K);
  if (bad) throw new Error(`GemmSgmm[${tilingName(t)}]: ${bad}`);
  const { BM, BN } = gemmTile(t);
  dispatchGemm(enc, dev, pipeline, 'gemm', b, N / BN, M / BM, tw);
}

/** One pass of a GEMM pipeline over its four bindings (dims, A, B, C), one workgroup per block of C. */
function dispatchGemm(
  enc: GPUCommandEncoder, dev: FlashDevice, pipeline: GPUComputePipeline, label: string,
  b: GemmBuffers, groupsX: number, groupsY: number, tw?: GPUComputePassTimestampWrites,
): void {
  const bind = bindGroup(dev, GEMM_BINDINGS, b);
  const pass = enc.beginComputePass({ label: `${label}.pass`, timestampWrites: tw });
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bind);
  pass.dispatchWorkgroups(groupsX, groupsY);
  pass.end();
}

/**
 * The portable ceiling probe (shaders/gemm_f32.wgsl): C = A·B in f32 on plain WGSL, register-
 * tiled. Tilings [TMV, TNV, BK, kind]: a 16×16 workgroup owns a (64·TMV)×(64·TNV) block of C and
 * walks K in steps of BK (BK·16·TMV and BK·16·TNV must be multiples of 256). Kind 'plain' stages
 * each step between two barriers; 'prefetched' (shaders/gemm_f32_pf.wgsl) loads the next step's
 * words into registers before the current step's products and double-buffers workgroup memory;
 * 'prefetched-1' loads ahead the same way into one buffer (two barriers a step), to tell the two apart.
 */
export type GemmF32Kind = 'plain' | 'prefetched' | 'prefetched-1';
export type GemmF32Tiling = [TMV: number, TNV: number, BK: number, kind?: GemmF32Kind];
export const GEMM_F32_TILINGS: GemmF32Tiling[] = [
  [2, 2, 16], [2, 2, 8], [4, 2, 8], [2, 4, 8], [1, 1, 16], [2, 1, 16], [1, 2, 16],
  [2, 1, 16, 'prefetched'], [1, 2, 16, 'prefetched'], [2, 2, 16, 'prefetched'], [2, 2, 8, 'prefetched'], [1, 1, 16, 'prefetched'], [4, 2, 8, 'prefetched'],
  [2, 1, 16, 'prefetched-1'], [1, 2, 16, 'prefetched-1'], [4, 2, 8, 'prefetched-1'],
];
const F32_KIND_NAME: Record<GemmF32Kind, string> = { plain: '', prefetched: ', prefetched', 'prefetched-1': ', prefetched, one buffer' };
const F32_HALVES: Record<GemmF32Kind, number> = { plain: 1, prefetched: 2, 'prefetched-1': 1 };
export const gemmF32Tile = ([TMV, TNV, BK, kind = 'plain']: GemmF32Tiling) => ({ BM: 64 * TMV, BN: 64 * TNV, BK, kind, halves: F32_HALVES[kind] });
export const gemmF32Name = (t: GemmF32Tiling) => `f32 ${64 * t[0]}x${64 * t[1]} block, BK ${t[2]}${F32_KIND_NAME[t[3] ?? 'plain']}`;

/** Whether an f32 tiling fits the device (workgroup memory, 256 invocations). */
export function gemmF32Fits(dev: FlashDevice, t: GemmF32Tiling): string | null {
  const { BM, BN, BK, halves } = gemmF32Tile(t);
  const bytes = BK * (BM + BN) * 4 * halves;
  const lim = dev.device.limits;
  if (bytes > lim.maxComputeWorkgroupStorageSize) return `needs ${bytes} bytes of workgroup memory (device: ${lim.maxComputeWorkgroupStorageSize})`;
  if (lim.maxComputeInvocationsPerWorkgroup < 256) return `needs 256 invocations (device: ${lim.maxComputeInvocationsPerWorkgroup})`;
  return null;
}

export function gemmF32Source(t: GemmF32Tiling): string {
  const [TMV, TNV, BK] = t;
  const { kind, halves } = gemmF32Tile(t);
  if (kind === 'plain') return specialize(SHADERS.gemmF32, { TMV, TNV, BK });
  return specialize(SHADERS.gemmF32Pf, { TMV, TNV, BK, LA: (TMV * BK) / 16, LB: (TNV * BK) / 16, HALVES: halves });
}

export async function buildGemmF32(dev: FlashDevice, t: GemmF32Tiling): Promise<GPUComputePipeline> {
  return buildPipeline(dev, `GemmF32[${gemmF32Name(t)}]`, gemmF32Source(t), 'main', pipelineLayout(dev, GEMM_BINDINGS));
}

/** Encodes C = A·B in f32 (M, N, K multiples of the tiling's BM, BN, BK); `dims` holds [M, N, K, 0] as u32. */
export function encodeGemmF32(
  enc: GPUCommandEncoder, dev: FlashDevice, pipeline: GPUComputePipeline, t: GemmF32Tiling,
  b: GemmBuffers, M: number, N: number, K: number, tw?: GPUComputePassTimestampWrites,
): void {
  const { BM, BN, BK } = gemmF32Tile(t);
  if (M % BM || N % BN || K % BK) throw new Error(`GemmF32: ${M}x${N}x${K} is not a multiple of the tile ${BM}x${BN}x${BK}`);
  dispatchGemm(enc, dev, pipeline, 'gemmF32', b, N / BN, M / BM, tw);
}
