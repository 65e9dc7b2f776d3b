/**
 * What every kernel module shares: precision choice, tile planning against the device's
 * workgroup-memory limit, pipeline creation (errors surfaced through error scopes) and caching,
 * the attention uniform block, and buffer upload / readback through the tracker.
 */
import { InputError, LimitError, GPUValidationError } from '../errors.js';
import { FlashDevice, checkDevice, withErrorScopes } from '../gpu/device.js';
import { AttentionShape, ResolvedOptions } from '../shape.js';
import { POS_MAX } from '../mask.js';
import { SpecValues, specialize } from './specialize.js';
import { SHADERS } from './shaders.js';

export type Precision = 'f32' | 'f16';
export type PrecisionRequest = Precision | 'auto';

/**
 * The precision a run computes and returns in. 'auto' follows the data: f16 when every input is
 * f16 (Uint16Array of half bits) and the device has shader-f16, else f32 (an f32 input is never
 * rounded to f16 unless f16 is asked for). Without `inputs`, 'auto' is f32.
 */
export function resolvePrecision(dev: FlashDevice, p: PrecisionRequest = 'auto', inputs: ArrayBufferView[] = []): Precision {
  if (p === 'auto') return inputs.length && inputs.every((x) => x instanceof Uint16Array) && dev.hasF16 ? 'f16' : 'f32';
  if (p !== 'f32' && p !== 'f16') throw new InputError(`precision must be f32, f16 or auto, got '${p}'`);
  if (p === 'f16' && !dev.hasF16)
    throw new InputError(`precision f16 needs the 'shader-f16' feature, which ${dev.adapter.description || 'this adapter'} does not offer; use f32`);
  return p;
}

export const elemBytes = (p: Precision) => (p === 'f16' ? 2 : 4);
export const wgslType = (p: Precision) => (p === 'f16' ? 'f16' : 'f32');

export interface TilePlan {
  BR: number;
  BC: number;
  WG: number;
  workgroupBytes: number;
  /** Backward on subgroup matrices: rows (keys for dK/dV, queries for dQ) each workgroup owns. */
  rowsPerGroup?: number;
  /** Forward on subgroup matrices: 16-row blocks each subgroup owns (RB; Br = 16·RB·subgroups). */
  rowBlocks?: number;
  /** Portable forward: row max/sum through subgroup shuffles or workgroup memory. */
  reduce?: RowReduce;
}

/**
 * The portable (register-tiled) kernels, shaders/flash_fwd.wgsl and flash_bwd.wgsl: each
 * invocation owns a 4×4 block of S, so Br = 4·TY, Bc = 4·TX and WG = TX·TY. Workgroup memory:
 * forward Qs, K/V (shared), P~ and the row-reduction words; backward four staged tiles, Pᵀ and
 * dS, and four per-row statistics (LSE, Δ, key range). Rows are padded by one 16-byte word (bank conflicts).
 */
export function workgroupBytes(kind: 'fwd' | 'bwd', BR: number, BC: number, D: number): number {
  const DS = D / 4 + 1;
  if (kind === 'fwd') return 16 * ((BR + BC) * DS + BR * (BC / 4 + 1) + (BR * BC) / 16);
  return 16 * (4 * BR * DS + 2 * BR * (BR / 4 + 1)) + 16 * BR;
}

/**
 * Tile candidates, most preferred first; the first that fits the device's workgroup memory and
 * invocation limit (and whose Bc/4 invocations divide the row's D/4 words) is taken. Defaults
 * fit a 16 KiB / 256-invocation device at D = 64 (forward 32×16, backward 8). Forward (Br, Bc);
 * backward square tiles T (Br = Bc = T). bench/portable-h200.sh sweeps them on the H200.
 */
export const PORTABLE_FWD_CANDIDATES: [number, number][] = [[64, 32], [32, 32], [64, 16], [32, 16], [16, 16], [16, 8], [8, 8], [8, 4], [4, 4]];
export const PORTABLE_BWD_CANDIDATES: number[] = [32, 16, 8, 4];

