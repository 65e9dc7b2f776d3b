/**
 * The add of partial dK/dV sums (shaders/merge.wgsl), in f32: all_gather's reduce-scatter. (The
 * forward's exact merge of partial (O, LSE) results runs in the forward's epilogue.) Knows nothing
 * of ranks.
 */
import { FlashDevice } from '../gpu/device.js';
import { SHADERS } from './shaders.js';
import { specialize } from './specialize.js';
import { upload } from '../gpu/buffers.js';
import { buildPipeline, cachedKernel, grid2D, kernelKey } from './pipeline.js';
import { UniformField, packUniform, wgslStruct } from './params.js';
import { bindGroup, bindingTable, pipelineLayout, wgslBindings } from './bindings.js';

/** Rows per workgroup: as many whole rows of D/4 invocations as fit in 256 (D ≤ 256, D % 8 = 0). */
const rowsPerGroup = (D: number) => Math.max(1, Math.floor(256 / (D / 4)));

/** What one add dispatch covers: the fields of its uniform block. */
interface AddRange {
  rows: number;
}

/** `MergeParams` (M in shaders/merge.wgsl), in order: generates the WGSL struct and packs it. */
export const MERGE_PARAMS: readonly UniformField<AddRange>[] = [
  { name: 'rows', type: 'u32', value: (x) => x.rows, doc: 'rows of D values added' },
];

/** The add's bindings (shaders/merge.wgsl). */
export const MERGE_ADD_BINDINGS = bindingTable('Merge.add', [
  [0, 'M', 'uniform', 'MergeParams'], [1, 'o_acc', 'read_write', 'array<vec4<f32>>'], [2, 'o_new', 'read', 'array<vec4<f32>>'],
]);

export class MergeKernel {
  private constructor(readonly dev: FlashDevice, readonly D: number, private RPW: number, private addPipeline: GPUComputePipeline) {}

  static create(dev: FlashDevice, D: number): Promise<MergeKernel> {
    const values = { D, RPW: rowsPerGroup(D) };
    return cachedKernel(dev, kernelKey('merge', values), async () => {
      const code = specialize(SHADERS.merge, { ...values, MERGE_PARAMS: wgslStruct('MergeParams', MERGE_PARAMS), BINDINGS: wgslBindings(MERGE_ADD_BINDINGS) });
      const add = await buildPipeline(dev, `Merge[D=${D}].add`, code, 'add', pipelineLayout(dev, MERGE_ADD_BINDINGS));
      return new MergeKernel(dev, D, values.RPW, add);
    });
  }

  /** acc += part over `rows` rows of D f32 values (all_gather's dK/dV pieces). */
  encodeAdd(encoder: GPUCommandEncoder, acc: GPUBuffer, part: GPUBuffer, rows: number, temps: GPUBuffer[], timestampWrites?: GPUComputePassTimestampWrites): void {
    const M = upload(this.dev, new Uint8Array(packUniform(MERGE_PARAMS, { rows })), 'Merge.add.params', GPUBufferUsage.UNIFORM);
    temps.push(M);
    const bind = bindGroup(this.dev, MERGE_ADD_BINDINGS, { M, o_acc: acc, o_new: part });
    const pass = encoder.beginComputePass({ label: 'Merge.add.pass', timestampWrites });
    pass.setPipeline(this.addPipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(...grid2D(Math.ceil(rows / this.RPW), this.dev.device.limits.maxComputeWorkgroupsPerDimension));
    pass.end();
  }
}
