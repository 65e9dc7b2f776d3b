/**
 * What a rank program holds: its index, its device, the communicator, its kernels, a ledger of
 * the buffers allocated for it (memory per rank, also when all ranks share one device), and the
 * step reporting to the timeline. `compute` submits one command buffer and waits for it; in
 * one-device mode it holds the device's lock, so each rank's work is timed alone. Pipelined
 * (one-device only) it encodes while the GPU still runs the previous rank's work, waits for that
 * to finish, then submits without waiting for its own (see gpuAlone).
 */
import { FlashDevice, checkDevice } from '../gpu/device.js';
import { GpuTimer } from '../gpu/timer.js';
import { storage, upload } from '../gpu/buffers.js';
import { FlashForward } from '../kernels/flashForward.js';
import { FlashBackward } from '../kernels/flashBackward.js';
import { MergeKernel } from '../kernels/merge.js';
import { Communicator, Mutex, Pending, gpuAlone } from './communicator.js';
import { OpenStep, Phase, StepInfo, TimelineRecorder } from './timeline.js';

export interface RankKernels {
  fwd: FlashForward;
  merge: MergeKernel;
  bwd: FlashBackward | null;
}

export type TimestampFor = (unit: number, units: number) => GPUComputePassTimestampWrites | undefined;
export type Encode = (enc: GPUCommandEncoder, temps: GPUBuffer[], tw: TimestampFor) => void;

export class RankContext {
  private owned = new Map<GPUBuffer, number>();
  private live = 0;
  private peak = 0;
  private nextInterval = 0;
  private freed = false;
  readonly timer: GpuTimer;

  constructor(
    readonly index: number, readonly dev: FlashDevice, readonly comm: Communicator, readonly kernels: RankKernels,
    private recorder: TimelineRecorder, private lock: Mutex | null, readonly timerIntervals: number,
    private waitForGpu = true,
  ) {
    this.timer = new GpuTimer(dev, timerIntervals);
  }

  alloc(bytes: number, label: string): GPUBuffer {
    return this.own(storage(this.dev, bytes, `rank${this.index}.${label}`));
  }

  upload(data: ArrayBufferView, label: string): GPUBuffer {
    return this.own(upload(this.dev, data, `rank${this.index}.${label}`));
  }

  /** Frees one of this rank's buffers (no-op for foreign or freed ones). */
  release(b: GPUBuffer): void {
    const n = this.owned.get(b);
    if (n === undefined) return;
    this.owned.delete(b);
    this.live -= n;
    this.dev.tracker.destroy(b);
  }

  /** Bytes outside the ledger's buffers (staging) counted against this rank while they live. */
  charge(bytes: number): void {
    this.live += bytes;
    this.peak = Math.max(this.peak, this.live);
  }

  memory(): { peakBytes: number; liveBytes: number } {
    return { peakBytes: this.peak, liveBytes: this.live };
  }

  /** Frees every buffer of this rank (safe on a lost device, safe twice). */
  free(): void {
    this.freed = true;
    for (const b of [...this.owned.keys()]) this.release(b);
    this.timer.destroy();
  }

  begin(phase: Phase, step: number, info: StepInfo): OpenStep {
    return this.recorder.begin(phase, step, this.index, info);
  }

  end(st: OpenStep): void {
    this.recorder.end(st);
  }

  /** Encodes, submits and waits (pipelined: does not wait); the time counts as the step's compute. */
  async compute(st: OpenStep, label: string, encode: Encode): Promise<void> {
    const run = async () => {
      const t0 = performance.now();
      const temps: GPUBuffer[] = [];
      let interval = -1;
      const tw: TimestampFor = (unit, units) => {
        if (interval < 0 && this.nextInterval < this.timerIntervals) interval = this.nextInterval++;
        return interval < 0 ? undefined : this.timer.writes(interval, unit, units);
      };
      const enc = this.dev.device.createCommandEncoder({ label: `rank${this.index}.${st.phase}.${st.step}.${label}` });
      try {
        encode(enc, temps, tw);
        const cmd = enc.finish();
        if (!this.waitForGpu) await gpuAlone(this.dev, () => !this.freed, `rank ${this.index}: step`);
        this.dev.device.queue.submit([cmd]);
        if (this.waitForGpu) await this.dev.device.queue.onSubmittedWorkDone();
      } finally {
        for (const b of temps) this.dev.tracker.destroy(b);
      }
      checkDevice(this.dev, `rank ${this.index} ${st.phase} step ${st.step} (${label})`);
      if (interval >= 0) st.gpuIntervals.push(interval);
      st.computeMs += performance.now() - t0;
      st.computeEnd = performance.now();
    };
    await (this.lock ? this.lock.run(run) : run());
  }

  /**
   * Pipelined: waits until the GPU has done everything submitted so far, so the buffers released
   * before it are free on the GPU before any allocated after it (the ledger's peak is the GPU's).
   * Waited runs are always settled: a no-op.
   */
  async settle(): Promise<void> {
    if (!this.waitForGpu) await this.dev.device.queue.onSubmittedWorkDone();
  }

  /** Waits for a pending exchange; its bytes and times count as the step's transfer. */
  async wait(st: OpenStep, p: Pending): Promise<void> {
    const r = await this.comm.wait(p);
    st.transfers.push(r);
  }

  private own(b: GPUBuffer): GPUBuffer {
    this.owned.set(b, b.size);
    this.live += b.size;
    this.peak = Math.max(this.peak, this.live);
    return b;
  }
}
