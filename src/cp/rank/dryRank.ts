/**
 * A rank with no device: the rank program runs as it would on a GPU, but its buffers are entries
 * in the ledger (sized as WebGPU sizes them) and its compute encodes nothing. Run over a
 * communicator that moves nothing (src/cp/launch/dry.ts), it reports the same steps, FLOPs,
 * bytes and messages as a real run, and the same per-rank peak as the buffer tracker.
 */
import { bufferSize } from '../../gpu/buffers.js';
import { Communicator } from '../transport/communicator.js';
import { Encode, Rank, RankKernels } from './rank.js';
import { OpenStep, TimelineRecorder } from './timeline.js';

/** Kernels a dry rank must never reach: its compute does not encode. */
const NO_KERNELS = new Proxy({} as RankKernels, {
  get: (_, k) => {
    throw new Error(`a dry rank has no kernels (asked for '${String(k)}'): rank programs encode only inside compute()`);
  },
});

/** A ledger entry standing for a buffer: its size and label, as a GPUBuffer has them. */
const entry = (bytes: number, label: string) => ({ size: bufferSize(bytes), label }) as unknown as GPUBuffer;

export class DryRank extends Rank {
  constructor(index: number, comm: Communicator, recorder: TimelineRecorder, kernels: RankKernels = NO_KERNELS) {
    super(index, comm, kernels, recorder);
  }

  protected create(bytes: number, label: string): GPUBuffer {
    return entry(bytes, label);
  }

  protected createFrom(bytes: number, _make: () => ArrayBufferView, label: string): GPUBuffer {
    return entry(bytes, label);
  }

  protected destroy(): void {}

  async compute(st: OpenStep, _label: string, _encode: Encode): Promise<void> {
    st.computeEnd = performance.now();
  }

  async settle(): Promise<void> {}
}

/** An encoder that records nothing: every method a no-op. */
const NO_ENCODER = new Proxy({}, { get: () => () => undefined }) as GPUCommandEncoder;

/**
 * A dry rank whose compute calls the program's encode with an encoder that records nothing: with
 * kernels that only check the shapes and buffers they are given (src/cp/launch/dry.ts
 * checkLimits), every dispatch a run would make is checked before the run does any GPU work.
 * Every buffer the program makes is handed to `made` as it is made (its size and label), so
 * its size can be checked too.
 */
export class ShapeRank extends DryRank {
  constructor(index: number, comm: Communicator, recorder: TimelineRecorder, kernels: RankKernels, private made: (b: GPUBuffer) => void) {
    super(index, comm, recorder, kernels);
  }

  protected create(bytes: number, label: string): GPUBuffer {
    const b = super.create(bytes, label);
    this.made(b);
    return b;
  }

  protected createFrom(bytes: number, make: () => ArrayBufferView, label: string): GPUBuffer {
    const b = super.createFrom(bytes, make, label);
    this.made(b);
    return b;
  }

  async compute(st: OpenStep, label: string, encode: Encode): Promise<void> {
    encode(NO_ENCODER, [], () => undefined);
    await super.compute(st, label, encode);
  }
}
