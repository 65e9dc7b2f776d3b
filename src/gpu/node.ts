/**
 * Dawn for Node (the `webgpu` npm package). Only Node code imports this file.
 * Flags: NVIDIA exposes shader-f16 only with `vulkan_enable_f16_on_nvidia`; `allow_unsafe_apis`
 * unlocks subgroup matrices; finer timestamps with timestamp quantization off.
 * `disable_robustness` (on unless FLASHRING_ROBUST=1) turns off Tint's robustness transform:
 * the index clamps on every function/private/workgroup array access, the bounds selects around
 * subgroup-matrix loads and stores, and the loop counters on loops it cannot prove finite
 * (1.6× on the tensor-core GEMM, 2.5–3.2× on the scalar kernels on the H200: shared/PLATFORM.md).
 * Safe here because every kernel's indices are in range by construction (the reasoning sits in
 * each shader's comments; test/robust.test.ts compares every kernel bitwise in both modes).
 * Storage buffers stay guarded by the driver (Vulkan robustBufferAccess / robustness2).
 * FLASHRING_ADAPTER=<substring of the adapter's device name> picks an adapter;
 * FLASHRING_DAWN_FLAGS adds raw Dawn flags (`;`-separated entries of `key=value`).
 */
import { InputError, NoAdapterError } from '../errors.js';
import { markUncheckedShaders } from './robustness.js';

let cached: GPU | null = null;

/**
 * True when Dawn keeps its shader robustness transform (FLASHRING_ROBUST=1), as browsers always do;
 * unset, empty or 0: off. Any other value is refused (a "true" or "yes" silently meaning off would
 * time the wrong kernels).
 */
export function robustShaders(): boolean {
  const v = process.env.FLASHRING_ROBUST;
  if (v === undefined || v === '' || v === '0') return false;
  if (v === '1') return true;
  throw new InputError(`FLASHRING_ROBUST='${v}': give 1 (keep Dawn's shader robustness, as browsers run) or 0 (off, the default under Node)`);
}

/** Whether this run's command line gave --robust (main's setRobustFlag), for saying what turned robustness on. */
let robustFlag = false;
/** FLASHRING_ROBUST as it was before --robust set it (put back when a later command in the same process gives no --robust). */
let envBefore: string | undefined;

/**
 * main's record of --robust: it keeps the transform on through FLASHRING_ROBUST=1 (which rank processes inherit);
 * a later command in the same process without it (tests run several) gets the variable back as it was.
 */
export function setRobustFlag(given: boolean): void {
  if (given && !robustFlag) envBefore = process.env.FLASHRING_ROBUST;
  if (!given && robustFlag) {
    if (envBefore === undefined) delete process.env.FLASHRING_ROBUST;
    else process.env.FLASHRING_ROBUST = envBefore;
  }
  robustFlag = given;
  if (given) process.env.FLASHRING_ROBUST = '1';
}

/** What turned the robustness transform on, as a user would give it (--robust or FLASHRING_ROBUST=1); null when off. */
export function robustSource(): '--robust' | 'FLASHRING_ROBUST=1' | null {
  if (!robustShaders()) return null;
  return robustFlag ? '--robust' : 'FLASHRING_ROBUST=1';
}

/**
 * Dawn's flags: each `enable-dawn-features=` / `disable-dawn-features=` entry replaces an
 * earlier one, so the toggles of every source (ours, FLASHRING_DAWN_FLAGS, extraFlags) are
 * merged into one entry of each kind; other entries are kept in order.
 */
export function dawnFlags(robust: boolean, extra: string[]): string[] {
  const toggles: Record<'enable' | 'disable', string[]> = {
    enable: ['allow_unsafe_apis', 'vulkan_enable_f16_on_nvidia', ...(robust ? [] : ['disable_robustness'])],
    disable: ['timestamp_quantization'],
  };
  const rest: string[] = [];
  for (const f of extra) {
    const m = /^(enable|disable)-dawn-features=(.*)$/.exec(f);
    if (!m) rest.push(f);
    else for (const t of m[2].split(',').filter(Boolean)) if (!toggles[m[1] as 'enable' | 'disable'].includes(t)) toggles[m[1] as 'enable' | 'disable'].push(t);
  }
  return [`enable-dawn-features=${toggles.enable.join(',')}`, `disable-dawn-features=${toggles.disable.join(',')}`, ...rest];
}

