/**
 * What a rank program holds (Rank): its index, the communicator, its kernels, a ledger of the
 * buffers allocated for it (memory per rank, also when all ranks share one device), and the step
 * reporting to the timeline. Two kinds:
 *   RankContext  a rank on a device: `compute` submits one command buffer and waits for it; in
 *                one-device mode it holds the device's lock, so each rank's work is timed alone.
 *                Pipelined (one-device only) it encodes while the GPU still runs the previous
 *                rank's work, waits for that to finish, then submits without waiting for its own
 *                (see gpuAlone).
 *   DryRank      (./dryRank.ts) the same program with no device: buffers are entries in the ledger
 *                and compute encodes nothing, so a dry run yields the steps, their FLOPs and bytes,
 *                and each rank's peak (src/cp/launch/dry.ts).
 */
import { FlashDevice, checkDevice } from '../../gpu/device.js';
import { GpuTimer } from '../../gpu/timer.js';
import { storage, upload } from '../../gpu/buffers.js';
import { FlashForward } from '../../kernels/flashForward.js';
import { FlashBackward } from '../../kernels/flashBackward.js';
import { MergeKernel } from '../../kernels/merge.js';
import { Communicator, Mutex, Pending, gpuAlone } from '../transport/communicator.js';
import { OpenStep, Phase, StepInfo, TimelineRecorder } from './timeline.js';

export interface RankKernels {
  fwd: FlashForward;
  merge: MergeKernel;
  bwd: FlashBackward | null;
}

export type TimestampFor = (unit: number, units: number) => GPUComputePassTimestampWrites | undefined;

/**
 * Timer intervals a rank of a run over R ranks gets: one per compute (a scheme's step may run
 * several: p2p's backward step two), with room to spare.
 * A compute that asks for timestamps past them makes its step's GPU time unknown (null), never short.
 */
export const timerIntervals = (R: number) => 4 * R + 8;
export type Encode = (enc: GPUCommandEncoder, temps: GPUBuffer[], tw: TimestampFor) => void;

/** The ledger and step reporting every rank has; how buffers are made and work is run is the kind's. */
export abstract class Rank {
  private owned = new Map<GPUBuffer, number>();
  private live = 0;
  private peak = 0;

  constructor(readonly index: number, readonly comm: Communicator, readonly kernels: RankKernels, private recorder: TimelineRecorder) {}

  /** A storage buffer of at least `bytes` (rounded up to 4, as WebGPU sizes them). */
  protected abstract create(bytes: number, label: string): GPUBuffer;
  /** A buffer holding `data` (`make` is called only by ranks that hold data). */
  protected abstract createFrom(bytes: number, make: () => ArrayBufferView, label: string): GPUBuffer;
  protected abstract destroy(b: GPUBuffer): void;
  /** Encodes, submits and waits (pipelined: does not wait); the time counts as the step's compute. */
  abstract compute(st: OpenStep, label: string, encode: Encode): Promise<void>;
  /** Waits until the work submitted so far is done (see RankContext). */
  abstract settle(): Promise<void>;

  alloc(bytes: number, label: string): GPUBuffer {
    return this.own(this.create(bytes, `rank${this.index}.${label}`));
  }

  /** A buffer holding the data `make` returns, of `bytes` bytes. */
  load(bytes: number, make: () => ArrayBufferView, label: string): GPUBuffer {
    return this.own(this.createFrom(bytes, make, `rank${this.index}.${label}`));
  }

  /** `count` f32 values all equal to `value` (LSE accumulators start at −inf). */
  filled(count: number, value: number, label: string): GPUBuffer {
    return this.load(count * 4, () => new Float32Array(count).fill(value), label);
  }

  /** Frees one of this rank's buffers (no-op for foreign or freed ones). */
  release(b: GPUBuffer): void {
    const n = this.owned.get(b);
    if (n === undefined) return;
    this.owned.delete(b);
    this.live -= n;
    this.destroy(b);
  }

