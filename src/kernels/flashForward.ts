/**
 * FlashAttention forward kernel module: builds the pipeline for (D, precision, output type) and
 * encodes one dispatch over GPU buffers. Knows nothing of ranks.
 */
import { FlashDevice } from '../gpu/device.js';
import { AttentionShape, ResolvedOptions, numel } from '../shape.js';
import { SHADERS } from './shaders.js';
import { checkBinding } from '../gpu/buffers.js';
import { KernelTypes, elemBytes } from './precision.js';
import { TilePlan, describePlan, portableValues } from './tiles.js';
import { GridDim, PathRequest, buildPipeline, buildSgmmPipelines, cachedKernel, kernelKey } from './pipeline.js';
import { AttentionKernel, KernelInfo, chooseKernel, passGrid } from './kernel.js';
import { ATTENTION_HEADER_BINDINGS, attentionHeader } from './params.js';
import { bindGroup, bindingTable, pipelineLayout } from './bindings.js';
import { activeBlocks } from './reach.js';
import { attentionSource, attentionValues } from './source.js';

export interface ForwardBuffers {
  q: GPUBuffer;
  k: GPUBuffer;
  v: GPUBuffer;
  o: GPUBuffer;
  lse: GPUBuffer;
}

/** The forward's bindings (shaders/flash_fwd.wgsl, flash_fwd_sgmm.wgsl, and the header's). */
export const FORWARD_BINDINGS = bindingTable('FlashForward', [
  ...ATTENTION_HEADER_BINDINGS,
  [1, 'q', 'read', 'array<IW>'], [2, 'k', 'read', 'array<IW>'], [3, 'v', 'read', 'array<IW>'], [4, 'o', 'read_write', 'array<OW>'],
  [5, 'lse', 'read_write', 'array<f32>'],
]);

/** How a forward kernel is built beyond its types and path. */
export interface ForwardKernelOptions {
  /** The portable kernel's exact running row max instead of the stale one (src/kernels/stale.ts). Default false. */
  exactMax?: boolean;
}

export class FlashForward extends AttentionKernel {
  private constructor(info: KernelInfo, private pipeline: GPUComputePipeline) {
    super(info);
  }

  /**
   * The subgroup-matrix kernel for f16 where it can run, else the portable one (chooseKernel).
   * `exactMax`: the portable kernel keeps the exact running row max (STALE = 0), for V whose
   * Nk · e^8 · max|V| could pass f32's largest (needsExactMax, src/kernels/stale.ts); default
   * false, the stale max. The host entries decide it from V; callers on GPU buffers decide it here.
   */
  static create(dev: FlashDevice, D: number, types: KernelTypes, path: PathRequest = 'auto', opts: ForwardKernelOptions = {}): Promise<FlashForward> {
    const exactMax = !!opts.exactMax;
    return chooseKernel('fwd', dev, D, types, path, (plan, kp) => (kp === 'scalar' ? FlashForward.createScalar(dev, D, types, plan, exactMax) : FlashForward.createSgmm(dev, D, types, plan)));
  }

  /** The portable kernel; its O type is also its GT (the forward writes no gradients). */
  private static createScalar(dev: FlashDevice, D: number, types: KernelTypes, plan: TilePlan, exactMax: boolean): Promise<FlashForward> {
    const reduce = plan.reduce ?? 'workgroup';
    const values = attentionValues(D, plan, { ...types, grad: types.out }, !dev.isCPU, portableValues('fwd', D, plan, types.precision, exactMax));
    return cachedKernel(dev, kernelKey(`fwd-scalar-${reduce}`, values), async () => {
      const label = `FlashForward[D=${D},${types.precision}->${types.out},${describePlan(plan)}]`;
      const code = attentionSource(SHADERS.flashFwd[reduce], values, FORWARD_BINDINGS, reduce === 'subgroup' ? ['subgroups'] : []);
      const pipeline = await buildPipeline(dev, label, code, 'main', pipelineLayout(dev, FORWARD_BINDINGS));
      return new FlashForward({ dev, D, types, plan, path: 'scalar' }, pipeline);
    });
  }

