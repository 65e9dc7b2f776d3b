/**
 * FlashAttention backward kernel module: preprocess (Δ), dK/dV and dQ pipelines, encoded as up to
 * three passes; the tensor-core path runs dK/dV and dQ in one dispatch where both are asked (unless
 * a tuning pins two passes: FLASHRING_SGMM_BWD_FUSE=0). dK/dV and dQ share one bind-group layout
 * (BACKWARD_BINDINGS; the preprocess has its own, PREPROCESS_BINDINGS: O is bound only there, which
 * keeps the others at 10 storage buffers, the limit some adapters set).
 * Knows nothing of ranks.
 */
import { FlashDevice } from '../gpu/device.js';
import { AttentionShape, ResolvedOptions, numel } from '../shape.js';
import { SHADERS } from './shaders.js';
import { passWrites } from '../gpu/timer.js';
import { checkBinding } from '../gpu/buffers.js';
import { KernelTypes, elemBytes } from './precision.js';
import { TilePlan, portableValues } from './tiles.js';
import { KernelPath, PathRequest, buildPipeline, buildSgmmPipelines, cachedKernel, grid2D, kernelKey } from './pipeline.js';
import { AttentionKernel, KernelInfo, chooseKernel } from './kernel.js';
import { ATTENTION_HEADER_BINDINGS, attentionHeader } from './params.js';
import { bindGroup, bindingTable, pipelineLayout } from './bindings.js';
import { attentionSource, attentionValues } from './source.js';
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

export class FlashBackward extends AttentionKernel {
  /**
   * `info.plan`: the tiles of the dK/dV and dQ kernels. `fused`: both in one dispatch (the
   * tensor-core shader's dkdv_dq), used where both are asked; null on the portable path, where the
   * device's tuning pins two passes (sgmmFuseBackward 0: part of the cache key, so a device and a
   * re-tuned view of it do not share the choice).
   */
  private constructor(
    info: KernelInfo, private pre: GPUComputePipeline, private kv: GPUComputePipeline, private q: GPUComputePipeline, private fused: GPUComputePipeline | null,
  ) {
    super(info);
  }

  /** The subgroup-matrix dK/dV and dQ kernels for f16 where they can run, else the portable ones (chooseKernel). */
  static create(dev: FlashDevice, D: number, types: KernelTypes, path: PathRequest = 'auto'): Promise<FlashBackward> {
    return chooseKernel('bwd', dev, D, types, path, (plan, kp) => FlashBackward.build(dev, D, types, plan, kp));
  }

  private static build(dev: FlashDevice, D: number, types: KernelTypes, plan: TilePlan, path: KernelPath): Promise<FlashBackward> {
    const scalar = path === 'scalar';
    const values = attentionValues(D, plan, types, scalar ? !dev.isCPU : true, scalar ? portableValues('bwd', D, plan) : {});
    // The preprocess's values follow from D, the types and the device: the key need not name them.
    const fuse = !scalar && dev.tuning.sgmmFuseBackward !== 0;
    return cachedKernel(dev, kernelKey(`bwd-${path}${fuse ? '-fused' : ''}`, values), async () => {
      const tiles = plan.streamRows ? `resident ${plan.BR},streamed ${plan.streamRows},chunk ${plan.chunk}` : `Br=${plan.BR},Bc=${plan.BC}`;
      const label = `FlashBackward[D=${D},${types.precision},${path},${tiles},WG=${plan.WG}]`;
      const preCode = attentionSource(SHADERS.flashBwdPre, attentionValues(D, PRE_PLAN, types, !dev.isCPU), PREPROCESS_BINDINGS);
      const pre = await buildPipeline(dev, `${label}.preprocess`, preCode, 'preprocess', pipelineLayout(dev, PREPROCESS_BINDINGS));
      const pl = pipelineLayout(dev, BACKWARD_BINDINGS);
      if (scalar) {
        const code = attentionSource(SHADERS.flashBwd, values, BACKWARD_BINDINGS);
        const [kv, q] = await Promise.all(['dkdv', 'dq_main'].map((ep) => buildPipeline(dev, `${label}.${ep}`, code, ep, pl)));
        return new FlashBackward({ dev, D, types, plan, path }, pre, kv, q, null);
      }
      const src = (extra: string[]) => attentionSource(SHADERS.flashBwdSgmm, values, BACKWARD_BINDINGS, extra);
      // A driver that cannot build the fused pipeline fails the build like any other (surfaced: 'auto'
      // falls back with the reason); FLASHRING_SGMM_BWD_FUSE=0 builds the two kernels alone.
      const [kv, q, fused] = await buildSgmmPipelines(dev, label, src, ['dkdv', 'dq_main', ...(fuse ? ['dkdv_dq'] : [])], pl);
      return new FlashBackward({ dev, D, types, plan, path }, pre, kv, q, fused ?? null);
    });
  }

  encode(encoder: GPUCommandEncoder, b: BackwardBuffers, s: AttentionShape, o: ResolvedOptions, temps: GPUBuffer[], eo: BackwardEncodeOptions = {}): void {
    const st = elemBytes(this.types.precision);
    checkBinding(this.dev, 'Q/dO', numel(s, 'q') * Math.max(st, elemBytes(this.types.out), elemBytes(this.types.grad)));
    checkBinding(this.dev, 'K/V/dK/dV', numel(s, 'kv') * Math.max(st, elemBytes(this.types.grad)));
    const { BR, BC } = this.plan;
    const kvRows = this.plan.rowsPerGroup ?? BC;
    const qRows = this.plan.rowsPerGroup ?? BR;
    const blocks = activeBlocks(s, o, !!eo.accumulate, qRows, kvRows);
    const blks = { k: blocks.k[1] - blocks.k[0], q: blocks.q[1] - blocks.q[0] };
    const fuse = this.fused && eo.dkdv !== false && eo.dq !== false;
    const header = attentionHeader(this.dev, s, o, temps, !!eo.accumulate, { blk0: { q: blocks.q[0], k: blocks.k[0] }, blks: fuse ? blks : undefined });
    const buffers = { ...b, ...header };
    const bind = bindGroup(this.dev, BACKWARD_BINDINGS, buffers);
    const preBind = eo.skipPreprocess ? null : bindGroup(this.dev, PREPROCESS_BINDINGS, buffers);
    const passes: [GPUComputePipeline, [number, number, number], string][] = [];
    if (!eo.skipPreprocess) passes.push([this.pre, [Math.ceil(s.Nq / PRE_PLAN.WG), s.Hq, s.B], 'preprocess']);
    if (fuse) {
      // dkdv_dq (flash_bwd_sgmm.wgsl): both grids' workgroups numbered over x and y.
      const total = (blks.k * s.Hkv + blks.q * s.Hq) * s.B;
      passes.push([this.fused!, [...grid2D(total, this.dev.device.limits.maxComputeWorkgroupsPerDimension), 1], 'dkdv+dq']);
    } else {
      if (eo.dkdv !== false) passes.push([this.kv, [blks.k, s.Hkv, s.B], 'dkdv']);
      if (eo.dq !== false) passes.push([this.q, [blks.q, s.Hq, s.B], 'dq']);
    }
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
