/**
 * The attention kernels' uniform block, written once: ATTENTION_PARAMS (name, WGSL type, how the
 * host computes the value) generates both the WGSL `struct Params` that the specializer fills
 * into shaders/common.wgsl ({{PARAMS}}) and the host's packing of it (attentionParams). Every
 * field is one 4-byte scalar at offset 4·index; the struct is padded to a multiple of 16 bytes.
 * Also the documents binding (`cu`), the header's other host-filled buffer, and the two bindings
 * as rows of every attention kernel's binding table (ATTENTION_HEADER_BINDINGS, bindings.ts).
 */
import { FlashDevice } from '../gpu/device.js';
import { upload } from '../gpu/buffers.js';
import { AttentionShape, ResolvedOptions } from '../shape.js';
import { POS_MAX } from '../mask.js';
import { HEAD_GROUP_ALL, type KernelTuning } from './tuning.js';

export { HEAD_GROUP_ALL };

export type ScalarType = 'u32' | 'i32' | 'f32';

/** What the host computes the attention parameters from. */
export interface ParamInputs {
  s: AttentionShape;
  o: ResolvedOptions;
  /** Ring steps: the backward adds to the gradient buffers; the forward merges into O and LSE. */
  accumulate: boolean;
  /** Forward ring steps (the first too): rows without mass are written as partials (common.wgsl no_mass_lse). */
  partial?: boolean;
  /** The first Q row block (forward, dq) and K/V row block (dkdv) dispatched (0: all from the start; src/kernels/reach.ts). */
  blk0?: { q: number; k: number };
  /** Causal grids' heads taking turns block by block, in groups of this many (launch_item in common.wgsl); default headGroup(). */
  headGroup?: number;
}

/** What a dispatch of a ring step sets in the uniform block (all unset: a whole call). */
export type RingStep = Partial<Pick<ParamInputs, 'accumulate' | 'partial' | 'blk0'>>;

/** Keys per head up to which the heads take turns by default (measured gains up to 16384, losses from 65536). */
export const HEAD_GROUP_MAX_KEYS = 16384;
/**
 * The launch order of causal grids: the heads take turns block by block (longest blocks of every
 * head first; "all", the default), or in groups of G as a tuning's headGroup pins it
 * (FLASHRING_HEAD_GROUP; 1: head by head, the order before 2026-12-01's eighth stop). Results are the same bit for bit; only the order
 * the GPU starts workgroups in changes. Measured on the H200 (bench/results/order-h200-2026-12-01,
 * bench/order-h200.sh, causal f16 B1 H16, two rounds): "all" against 1 takes 0.74–0.81 of the
 * time at N = 4096, 0.85–0.92 at 8192, 0.93–1.00 at 16384; p2p's summed steps at N = 16384 0.96 /
 * 0.93 / 0.92 (R = 2, 4, 8); but at N = 65536 and 131072 1.04 (forward) and 1.02 (forward+backward), so calls of more
 * than HEAD_GROUP_MAX_KEYS keys keep the grid head by head.
 */
export function headGroup(s?: Pick<AttentionShape, 'Nk'>, tuning: KernelTuning = {}): number {
  // Long calls lose a little (N = 65536 and 131072: 1.04 the forward's time), so they keep the grid.
  return tuning.headGroup ?? (s && s.Nk > HEAD_GROUP_MAX_KEYS ? 1 : HEAD_GROUP_ALL);
}

/** One field of a uniform block: a 4-byte scalar. */
export interface UniformField<X> {
  name: string;
  type: ScalarType;
  value: (x: X) => number;
  /** Comment on the WGSL field. */
  doc?: string;
}