/** How the forward reduces row max and sum across the invocations of a row block. */
export type RowReduce = 'subgroup' | 'workgroup';

/** Reads a tuning pin from the environment (Node only; browsers have none). */
function envPin(name: string): string | undefined {
  return typeof process !== 'undefined' ? process.env?.[name] || undefined : undefined;
}

/**
 * FLASHRING_PORTABLE_FWD = "BRxBC" / FLASHRING_PORTABLE_BWD = "T" pin the portable tiles (for
 * sweeps); FLASHRING_PORTABLE_REDUCE = subgroup | workgroup pins the forward's row reduction.
 */
function pinnedPortable(kind: 'fwd' | 'bwd'): [number, number] | null {
  const name = `FLASHRING_PORTABLE_${kind.toUpperCase()}`;
  const v = envPin(name);
  if (!v) return null;
  const ok = (n: number) => [4, 8, 16, 32, 64, 128].includes(n);
  const m = kind === 'fwd' ? /^(\d+)x(\d+)$/.exec(v) : /^(\d+)$/.exec(v);
  if (!m || !ok(+m[1]) || (kind === 'fwd' && !ok(+m[2])))
    throw new InputError(`${name}='${v}': give ${kind === 'fwd' ? 'BRxBC (e.g. 64x32)' : 'T (e.g. 32)'} with sizes in 4, 8, 16, 32, 64, 128`);
  return kind === 'fwd' ? [+m[1], +m[2]] : [+m[1], +m[1]];
}

/**
 * Tiles of a portable kernel: the first candidate (or the pinned tile) that fits `limit` bytes
 * of workgroup memory (maxComputeWorkgroupStorageSize) and `maxWG` invocations. The forward's
 * row reduction goes through subgroup shuffles where the adapter's smallest subgroup
 * (`subgroupMin`, 0 without the feature) holds the Bc/4 invocations of a row block, else
 * through workgroup memory.
 */
export function planTiles(kind: 'fwd' | 'bwd', D: number, precision: Precision, limit: number, maxWG = 256, subgroupMin = 0): TilePlan {
  const pinned = pinnedPortable(kind);
  const candidates: [number, number][] = pinned ? [pinned] : kind === 'fwd' ? PORTABLE_FWD_CANDIDATES : PORTABLE_BWD_CANDIDATES.map((t) => [t, t]);
  const why: string[] = [];
  for (const [BR, BC] of candidates) {
    const TX = BC / 4, WG = (BR * BC) / 16;
    const bytes = workgroupBytes(kind, BR, BC, D);
    if ((D / 4) % TX !== 0) { why.push(`${BR}x${BC}: Bc/4 = ${TX} does not divide D/4 = ${D / 4}`); continue; }
    if (bytes > limit || WG > maxWG) { why.push(`${BR}x${BC}: ${bytes} bytes, ${WG} invocations`); continue; }
    const plan: TilePlan = { BR, BC, WG, workgroupBytes: bytes };
    if (kind === 'fwd') plan.reduce = rowReduce(subgroupMin, TX);
    return plan;
  }
  throw new LimitError(
    `the ${kind === 'fwd' ? 'forward' : 'backward'} with head dim ${D} in ${precision} has no tile that fits this device: ` +
      `${limit} bytes of workgroup memory (maxComputeWorkgroupStorageSize), ${maxWG} invocations; tried ${why.join('; ')}. Use a smaller head dim.`,
  );
}

/** planTiles with a device's limits and subgroups. */
export function planDeviceTiles(kind: 'fwd' | 'bwd', D: number, precision: Precision, dev: FlashDevice): TilePlan {
  const lim = dev.device.limits;
  return planTiles(kind, D, precision, lim.maxComputeWorkgroupStorageSize, lim.maxComputeInvocationsPerWorkgroup, dev.hasSubgroups ? dev.adapter.subgroupMinSize : 0);
}

