/**
 * Every GPU buffer flashring creates goes through a BufferTracker, so live and peak bytes per
 * device are known at any moment (the benches' device peak and the tests' leak checks read it). A
 * ring's timeline reports each rank's own ledger instead (src/cp/rank/rank.ts: the buffers the ring
 * holds for that rank, without a dispatch's uniform and document buffers or readback staging), which
 * is what a rank on its own GPU would hold; on one device the tracker's peak is all ranks' together.
 */
import { LimitError } from '../errors.js';

export interface TrackerSnapshot {
  liveBytes: number;
  peakBytes: number;
  liveBuffers: number;
  /** Size of the largest buffer ever created through this tracker. */
  largestBuffer: number;
}

export class BufferTracker {
  private live = new Map<GPUBuffer, number>();
  private liveBytes = 0;
  private peakBytes = 0;
  private largest = 0;

  constructor(readonly device: GPUDevice) {}

  /**
   * Makes and counts a buffer. One past the device's maxBufferSize is a LimitError, made and counted never:
   * the device would make an invalid buffer, report the error uncaptured (later, under another label) and a
   * tracker count bytes that were never allocated.
   */
  create(desc: GPUBufferDescriptor): GPUBuffer {
    const max = this.device.limits.maxBufferSize;
    if (desc.size > max)
      throw new LimitError(`buffer ${desc.label ?? '(unlabelled)'} needs ${desc.size} bytes; this device allows ${max} (maxBufferSize): split the work (a smaller batch, fewer heads or shorter sequences per call)`);
    const buf = this.device.createBuffer(desc);
    this.live.set(buf, desc.size);
    this.liveBytes += desc.size;
    this.peakBytes = Math.max(this.peakBytes, this.liveBytes);
    this.largest = Math.max(this.largest, desc.size);
    return buf;
  }

  /** Whether the buffer was created here and not yet destroyed. */
  has(buf: GPUBuffer): boolean {
    return this.live.has(buf);
  }

  /** Destroys the buffer and forgets it. Destroying twice or an untracked buffer is a no-op. */
  destroy(buf: GPUBuffer | undefined): void {
    if (!buf) return;
    const size = this.live.get(buf);
    if (size === undefined) return;
    this.live.delete(buf);
    this.liveBytes -= size;
    buf.destroy();
  }

  destroyAll(): void {
    for (const b of [...this.live.keys()]) this.destroy(b);
  }

  /** Start a new peak measurement window from the current live bytes. */
  resetPeak(): void {
    this.peakBytes = this.liveBytes;
    this.largest = 0;
  }

  snapshot(): TrackerSnapshot {
    return {
      liveBytes: this.liveBytes,
      peakBytes: this.peakBytes,
      liveBuffers: this.live.size,
      largestBuffer: this.largest,
    };
  }
}
