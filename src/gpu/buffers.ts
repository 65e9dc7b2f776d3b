/**
 * Buffer upload and readback through the device's tracker, and the per-binding size limit.
 */
import { LimitError } from '../errors.js';
import { FlashDevice, checkDevice } from './device.js';

/** The size of a buffer for `bytes` bytes: rounded up to 4, at least 4 (the ledgers count this). */
export const bufferSize = (bytes: number) => Math.max(4, Math.ceil(bytes / 4) * 4);

/** Storage buffer through the tracker (sizes rounded up to 4 bytes). */
export function storage(dev: FlashDevice, bytes: number, label: string, extraUsage = 0): GPUBuffer {
  return dev.tracker.create({
    label,
    size: bufferSize(bytes),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST | extraUsage,
  });
}

/** Creates a buffer holding `data` (mapped at creation, no staging). */
export function upload(dev: FlashDevice, data: ArrayBufferView, label: string, usage: number = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST): GPUBuffer {
  const buf = dev.tracker.create({ label, size: bufferSize(data.byteLength), usage, mappedAtCreation: true });
  new Uint8Array(buf.getMappedRange()).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  buf.unmap();
  return buf;
}

/** Copies `bytes` from a GPU buffer back to the host (a staging buffer of bufferSize(bytes); nothing to copy for 0). */
export async function readback(dev: FlashDevice, src: GPUBuffer, bytes: number, srcOffset = 0): Promise<ArrayBuffer> {
  if (bytes === 0) return new ArrayBuffer(0);
  const size = bufferSize(bytes);
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