  /** Bytes outside the ledger's buffers (staging) counted against this rank while they live. */
  charge(bytes: number): void {
    this.live += bytes;
    this.peak = Math.max(this.peak, this.live);
  }

  memory(): { peakBytes: number; liveBytes: number } {
    return { peakBytes: this.peak, liveBytes: this.live };
  }

  /** Frees every buffer of this rank (safe twice). */
  free(): void {
    for (const b of [...this.owned.keys()]) this.release(b);
  }

  begin(phase: Phase, step: number, info: StepInfo): OpenStep {
    return this.recorder.begin(phase, step, this.index, info);
  }

  end(st: OpenStep): void {
    this.recorder.end(st);
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

/** A rank on a device (see the top of this file). */
export class RankContext extends Rank {
  private nextInterval = 0;
  private freed = false;
  /** Why the run stopped (a rank failed, the caller cancelled): no work of this rank is submitted after it. */
  private halted: Error | null = null;
  readonly timer: GpuTimer;

  constructor(
    index: number, readonly dev: FlashDevice, comm: Communicator, kernels: RankKernels,
    recorder: TimelineRecorder, private lock: Mutex | null, readonly timerIntervals: number,
    private waitForGpu = true,
  ) {
    super(index, comm, kernels, recorder);
    this.timer = new GpuTimer(dev, timerIntervals);
  }

  protected create(bytes: number, label: string): GPUBuffer {
    return storage(this.dev, bytes, label);
  }

  protected createFrom(_bytes: number, make: () => ArrayBufferView, label: string): GPUBuffer {
    return upload(this.dev, make(), label);
  }

  protected destroy(b: GPUBuffer): void {
    this.dev.tracker.destroy(b);
  }

  /**
   * The run stopped: from now on this rank submits nothing (a compute waiting for the one-device
   * lock or for the GPU rejects with `why` instead), so the work in flight is all there is to wait
   * for before the buffers are freed.
   */
  halt(why: Error): void {
    this.halted ??= why;
  }

  /** Frees every buffer of this rank (safe on a lost device, safe twice). */
  free(): void {
    this.freed = true;
    super.free();
    this.timer.destroy();
  }

  /** Encodes, submits and waits (pipelined: does not wait); the time counts as the step's compute. */
  async compute(st: OpenStep, label: string, encode: Encode): Promise<void> {
    const run = async () => {
      if (this.halted) throw this.halted;
      const t0 = performance.now();
      const temps: GPUBuffer[] = [];
      let interval = -1;
      let asked = false;
      const tw: TimestampFor = (unit, units) => {
        asked = true;
        if (interval < 0 && this.nextInterval < this.timerIntervals) interval = this.nextInterval++;
        return interval < 0 ? undefined : this.timer.writes(interval, unit, units);
      };
      const enc = this.dev.device.createCommandEncoder({ label: `rank${this.index}.${st.phase}.${st.step}.${label}` });
      try {
        encode(enc, temps, tw);
        const cmd = enc.finish();
        // A halted rank (its run failed or was cancelled) says the run's reason, not that its buffers went.
        if (!this.waitForGpu) await gpuAlone(this.dev, () => !this.freed && !this.halted, `rank ${this.index}: step`).catch((e) => { throw this.halted ?? e; });
        if (this.halted) throw this.halted;
        this.dev.device.queue.submit([cmd]);
        if (this.waitForGpu) await this.dev.device.queue.onSubmittedWorkDone();
      } finally {
        for (const b of temps) this.dev.tracker.destroy(b);
      }
      checkDevice(this.dev, `rank ${this.index} ${st.phase} step ${st.step + 1} (${label})`); // steps counted from 1, as the CLI and the page show them
      if (interval >= 0) st.gpuIntervals.push(interval);
      else if (asked) st.gpuIntervals.push(-1);   // timed passes with no interval left: the step's GPU time is unknown
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
}
