/**
 * The bindings of a kernel family, written once, as its uniform block is (params.ts): one table
 * of (binding index, the WGSL variable bound there, its access, its WGSL type), from which the
 * shader's declarations (wgslBindings, filled into {{BINDINGS}}), the kernel's bind group layout
 * (and pipeline layout) and every bind group it encodes are built, the buffers named as the
 * shader names them. A type may name the storage word through an alias each kernel file defines
 * (IW: a word of Q, K, V, dO; OW: of O; GW: of dQ, dK, dV), so that one table serves the portable
 * kernels (vec4 words of the data type) and the tensor-core ones (16-byte words of halves).
 * The tables: ATTENTION_HEADER_BINDINGS (params.ts: the uniform block and the documents, in every
 * attention kernel), FORWARD_BINDINGS (flashForward.ts), BACKWARD_BINDINGS and
 * PREPROCESS_BINDINGS (flashBackward.ts), MERGE_ADD_BINDINGS (merge.ts).
 */
import { FlashDevice } from '../gpu/device.js';

/** How a shader reads a binding: `var<uniform>`, `var<storage, read>` or `var<storage, read_write>`. */
export type Access = 'uniform' | 'read' | 'read_write';

export interface BindingEntry<N extends string = string> {
  binding: number;
  /** The WGSL variable's name, and the key of its buffer in bindGroup's `buffers`. */
  name: N;
  access: Access;
  /** The WGSL store type: `Params`, `array<f32>`, `array<IW>` (an alias of the kernel file); a table without types declares nothing (its shaders do, as the bench's GEMM probes). */
  type?: string;
}

export interface BindingTable<N extends string = string> {
  /** Names the layouts and bind groups built from it. */
  readonly label: string;
  readonly entries: readonly BindingEntry<N>[];
}

/** A table from [binding, name, access, type] rows; a binding index or name given twice is an error. */
export function bindingTable<const N extends string>(label: string, rows: readonly (readonly [number, N, Access, string?])[]): BindingTable<N> {
  const entries = rows.map(([binding, name, access, type]) => ({ binding, name, access, ...(type ? { type } : {}) }));
  for (const key of ['binding', 'name'] as const) {
    const seen = entries.map((e) => e[key]);
    const twice = seen.find((x, i) => seen.indexOf(x) !== i);
    if (twice !== undefined) throw new Error(`${label}: ${key} ${twice} is in the binding table twice`);
  }
  return Object.freeze({ label, entries: Object.freeze(entries) });
}

const BUFFER_TYPE: Record<Access, GPUBufferBindingType> = { uniform: 'uniform', read: 'read-only-storage', read_write: 'storage' };

interface Layouts {
  layout: GPUBindGroupLayout;
  pipelineLayout: GPUPipelineLayout;
}

const layoutCache = new WeakMap<GPUDevice, Map<BindingTable, Layouts>>();

/** The bind group layout and pipeline layout of a table on a device (built once per device). */
function tableLayouts(device: GPUDevice, table: BindingTable): Layouts {
  let map = layoutCache.get(device);
  if (!map) layoutCache.set(device, (map = new Map()));
  let l = map.get(table);
  if (!l) {
    const layout = device.createBindGroupLayout({
      label: `${table.label}.layout`,
      entries: table.entries.map((e) => ({ binding: e.binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: BUFFER_TYPE[e.access] } })),
    });
    l = { layout, pipelineLayout: device.createPipelineLayout({ label: `${table.label}.pipelineLayout`, bindGroupLayouts: [layout] }) };
    map.set(table, l);
  }
  return l;
}

/** The pipeline layout to build a table's pipelines with. */
export const pipelineLayout = (dev: FlashDevice, table: BindingTable): GPUPipelineLayout => tableLayouts(dev.device, table).pipelineLayout;

/** A bind group of a table's layout: each binding takes the buffer of its name (other keys are ignored). */
export function bindGroup<N extends string>(dev: FlashDevice, table: BindingTable<N>, buffers: Readonly<Record<N, GPUBuffer>>): GPUBindGroup {
  return dev.device.createBindGroup({
    label: `${table.label}.bind`,
    layout: tableLayouts(dev.device, table).layout,
    entries: table.entries.map((e) => ({ binding: e.binding, resource: { buffer: buffers[e.name] } })),
  });
}

/** A table's WGSL declarations, in binding order: what {{BINDINGS}} is filled with. */
export function wgslBindings(table: BindingTable): string {
  const space: Record<Access, string> = { uniform: 'uniform', read: 'storage, read', read_write: 'storage, read_write' };
  return [...table.entries].sort((a, b) => a.binding - b.binding).map((e) => {
    if (!e.type) throw new Error(`${table.label}: binding ${e.binding} (${e.name}) has no WGSL type to declare`);
    return `@group(0) @binding(${e.binding}) var<${space[e.access]}> ${e.name}: ${e.type};`;
  }).join('\n');
}

/** The group-0 bindings a WGSL source declares, in binding order (what the tables are checked against). */
export function declaredBindings(wgsl: string): BindingEntry[] {
  const decl = /@group\(0\)\s*@binding\((\d+)\)\s*var<(uniform|storage,\s*(read|read_write))>\s*(\w+)\s*:\s*([^;]+);/g;
  return [...wgsl.matchAll(decl)]
    .map((m) => ({ binding: Number(m[1]), name: m[4], access: (m[2] === 'uniform' ? 'uniform' : m[3]) as Access, type: m[5].trim() }))
    .sort((a, b) => a.binding - b.binding);
}
