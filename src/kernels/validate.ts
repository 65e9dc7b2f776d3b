/**
 * Compiles every tensor-core (subgroup-matrix) specialization the planner can pick, for head
 * dims 16…256 and f16/f32 outputs, on Dawn's null backend, which offers subgroup matrices and
 * validates WGSL fully without a GPU; and the portable forward's candidate tiles (both row
 * reductions, without the prefetch, with it and with it of K and V only) in the unrolled form GPUs run, which lavapipe's
 * tests never compile (CPU adapters keep loops rolled). Returns the errors (none when all
 * compile). Run in its own process by `node bin/validate-shaders.mjs` (Dawn aborted when run
 * inside a Vitest worker); validateModules checks any other list of modules the same way (the
 * bench's GEMM probes: bench/ceiling/validate.mjs).
 */
import { nodeGPU } from '../gpu/node.js';
import { acquireDevices } from '../gpu/device.js';
import { attentionSource, attentionValues } from './source.js';
import { FORWARD_BINDINGS } from './flashForward.js';
import { hasDirectEpilogue, sgmmBackwardSource, spillValues } from './flashBackward.js';
import { SGMM_FWD_PIPES, dSplitWhole, sgmmCandidates, sgmmFwdCanTurn, sgmmTilePlan } from './sgmmTiles.js';
import { SHADERS } from './shaders.js';
import { PORTABLE_FWD_CANDIDATES, portableTile, portableValues, type TilePlan } from './tiles.js';
import { PORTABLE_PRODUCTS } from './tuning.js';

/** maxComputeWorkgroupStorageSize of the H200 (and of most desktop GPUs). */
const LIMIT = 49152;
const EXT = ['chromium_experimental_subgroup_matrix', 'subgroups'];

export interface ValidationReport {
  checked: string[];
  errors: string[];
}

/** A module to compile: what it is (for the report) and its source. */
export type NamedModule = [what: string, code: string];

/**
 * Compiles each module on Dawn's null backend, `mutate`d first, one device per module (a second
 * module on the same null-backend device aborted Dawn 0.6.2, std::system_error, for some shaders).
 */
export async function validateModules(modules: Iterable<NamedModule>, mutate: (code: string) => string = (c) => c): Promise<ValidationReport> {
  const gpu = await nodeGPU({ extraFlags: ['backend=null'] });
  const report: ValidationReport = { checked: [], errors: [] };
  for (const [what, code] of modules) {
    const [dev] = await acquireDevices(gpu, 1);
    try {
      if (!dev.hasSubgroupMatrix) throw new Error('the null backend does not offer chromium-experimental-subgroup-matrix');
      const info = await dev.device.createShaderModule({ code: mutate(code) }).getCompilationInfo();
      report.checked.push(what);
      for (const m of info.messages) if (m.type === 'error') report.errors.push(`${what}: ${m.lineNum}:${m.linePos} ${m.message}`);
    } finally {
      dev.destroy();
    }
  }
  return report;
}

/**
 * Every tensor-core specialization the planner can pick at these head dims (the forward in each order of its
 * steps); also read by test/sgmm-offsets.test.ts.
 */