function rowReduce(subgroupMin: number, TX: number): RowReduce {
  const pin = envPin('FLASHRING_PORTABLE_REDUCE');
  if (pin !== undefined && pin !== 'subgroup' && pin !== 'workgroup')
    throw new InputError(`FLASHRING_PORTABLE_REDUCE='${pin}': give subgroup or workgroup`);
  const sgOk = subgroupMin >= TX;
  if (pin === 'subgroup' && !sgOk)
    throw new InputError(`FLASHRING_PORTABLE_REDUCE=subgroup: the adapter's subgroups (${subgroupMin || 'none'}) are smaller than a row block (${TX})`);
  return pin === 'workgroup' || !sgOk ? 'workgroup' : 'subgroup';
}

/** Specialization values of a portable kernel: DV (vec4 columns per invocation), LOG2TX. */
export function portableValues(kind: 'fwd' | 'bwd', D: number, plan: TilePlan): SpecValues {
  const TX = plan.BC / 4;
  const v: SpecValues = { DV: D / 4 / (kind === 'fwd' ? TX : plan.BR / 4) };
  if (kind === 'fwd' && plan.reduce === 'subgroup') v.LOG2TX = Math.log2(TX);
  return v;
}

/** Forward kernel paths: scalar math everywhere, or subgroup matrices (tensor cores) for f16. */
export type KernelPath = 'scalar' | 'subgroup-matrix';
export type PathRequest = KernelPath | 'auto';

/**
 * Workgroup memory of the subgroup-matrix forward (flash_fwd_sgmm.wgsl) with SG subgroups of
 * RB row blocks (Br = 16·RB·SG) and Bc-row K/V tiles: Ks (also stages Q) Vs P | S ℓ | vote.
 */
export function sgmmWorkgroupBytes(SG: number, BC: number, D: number, RB = 1): number {
  const BR = 16 * RB * SG;
  return (2 * BC * D + BR * BC) * 2 + BR * BC * 4 + BR * 4 + 32; // … vote, vote_u (16 B each)
}

/**
 * Workgroup memory of the subgroup-matrix backward (flash_bwd_sgmm.wgsl), SG subgroups and
 * T-row inner tiles (Br = Bc = T), the larger of its two kernels:
 * dkdv: Qs dOs (T×D f16) | per subgroup Sᵀ dPᵀ (16×T f32) Pᵀ dSᵀ (16×T f16) | LSE Δ.
 */
export function sgmmBwdWorkgroupBytes(SG: number, T: number, D: number): number {
  // + 32: the non-finite vote nf (4 × u32) and its uniform copy nf_u (vec4<u32>).
  return 2 * T * D * 2 + SG * 16 * T * 12 + 2 * T * 4 + 32;
}

/**
 * Tensor-core tile candidates, fastest first as measured on the H200 at N=16384
 * (bench/NOTES.md, v3); the first that fits workgroup memory and the invocation limit is taken.
 * Forward (subgroups per workgroup, K/V tile rows Bc, 16-row blocks per subgroup RB):
 * D=64 8×16×2 61.2 TFLOP/s against 36.2 for 8×32×1; D=128 8×32×1 41.3 against 36.4 for 4×32×1.
 * RB = 2 doubles the Q and O registers: at D=128 the driver spills them (23.0 TFLOP/s for
 * 2×32×2), so it is offered only up to D = 64 (see sgmmCandidates).
 * Backward (subgroups, inner tile rows T): 8×16 22.9 TFLOP/s at D=64 against 11.7 for 4×32.
 */
export const SGMM_FWD_CANDIDATES: [number, number, number][] = [[8, 16, 2], [8, 32, 1], [8, 16, 1], [4, 32, 1], [4, 16, 1], [2, 16, 1], [1, 16, 1]];
export const SGMM_BWD_CANDIDATES: [number, number][] = [[8, 16], [4, 32], [4, 16], [2, 32], [2, 16], [1, 16]];
/** Largest head dim at which the forward keeps two row blocks (RB = 2) per subgroup in registers. */
export const SGMM_RB2_MAX_D = 64;

