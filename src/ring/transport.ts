/**
 * The transport: the only code that moves data between devices. WebGPU has no peer-to-peer
 * copies, so a chunk goes device A → mappable staging buffer on A → host → queue.writeBuffer on
 * device B. Kept an interface so ranks in separate processes (one per GPU, a socket or shared
 * memory between them) can be added without touching the schedule or the orchestrator.
 */
import { FlashDevice, checkDevice } from '../gpu/device.js';

export interface TransferItem {
  src: GPUBuffer;
  dst: GPUBuffer;
  bytes: number;
}

export interface TransferResult {
  bytes: number;
  /** Host clock (performance.now()) when the transfer started and when the data was on `to`. */
  start: number;
  end: number;
}

export interface Transport {
  /** Copies every item's src (on `from`) into its dst (on `to`); resolves once `to` holds the data. */
  send(from: FlashDevice, to: FlashDevice, items: TransferItem[]): Promise<TransferResult>;
}

const align4 = (n: number) => Math.ceil(n / 4) * 4;

export class StagingTransport implements Transport {
  async send(from: FlashDevice, to: FlashDevice, items: TransferItem[]): Promise<TransferResult> {
    const start = performance.now();
    const bytes = items.reduce((a, it) => a + it.bytes, 0);
    if (!items.length || bytes === 0) return { bytes: 0, start, end: start };
    if (from === to) {
      const enc = from.device.createCommandEncoder({ label: 'transport.local' });
      for (const it of items) enc.copyBufferToBuffer(it.src, 0, it.dst, 0, align4(it.bytes));
      from.device.queue.submit([enc.finish()]);
      await from.device.queue.onSubmittedWorkDone();
      return { bytes, start, end: performance.now() };
    }
    const total = items.reduce((a, it) => a + align4(it.bytes), 0);
    const staging = from.tracker.create({ label: 'transport.staging', size: total, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    try {
      const enc = from.device.createCommandEncoder({ label: 'transport.stage' });
      let off = 0;
      for (const it of items) {
        enc.copyBufferToBuffer(it.src, 0, staging, off, align4(it.bytes));
        off += align4(it.bytes);
      }
      from.device.queue.submit([enc.finish()]);
      try {
        await staging.mapAsync(GPUMapMode.READ);
      } catch (e) {
        checkDevice(from, 'transfer (map)');
        throw e;
      }
      const data = staging.getMappedRange();
      off = 0;
      for (const it of items) {
        to.device.queue.writeBuffer(it.dst, 0, data, off, align4(it.bytes));
        off += align4(it.bytes);
      }
      staging.unmap();
    } finally {
      from.tracker.destroy(staging);
    }
    await to.device.queue.onSubmittedWorkDone();
    checkDevice(to, 'transfer (write)');
    return { bytes, start, end: performance.now() };
  }
}