export function* sgmmModules(heads: number[]): Generator<NamedModule> {
  for (const D of heads) for (const out of ['f16', 'f32'] as const) {
    const t = { precision: 'f16' as const, out, grad: out };
    for (const [kind, shader] of [['fwd', SHADERS.flashFwdSgmm], ['bwd', SHADERS.flashBwdSgmm]] as const) {
      for (const [SG, T, RB, DS = 1] of sgmmCandidates(kind, D)) {
        for (const pipe of kind === 'fwd' ? SGMM_FWD_PIPES : [0] as const) for (const merge of kind === 'fwd' && out === 'f32' ? [false, true] : [false]) {
          // The bytes checked are the most a variant takes: the backward with two spill blocks, the forward at once.
          const plan = sgmmTilePlan(kind, SG, T, D, RB, { pipe, DS, merge, turnPin: 0, dqSpill: 'two', kvSpill: 'two' });
          if (plan.workgroupBytes > LIMIT || !dSplitWhole(D, T, DS)) continue;
          // The forward with its row blocks taking turns and at once, where they can.
          if (kind === 'fwd') for (const turns of sgmmFwdCanTurn(RB, DS, T) ? [true, false] : [false])
            yield [`forward D=${D} SG=${SG} T=${T} RB=${RB}${DS > 1 ? ` DS=${DS}` : ''} PIPE=${pipe} out=${out}${merge ? ' merge' : ''}${turns ? ' turns' : ''}`, attentionSource(shader, attentionValues(D, { ...plan, turns }, t, true), FORWARD_BINDINGS, EXT)];
          // The backward with the epilogues its types build (staged always, direct with f32 gradients), each kernel with one spill block or two.
          else for (const direct of hasDirectEpilogue(t) ? [true, false] : [false]) for (const dq of [true, false]) for (const kv of [true, false])
            yield [`backward D=${D} SG=${SG} T=${T} out=${out}${direct ? ' direct' : ''} dq=${dq ? 'one' : 'two'} kv=${kv ? 'one' : 'two'}`, sgmmBackwardSource({ ...attentionValues(D, plan, t, true), ...spillValues(dq, kv) }, direct, EXT)];
        }
      }
    }
  }
}

/**
 * The portable forward as a GPU compiles it (unrolled), every candidate tile that fits the H200's
 * limits: subgroups of 32 (subgroup row reduction) or none (workgroup memory), with and without
 * the prefetch (of K and V only too, where Q is staged per tile), f16 storage with f16 and f32 products (f16 words staged as
 * f16 or widened to f32), P~ in Q's array or its own; head dims of one to eight chunks.
 */
function* portableModules(heads: number[]): Generator<NamedModule> {
  for (const D of heads.filter((d) => [16, 64, 128, 256].includes(d))) for (const precision of ['f32', 'f16'] as const) {
    const products = precision === 'f16' ? PORTABLE_PRODUCTS : [undefined];
    for (const [BR, BC] of PORTABLE_FWD_CANDIDATES) for (const subgroupMin of [32, 0]) for (const prefetch of [0, 1, 2] as const) for (const pk of products) {
      // The default plan, P~ in Q's array pinned (the widest chunk that fits so, where Q is staged every tile and P~ has
      // Q's type; a tile may fit only so: f32 64×64 at D = 128) and P~ apart pinned: each distinct plan once.
      const tiles = new Map<string, TilePlan>();
      // With f16 storage and f32 products, also the words widened as staged (forwardWideStage).
      for (const sharedP of [undefined, 1, 0] as const) for (const wide of pk === 'f32' ? [undefined, 1] as const : [undefined]) {
        const t = portableTile('fwd', [BR, BC, undefined], D, precision, LIMIT, 256, subgroupMin, {
          ...(pk ? { portableProducts: pk } : {}), ...(sharedP === undefined ? {} : { forwardSharedP: sharedP }), ...(wide ? { forwardWideStage: wide } : {}),
        });
        if (!('why' in t)) tiles.set(`${t.chunk} ${t.sharedP === true} ${t.wideStage === true}`, t);
      }
      for (const tile of tiles.values()) {
        if (prefetch === 2 && tile.chunk === D) continue;   // Q staged once: the same kernel as prefetch 1
        const plan = { ...tile, prefetch };
        const values = attentionValues(D, plan, { precision, out: precision, grad: precision }, true, portableValues('fwd', D, plan, precision));
        yield [`portable forward D=${D} ${precision} ${BR}x${BC}x${plan.chunk} ${plan.reduce} prefetch ${prefetch}${pk ? ` products ${pk}` : ''}${plan.sharedP ? ' shared P' : ''}${plan.wideStage ? ' widened as staged' : ''}`,
          attentionSource(SHADERS.flashFwd[plan.reduce!], values, FORWARD_BINDINGS, plan.reduce === 'subgroup' ? ['subgroups'] : [])];
      }
    }
  }
}

export async function validateSgmmShaders(
  heads: number[] = [16, 32, 48, 64, 128, 256], mutate: (code: string) => string = (c) => c, portable = true,
): Promise<ValidationReport> {
  return validateModules([...sgmmModules(heads), ...(portable ? portableModules(heads) : [])], mutate);
}
