/**
 * FlashAttention backward kernel module: preprocess (Δ), dK/dV and dQ pipelines sharing one
 * explicit bind-group layout, encoded as three passes. Knows nothing of ranks.
 */
import { FlashDevice } from '../gpu/device.js';
import { AttentionShape, ResolvedOptions, numel } from '../shape.js';
import { SHADERS } from './shaders.js';
import { passWrites } from '../gpu/timer.js';
import {
  KernelTypes, TilePlan, attentionParams, attentionSource, buildPipeline, cachedKernel, checkBinding, elemBytes, planTiles,
} from './common.js';

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

const READ = [1, 2, 3, 4, 5, 6];
const WRITE = [7, 8, 9, 10];

export class FlashBackward {
  private constructor(
    readonly dev: FlashDevice,
    readonly D: number,
    readonly types: KernelTypes,
    readonly plan: TilePlan,
    private layout: GPUBindGroupLayout,
    private pre: GPUComputePipeline,
    private kv: GPUComputePipeline,
    private q: GPUComputePipeline,
  ) {}

  static async create(dev: FlashDevice, D: number, types: KernelTypes): Promise<FlashBackward> {
    const plan = planTiles('bwd', D, types.precision, dev.device.limits.maxComputeWorkgroupStorageSize);
    const key = `bwd:${D}:${types.precision}:${types.out}:${types.grad}:${plan.BR}x${plan.BC}`;
    return cachedKernel(dev, key, async () => {
      const device = dev.device;
      const layout = device.createBindGroupLayout({
        label: 'FlashBackward.layout',
        entries: [
          { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } },
          ...READ.map((binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' as const } })),
          ...WRITE.map((binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' as const } })),
        ],
      });
      const pl = device.createPipelineLayout({ label: 'FlashBackward.pipelineLayout', bindGroupLayouts: [layout] });
      const label = `FlashBackward[D=${D},${types.precision},Br=${plan.BR},Bc=${plan.BC}]`;
      const code = attentionSource(SHADERS.flashBwd, D, plan, types, !dev.isCPU);
      const [pre, kv, q] = await Promise.all(
        (['preprocess', 'dkdv', 'dq_main'] as const).map((ep) => buildPipeline(dev, `${label}.${ep}`, code, ep, pl)),
      );
      return new FlashBackward(dev, D, types, plan, layout, pre, kv, q);
    });
  }

  encode(encoder: GPUCommandEncoder, b: BackwardBuffers, s: AttentionShape, o: ResolvedOptions, temps: GPUBuffer[], eo: BackwardEncodeOptions = {}): void {
    const st = elemBytes(this.types.precision);
    checkBinding(this.dev, 'Q/dO', numel(s, 'q') * Math.max(st, elemBytes(this.types.out), elemBytes(this.types.grad)));
    checkBinding(this.dev, 'K/V/dK/dV', numel(s, 'kv') * Math.max(st, elemBytes(this.types.grad)));
    const params = attentionParams(this.dev, s, o, !!eo.accumulate);
    temps.push(params);
    const bufs = [params, b.q, b.k, b.v, b.o, b.dout, b.lse, b.delta, b.dq, b.dk, b.dv];
    const bind = this.dev.device.createBindGroup({
      label: 'FlashBackward.bind',
      layout: this.layout,
      entries: bufs.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const { BR, BC, WG } = this.plan;
    const passes: [GPUComputePipeline, [number, number, number], string][] = [];
    if (!eo.skipPreprocess) passes.push([this.pre, [Math.ceil(s.Nq / WG), s.Hq, s.B], 'preprocess']);
    if (eo.dkdv !== false) passes.push([this.kv, [Math.ceil(s.Nk / BC), s.Hkv, s.B], 'dkdv']);
    if (eo.dq !== false) passes.push([this.q, [Math.ceil(s.Nq / BR), s.Hq, s.B], 'dq']);
    passes.forEach(([pipeline, grid, name], i) => {
      const timestampWrites = passWrites(eo.timestampWrites, i, passes.length);
      const pass = encoder.beginComputePass({ label: `FlashBackward.${name}`, timestampWrites });
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bind);
      pass.dispatchWorkgroups(...grid);
      pass.end();
    });
  }
}
