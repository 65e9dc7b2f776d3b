/**
 * Dawn for Node (the `webgpu` npm package). Only Node code imports this file.
 * Flags: NVIDIA exposes shader-f16 only with `vulkan_enable_f16_on_nvidia`; `allow_unsafe_apis`
 * unlocks subgroup matrices; finer timestamps with timestamp quantization off.
 * FLASHRING_ADAPTER=<substring of the adapter's device name> picks an adapter;
 * FLASHRING_DAWN_FLAGS adds raw Dawn flags (comma separated entries of `key=value`).
 */
import { NoAdapterError } from '../errors.js';

let cached: GPU | null = null;

export async function nodeGPU(opts: { adapter?: string; extraFlags?: string[] } = {}): Promise<GPU> {
  if (cached && !opts.adapter && !opts.extraFlags) return cached;
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
  const flags = [
    'enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia',
    'disable-dawn-features=timestamp_quantization',
  ];
  const adapter = opts.adapter ?? process.env.FLASHRING_ADAPTER; // '' = every adapter
  if (adapter) flags.push(`adapter=${adapter}`);
  if (process.env.FLASHRING_DAWN_FLAGS) flags.push(...process.env.FLASHRING_DAWN_FLAGS.split(';').filter(Boolean));
  if (opts.extraFlags) flags.push(...opts.extraFlags);
  if (!process.env.XDG_RUNTIME_DIR) process.env.XDG_RUNTIME_DIR = '/tmp';
  const gpu = mod.create(flags) as unknown as GPU;
  if (!opts.adapter && !opts.extraFlags) cached = gpu;
  return gpu;
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