/**
 * Whether Dawn's flags keep the robustness transform: not when `disable_robustness` is enabled and not
 * also disabled (FLASHRING_DAWN_FLAGS may name it in either list; the device's mark follows the flags
 * Dawn gets, not FLASHRING_ROBUST alone).
 */
export function keepsRobustness(flags: string[]): boolean {
  const list = (kind: string) => flags.filter((f) => f.startsWith(`${kind}-dawn-features=`)).flatMap((f) => f.split('=')[1].split(','));
  return !list('enable').includes('disable_robustness') || list('disable').includes('disable_robustness');
}

/**
 * The `GPU` object of Dawn for Node. `robust` overrides FLASHRING_ROBUST (tests create one GPU
 * object of each mode: Dawn keeps the toggles of each `create()` apart within one process).
 */
export async function nodeGPU(opts: { adapter?: string; extraFlags?: string[]; robust?: boolean } = {}): Promise<GPU> {
  const plain = !opts.adapter && !opts.extraFlags && opts.robust === undefined;
  if (cached && plain) return cached;
  let mod: typeof import('webgpu');
  try {
    mod = await import('webgpu');
  } catch (e) {
    throw new NoAdapterError(
      `Dawn for Node (the 'webgpu' package) could not be loaded: ${(e as Error).message}. ` +
        'Run `npm ci`; on Linux Dawn also needs the Vulkan loader (libvulkan1) and a Vulkan driver: ' +
        'run `bash scripts/setup-system.sh` as root.',
    );
  }
  Object.assign(globalThis, mod.globals);
  const extra: string[] = [];
  const adapter = opts.adapter ?? process.env.FLASHRING_ADAPTER; // '' = every adapter
  if (adapter) extra.push(`adapter=${adapter}`);
  if (process.env.FLASHRING_DAWN_FLAGS) extra.push(...dawnFlagsFromEnv(process.env.FLASHRING_DAWN_FLAGS));
  if (opts.extraFlags) extra.push(...opts.extraFlags);
  if (!process.env.XDG_RUNTIME_DIR) process.env.XDG_RUNTIME_DIR = '/tmp';
  const flags = dawnFlags(opts.robust ?? robustShaders(), extra);
  const gpu = mod.create(flags) as unknown as GPU;
  if (!keepsRobustness(flags)) markUncheckedShaders(gpu);
  if (plain) cached = gpu;
  return gpu;
}

/**
 * FLASHRING_DAWN_FLAGS: Dawn flags as `key=value` entries separated by `;` (Dawn refuses any other
 * entry with an exception of its own, so each is checked here first).
 */
export function dawnFlagsFromEnv(v: string): string[] {
  const entries = v.split(';').filter(Boolean);
  const bad = entries.find((e) => !/^[A-Za-z][\w-]*=/.test(e));
  if (bad !== undefined)
    throw new InputError(`FLASHRING_DAWN_FLAGS='${v}': each entry is a Dawn flag as key=value (e.g. enable-dawn-features=allow_unsafe_apis), separated by ';'; '${bad}' is not`);
  return entries;
}

/**
 * With FLASHRING_ADAPTER set and no adapter found: the line saying no adapter matches it and
 * naming the adapters that do exist (null when the variable is unset).
 */
export async function adapterMismatch(): Promise<string | null> {
  const want = process.env.FLASHRING_ADAPTER;
  if (!want) return null;
  const gpu = await nodeGPU({ adapter: '', extraFlags: [] });
  const names = new Set<string>();
  for (const o of [{ powerPreference: 'high-performance' }, { powerPreference: 'low-power' }, { forceFallbackAdapter: true }] as GPURequestAdapterOptions[]) {
    const a = await gpu.requestAdapter(o).catch(() => null);
    if (a) names.add(a.info.description || a.info.device || a.info.vendor || 'unnamed adapter');
  }
  const have = names.size ? `the adapters here: ${[...names].map((n) => `'${n}'`).join(', ')}` : 'no WebGPU adapter is found here at all';
  return `no WebGPU adapter matches FLASHRING_ADAPTER='${want}' (a part of the adapter's name); ${have}. Unset it or pick one of these.`;
}

/** Drops the cached GPU object so Node can exit (destroy devices first). */
export function releaseNodeGPU(): void {
  cached = null;
}
