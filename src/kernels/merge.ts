/**
 * Merge kernel module: folds a partial (O, LSE) over one key chunk into an accumulated one,
 * exactly, in f32 (see shaders/merge.wgsl). Knows nothing of ranks.
 */
import { FlashDevice } from '../gpu/device.js';
import { SHADERS } from './shaders.js';
import { specialize } from './specialize.js';
import { upload } from '../gpu/buffers.js';
import { buildPipeline, cachedKernel, grid2D, kernelKey } from './pipeline.js';

/** Rows per workgroup: as many whole rows of D/4 invocations as fit in 256 (D ≤ 256, D % 8 = 0). */
const rowsPerGroup = (D: number) => Math.max(1, Math.floor(256 / (D / 4)));

export class MergeKernel {
  private constructor(
    readonly dev: FlashDevice, readonly D: number, private RPW: number, private pipeline: GPUComputePipeline, private addPipeline: GPUComputePipeline,
  ) {}

  static create(dev: FlashDevice, D: number): Promise<MergeKernel> {
    const values = { D, RPW: rowsPerGroup(D) };
    return cachedKernel(dev, kernelKey('merge', values), async () => {
      const code = specialize(SHADERS.merge, values);
      const [pipeline, add] = await Promise.all([buildPipeline(dev, `Merge[D=${D}]`, code), buildPipeline(dev, `Merge[D=${D}].add`, code, 'add')]);
      return new MergeKernel(dev, D, values.RPW, pipeline, add);
    });
  }

  /** acc += part over `rows` rows of D f32 values (ring dK/dV partial sums). */
  encodeAdd(encoder: GPUCommandEncoder, acc: GPUBuffer, part: GPUBuffer, rows: number, temps: GPUBuffer[]): void {
    const params = upload(this.dev, new Uint32Array([rows, rows, 0, Math.max(1, rows)]), 'Merge.add.params', GPUBufferUsage.UNIFORM);
    temps.push(params);
    const bind = this.dev.device.createBindGroup({
      label: 'Merge.add.bind',
      layout: this.addPipeline.getBindGroupLayout(0),
      entries: [[0, params], [1, acc], [3, part]].map(([binding, buffer]) => ({ binding: binding as number, resource: { buffer: buffer as GPUBuffer } })),
    });
    const pass = encoder.beginComputePass({ label: 'Merge.add.pass' });
    pass.setPipeline(this.addPipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(...grid2D(Math.ceil(rows / this.RPW), this.dev.device.limits.maxComputeWorkgroupsPerDimension));
    pass.end();
  }

  /**
   * acc ← merge(acc, new) over `rows` rows of D values; with `range`, the rows are runs of
   * `range.n` (a head's) and only rows [from, to) of each run are merged (the rows a ring step's
   * forward reached; the others keep acc).
   */
  encode(
    encoder: GPUCommandEncoder, acc: { o: GPUBuffer; lse: GPUBuffer }, part: { o: GPUBuffer; lse: GPUBuffer },
    rows: number, temps: GPUBuffer[], timestampWrites?: GPUComputePassTimestampWrites, range?: { n: number; from: number; to: number },
  ): void {
    const r = range ?? { n: rows, from: 0, to: rows };
    if (!(r.n > 0 && rows % r.n === 0 && 0 <= r.from && r.from < r.to && r.to <= r.n))
      throw new Error(`Merge: rows ${r.from}…${r.to} of runs of ${r.n} do not fit ${rows} rows (an internal error)`);
    const items = (rows / r.n) * (r.to - r.from);
    const params = upload(this.dev, new Uint32Array([items, r.n, r.from, r.to - r.from]), 'Merge.params', GPUBufferUsage.UNIFORM);
    temps.push(params);
    const bind = this.dev.device.createBindGroup({
      label: 'Merge.bind',
      layout: this.pipeline.getBindGroupLayout(0),
      entries: [params, acc.o, acc.lse, part.o, part.lse].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const pass = encoder.beginComputePass({ label: 'Merge.pass', timestampWrites });
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(...grid2D(Math.ceil(items / this.RPW), this.dev.device.limits.maxComputeWorkgroupsPerDimension));
    pass.end();
  }
}
