/**
 * What checkDevice (src/gpu/device.ts) throws for an error the device reported outside any error scope: a real
 * validation error as GPUValidationError; an out-of-memory error as GPUOutOfMemoryError, saying how much flashring
 * held on the device and what to do (it read as a validation error under the next step's label, with no advice).
 */
import { describe, expect, it } from 'vitest';
import { testDevice } from './gpu.js';
import { checkDevice } from '../src/gpu/device.js';
import { GPUOutOfMemoryError, GPUValidationError } from '../src/errors.js';

describe('uncaptured device errors', () => {
  it('a validation error is a GPUValidationError naming the step; the next check is clean', async () => {
    const dev = await testDevice();
    // MAP_READ with STORAGE is invalid: the device makes an error buffer and reports it uncaptured.
    dev.device.createBuffer({ label: 'bad', size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
    await dev.device.queue.onSubmittedWorkDone();
    for (let i = 0; i < 50 && !dev.uncaptured.length; i++) await new Promise((r) => setTimeout(r, 10));
    const err = (() => { try { checkDevice(dev, 'step 3'); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(GPUValidationError);
    expect(err).not.toBeInstanceOf(GPUOutOfMemoryError);
    expect((err as Error).message).toMatch(/^WebGPU error in step 3: /);
    expect(() => checkDevice(dev, 'step 4')).not.toThrow();
  });

  it('an out-of-memory error is a GPUOutOfMemoryError with the bytes flashring held and what to do; the next check is clean', async () => {
    const dev = await testDevice();
    const held = dev.tracker.create({ label: 'held', size: 3 * 2 ** 20, usage: GPUBufferUsage.STORAGE });
    // Dawn on lavapipe would take the host's memory before it ran out: the event as the device reports one.
    class GPUOutOfMemoryError_ { constructor(readonly message: string) {} }
    Object.defineProperty(GPUOutOfMemoryError_, 'name', { value: 'GPUOutOfMemoryError' });
    dev.device.onuncapturederror!.call(dev.device, { error: new GPUOutOfMemoryError_('Out of memory allocating buffer "k1"') } as unknown as GPUUncapturedErrorEvent);
    const err = (() => { try { checkDevice(dev, 'rank 1 forward step 2 (ring)'); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(GPUOutOfMemoryError);
    expect(err).toBeInstanceOf(GPUValidationError);
    expect((err as Error).message).toBe('the GPU ran out of memory in rank 1 forward step 2 (ring) (Out of memory allocating buffer "k1"), with 3.0 MiB of flashring\'s buffers live on it: ' +
      'give it less at once (shorter sequences, fewer heads, a smaller batch), or more context-parallel ranks to share it');
    expect(() => checkDevice(dev, 'next')).not.toThrow();
    dev.tracker.destroy(held);
  });
});