/** The (SG, T, RB) candidates of a kernel at head dim D, fastest first. */
export function sgmmCandidates(kind: 'fwd' | 'bwd', D: number): [number, number, number][] {
  if (kind === 'bwd') return SGMM_BWD_CANDIDATES.map(([SG, T]) => [SG, T, 1]);
  return SGMM_FWD_CANDIDATES.filter(([, , RB]) => RB === 1 || D <= SGMM_RB2_MAX_D);
}

/**
 * The tile plan of a subgroup-matrix kernel with SG subgroups and T-row inner tiles: WG = 32·SG;
 * forward Br = 16·RB·SG, Bc = T; backward Br = Bc = T and each workgroup owns 16·SG rows.
 */
export function sgmmTilePlan(kind: 'fwd' | 'bwd', SG: number, T: number, D: number, RB = 1): TilePlan {
  return kind === 'fwd'
    ? { BR: 16 * RB * SG, BC: T, WG: 32 * SG, workgroupBytes: sgmmWorkgroupBytes(SG, T, D, RB), rowBlocks: RB }
    : { BR: T, BC: T, WG: 32 * SG, workgroupBytes: sgmmBwdWorkgroupBytes(SG, T, D), rowsPerGroup: 16 * SG };
}

/**
 * FLASHRING_SGMM_FWD = "SGxT" or "SGxTxRB" / FLASHRING_SGMM_BWD = "SGxT" pins the tiles (for
 * tuning benches).
 */
function pinnedTiles(kind: 'fwd' | 'bwd'): [number, number, number] | null {
  const name = `FLASHRING_SGMM_${kind.toUpperCase()}`;
  const v = typeof process !== 'undefined' ? process.env?.[name] : undefined;
  if (!v) return null;
  const m = /^(\d+)x(\d+)(?:x(\d+))?$/.exec(v);
  if (!m || ![1, 2, 4, 8, 16].includes(+m[1]) || +m[2] % 16 !== 0 || (m[3] !== undefined && (kind === 'bwd' || ![1, 2].includes(+m[3]))))
    throw new InputError(`${name}='${v}': give SGxT${kind === 'fwd' ? '[xRB]' : ''} with SG in 1, 2, 4, 8, 16 and T a multiple of 16${kind === 'fwd' ? ', RB 1 or 2' : ''} (e.g. 4x32${kind === 'fwd' ? 'x2' : ''})`);
  if (kind === 'bwd' && +m[2] > 32 * +m[1]) throw new InputError(`${name}='${v}': the backward's tile rows T must be at most 32·SG (${32 * +m[1]})`);
  return [+m[1], +m[2], m[3] ? +m[3] : 1];
}

