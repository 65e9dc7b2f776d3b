/**
 * FlashAttention backward kernel module: preprocess (Δ), dK/dV and dQ pipelines, encoded as three
 * passes; dK/dV and dQ share one bind-group layout (BACKWARD_BINDINGS; the preprocess has its
 * own, PREPROCESS_BINDINGS: O is bound only there, which keeps the others at 10 storage buffers,
 * the limit some adapters set).
 * Knows nothing of ranks.
 */
import { FlashDevice } from '../gpu/device.js';
import { AttentionShape, ResolvedOptions, numel } from '../shape.js';
import { SHADERS } from './shaders.js';
import { passWrites } from '../gpu/timer.js';
import { checkBinding } from '../gpu/buffers.js';
import { KernelTypes, elemBytes } from './precision.js';
import { TilePlan, backwardRows, portableValues } from './tiles.js';
import { oneSpill } from './sgmmTiles.js';
import { GridDim, KernelPath, PathRequest, buildPipeline, buildSgmmPipelines, cachedKernel, kernelKey } from './pipeline.js';
import { AttentionKernel, KernelInfo, chooseKernel, passGrid } from './kernel.js';
import { ATTENTION_HEADER_BINDINGS, attentionHeader } from './params.js';
import { bindGroup, bindingTable, pipelineLayout } from './bindings.js';
import { attentionSource, attentionValues } from './source.js';
import { SpecValues } from './specialize.js';
import { activeBlocks } from './reach.js';

export interface BackwardBuffers {
  q: GPUBuffer;
  k: GPUBuffer;
  v: GPUBuffer;
  o: GPUBuffer;
  dout: GPUBuffer;
  lse: GPUBuffer;
  /** Scratch for Δ, B·Hq·Nq f32 (written by the preprocess pass, or given when `skipPreprocess`). */
  delta: GPUBuffer;
  dq: GPUBuffer;
  dk: GPUBuffer;
  dv: GPUBuffer;
}

export interface BackwardEncodeOptions {
  /** Add to dQ/dK/dV instead of overwriting (ring steps). */
  accumulate?: boolean;
  /** Δ is already in `delta` (the ring computes it once per rank). */
  skipPreprocess?: boolean;
  /** Which gradients to compute (default both). */
  dq?: boolean;
  dkdv?: boolean;
  timestampWrites?: GPUComputePassTimestampWrites;
}

/** The dK/dV and dQ kernels' bindings (shaders/flash_bwd_tiles.wgsl, flash_bwd_sgmm.wgsl, and the header's). */
export const BACKWARD_BINDINGS = bindingTable('FlashBackward', [
  ...ATTENTION_HEADER_BINDINGS,
  [1, 'q', 'read', 'array<IW>'], [2, 'k', 'read', 'array<IW>'], [3, 'v', 'read', 'array<IW>'], [5, 'dout', 'read', 'array<IW>'],
  [6, 'lse', 'read', 'array<f32>'], [7, 'delta', 'read_write', 'array<f32>'],
  [8, 'dq', 'read_write', 'array<GW>'], [9, 'dk', 'read_write', 'array<GW>'], [10, 'dv', 'read_write', 'array<GW>'],
]);

/** The preprocess's bindings (shaders/flash_bwd_pre.wgsl, and the header's): O is bound only here. */
export const PREPROCESS_BINDINGS = bindingTable('FlashBackward.preprocess', [
  ...ATTENTION_HEADER_BINDINGS, [4, 'o', 'read', 'array<OW>'], [5, 'dout', 'read', 'array<IW>'], [7, 'delta', 'read_write', 'array<f32>'],
]);

/** The preprocess (Δ) pass: one invocation per row, whatever the dK/dV and dQ kernels' tiles. */
const PRE_PLAN: TilePlan = { BR: 16, BC: 16, WG: 64, workgroupBytes: 0 };

