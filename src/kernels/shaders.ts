/**
 * The WGSL sources, imported as text the same way everywhere: Vite and Vitest understand
 * `?raw`; Node scripts run through bin/flashring.mjs, which registers a loader for it.
 */
import commonHeader from '../../shaders/common.wgsl?raw';
import nonfinite from '../../shaders/nonfinite.wgsl?raw';
import flashFwdBody from '../../shaders/flash_fwd.wgsl?raw';
import rowsSubgroup from '../../shaders/flash_rows_sg.wgsl?raw';
import rowsWorkgroup from '../../shaders/flash_rows_wg.wgsl?raw';
import sgmmCommon from '../../shaders/sgmm_common.wgsl?raw';
import flashFwdSgmmBody from '../../shaders/flash_fwd_sgmm.wgsl?raw';
import flashBwdTiles from '../../shaders/flash_bwd_tiles.wgsl?raw';
import flashBwdScalar from '../../shaders/flash_bwd.wgsl?raw';
import flashBwdPre from '../../shaders/flash_bwd_pre.wgsl?raw';
import flashBwdSgmmBody from '../../shaders/flash_bwd_sgmm.wgsl?raw';
import mergeBody from '../../shaders/merge.wgsl?raw';

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
/**
 * The tests for non-finite values by bits (nonfinite.wgsl), appended (not prepended: the header
 * opens with the enable directives) to the attention kernels' header and to the add.
 */
const common = `${commonHeader}\n${nonfinite}`;
const merge = `${mergeBody}\n${nonfinite}`;
/** The attention kernels' sources: only what runs by default or by a documented tuning option (the bench's GEMM probes are in bench/ceiling/). */
export const SHADERS = { common, flashFwd, flashFwdSgmm, flashBwd, flashBwdPre, flashBwdSgmm, merge } as const;