/** `Params` (P in the shaders), in order. */
export const ATTENTION_PARAMS: readonly UniformField<ParamInputs>[] = [
  { name: 'B', type: 'u32', value: ({ s }) => s.B },
  { name: 'Hq', type: 'u32', value: ({ s }) => s.Hq },
  { name: 'Hkv', type: 'u32', value: ({ s }) => s.Hkv },
  { name: 'Nq', type: 'u32', value: ({ s }) => s.Nq },
  { name: 'Nk', type: 'u32', value: ({ s }) => s.Nk },
  { name: 'causal', type: 'u32', value: ({ o }) => (o.causal ? 1 : 0) },
  { name: 'q_off', type: 'i32', value: ({ o }) => o.qPos.offset, doc: 'query i sits at q_off + i·q_stride' },
  { name: 'q_stride', type: 'i32', value: ({ o }) => o.qPos.stride },
  { name: 'k_off', type: 'i32', value: ({ o }) => o.kPos.offset, doc: 'key j sits at k_off + j·k_stride' },
  { name: 'k_stride', type: 'i32', value: ({ o }) => o.kPos.stride },
  { name: 'q_split', type: 'u32', value: ({ o }) => o.qPos.split ?? 0, doc: 'queries from q_split on sit q_jump further (two runs)' },
  { name: 'q_jump', type: 'i32', value: ({ o }) => o.qPos.jump ?? 0 },
  { name: 'k_split', type: 'u32', value: ({ o }) => o.kPos.split ?? 0, doc: 'keys from k_split on sit k_jump further' },
  { name: 'k_jump', type: 'i32', value: ({ o }) => o.kPos.jump ?? 0 },
  { name: 'scale', type: 'f32', value: ({ o }) => o.scale, doc: 'softmax scale (1/sqrt(D) by default)' },
  { name: 'scale_log2', type: 'f32', value: ({ o }) => o.scale * Math.LOG2E, doc: 'scale · log2(e): scores live in the exp2 domain' },
  { name: 'accumulate', type: 'u32', value: (x) => (x.accumulate ? 1 : 0), doc: 'ring steps: the backward adds dQ/dK/dV to what the output buffers hold; the forward merges its rows into the O and LSE they hold' },
  { name: 'zero', type: 'u32', value: () => 0, doc: 'always 0 (see rt())' },
  { name: 'partial', type: 'u32', value: (x) => (x.partial ? 1 : 0), doc: 'forward ring steps: a row whose visible scores are all −inf is a partial without mass (LSE = +inf), not NaN' },
  { name: 'q_blk0', type: 'u32', value: (x) => x.blk0?.q ?? 0, doc: 'row block of dispatch x = 0 (forward, dq; ring steps skip blocks no key reaches)' },
  { name: 'k_blk0', type: 'u32', value: (x) => x.blk0?.k ?? 0, doc: 'backward: key block of dispatch x = 0 (dkdv)' },
  // A window wider than any position is unbounded; the shader adds and subtracts it in i32.
  { name: 'win_left', type: 'i32', value: ({ o }) => Math.min(o.window[0], POS_MAX), doc: "sliding window (FlashAttention-2's window_size), −1 = unbounded" },
  { name: 'win_right', type: 'i32', value: ({ o }) => Math.min(o.window[1], POS_MAX) },
  { name: 'n_docs', type: 'u32', value: ({ o }) => (o.docs ? o.docs.cuQ.length - 1 : 0), doc: 'documents in cu (0: none)' },
  { name: 'head_group', type: 'u32', value: (x) => x.headGroup ?? headGroup(x.s), doc: 'causal grids: heads take turns in groups of this many (launch_item)' },
];

/** Bytes of a uniform block: 4 per field, rounded up to a multiple of 16. */
export const uniformBytes = (fields: readonly UniformField<never>[]) => Math.ceil(fields.length / 4) * 16;

const wgslField = (f: UniformField<never>) => {
  const decl = `  ${f.name}: ${f.type},`;
  return f.doc ? `${decl.padEnd(22)}// ${f.doc}` : decl;
};

/** The WGSL struct of a uniform block, padded with u32 words (`_pad0`, …) to uniformBytes. */
export function wgslStruct(name: string, fields: readonly UniformField<never>[]): string {
  const pads = Array.from({ length: uniformBytes(fields) / 4 - fields.length }, (_, i) => `  _pad${i}: u32,`);
  return [`struct ${name} {`, ...fields.map(wgslField), ...pads, '}'].join('\n');
}

/** Packs a uniform block: field i at byte 4·i, little-endian, as its type. */
export function packUniform<X>(fields: readonly UniformField<X>[], x: X): ArrayBuffer {
  const buf = new ArrayBuffer(uniformBytes(fields));
  const view = new DataView(buf);
  const set = { u32: view.setUint32, i32: view.setInt32, f32: view.setFloat32 };
  fields.forEach((f, i) => set[f.type].call(view, 4 * i, f.value(x), true));
  return buf;
}

/** `struct Params`, as filled into shaders/common.wgsl. */
export const PARAMS_WGSL = wgslStruct('Params', ATTENTION_PARAMS);

/** The attention uniform block (binding 0) for a shape and its options. */
function attentionParams(dev: FlashDevice, s: AttentionShape, o: ResolvedOptions, step: RingStep = {}): GPUBuffer {
  const bytes = new Uint8Array(packUniform(ATTENTION_PARAMS, { s, o, accumulate: !!step.accumulate, partial: step.partial, blk0: step.blk0, headGroup: headGroup(s, dev.tuning) }));
  return upload(dev, bytes, 'flashring.params', GPUBufferUsage.UNIFORM);
}

/** The bindings of every attention kernel, declared in shaders/common.wgsl's {{BINDINGS}}: the uniform block and the documents. */
export const ATTENTION_HEADER_BINDINGS = [[0, 'P', 'uniform', 'Params'], [11, 'cu', 'read', 'array<i32>']] as const;

/**
 * The header's buffers of one dispatch (its uniform block, attentionParams, and its documents,
 * documentsBuffer), by their binding names; both go into `temps`, to be freed after submit.
 */
export function attentionHeader(
  dev: FlashDevice, s: AttentionShape, o: ResolvedOptions, temps: GPUBuffer[], step: RingStep = {},
): { P: GPUBuffer; cu: GPUBuffer } {
  const header = { P: attentionParams(dev, s, o, step), cu: documentsBuffer(dev, o) };
  temps.push(header.P, header.cu);
  return header;
}

/** The documents buffer (`cu` in shaders/common.wgsl): cu_seqlens_q then cu_seqlens_k, or two zeros. */
function documentsBuffer(dev: FlashDevice, o: ResolvedOptions): GPUBuffer {
  const d = o.docs;
  const data = new Int32Array(d ? d.cuQ.length + d.cuK.length : 2);
  if (d) {
    data.set(d.cuQ);
    data.set(d.cuK, d.cuQ.length);
  }
  return upload(dev, data, 'flashring.documents', GPUBufferUsage.STORAGE);
}
