/**
 * A CP rank: one device, its shard of the sequence (segments of global positions), the buffers
 * the ring allocates on it, and two K/V slots (double buffering: compute on slots[0] while the
 * next chunk arrives in slots[1]).
 */
import { FlashDevice } from '../gpu/device.js';
import { Segment } from './schedule.js';
import { storage, upload } from '../kernels/common.js';

/** A K/V chunk in a slot: the segments of the rank it started on, K and V per segment, and
 * (backward) the dK/dV accumulators that travel with it. */
export interface Chunk {
  from: number;
  segs: Segment[];
  k: GPUBuffer[];
  v: GPUBuffer[];
  dk: GPUBuffer[];
  dv: GPUBuffer[];
}

export class Rank {
  private owned: GPUBuffer[] = [];
  slots: [Chunk, Chunk] | null = null;

  constructor(readonly index: number, readonly dev: FlashDevice, readonly shard: Segment[]) {}

  alloc(bytes: number, label: string): GPUBuffer {
    const b = storage(this.dev, bytes, `rank${this.index}.${label}`);
    this.owned.push(b);
    return b;
  }

  upload(data: ArrayBufferView, label: string): GPUBuffer {
    const b = upload(this.dev, data, `rank${this.index}.${label}`);
    this.owned.push(b);
    return b;
  }

  write(buf: GPUBuffer, data: ArrayBufferView): void {
    this.dev.device.queue.writeBuffer(buf, 0, data.buffer, data.byteOffset, Math.ceil(data.byteLength / 4) * 4);
  }

  /** Frees every buffer the ring created on this rank (safe on a lost device, safe twice). */
  free(): void {
    for (const b of this.owned) this.dev.tracker.destroy(b);
    this.owned = [];
    this.slots = null;
  }
}
