/**
 * The WGSL sources, imported as text the same way everywhere: Vite and Vitest understand
 * `?raw`; Node scripts run through bin/flashring.mjs, which registers a loader for it.
 */
import common from '../../shaders/common.wgsl?raw';
import flashFwdBody from '../../shaders/flash_fwd.wgsl?raw';
import rowsSubgroup from '../../shaders/flash_rows_sg.wgsl?raw';
import rowsWorkgroup from '../../shaders/flash_rows_wg.wgsl?raw';
import sgmmCommon from '../../shaders/sgmm_common.wgsl?raw';
import flashFwdSgmmBody from '../../shaders/flash_fwd_sgmm.wgsl?raw';
import flashBwdTiles from '../../shaders/flash_bwd_tiles.wgsl?raw';
import flashBwdScalar from '../../shaders/flash_bwd.wgsl?raw';
import flashBwdPre from '../../shaders/flash_bwd_pre.wgsl?raw';
import gemmF32 from '../../shaders/gemm_f32.wgsl?raw';
import flashBwdSgmmBody from '../../shaders/flash_bwd_sgmm.wgsl?raw';
import merge from '../../shaders/merge.wgsl?raw';
import gemmSgmmBody from '../../shaders/gemm_sgmm.wgsl?raw';
import gemmTile from '../../shaders/gemm_tile.wgsl?raw';
import gemmSgmmDirectBody from '../../shaders/gemm_sgmm_direct.wgsl?raw';
import gemmSgmmPaddedBody from '../../shaders/gemm_sgmm_padded.wgsl?raw';
import gemmSgmmPadded3Body from '../../shaders/gemm_sgmm_padded3.wgsl?raw';
import gemmStageF16 from '../../shaders/gemm_stage_f16.wgsl?raw';
import gemmStageVec from '../../shaders/gemm_stage_vec.wgsl?raw';

/**
 * The portable forward with its row reduction: subgroup shuffles (flash_rows_sg.wgsl) or
 * workgroup memory (flash_rows_wg.wgsl).
 */
const flashFwd = { subgroup: `${flashFwdBody}\n${rowsSubgroup}`, workgroup: `${flashFwdBody}\n${rowsWorkgroup}` };
/**
 * The portable backward kernels take their bindings, tiles and products from
 * flash_bwd_tiles.wgsl; the preprocess (Δ) is its own module, shared with the tensor-core
 * backward, which has its own tiles (16-byte loads, fetched a tile ahead).
 */
const flashBwd = `${flashBwdTiles}\n${flashBwdScalar}`;
/** The tensor-core kernels share their matrix types and 16-byte unpacking (sgmm_common.wgsl). */
const flashFwdSgmm = `${sgmmCommon}\n${flashFwdSgmmBody}`;
const flashBwdSgmm = `${sgmmCommon}\n${flashBwdSgmmBody}`;
const gemmSgmm = `${sgmmCommon}\n${gemmSgmmBody}`;
/**
 * Variants of the tensor-core ceiling GEMM (src/kernels/gemm.ts): loads straight from the
 * storage buffers, padded double-buffered workgroup slices staged as f16 or as 16-byte words,
 * and padded triple-buffered slices (gemm_sgmm_padded3.wgsl declares its own f16 staging).
 */
const gemmSgmmDirect = `${sgmmCommon}\n${gemmTile}\n${gemmSgmmDirectBody}`;
const gemmSgmmPadded = `${sgmmCommon}\n${gemmTile}\n${gemmSgmmPaddedBody}\n${gemmStageF16}`;
const gemmSgmmPaddedVec = `${sgmmCommon}\n${gemmTile}\n${gemmSgmmPaddedBody}\n${gemmStageVec}`;
const gemmSgmmPadded3 = `${sgmmCommon}\n${gemmTile}\n${gemmSgmmPadded3Body}`;

/** The gemm* sources are the bench's ceiling probes (bench/gemm.ts), not attention kernels. */
export const SHADERS = { common, flashFwd, flashFwdSgmm, flashBwd, flashBwdPre, flashBwdSgmm, merge, gemmSgmm, gemmSgmmDirect, gemmSgmmPadded, gemmSgmmPaddedVec, gemmSgmmPadded3, gemmF32 } as const;
