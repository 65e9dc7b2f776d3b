/**
 * The ceiling probes' WGSL (bench/ceiling/shaders/), imported as text as the product's shaders
 * are (src/kernels/shaders.ts): the tensor-core GEMM variants share the product's
 * sgmm_common.wgsl (matrix types, 16-byte unpacking); the f32 GEMMs are plain WGSL, sharing
 * gemm_f32_common.wgsl (bindings, the register tile's products and stores).
 */
import sgmmCommon from '../../shaders/sgmm_common.wgsl?raw';
import gemmF32Common from './shaders/gemm_f32_common.wgsl?raw';
import gemmF32Body from './shaders/gemm_f32.wgsl?raw';
import gemmF32PfBody from './shaders/gemm_f32_pf.wgsl?raw';
import gemmSgmmBody from './shaders/gemm_sgmm.wgsl?raw';
import gemmTile from './shaders/gemm_tile.wgsl?raw';
import gemmSgmmDirectBody from './shaders/gemm_sgmm_direct.wgsl?raw';
import gemmSgmmPaddedBody from './shaders/gemm_sgmm_padded.wgsl?raw';
import gemmSgmmPadded3Body from './shaders/gemm_sgmm_padded3.wgsl?raw';
import gemmStageF16 from './shaders/gemm_stage_f16.wgsl?raw';
import gemmStageVec from './shaders/gemm_stage_vec.wgsl?raw';

/**
 * Variants of the tensor-core GEMM (gemm.ts): staged (the first kernel), loads straight from the
 * storage buffers, padded double-buffered workgroup slices staged as f16 or as 16-byte words,
 * and padded triple-buffered slices (gemm_sgmm_padded3.wgsl declares its own f16 staging).
 */
export const CEILING_SHADERS = {
  gemmSgmm: `${sgmmCommon}\n${gemmSgmmBody}`,
  gemmSgmmDirect: `${sgmmCommon}\n${gemmTile}\n${gemmSgmmDirectBody}`,
  gemmSgmmPadded: `${sgmmCommon}\n${gemmTile}\n${gemmSgmmPaddedBody}\n${gemmStageF16}`,
  gemmSgmmPaddedVec: `${sgmmCommon}\n${gemmTile}\n${gemmSgmmPaddedBody}\n${gemmStageVec}`,
  gemmSgmmPadded3: `${sgmmCommon}\n${gemmTile}\n${gemmSgmmPadded3Body}`,
  gemmF32: `${gemmF32Common}\n${gemmF32Body}`,
  gemmF32Pf: `${gemmF32Common}\n${gemmF32PfBody}`,
} as const;
