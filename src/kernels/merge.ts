/**
 * Merge kernel module: folds a partial (O, LSE) over one key chunk into an accumulated one,
 * exactly, in f32 (see shaders/merge.wgsl). Knows nothing of ranks.
 */
import { FlashDevice } from '../gpu/device.js';
import { SHADERS } from './shaders.js';
import { specialize } from './specialize.js';
import { buildPipeline, cachedKernel, grid2D, upload } from './common.js';

const WG = 64;

export class MergeKernel {
  private constructor(readonly dev: FlashDevice, readonly D: number, private pipeline: GPUComputePipeline) {}

  static create(dev: FlashDevice, D: number): Promise<MergeKernel> {
    return cachedKernel(dev, `merge:${D}`, async () => {
      const pipeline = await buildPipeline(dev, `Merge[D=${D}]`, specialize(SHADERS.merge, { D, WG }));
      return new MergeKernel(dev, D, pipeline);
    });
  }

  /** acc ← merge(acc, new) over `rows` rows of D values. */
  encode(
    encoder: GPUCommandEncoder, acc: { o: GPUBuffer; lse: GPUBuffer }, part: { o: GPUBuffer; lse: GPUBuffer },
    rows: number, temps: GPUBuffer[], timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const params = upload(this.dev, new Uint32Array([rows, 0, 0, 0]), 'Merge.params', GPUBufferUsage.UNIFORM);
    temps.push(params);
    const bind = this.dev.device.createBindGroup({
      label: 'Merge.bind',
      layout: this.pipeline.getBindGroupLayout(0),
      entries: [params, acc.o, acc.lse, part.o, part.lse].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const pass = encoder.beginComputePass({ label: 'Merge.pass', timestampWrites });
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(...grid2D(Math.ceil(rows / WG), this.dev.device.limits.maxComputeWorkgroupsPerDimension));
    pass.end();
  }
}
