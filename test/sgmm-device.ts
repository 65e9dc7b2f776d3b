/**
 * A fake FlashDevice for the tensor-core planner (src/kernels/sgmmTiles.ts planSgmm): an adapter with subgroup
 * matrices and subgroups of 32, as far as the planner reads one, with the workgroup-memory and invocation limits a
 * test gives (the workgroup's X size as large as its invocations unless given). Its GPUDevice's create calls are spies, so a test can tell that no pipeline was made; it runs no kernel.
 */
import { vi } from 'vitest';
import type { FlashDevice } from '../src/gpu/device.js';
import { resolveTuning, type KernelTuning } from '../src/kernels/tuning.js';

/** The GPUDevice calls a kernel build would make first: none may be made for a tile the planner refuses. */
export const CREATE_CALLS = ['createShaderModule', 'createComputePipeline', 'createComputePipelineAsync', 'createBindGroupLayout', 'createPipelineLayout'] as const;

export function sgmmDevice(maxBytes: number, maxInvocations: number, tuning: KernelTuning = {}, maxSizeX = maxInvocations): FlashDevice {
  const device = {
    limits: { maxComputeWorkgroupStorageSize: maxBytes, maxComputeInvocationsPerWorkgroup: maxInvocations, maxComputeWorkgroupSizeX: maxSizeX },
    ...Object.fromEntries(CREATE_CALLS.map((c) => [c, vi.fn()])),
  };
  return {
    hasSubgroupMatrix: true, hasSubgroups: true, hasF16: true, isCPU: false, robustShaders: false, tuning: resolveTuning(tuning),
    adapter: { subgroupMinSize: 32, subgroupMaxSize: 32, subgroupMatrixConfigs: [] }, device,
  } as unknown as FlashDevice;
}

/** How many of the device's create calls were made. */
export const createCalls = (dev: FlashDevice) =>
  CREATE_CALLS.reduce((n, c) => n + (dev.device as unknown as Record<string, { mock: { calls: unknown[] } }>)[c].mock.calls.length, 0);