  private static createSgmm(dev: FlashDevice, D: number, types: KernelTypes, plan: TilePlan): Promise<FlashForward> {
    const values = attentionValues(D, plan, { ...types, grad: types.out }, true);
    return cachedKernel(dev, kernelKey('fwd-sgmm', values), async () => {
      const label = `FlashForwardSgmm[D=${D},f16->${types.out},Br=${plan.BR},Bc=${plan.BC},WG=${plan.WG}]`;
      const [pipeline] = await buildSgmmPipelines(dev, label, (extra) => attentionSource(SHADERS.flashFwdSgmm, values, FORWARD_BINDINGS, extra), ['main'], pipelineLayout(dev, FORWARD_BINDINGS));
      return new FlashForward({ dev, D, types, plan, path: 'subgroup-matrix' }, pipeline);
    });
  }

  /** Row blocks of Br query rows, query heads, batch. */
  gridDims(s: AttentionShape): GridDim[] {
    return passGrid(s, { count: Math.ceil(s.Nq / this.plan.BR), what: `blocks of ${this.plan.BR} query rows (Nq = ${s.Nq})` }, s.Hq);
  }

  /**
   * Checks the binding and grid limits for a shape, then encodes the dispatch. `temps` receives buffers to
   * free after submit. `ringStep` (ring steps, whose O and LSE start at 0 and −inf, or hold
   * earlier steps' rows): only the row blocks some visible pair reaches are run, rows no key
   * reaches are left as they are, and a row whose visible scores are all −inf is written as a
   * partial without mass (LSE = +inf, common.wgsl no_mass_lse), which the ring's last step turns
   * into NaN unless another step gave the row mass (MergeKernel.encodeFinalize).
   * `merge` (ring steps after a Q block's first): the rows are merged exactly into the (O, LSE)
   * the buffers hold (common.wgsl lse_merge), not written over them: f32 O, and on tensor cores a
   * kernel created with types.merge.
   * Returns the query rows written, [from, to).
   */
  encode(
    encoder: GPUCommandEncoder, b: ForwardBuffers, s: AttentionShape, o: ResolvedOptions, temps: GPUBuffer[],
    timestampWrites?: GPUComputePassTimestampWrites, ringStep = false, merge = false,
  ): { rows: [number, number] } {
    // The portable kernel merges in registers, whatever types.merge; the tensor-core one needs the
    // workgroup memory that types.merge plans for its row weights.
    if (merge && (!ringStep || this.types.out !== 'f32' || (this.path === 'subgroup-matrix' && !this.plan.merge)))
      throw new Error(`FlashForward: merging into O is for ring steps, and needs f32 O (${this.types.out} here) and, on tensor cores, a kernel created with types.merge (an internal error)`);
    this.checkGrid(s);
    const st = elemBytes(this.types.precision);
    checkBinding(this.dev, 'Q', numel(s, 'q') * st);
    checkBinding(this.dev, 'K/V', numel(s, 'kv') * st);
    checkBinding(this.dev, 'O', numel(s, 'q') * elemBytes(this.types.out));
    const [q0, q1] = activeBlocks(s, o, ringStep, this.plan.BR, this.plan.BR).q;
    const bind = bindGroup(this.dev, FORWARD_BINDINGS, { ...b, ...attentionHeader(this.dev, s, o, temps, { accumulate: merge, partial: ringStep, blk0: { q: q0, k: 0 } }) });
    const pass = encoder.beginComputePass({ label: 'FlashForward.pass', timestampWrites });
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(q1 - q0, s.Hq, s.B);
    pass.end();
    return { rows: [q0 * this.plan.BR, Math.min(q1 * this.plan.BR, s.Nq)] };
  }
}
