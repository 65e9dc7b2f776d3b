/**
 * Merge kernel module: folds a partial (O, LSE) over one key chunk into an accumulated one,
 * exactly, in f32 (see shaders/merge.wgsl). Knows nothing of ranks.
 */
import { FlashDevice } from '../gpu/device.js';
import { SHADERS } from './shaders.js';
import { specialize } from './specialize.js';
import { upload } from '../gpu/buffers.js';
import { buildPipeline, cachedKernel, grid2D, kernelKey } from './pipeline.js';
import { UniformField, packUniform, wgslStruct } from './params.js';
import { BindingTable, bindGroup, bindingSubset, bindingTable, pipelineLayout, wgslBindings } from './bindings.js';

/** Rows per workgroup: as many whole rows of D/4 invocations as fit in 256 (D ≤ 256, D % 8 = 0). */
const rowsPerGroup = (D: number) => Math.max(1, Math.floor(256 / (D / 4)));

/** What one merge (or add) dispatch covers: the fields of its uniform block. */
interface MergeRange {
  rows: number;
  n: number;
  r0: number;
  span: number;
}

/** `MergeParams` (M in shaders/merge.wgsl), in order: generates the WGSL struct and packs it. */
export const MERGE_PARAMS: readonly UniformField<MergeRange>[] = [
  { name: 'rows', type: 'u32', value: (x) => x.rows, doc: 'items (merge) or rows (add)' },
  { name: 'n', type: 'u32', value: (x) => x.n, doc: 'rows per run (merge)' },
  { name: 'r0', type: 'u32', value: (x) => x.r0, doc: 'the first row merged of each run' },
  { name: 'span', type: 'u32', value: (x) => x.span, doc: 'rows merged per run (≥ 1)' },
];

/** The merge's bindings (shaders/merge.wgsl); its `add` entry point binds three of them. */
export const MERGE_BINDINGS = bindingTable('Merge', [
  [0, 'M', 'uniform', 'MergeParams'], [1, 'o_acc', 'read_write', 'array<vec4<f32>>'], [2, 'lse_acc', 'read_write', 'array<f32>'],
  [3, 'o_new', 'read', 'array<vec4<f32>>'], [4, 'lse_new', 'read', 'array<f32>'],
]);
export const MERGE_ADD_BINDINGS = bindingSubset(MERGE_BINDINGS, 'Merge.add', ['M', 'o_acc', 'o_new']);

export class MergeKernel {
  private constructor(
    readonly dev: FlashDevice, readonly D: number, private RPW: number, private pipeline: GPUComputePipeline, private addPipeline: GPUComputePipeline,
  ) {}

  static create(dev: FlashDevice, D: number): Promise<MergeKernel> {
    const values = { D, RPW: rowsPerGroup(D) };
    return cachedKernel(dev, kernelKey('merge', values), async () => {
      const code = specialize(SHADERS.merge, { ...values, MERGE_PARAMS: wgslStruct('MergeParams', MERGE_PARAMS), BINDINGS: wgslBindings(MERGE_BINDINGS) });
      const [pipeline, add] = await Promise.all([
        buildPipeline(dev, `Merge[D=${D}]`, code, 'main', pipelineLayout(dev, MERGE_BINDINGS)),
        buildPipeline(dev, `Merge[D=${D}].add`, code, 'add', pipelineLayout(dev, MERGE_ADD_BINDINGS)),
      ]);
      return new MergeKernel(dev, D, values.RPW, pipeline, add);
    });
  }

  /** acc += part over `rows` rows of D f32 values (ring dK/dV partial sums). */
  encodeAdd(encoder: GPUCommandEncoder, acc: GPUBuffer, part: GPUBuffer, rows: number, temps: GPUBuffer[], timestampWrites?: GPUComputePassTimestampWrites): void {
    const range = { rows, n: rows, r0: 0, span: Math.max(1, rows) };
    this.dispatch(encoder, MERGE_ADD_BINDINGS, this.addPipeline, range, { o_acc: acc, o_new: part }, temps, timestampWrites);
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
    const buffers = { o_acc: acc.o, lse_acc: acc.lse, o_new: part.o, lse_new: part.lse };
    this.dispatch(encoder, MERGE_BINDINGS, this.pipeline, { rows: items, n: r.n, r0: r.from, span: r.to - r.from }, buffers, temps, timestampWrites);
  }

  /** One pass over `u.rows` items: the uniform block packed from u (freed with `temps`), the table's buffers bound. */
  private dispatch(
    encoder: GPUCommandEncoder, table: BindingTable, pipeline: GPUComputePipeline, u: MergeRange, buffers: Record<string, GPUBuffer>,
    temps: GPUBuffer[], timestampWrites?: GPUComputePassTimestampWrites,
  ): void {
    const M = upload(this.dev, new Uint8Array(packUniform(MERGE_PARAMS, u)), `${table.label}.params`, GPUBufferUsage.UNIFORM);
    temps.push(M);
    const bind = bindGroup(this.dev, table, { ...buffers, M });
    const pass = encoder.beginComputePass({ label: `${table.label}.pass`, timestampWrites });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(...grid2D(Math.ceil(u.rows / this.RPW), this.dev.device.limits.maxComputeWorkgroupsPerDimension));
    pass.end();
  }
}