/**
 * The tensor-core backward's source: DIRECT = 1 gives it the direct epilogue (f32 gradients only: the
 * accumulators stored straight to dQ, dK, dV with subgroupMatrixStore, shaders/flash_bwd_sgmm.wgsl),
 * 0 the staged one (through workgroup memory, any gradient type); `values` hold the spills (spillValues).
 */
export function sgmmBackwardSource(values: SpecValues, direct: boolean, extraEnables: string[]): string {
  return attentionSource(SHADERS.flashBwdSgmm, { ...values, DIRECT: direct ? 1 : 0 }, BACKWARD_BINDINGS, extraEnables);
}

/** The tensor-core backward's spills as the shader's values: DQ_ONE or DQ_TWO (dq), KV_ONE or KV_TWO (dkdv; oneSpill). */
export function spillValues(dq: boolean, kv: boolean): SpecValues {
  return { DQ_ONE: dq ? 1 : 0, DQ_TWO: dq ? 0 : 1, KV_ONE: kv ? 1 : 0, KV_TWO: kv ? 0 : 1 };
}

/** Whether the tensor-core backward of these types has a direct epilogue (f32 gradients: the matrix type's). */
export const hasDirectEpilogue = (types: KernelTypes) => types.grad === 'f32';

/**
 * The smallest gradient binding the direct epilogue may be given: one 16-row block of f32 at row stride
 * D. Dawn refuses a binding that a subgroup-matrix access reads or writes when it holds less than one
 * matrix (bench/results/2026-12-03-resident-direct-h200), whatever the shader's own bounds; a call with a
 * smaller dQ, dK or dV takes the staged epilogue.
 */
export const directMinBytes = (D: number) => 16 * D * 4;

/** The dK/dV and dQ pipelines of one epilogue. */
interface BackwardPipes { kv: GPUComputePipeline; q: GPUComputePipeline }

export class FlashBackward extends AttentionKernel {
  /** `info.plan`: the tiles of the dK/dV and dQ kernels; `staged`: the staged epilogue beside a direct one (small buffers). */
  private constructor(info: KernelInfo, private pre: GPUComputePipeline, private main: BackwardPipes, private staged: BackwardPipes | null) {
    super(info);
  }

  /** The subgroup-matrix dK/dV and dQ kernels for f16 where they can run, else the portable ones (chooseKernel). */
  static create(dev: FlashDevice, D: number, types: KernelTypes, path: PathRequest = 'auto'): Promise<FlashBackward> {
    return chooseKernel('bwd', dev, D, types, path, (plan, kp) => FlashBackward.build(dev, D, types, plan, kp));
  }

  private static build(dev: FlashDevice, D: number, types: KernelTypes, plan: TilePlan, path: KernelPath): Promise<FlashBackward> {
    const scalar = path === 'scalar';
    // The tensor-core kernels' spills are values, so that they are in the cache key.
    const values = attentionValues(D, plan, types, scalar ? !dev.isCPU : true, scalar ? portableValues('bwd', D, plan, types.precision) : spillValues(oneSpill('dq', D, dev.tuning.sgmmDqSpill), oneSpill('dkdv', D, dev.tuning.sgmmKvSpill)));
    const direct = !scalar && hasDirectEpilogue(types) && dev.tuning.sgmmEpilogue !== 'staged';
    // The preprocess's values follow from D, the types and the device: the key need not name them.
    return cachedKernel(dev, kernelKey(`bwd-${path}${direct ? '-direct' : ''}`, values), async () => {
      const tiles = plan.streamRows ? `resident ${plan.BR},streamed ${plan.streamRows},chunk ${plan.chunk}` : `Br=${plan.BR},Bc=${plan.BC}`;
      const label = `FlashBackward[D=${D},${types.precision},${path},${tiles},WG=${plan.WG}]`;
      const preCode = attentionSource(SHADERS.flashBwdPre, attentionValues(D, PRE_PLAN, types, !dev.isCPU), PREPROCESS_BINDINGS);
      const pre = await buildPipeline(dev, `${label}.preprocess`, preCode, 'preprocess', pipelineLayout(dev, PREPROCESS_BINDINGS));
      const pl = pipelineLayout(dev, BACKWARD_BINDINGS);
      const entryPoints = ['dkdv', 'dq_main'];
      const buildAll = (code: string) => Promise.all(entryPoints.map((ep) => buildPipeline(dev, `${label}.${ep}`, code, ep, pl)));
      const sgmm = (direct: boolean, name: string) =>
        buildSgmmPipelines(dev, name, (extra) => sgmmBackwardSource(values, direct, extra), entryPoints, pl).then(([kv, q]) => ({ kv, q }));
      const main = scalar
        ? await buildAll(attentionSource(SHADERS.flashBwd, values, BACKWARD_BINDINGS)).then(([kv, q]) => ({ kv, q }))
        : await sgmm(direct, label);
      return new FlashBackward({ dev, D, types, plan, path }, pre, main, direct ? await sgmm(false, `${label}.staged`) : null);
    });
  }

