/**
 * The WGSL sources, imported as text the same way everywhere: Vite and Vitest understand
 * `?raw`; Node scripts run through bin/flashring.mjs, which registers a loader for it.
 */
import common from '../../shaders/common.wgsl?raw';
import flashFwd from '../../shaders/flash_fwd.wgsl?raw';
import sgmmCommon from '../../shaders/sgmm_common.wgsl?raw';
import flashFwdSgmmBody from '../../shaders/flash_fwd_sgmm.wgsl?raw';
import flashBwdTiles from '../../shaders/flash_bwd_tiles.wgsl?raw';
import flashBwdScalar from '../../shaders/flash_bwd.wgsl?raw';
import flashBwdSgmmBody from '../../shaders/flash_bwd_sgmm.wgsl?raw';
import merge from '../../shaders/merge.wgsl?raw';
import gemmSgmmBody from '../../shaders/gemm_sgmm.wgsl?raw';

/**
 * The scalar backward kernels take their bindings, tiles and loaders from flash_bwd_tiles.wgsl;
 * the tensor-core ones have their own (16-byte loads, prefetched).
 */
const flashBwd = `${flashBwdTiles}\n${flashBwdScalar}`;
/** The tensor-core kernels share their matrix types and 16-byte unpacking (sgmm_common.wgsl). */
const flashFwdSgmm = `${sgmmCommon}\n${flashFwdSgmmBody}`;
const flashBwdSgmm = `${sgmmCommon}\n${flashBwdSgmmBody}`;
const gemmSgmm = `${sgmmCommon}\n${gemmSgmmBody}`;

/** gemmSgmm is the bench's ceiling probe (bench/gemm.ts), not an attention kernel. */
export const SHADERS = { common, flashFwd, flashFwdSgmm, flashBwd, flashBwdSgmm, merge, gemmSgmm } as const;
