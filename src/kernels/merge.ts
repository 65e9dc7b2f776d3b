/**
 * shaders/merge.wgsl's two passes, in f32: the add of partial dK/dV sums (all_gather's
 * reduce-scatter), and the finalize of a ring's forward results (rows still without mass: NaN).
 * (The forward's exact merge of partial (O, LSE) results runs in the forward's epilogue.) Knows
 * nothing of ranks.
 */
import { FlashDevice } from '../gpu/device.js';
import { SHADERS } from './shaders.js';
import { specialize } from './specialize.js';
import { upload } from '../gpu/buffers.js';
import { buildPipeline, cachedKernel, grid2D, kernelKey } from './pipeline.js';
import { UniformField, packUniform, wgslStruct } from './params.js';
import { BindingTable, bindGroup, bindingTable, pipelineLayout, wgslBindings } from './bindings.js';

/** Rows per workgroup: as many whole rows of D/4 invocations as fit in 256 (D ≤ 256, D % 8 = 0). */
const rowsPerGroup = (D: number) => Math.max(1, Math.floor(256 / (D / 4)));

/** What one add or finalize dispatch covers: the fields of its uniform block. */
interface AddRange {
  rows: number;
}

/** `MergeParams` (M in shaders/merge.wgsl), in order: generates the WGSL struct and packs it. */
export const MERGE_PARAMS: readonly UniformField<AddRange>[] = [
  { name: 'rows', type: 'u32', value: (x) => x.rows, doc: 'rows of D values' },
];

/** The add's bindings (shaders/merge.wgsl). */
export const MERGE_ADD_BINDINGS = bindingTable('Merge.add', [
  [0, 'M', 'uniform', 'MergeParams'], [1, 'o_acc', 'read_write', 'array<vec4<f32>>'], [2, 'o_new', 'read', 'array<vec4<f32>>'],
]);

/** The finalize's bindings: a ring's O, [rows, D], and LSE, [rows]. */
export const MERGE_FINALIZE_BINDINGS = bindingTable('Merge.finalize', [
  [0, 'M', 'uniform', 'MergeParams'], [1, 'o', 'read_write', 'array<vec4<f32>>'], [2, 'lse', 'read_write', 'array<f32>'],
]);

type Entry = 'add' | 'finalize';
const TABLES = { add: MERGE_ADD_BINDINGS, finalize: MERGE_FINALIZE_BINDINGS };

export class MergeKernel {
  private constructor(readonly dev: FlashDevice, readonly D: number, private RPW: number, private pipelines: Record<Entry, GPUComputePipeline>) {}

  static create(dev: FlashDevice, D: number): Promise<MergeKernel> {
    const values = { D, RPW: rowsPerGroup(D) };
    return cachedKernel(dev, kernelKey('merge', values), async () => {
      const build = (entry: Entry) => {
        const code = specialize(SHADERS.merge, {
          ...values, ADD: Number(entry === 'add'), FINALIZE: Number(entry === 'finalize'),
          MERGE_PARAMS: wgslStruct('MergeParams', MERGE_PARAMS), BINDINGS: wgslBindings(TABLES[entry]),
        });
        return buildPipeline(dev, `Merge[D=${D}].${entry}`, code, entry, pipelineLayout(dev, TABLES[entry]));
      };
      const [add, finalize] = await Promise.all([build('add'), build('finalize')]);
      return new MergeKernel(dev, D, values.RPW, { add, finalize });
    });
  }

  /** acc += part over `rows` rows of D f32 values (all_gather's dK/dV pieces). */
  encodeAdd(encoder: GPUCommandEncoder, acc: GPUBuffer, part: GPUBuffer, rows: number, temps: GPUBuffer[], timestampWrites?: GPUComputePassTimestampWrites): void {
    this.encode(encoder, 'add', { o_acc: acc, o_new: part }, rows, temps, timestampWrites);
  }

  /**
   * A ring's forward results, `rows` rows of O (f32, D values) and LSE, made final after its last
   * step: rows still without mass (LSE = +inf) become O = NaN, LSE = NaN (shaders/merge.wgsl).
   */
  encodeFinalize(encoder: GPUCommandEncoder, o: GPUBuffer, lse: GPUBuffer, rows: number, temps: GPUBuffer[], timestampWrites?: GPUComputePassTimestampWrites): void {
    this.encode(encoder, 'finalize', { o, lse }, rows, temps, timestampWrites);
  }

  private encode(encoder: GPUCommandEncoder, entry: Entry, buffers: Record<string, GPUBuffer>, rows: number, temps: GPUBuffer[], timestampWrites?: GPUComputePassTimestampWrites): void {
    const M = upload(this.dev, new Uint8Array(packUniform(MERGE_PARAMS, { rows })), `Merge.${entry}.params`, GPUBufferUsage.UNIFORM);
    temps.push(M);
    const bind = bindGroup(this.dev, TABLES[entry] as BindingTable<string>, { M, ...buffers });
    const pass = encoder.beginComputePass({ label: `Merge.${entry}.pass`, timestampWrites });
    pass.setPipeline(this.pipelines[entry]);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(...grid2D(Math.ceil(rows / this.RPW), this.dev.device.limits.maxComputeWorkgroupsPerDimension));
    pass.end();
  }
}
