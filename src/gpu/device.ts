/**
 * Acquiring WebGPU devices. Library code never touches `navigator`: callers hand in a `GPU`
 * (the browser's `navigator.gpu`, or Dawn's from ./node.ts). One device per adapter: several
 * devices (CP ranks) means several `requestAdapter()` calls.
 */
import { DeviceLostError, DeviceRequestError, GPUOutOfMemoryError, GPUValidationError, InputError, NoAdapterError } from '../errors.js';
import { BufferTracker } from './tracker.js';
import { KernelTuning, currentProcessTuning, resolveTuning } from '../kernels/tuning.js';
import { easeDawnPolling } from './dawnPolling.js';
import { robustShadersOf } from './robustness.js';

/** Optional features the kernels can use when the adapter has them. */
export const WANTED_FEATURES = [
  'shader-f16',
  'subgroups',
  'timestamp-query',
  'chromium-experimental-subgroup-matrix',
] as const;

/** Limits raised to the adapter's maximum (defaults are far below what the kernels want). */
const WANTED_LIMITS = [
  'maxComputeWorkgroupStorageSize',
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxStorageBuffersPerShaderStage',
  'maxComputeWorkgroupsPerDimension',
] as const;

export interface AdapterSummary {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  features: string[];
  limits: Record<string, number>;
  subgroupMatrixConfigs: unknown[];
  /** Subgroup size range (0 where the implementation does not say). */
  subgroupMinSize: number;
  subgroupMaxSize: number;
}

export interface FlashDevice {
  /** Index among the devices acquired together (the CP rank when used in a ring). */
  index: number;
  device: GPUDevice;
  adapter: AdapterSummary;
  features: Set<string>;
  tracker: BufferTracker;
  hasF16: boolean;
  hasSubgroups: boolean;
  hasTimestamps: boolean;
  hasSubgroupMatrix: boolean;
  /** A CPU implementation (lavapipe/llvmpipe, SwiftShader): shaders are compiled for short compile time. */
  isCPU: boolean;
  /** Its shaders keep the robustness transform (browsers; Node with FLASHRING_ROBUST=1: robustness.ts). */
  robustShaders: boolean;
  /** Set when the device is lost or destroyed; kernels and the ring check it. */
  lostReason: string | null;
  /** Uncaptured WebGPU errors seen on this device (each is also thrown by the next checkDevice()). */
  uncaptured: string[];
  /** Whether one of them was the device running out of memory (checkDevice then throws GPUOutOfMemoryError). */
  uncapturedOom: boolean;
  /** The pins of the kernels built on this device (AcquireOptions.tuning, resolved). */
  readonly tuning: Readonly<KernelTuning>;
  /**
   * Calls `fn` once when the device is lost (at once, asynchronously, if it already is); returns
   * the unsubscribe. For waits that end: a `device.lost.then(...)` per call would stay attached to
   * the never-settling promise, with everything its closure holds, for the device's lifetime.
   */
  onLost(fn: (info: GPUDeviceLostInfo) => void): () => void;
  /** Destroys every tracked buffer and the device. */
  destroy(): void;
}

export interface AcquireOptions {
  /** Features to leave off even if the adapter has them (e.g. to force the f32 path). */
  disableFeatures?: string[];
  powerPreference?: GPUPowerPreference;
  /** Kernel pins for these devices (default: the process's, none unless its entry point set them: tuning.ts). */
  tuning?: KernelTuning;
}

/**
 * The most invocations a kernel's workgroup may have: every kernel declares a one-dimensional @workgroup_size(WG), so
 * both maxComputeInvocationsPerWorkgroup and maxComputeWorkgroupSizeX bound WG (WebGPU's defaults 256 and 256; an
 * adapter may allow more invocations than its X size). A limits object without the X size (a planner's fake) gives
 * the first alone.
 */
export function maxWorkgroupInvocations(limits: Pick<GPUSupportedLimits, 'maxComputeInvocationsPerWorkgroup'> & Partial<Pick<GPUSupportedLimits, 'maxComputeWorkgroupSizeX'>>): number {
  return Math.min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX ?? Infinity);
}

