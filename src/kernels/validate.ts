/**
 * Compiles every tensor-core (subgroup-matrix) specialization the planner can pick, for head
 * dims 16…256 and f16/f32 outputs, on Dawn's null backend, which offers subgroup matrices and
 * validates WGSL fully without a GPU; and the portable forward's candidate tiles (RR = 4 and 8,
 * both row reductions) in the unrolled form GPUs run, which lavapipe's tests never compile (CPU
 * adapters keep loops rolled). Returns the errors (none when all compile). Run in its own
 * process by `node bin/validate-shaders.mjs` (Dawn aborted when run inside a Vitest worker).
 */
import { nodeGPU } from '../gpu/node.js';
import { acquireDevices } from '../gpu/device.js';
import { attentionSource, attentionValues } from './source.js';
import { sgmmCandidates, sgmmTilePlan } from './sgmmTiles.js';
import { SHADERS } from './shaders.js';
import { GEMM_TILINGS, gemmSource, tilingName } from './gemm.js';
import { PORTABLE_FWD_CANDIDATES, PORTABLE_FWD_RR8_TILES, portableTile, portableValues } from './tiles.js';

/** maxComputeWorkgroupStorageSize of the H200 (and of most desktop GPUs). */
const LIMIT = 49152;
const EXT = ['chromium_experimental_subgroup_matrix', 'subgroups'];

export interface ValidationReport {
  checked: string[];
  errors: string[];
}

export async function validateSgmmShaders(
  heads: number[] = [16, 32, 48, 64, 128, 256], mutate: (code: string) => string = (c) => c, portable = true,
): Promise<ValidationReport> {
  const gpu = await nodeGPU({ extraFlags: ['backend=null'] });
  const report: ValidationReport = { checked: [], errors: [] };
  // One device per module: a second module on the same null-backend device aborted Dawn 0.6.2
  // (std::system_error) for some of these shaders.
  const check = async (what: string, code: string) => {
    const [dev] = await acquireDevices(gpu, 1);
    try {
      if (!dev.hasSubgroupMatrix) throw new Error('the null backend does not offer chromium-experimental-subgroup-matrix');
      const info = await dev.device.createShaderModule({ code: mutate(code) }).getCompilationInfo();
      report.checked.push(what);
      for (const m of info.messages) if (m.type === 'error') report.errors.push(`${what}: ${m.lineNum}:${m.linePos} ${m.message}`);
    } finally {
      dev.destroy();
    }
  };
  for (const D of heads) {
    for (const out of ['f16', 'f32'] as const) {
      const t = { precision: 'f16' as const, out, grad: out };
      for (const [kind, shader] of [['fwd', SHADERS.flashFwdSgmm], ['bwd', SHADERS.flashBwdSgmm]] as const) {
        for (const [SG, T, RB] of sgmmCandidates(kind, D)) {
          // The forward in each order of its steps (PIPE 0, 1, 2: flash_fwd_sgmm.wgsl).
          for (const pipe of kind === 'fwd' ? [0, 1, 2] : [0]) {
            const plan = sgmmTilePlan(kind, SG, T, D, RB, undefined, pipe);
            if (plan.workgroupBytes <= LIMIT)
              await check(`${kind === 'fwd' ? `forward D=${D} SG=${SG} T=${T} RB=${RB} PIPE=${pipe}` : `backward D=${D} SG=${SG} T=${T}`} out=${out}`, attentionSource(shader, attentionValues(D, plan, t, true), EXT));
          }
        }
      }
    }
  }
  for (const t of GEMM_TILINGS) await check(`gemm ${tilingName(t)}`, gemmSource(t, EXT));
  // The portable forward as a GPU compiles it (unrolled), every candidate tile that fits the
  // H200's limits: subgroups of 32 (subgroup row reduction) or none (workgroup memory); head
  // dims of one to eight chunks.
  for (const D of portable ? heads.filter((d) => [16, 64, 128, 256].includes(d)) : []) {
    for (const precision of ['f32', 'f16'] as const) {
      for (const [BR, BC, RR] of [...PORTABLE_FWD_CANDIDATES, ...PORTABLE_FWD_RR8_TILES]) {
        for (const subgroupMin of [32, 0]) for (const prefetch of [0, 1] as const) {
          const tile = portableTile('fwd', [BR, BC, undefined, RR], D, precision, LIMIT, 256, subgroupMin);
          if (typeof tile === 'string') continue;
          const plan = { ...tile, prefetch };
          const values = attentionValues(D, plan, { precision, out: precision, grad: precision }, true, portableValues('fwd', D, plan));
          await check(`portable forward D=${D} ${precision} ${BR}x${BC}x${plan.chunk}x${RR} ${plan.reduce} prefetch ${prefetch}`,
            attentionSource(SHADERS.flashFwd[plan.reduce!], values, plan.reduce === 'subgroup' ? ['subgroups'] : []));
        }
      }
    }
  }
  return report;
}
