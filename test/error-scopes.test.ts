/**
 * Error scopes under concurrency, on a fake device whose scopes are one stack per device as in
 * WebGPU: two pipeline builds running at once (MergeKernel's add and finalize) each report their
 * own errors, and every scope pushed is popped.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { FlashDevice } from '../src/gpu/device.js';
import { DeviceLostError, GPUValidationError } from '../src/errors.js';
import { MergeKernel } from '../src/kernels/merge.js';
import { buildPipeline } from '../src/kernels/pipeline.js';
import { warm } from '../src/cp/launch/stage.js';
import type { RankKernels } from '../src/cp/rank/rank.js';

const later = <T>(v: T) => new Promise<T>((r) => setTimeout(() => r(v), 1));

/** A device whose modules labelled with a word of `bad` raise a validation error (only through the scopes). */
function fakeDevice(bad: string[]) {
  const stack: { filter: GPUErrorFilter; error: GPUError | null }[] = [];
  const raise = (filter: GPUErrorFilter, message: string) => {
    const scope = [...stack].reverse().find((s) => s.filter === filter);
    if (scope && !scope.error) scope.error = { message } as GPUError;
  };
  const device = {
    label: 'fake',
    limits: { maxComputeWorkgroupsPerDimension: 65535 },
    pushErrorScope: (filter: GPUErrorFilter) => void stack.push({ filter, error: null }),
    popErrorScope: () => {
      const s = stack.pop();
      return s ? later(s.error) : Promise.reject(new Error('popErrorScope: empty stack'));
    },
    createShaderModule: ({ label }: GPUShaderModuleDescriptor) => {
      if (bad.some((b) => label!.includes(b))) raise('validation', `${label}'s module is invalid`);
      return { label, getCompilationInfo: () => later({ messages: [] }) };
    },
    createComputePipelineAsync: ({ label }: GPUComputePipelineDescriptor) => later({ label }),
    createBindGroupLayout: ({ label }: GPUBindGroupLayoutDescriptor) => ({ label }),
    createPipelineLayout: ({ label }: GPUPipelineLayoutDescriptor) => ({ label }),
  };
  const dev = { index: 0, device, adapter: { vendor: 'fake' }, lostReason: null, uncaptured: [], tuning: {} } as unknown as FlashDevice;
  return { dev, stack, raise };
}

describe('error scopes with builds running at once on one device', () => {
  beforeEach(() => vi.stubGlobal('GPUShaderStage', { COMPUTE: 4 }));
  afterEach(() => vi.unstubAllGlobals());

  it("MergeKernel: only finalize's module is invalid, and the error names finalize, not add", async () => {
    const { dev, stack } = fakeDevice(['finalize']);
    const err = await MergeKernel.create(dev, 64).catch((e) => e);
    expect(err).toBeInstanceOf(GPUValidationError);
    expect(err.label).toBe('Merge[D=64].finalize');
    expect(err.message).toBe("WebGPU error in Merge[D=64].finalize: Merge[D=64].finalize.module's module is invalid");
    expect(stack).toHaveLength(0);
  });

  it('two buildPipeline calls at once: the bad one fails with its own label, the good one builds', async () => {
    const { dev, stack } = fakeDevice(['bad']);
    const [good, bad] = await Promise.allSettled([buildPipeline(dev, 'good', ''), buildPipeline(dev, 'bad', '')]);
    expect(good.status).toBe('fulfilled');
    expect(bad.status).toBe('rejected');
    expect((bad as PromiseRejectedResult).reason.label).toBe('bad');
    expect(stack).toHaveLength(0);
  });
});

describe("the kernels' warm-up (stage.ts warm)", () => {
  beforeEach(() => vi.stubGlobal('GPUBufferUsage', { STORAGE: 128, COPY_SRC: 4, COPY_DST: 8 }));
  afterEach(() => vi.unstubAllGlobals());

  /** A fake device whose submit calls `onSubmit`, and kernels that encode nothing. */
  function warmRig(onSubmit: (f: ReturnType<typeof fakeDevice>) => void) {
    const f = fakeDevice([]);
    const device = f.dev.device as unknown as Record<string, unknown>;
    device.createCommandEncoder = () => ({ finish: () => ({}) });
    device.queue = { submit: () => onSubmit(f), onSubmittedWorkDone: () => later(undefined) };
    (f.dev as { tracker: unknown }).tracker = { create: (d: GPUBufferDescriptor) => ({ ...d }), destroy: () => {} };
    const nothing = () => {};
    const k = { fwd: { encode: nothing, built: {} }, merge: { encodeAdd: nothing, encodeFinalize: nothing }, bwd: null } as unknown as RankKernels;
    return { ...f, k };
  }

  it('a validation error of its submission rejects the warm-up, naming it (not a later step)', async () => {
    const { dev, k, stack } = warmRig((f) => f.raise('validation', 'bad bind group'));
    const err = await warm(dev, k, 64, 'f32').catch((e) => e);
    expect(err).toBeInstanceOf(GPUValidationError);
    expect(err.message).toBe('WebGPU error in kernel warm-up: bad bind group');
    expect(stack).toHaveLength(0);
  });

  it('a device lost during the warm-up is a DeviceLostError naming it', async () => {
    const { dev, k } = warmRig((f) => void ((f.dev as { lostReason: string }).lostReason = 'unknown: gone'));
    const err = await warm(dev, k, 64, 'f32').catch((e) => e);
    expect(err).toBeInstanceOf(DeviceLostError);
    expect(err.message).toMatch(/lost \(unknown: gone\) during kernel warm-up/);
  });
});