export function summarizeAdapter(adapter: GPUAdapter): AdapterSummary {
  const info = adapter.info as GPUAdapterInfo & { subgroupMatrixConfigs?: unknown[] };
  const limits: Record<string, number> = {};
  for (const k of [...WANTED_LIMITS, 'minStorageBufferOffsetAlignment', 'maxComputeWorkgroupSizeY']) {
    limits[k] = Number((adapter.limits as unknown as Record<string, number>)[k]);
  }
  return {
    vendor: info.vendor ?? '',
    architecture: info.architecture ?? '',
    device: info.device ?? '',
    description: info.description ?? '',
    features: [...adapter.features].map(String).sort(),
    limits,
    subgroupMinSize: Number((info as unknown as Record<string, number>).subgroupMinSize ?? 0),
    subgroupMaxSize: Number((info as unknown as Record<string, number>).subgroupMaxSize ?? 0),
    // Native objects with getters: read each field (spreading them gives {}).
    subgroupMatrixConfigs: [...(info.subgroupMatrixConfigs ?? [])].map((c) => {
      const x = c as Record<string, unknown>;
      return { componentType: x.componentType, resultComponentType: x.resultComponentType, M: x.M, N: x.N, K: x.K };
    }),
  };
}

export function adapterName(a: AdapterSummary): string {
  return a.description || a.device || `${a.vendor} ${a.architecture}`.trim() || 'unknown adapter';
}

const NO_ADAPTER_HELP =
  'No WebGPU adapter was found. On Debian/Ubuntu run `npm start` or `bash scripts/setup-system.sh` as root ' +
  '(installs the Vulkan loader and Mesa lavapipe from bookworm-backports); on a GPU machine install its ' +
  'Vulkan driver; in a browser use one with WebGPU enabled (Chrome/Edge 113+, or --enable-unsafe-webgpu).';

async function requestAdapter(gpu: GPU, opts: AcquireOptions): Promise<GPUAdapter> {
  let adapter: GPUAdapter | null = null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: opts.powerPreference ?? 'high-performance' });
  } catch (e) {
    throw new NoAdapterError(`${NO_ADAPTER_HELP} (requestAdapter failed: ${(e as Error).message})`);
  }
  if (!adapter) throw new NoAdapterError(NO_ADAPTER_HELP);
  return adapter;
}

/**
 * The adapter's device with `desc`'s features and limits (each one the adapter says it has); a
 * refusal (a driver that offers what it cannot give) is a DeviceRequestError naming the adapter,
 * what was asked for, and what to do.
 */
async function requestDevice(adapter: GPUAdapter, summary: AdapterSummary, desc: GPUDeviceDescriptor): Promise<GPUDevice> {
  try {
    return await adapter.requestDevice(desc);
  } catch (e) {
    const features = [...(desc.requiredFeatures ?? [])].join(', ') || 'none';
    const limits = Object.entries(desc.requiredLimits ?? {}).map(([k, v]) => `${k}=${v}`).join(', ');
    throw new DeviceRequestError(
      `the adapter ${adapterName(summary)} refused a device with the features and limits it reports (features: ${features}; limits: ${limits}): ` +
      `${(e as Error).message}. Update its driver (or the browser), or use another adapter (FLASHRING_ADAPTER=<part of its name> in Node; ` +
      '`flashring info` lists them); from the library, AcquireOptions.disableFeatures leaves a feature off.',
    );
  }
}

/** Acquires `count` devices, each from its own adapter, with every useful feature and limit. */
export async function acquireDevices(gpu: GPU, count: number, opts: AcquireOptions = {}): Promise<FlashDevice[]> {
  if (!Number.isInteger(count) || count < 1) throw new InputError(`device count must be a positive integer (one device per CP rank), got ${count}`);
  const out: FlashDevice[] = [];
  const tuning = resolveTuning(opts.tuning ?? currentProcessTuning());
  try {
    for (let i = 0; i < count; i++) out.push(await acquireOne(gpu, i, { ...opts, tuning }));
  } catch (e) {
    for (const d of out) d.destroy();
    throw e;
  }
  return out;
}