  /** The most row blocks of its passes (Δ's query rows, dK/dV's keys, dQ's query rows), query heads, batch. */
  gridDims(s: AttentionShape): GridDim[] {
    const own = backwardRows(this.plan);
    const blocks = [[s.Nq, PRE_PLAN.WG, 'query rows', 'Nq'], [s.Nk, own.kv, 'keys', 'Nk'], [s.Nq, own.q, 'query rows', 'Nq']] as const;
    const most = blocks.map(([n, r, rows, N]) => ({ count: Math.ceil(n / r), what: `blocks of ${r} ${rows} (${N} = ${n})` })).reduce((a, b) => (b.count > a.count ? b : a));
    return passGrid(s, most, s.Hq);
  }

  encode(encoder: GPUCommandEncoder, b: BackwardBuffers, s: AttentionShape, o: ResolvedOptions, temps: GPUBuffer[], eo: BackwardEncodeOptions = {}): void {
    this.checkGrid(s);
    const st = elemBytes(this.types.precision);
    checkBinding(this.dev, 'Q/dO', numel(s, 'q') * Math.max(st, elemBytes(this.types.out), elemBytes(this.types.grad)));
    checkBinding(this.dev, 'K/V/dK/dV', numel(s, 'kv') * Math.max(st, elemBytes(this.types.grad)));
    const own = backwardRows(this.plan);
    const blocks = activeBlocks(s, o, !!eo.accumulate, own.q, own.kv);
    const buffers = { ...b, ...attentionHeader(this.dev, s, o, temps, { accumulate: !!eo.accumulate, blk0: { q: blocks.q[0], k: blocks.k[0] } }) };
    const bind = bindGroup(this.dev, BACKWARD_BINDINGS, buffers);
    const preBind = eo.skipPreprocess ? null : bindGroup(this.dev, PREPROCESS_BINDINGS, buffers);
    const passes: [GPUComputePipeline, [number, number, number], string][] = [];
    if (!eo.skipPreprocess) passes.push([this.pre, [Math.ceil(s.Nq / PRE_PLAN.WG), s.Hq, s.B], 'preprocess']);
    // The direct epilogue where every gradient binding holds a matrix; else the staged one.
    const pipes = this.staged && [b.dq, b.dk, b.dv].some((x) => x.size < directMinBytes(s.D)) ? this.staged : this.main;
    if (eo.dkdv !== false) passes.push([pipes.kv, [blocks.k[1] - blocks.k[0], s.Hkv, s.B], 'dkdv']);
    if (eo.dq !== false) passes.push([pipes.q, [blocks.q[1] - blocks.q[0], s.Hq, s.B], 'dq']);
    passes.forEach(([pipeline, grid, name], i) => {
      const timestampWrites = passWrites(eo.timestampWrites, i, passes.length);
      const pass = encoder.beginComputePass({ label: `FlashBackward.${name}`, timestampWrites });
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, name === 'preprocess' ? preBind! : bind);
      pass.dispatchWorkgroups(...grid);
      pass.end();
    });
  }
}
