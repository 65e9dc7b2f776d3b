/**
 * Pipelines: creation (compile and validation errors surfaced through error scopes), one build
 * per device and kernel key, the subgroup-matrix spelling attempts, the choice between the
 * tensor-core and the scalar path, and dispatch grids within the per-dimension limit.
 */
import { InputError, GPUValidationError, LimitError } from '../errors.js';
import { FlashDevice, captureErrors, checkDevice } from '../gpu/device.js';
import { SpecValues } from './specialize.js';
import { TilePlan } from './tiles.js';
import type { SgmmRefusal } from './sgmmTiles.js';
import type { KernelTuning } from './tuning.js';

/** Kernel paths: scalar math everywhere, or subgroup matrices (tensor cores) for f16. */
export type KernelPath = 'scalar' | 'subgroup-matrix';
export type PathRequest = KernelPath | 'auto';

/**
 * Picks a kernel path: 'auto' (or the path the device's tuning pins) takes the subgroup-matrix
 * kernels where they can run and falls back to the scalar ones with the reason; an explicit
 * 'subgroup-matrix' request that cannot run is an error naming why, before any pipeline is made: a
 * LimitError with each tile tried (LimitError.tried) where no tile runs, an InputError where the
 * adapter cannot run the kernels at all.
 */
export async function choosePath<K>(
  path: PathRequest, tuning: KernelTuning, what: string,
  sgmmPlan: () => TilePlan | SgmmRefusal,
  buildSgmm: (plan: TilePlan) => Promise<K>,
  buildScalar: (fallbackReason: string | null) => Promise<K>,
): Promise<K> {
  if (path === 'auto') path = tuning.path ?? path;
  if (!['auto', 'scalar', 'subgroup-matrix'].includes(path)) throw new InputError(`kernel path must be auto, scalar or subgroup-matrix, got '${path}'`);
  if (path === 'scalar') return buildScalar(null);
  const plan = sgmmPlan();
  if ('why' in plan) {
    const message = `the subgroup-matrix ${what} cannot run: ${plan.why}`;
    // Tiles the device cannot run: a LimitError with each tile's figures (tune's skipped candidates read them, not
    // this text); an adapter without what the kernels use at all: the request's error.
    if (path === 'subgroup-matrix') throw plan.tried.length ? new LimitError(message, plan.tried) : new InputError(message);
    return buildScalar(plan.why);
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

/**
 * A subgroup-matrix load or store as the shaders spell it (layout as a template argument; no
 * argument holds a comma or parentheses): load <type, layout>(pointer, offset, stride), store
 * <layout>(pointer, offset, matrix, stride).
 */
const SGMM_LOAD = /subgroupMatrixLoad<(\w+), (row_major|col_major)>\(([^,()]+), ([^,()]+), ([^,()]+)\)/g;
const SGMM_STORE = /subgroupMatrixStore<(row_major|col_major)>\(([^,()]+), ([^,()]+), ([^,()]+), ([^,()]+)\)/g;

/** The older spelling of the subgroup-matrix builtins (a bool for column-major). */
export function legacySgmmSpelling(code: string): string {
  return code
    .replace(SGMM_LOAD, (_, t, layout, p, off, stride) => `subgroupMatrixLoad<${t}>(${p}, ${off}, ${layout === 'col_major'}, ${stride})`)
    .replace(SGMM_STORE, (_, layout, p, off, m, stride) => `subgroupMatrixStore(${p}, ${off}, ${m}, ${layout === 'col_major'}, ${stride})`);
}

/** The pointer and offset of each subgroup-matrix load and store in `code` that legacySgmmSpelling understands. */
export function sgmmCalls(code: string): { pointer: string; offset: string }[] {
  return [
    ...[...code.matchAll(SGMM_LOAD)].map(([, , , pointer, offset]) => ({ pointer, offset })),
    ...[...code.matchAll(SGMM_STORE)].map(([, , pointer, offset]) => ({ pointer, offset })),
  ];
}

/**
 * The cache key of a kernel: its name (which body, which path) and every specialization value its
 * source is filled with, so that two builds share a key exactly when they compile the same code.
 */
export function kernelKey(kernel: string, values: SpecValues): string {
  return `${kernel}[${Object.entries(values).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
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

/**
 * Creates a compute pipeline; compile and validation errors become GPUValidationError naming
 * `label`. Only the synchronous create calls run inside error scopes (captureErrors), so builds
 * running at once on one device each see their own errors.
 */
export async function buildPipeline(
  dev: FlashDevice, label: string, code: string, entryPoint = 'main', layout?: GPUPipelineLayout,
): Promise<GPUComputePipeline> {
  checkDevice(dev, label);
  const device = dev.device;
  const mod = captureErrors(device, () => device.createShaderModule({ label: `${label}.module`, code }));
  const info = await mod.value.getCompilationInfo();
  const moduleErrors = await mod.errors;
  const errors = info.messages.filter((m) => m.type === 'error');
  if (errors.length)
    throw new GPUValidationError(label, errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('; '));
  if (moduleErrors.length) throw new GPUValidationError(label, moduleErrors.join('; '));
  // createComputePipelineAsync rejects (GPUPipelineError) on a validation or internal error.
  const pipe = captureErrors(device, () => device.createComputePipelineAsync({ label, layout: layout ?? 'auto', compute: { module: mod.value, entryPoint } }));
  let pipeline: GPUComputePipeline;
  try {
    pipeline = await pipe.value;
  } catch (e) {
    throw new GPUValidationError(label, (e as Error).message);
  }
  const pipelineErrors = await pipe.errors;
  if (pipelineErrors.length) throw new GPUValidationError(label, pipelineErrors.join('; '));
  return pipeline;
}

/** Splits `groups` workgroups over x and y so neither exceeds the per-dimension limit. */
export function grid2D(groups: number, maxPerDim: number): [number, number] {
  if (groups <= maxPerDim) return [Math.max(1, groups), 1];
  const y = Math.ceil(groups / maxPerDim);
  return [Math.ceil(groups / y), y];
}

/** One dimension of a dispatch: its workgroups, what they are, and what to do where they pass the limit. */
export interface GridDim {
  count: number;
  what: string;
  fix: string;
}

/**
 * Throws a LimitError naming the first dimension whose workgroups pass the device's
 * maxComputeWorkgroupsPerDimension (65535 on every adapter seen), before any GPU work: Dawn would
 * otherwise reject the dispatch with a validation error at submit.
 */
export function checkGrid(dev: FlashDevice, dims: GridDim[]): void {
  const max = dev.device.limits.maxComputeWorkgroupsPerDimension;
  const over = dims.find((d) => d.count > max);
  if (over)
    throw new LimitError(`${over.what} need ${over.count} workgroups along one dispatch dimension; this device allows ${max} (maxComputeWorkgroupsPerDimension): ${over.fix}`);
}
