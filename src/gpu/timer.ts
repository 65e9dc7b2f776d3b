/**
 * GPU timestamps: one interval = the begin timestamp of its first pass to the end timestamp of
 * its last pass. Only on devices with 'timestamp-query'; elsewhere every interval reads NaN.
 */
import { FlashDevice } from './device.js';
import { readback } from './buffers.js';

export class GpuTimer {
  private querySet: GPUQuerySet | null = null;
  private used = new Set<number>();

  constructor(readonly dev: FlashDevice, readonly intervals: number) {
    if (dev.hasTimestamps && intervals > 0)
      this.querySet = dev.device.createQuerySet({ label: 'flashring.timer', type: 'timestamp', count: 2 * intervals });
  }

  /** Timestamp writes for pass `unit` of `units` in interval `k` (undefined without timestamps). */
  writes(k: number, unit: number, units: number): GPUComputePassTimestampWrites | undefined {
    if (!this.querySet || (unit !== 0 && unit !== units - 1)) return undefined;
    const w: GPUComputePassTimestampWrites = { querySet: this.querySet };
    if (unit === 0) w.beginningOfPassWriteIndex = 2 * k;
    if (unit === units - 1) w.endOfPassWriteIndex = 2 * k + 1;
    this.used.add(k);
    return w;
  }

  /** Milliseconds per interval (NaN for intervals never written or without timestamps). */
  async read(): Promise<number[]> {
    const out = new Array<number>(this.intervals).fill(NaN);
    if (!this.querySet || !this.used.size) return out;
    const bytes = 16 * this.intervals;
    const buf = this.dev.tracker.create({ label: 'flashring.timer.resolve', size: bytes, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    try {
      const enc = this.dev.device.createCommandEncoder({ label: 'flashring.timer' });
      enc.resolveQuerySet(this.querySet, 0, 2 * this.intervals, buf, 0);
      this.dev.device.queue.submit([enc.finish()]);
      const t = new BigInt64Array(await readback(this.dev, buf, bytes));
      for (const k of this.used) out[k] = Math.max(0, Number(t[2 * k + 1] - t[2 * k])) / 1e6;
      return out;
    } finally {
      this.dev.tracker.destroy(buf);
    }
  }

  destroy(): void {
    this.querySet?.destroy();
    this.querySet = null;
  }
}

/** Splits an interval's timestamp writes over the passes of a multi-pass encode. */
export function passWrites(tw: GPUComputePassTimestampWrites | undefined, i: number, n: number): GPUComputePassTimestampWrites | undefined {
  if (!tw) return undefined;
  const w: GPUComputePassTimestampWrites = { querySet: tw.querySet };
  if (i === 0 && tw.beginningOfPassWriteIndex !== undefined) w.beginningOfPassWriteIndex = tw.beginningOfPassWriteIndex;
  if (i === n - 1 && tw.endOfPassWriteIndex !== undefined) w.endOfPassWriteIndex = tw.endOfPassWriteIndex;
  return w.beginningOfPassWriteIndex === undefined && w.endOfPassWriteIndex === undefined ? undefined : w;
}