/** Tiles for a subgroup-matrix kernel (the first candidate that fits), or a reason it cannot run. */
export function planSgmm(dev: FlashDevice, D: number, precision: Precision, kind: 'fwd' | 'bwd' = 'fwd'): TilePlan | string {
  if (!dev.hasSubgroupMatrix) return 'the adapter has no chromium-experimental-subgroup-matrix';
  if (precision !== 'f16') return 'subgroup matrices are used for f16 only';
  if (D % 16 !== 0) return `head dim ${D} is not a multiple of 16`;
  const { subgroupMinSize: lo, subgroupMaxSize: hi } = dev.adapter;
  if ((lo && lo !== 32) || (hi && hi !== 32)) return `the kernels need subgroups of exactly 32 invocations; the adapter's are ${lo}..${hi}`;
  const cfgs = dev.adapter.subgroupMatrixConfigs as { componentType?: string; resultComponentType?: string; M?: number; N?: number; K?: number }[];
  if (cfgs.length && !cfgs.some((c) => c.componentType === 'f16' && c.resultComponentType === 'f32' && c.M === 16 && c.N === 16 && c.K === 16))
    return 'the adapter has no 16×16×16 f16→f32 subgroup-matrix config';
  const limit = dev.device.limits.maxComputeWorkgroupStorageSize;
  const pinned = pinnedTiles(kind);
  const candidates = pinned ? [pinned] : sgmmCandidates(kind, D);
  const maxWG = dev.device.limits.maxComputeInvocationsPerWorkgroup;
  for (const [SG, T, RB] of candidates) {
    const plan = sgmmTilePlan(kind, SG, T, D, RB);
    // The backward loads a Q tile's LSE and Δ with one invocation per row (Br ≤ WG).
    if (plan.workgroupBytes <= limit && plan.WG <= maxWG && (kind === 'fwd' || plan.BR <= plan.WG)) return plan;
  }
  const [SG, T, RB] = pinned ?? [1, 16, 1];
  const plan = sgmmTilePlan(kind, SG, T, D, RB);
  return `head dim ${D} needs ${plan.workgroupBytes} bytes of workgroup memory and ${plan.WG} invocations for the ${kind === 'fwd' ? 'forward' : 'backward'} (${SG} subgroups, tile ${T}${RB > 1 ? `, ${RB} row blocks` : ''}); the device allows ${limit} bytes and ${maxWG} invocations`;
}

/**
 * Picks a kernel path: 'auto' (or FLASHRING_PATH) takes the subgroup-matrix kernels where they
 * can run and falls back to the scalar ones with the reason; an explicit 'subgroup-matrix'
 * request that cannot run is an error naming why.
 */
export async function choosePath<K>(
  path: PathRequest, what: string,
  sgmmPlan: () => TilePlan | string,
  buildSgmm: (plan: TilePlan) => Promise<K>,
  buildScalar: (fallbackReason: string | null) => Promise<K>,
): Promise<K> {
  if (path === 'auto' && typeof process !== 'undefined' && process.env?.FLASHRING_PATH) path = process.env.FLASHRING_PATH as PathRequest;
  if (!['auto', 'scalar', 'subgroup-matrix'].includes(path)) throw new InputError(`kernel path must be auto, scalar or subgroup-matrix, got '${path}'`);
  if (path === 'scalar') return buildScalar(null);
  const plan = sgmmPlan();
  if (typeof plan === 'string') {
    if (path === 'subgroup-matrix') throw new InputError(`the subgroup-matrix ${what} cannot run: ${plan}`);
    return buildScalar(plan);
  }
  try {
    return await buildSgmm(plan);
  } catch (e) {
    if (path === 'subgroup-matrix') throw e;
    return buildScalar((e as Error).message);
  }
}

/**
 * Builds the entry points of a subgroup-matrix shader, trying the current spelling of the
 * builtins, then with `enable subgroups`, then the older spelling (Dawn releases differ).
 */