async function acquireOne(gpu: GPU, index: number, opts: AcquireOptions): Promise<FlashDevice> {
  const adapter = await requestAdapter(gpu, opts);
  const summary = summarizeAdapter(adapter);
  const off = new Set(opts.disableFeatures ?? []);
  const requiredFeatures = WANTED_FEATURES.filter((f) => adapter.features.has(f) && !off.has(f)) as GPUFeatureName[];
  const requiredLimits: Record<string, number> = {};
  for (const k of WANTED_LIMITS) {
    const v = (adapter.limits as unknown as Record<string, number>)[k];
    if (typeof v === 'number') requiredLimits[k] = v;
  }
  const device = await requestDevice(adapter, summary, { label: `flashring.device${index}`, requiredFeatures, requiredLimits });
  const features = new Set<string>(requiredFeatures);
  const tracker = new BufferTracker(device);
  const lostListeners = new Set<(info: GPUDeviceLostInfo) => void>();
  let lostInfo: GPUDeviceLostInfo | null = null;
  const fd: FlashDevice = {
    index,
    device,
    adapter: summary,
    features,
    tracker,
    hasF16: features.has('shader-f16'),
    hasSubgroups: features.has('subgroups'),
    hasTimestamps: features.has('timestamp-query'),
    hasSubgroupMatrix: features.has('chromium-experimental-subgroup-matrix'),
    isCPU: isCpuAdapter(summary),
    robustShaders: robustShadersOf(gpu),
    lostReason: null,
    uncaptured: [],
    uncapturedOom: false,
    tuning: opts.tuning ?? currentProcessTuning(),
    onLost(fn) {
      if (lostInfo) {
        const info = lostInfo;
        queueMicrotask(() => fn(info));
        return () => {};
      }
      const once = (info: GPUDeviceLostInfo) => fn(info);
      lostListeners.add(once);
      return () => void lostListeners.delete(once);
    },
    destroy() {
      tracker.destroyAll();
      if (!fd.lostReason) fd.lostReason = 'destroyed';
      device.destroy();
    },
  };
  // The only reaction on device.lost: the listeners come and go through onLost.
  device.lost.then((info) => {
    if (!fd.lostReason) fd.lostReason = `${info.reason}: ${info.message}`;
    lostInfo = info;
    for (const fn of [...lostListeners]) fn(info);
    lostListeners.clear();
  });
  if (fd.isCPU) easeDawnPolling(); // Dawn's polling would take a core from the CPU adapter's compiles
  device.onuncapturederror = (ev: GPUUncapturedErrorEvent) => {
    fd.uncaptured.push(ev.error.message);
    // By the class's name: Node's Dawn binding gives no global GPUOutOfMemoryError to test instanceof against.
    if (ev.error.constructor?.name === 'GPUOutOfMemoryError') fd.uncapturedOom = true;
  };
  return fd;
}

/**
 * The same device with other kernel pins (autotune's candidates): everything else — the GPUDevice,
 * its tracker, whether it was lost — read through from `dev`, so kernels built on it share its
 * pipeline cache (their keys hold their tiles).
 */
export function withTuning(dev: FlashDevice, tuning: KernelTuning): FlashDevice {
  return Object.create(dev, { tuning: { value: resolveTuning(tuning), enumerable: true } }) as FlashDevice;
}

export function isCpuAdapter(a: Pick<AdapterSummary, 'vendor' | 'architecture' | 'device' | 'description'>): boolean {
  return /llvmpipe|lavapipe|swiftshader|\bcpu\b/i.test([a.vendor, a.architecture, a.device, a.description].join(' '));
}

/** Throws if the device is lost or an uncaptured error was reported. */
export function checkDevice(fd: FlashDevice, what: string): void {
  if (fd.lostReason) throw new DeviceLostError(`device ${fd.index} (${adapterName(fd.adapter)}) is lost (${fd.lostReason}) during ${what}`, fd.index);
  if (fd.uncaptured.length) {
    const msg = fd.uncaptured.splice(0).join('; '), oom = fd.uncapturedOom;
    fd.uncapturedOom = false;
    throw oom ? new GPUOutOfMemoryError(what, msg, fd.tracker.snapshot().liveBytes) : new GPUValidationError(what, msg);
  }
}

const SCOPES: GPUErrorFilter[] = ['validation', 'out-of-memory', 'internal'];

/**
 * Runs the synchronous `fn` inside validation, out-of-memory and internal error scopes and pops
 * them at once, before anything else can run: a device has one stack of scopes, so scopes held
 * across an `await` would catch (and be popped by) the work of a concurrent build. What `fn`
 * returns is `value` (a promise it returns is not awaited: async work reports on its own, e.g.
 * createComputePipelineAsync rejects); `errors` holds the messages the scopes caught.
 */
export function captureErrors<T>(device: GPUDevice, fn: () => T): { value: T; errors: Promise<string[]> } {
  for (const f of SCOPES) device.pushErrorScope(f);
  let value: T;
  let pops: Promise<GPUError | null>[];
  try {
    value = fn();
  } finally {
    pops = SCOPES.map(() => device.popErrorScope());
    // Where fn threw, no caller awaits the pops: observed here, so that a lost device's rejection is not unhandled.
    for (const p of pops) p.catch(() => {});
  }
  const errors = Promise.all(pops).then((errs) => errs.filter((e): e is GPUError => !!e).map((e) => e.message));
  return { value, errors };
}