export async function buildSgmmPipelines(
  dev: FlashDevice, label: string, src: (extraEnables: string[]) => string, entryPoints: string[], layout?: GPUPipelineLayout,
): Promise<GPUComputePipeline[]> {
  const base = (extra: string[]) => src(['chromium_experimental_subgroup_matrix', ...extra]);
  const variants = [base([]), base(['subgroups']), legacySgmmSpelling(base([])), legacySgmmSpelling(base(['subgroups']))];
  const errors: string[] = [];
  for (const code of variants) {
    try {
      return await Promise.all(entryPoints.map((ep) => buildPipeline(dev, `${label}.${ep}`, code, ep, layout)));
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  throw new GPUValidationError(label, `no spelling of the subgroup-matrix builtins compiled: ${errors.join(' | ')}`);
}

/** The older spelling of the subgroup-matrix builtins (a bool for column-major). */
export function legacySgmmSpelling(code: string): string {
  return code
    .replace(/subgroupMatrixLoad<(\w+), (row_major|col_major)>\(([^,()]+), ([^,()]+), ([^,()]+)\)/g,
      (_, t, layout, p, off, stride) => `subgroupMatrixLoad<${t}>(${p}, ${off}, ${layout === 'col_major'}, ${stride})`)
    .replace(/subgroupMatrixStore<(row_major|col_major)>\(([^,()]+), ([^,()]+), ([^,()]+), ([^,()]+)\)/g,
      (_, layout, p, off, m, stride) => `subgroupMatrixStore(${p}, ${off}, ${m}, ${layout === 'col_major'}, ${stride})`);
}

export interface KernelTypes {
  precision: Precision;
  /** Element type of O (and of O read by the backward); f32 for ring partials. */
  out: Precision;
  /** Element type of dQ, dK, dV; f32 for ring accumulators. */
  grad: Precision;
}

/** Specialized source of an attention kernel: common header + kernel body. */
export function attentionSource(
  body: string, D: number, plan: TilePlan, t: KernelTypes, unroll: boolean, extraEnables: string[] = [], extra: SpecValues = {},
): string {
  const f16 = [t.precision, t.out, t.grad].includes('f16');
  const enables = [...(f16 ? ['f16'] : []), ...extraEnables];
  // The tensor-core kernels give each subgroup its own matrix offsets (uniform within the
  // subgroup, not across the workgroup), which Chromium's uniformity check would reject.
  const directives = enables.includes('chromium_experimental_subgroup_matrix') ? ['diagnostic(off, chromium.subgroup_matrix_uniformity);'] : [];
  return specialize(SHADERS.common + '\n' + body, {
    // The tensor-core forward: 16-row blocks per subgroup and softmax columns per lane.
    ...(plan.rowBlocks ? { RB: plan.rowBlocks, COLS: (plan.BC * plan.rowBlocks) / 2 } : {}),
    ENABLES: [...enables.map((e) => `enable ${e};`), ...directives].join('\n'),
    ST: wgslType(t.precision),
    OT: wgslType(t.out),
    GT: wgslType(t.grad),
    D,
    BR: plan.BR,
    BC: plan.BC,
    WG: plan.WG,
    RT: unroll ? '' : ' + P.zero',
    ...extra,
  }, { roll: !unroll });
}

const kernelCache = new WeakMap<GPUDevice, Map<string, Promise<unknown>>>();

/** Builds a kernel (its pipelines) once per device and key; a failed build is not cached. */
export function cachedKernel<T>(dev: FlashDevice, key: string, build: () => Promise<T>): Promise<T> {
  let map = kernelCache.get(dev.device);
  if (!map) kernelCache.set(dev.device, (map = new Map()));
  let p = map.get(key) as Promise<T> | undefined;
  if (!p) {
    p = build();
    map.set(key, p);
    p.catch(() => map!.delete(key));
  }
  return p;
}

/** Creates a compute pipeline; compile and validation errors become GPUValidationError naming `label`. */
export async function buildPipeline(
  dev: FlashDevice, label: string, code: string, entryPoint = 'main', layout?: GPUPipelineLayout,
): Promise<GPUComputePipeline> {
  checkDevice(dev, label);
  const device = dev.device;
  return withErrorScopes(device, label, async () => {
    const module = device.createShaderModule({ label: `${label}.module`, code });
    const info = await module.getCompilationInfo();
    const errors = info.messages.filter((m) => m.type === 'error');
    if (errors.length)
      throw new GPUValidationError(label, errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; '));
    try {
      return await device.createComputePipelineAsync({ label, layout: layout ?? 'auto', compute: { module, entryPoint } });
    } catch (e) {
      throw new GPUValidationError(label, (e as Error).message);
    }
  });
}

/** The attention uniform block (Params in shaders/common.wgsl), 80 bytes. */
export function attentionParams(dev: FlashDevice, s: AttentionShape, o: ResolvedOptions, accumulate = false): GPUBuffer {
  const ab = new ArrayBuffer(80);
  const u = new Uint32Array(ab);
  const i = new Int32Array(ab);
  const f = new Float32Array(ab);
  u[0] = s.B; u[1] = s.Hq; u[2] = s.Hkv; u[3] = s.Nq; u[4] = s.Nk; u[5] = o.causal ? 1 : 0;
  i[6] = o.qPos.offset; i[7] = o.qPos.stride; i[8] = o.kPos.offset; i[9] = o.kPos.stride;
  f[10] = o.scale; f[11] = o.scale * Math.LOG2E; u[12] = accumulate ? 1 : 0; u[13] = 0; // zero
  // A window wider than any position is unbounded; the shader adds and subtracts it in i32.
  i[14] = Math.min(o.window[0], POS_MAX); i[15] = Math.min(o.window[1], POS_MAX);
  u[16] = o.docs ? o.docs.cuQ.length - 1 : 0;
  return upload(dev, new Uint8Array(ab), 'flashring.params', GPUBufferUsage.UNIFORM);
}

/** The documents buffer (`cu` in shaders/common.wgsl): cu_seqlens_q then cu_seqlens_k, or two zeros. */
export function documentsBuffer(dev: FlashDevice, o: ResolvedOptions): GPUBuffer {
  const d = o.docs;
  const data = new Int32Array(d ? d.cuQ.length + d.cuK.length : 2);
  if (d) {
    data.set(d.cuQ);
    data.set(d.cuK, d.cuQ.length);
  }
  return upload(dev, data, 'flashring.documents', GPUBufferUsage.STORAGE);
}

/** Storage buffer through the tracker (sizes rounded up to 4 bytes). */
export function storage(dev: FlashDevice, bytes: number, label: string, extraUsage = 0): GPUBuffer {
  return dev.tracker.create({
    label,
    size: Math.max(4, Math.ceil(bytes / 4) * 4),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST | extraUsage,
  });
}

/** Creates a buffer holding `data` (mapped at creation, no staging). */
export function upload(dev: FlashDevice, data: ArrayBufferView, label: string, usage: number = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST): GPUBuffer {
  const size = Math.max(4, Math.ceil(data.byteLength / 4) * 4);
  const buf = dev.tracker.create({ label, size, usage, mappedAtCreation: true });
  new Uint8Array(buf.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  buf.unmap();
  return buf;
}

/** Copies `bytes` from a GPU buffer back to the host. */
export async function readback(dev: FlashDevice, src: GPUBuffer, bytes: number, srcOffset = 0): Promise<ArrayBuffer> {
  const size = Math.ceil(bytes / 4) * 4;
  const staging = dev.tracker.create({ label: 'flashring.readback', size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    const enc = dev.device.createCommandEncoder({ label: 'flashring.readback' });
    enc.copyBufferToBuffer(src, srcOffset, staging, 0, size);
    dev.device.queue.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    return staging.getMappedRange().slice(0, bytes);
  } catch (e) {
    checkDevice(dev, 'readback');
    throw e;
  } finally {
    dev.tracker.destroy(staging);
  }
}

/** Throws a LimitError if a tensor is larger than one storage binding may be. */
export function checkBinding(dev: FlashDevice, name: string, bytes: number): void {
  const max = dev.device.limits.maxStorageBufferBindingSize;
  if (bytes > max)
    throw new LimitError(`${name} needs ${bytes} bytes in one binding; this device allows ${max} (maxStorageBufferBindingSize)`);
}

/** Splits `groups` workgroups over x and y so neither exceeds the per-dimension limit. */
export function grid2D(groups: number, maxPerDim: number): [number, number] {
  if (groups <= maxPerDim) return [Math.max(1, groups), 1];
  const y = Math.ceil(groups / maxPerDim);
  return [Math.ceil(groups / y), y];
}
