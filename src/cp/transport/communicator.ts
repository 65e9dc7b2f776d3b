/**
 * The communicator: the only code that crosses ranks (ring-flash-attention's RingComm, with the
 * collectives Megatron-LM's CP schemes need). A rank posts its half of an exchange and gets a
 * Pending; `wait` resolves once this rank's halves are done (its sends may be reused, its
 * receives hold the data). A transfer starts when both ends have posted, so a receiver posting
 * says its buffer is free: no rank ever writes another rank's memory behind its back.
 *
 * InProcessCommunicator serves ranks that live in this process, through a Mover:
 *   - deviceCopy: all ranks on one GPUDevice; a transfer is a copyBufferToBuffer (one-device mode).
 *   - staging: one device per adapter; WebGPU has no peer copies, so source → mappable staging
 *     buffer → host → queue.writeBuffer on the destination (multi-adapter mode).
 * Ranks in separate processes (one GPU each, its own Dawn instance) use ProcessCommunicator
 * (processComm.ts: bytes through host memory and the parent process); the rank programs are the
 * same.
 */
import { FlashDevice, checkDevice } from '../../gpu/device.js';
import { TransportError, internalError } from '../../errors.js';

/** A byte range of a GPU buffer. */
export interface BufRange {
  buffer: GPUBuffer;
  offset?: number;
  bytes: number;
}

export interface TransferResult {
  bytes: number;
  /** Point-to-point messages (one per peer) in this result. */
  messages: number;
  /** Host clock (performance.now()) when the first transfer started and the last one ended. */
  start: number;
  end: number;
}

export type Pending = Promise<TransferResult>;

export interface Communicator {
  readonly size: number;
  /** Sends `send` to rank `to` and receives `recv` from rank `from` (each list matched item by item). */
  sendRecv(rank: number, to: number, send: BufRange[], from: number, recv: BufRange[], tag: string): Pending;
  /** Every member of `group` sends `mine` to every other; `into[i]` receives member i's (own entry ignored). */
  allGather(rank: number, group: number[], mine: BufRange[], into: BufRange[][], tag: string): Pending;
  /** `send[i]` goes to member i of `group`, `recv[i]` comes from member i (own entries copied locally). */
  allToAll(rank: number, group: number[], send: BufRange[][], recv: BufRange[][], tag: string): Pending;
  wait(p: Pending): Promise<TransferResult>;
  /** Rejects every pending and future exchange (a rank failed). */
  abort(reason: Error): void;
  /**
   * Resolves when every transfer already started has let go of its buffers (an aborted exchange
   * rejects its waiters at once, but a copy queued behind the one-device lock still runs): the
   * caller frees the buffers after it.
   */
  settled(): Promise<void>;
}

/**
 * Moves matched ranges from one rank's device to another's; resolves once `to` holds the data.
 * `abortedBy` (the communicator's abort reason, if any) is asked when the move begins (a copy
 * behind the one-device lock begins when it has the lock) and again after each wait that comes
 * before a submission or a write (the GPU, a staging map): an aborted run's move submits nothing
 * after the abort, so the run's wind-down (stopAll) waits for all there is.
 */
export type Mover = (from: FlashDevice, to: FlashDevice, src: BufRange[], dst: BufRange[], abortedBy?: () => Error | null) => Promise<void>;

/** Copy and write sizes round up to 4 bytes (WebGPU's copy granularity). */
export const align4 = (n: number) => Math.ceil(n / 4) * 4;

/**
 * Waits until the GPU has run everything submitted before, so that what is submitted next runs
 * alone. Pipelined one-device runs call it before each submission: the queue would otherwise start
 * the next rank's passes while the last rank's still run (they share no buffer, so nothing orders
 * them), and each pass's timestamps would count the other's time as its own. On the H200 at
 * N = 65536, R = 4 (bench/results/cp-h200-2026-12-01-v6/3-65k) the ranks' first forward steps,
 * queued together, each read 74 ms against 16 ms for the same step alone. Throws when `live()`
 * turns false meanwhile: a run that failed while this waited (a hung device: the caller frees
 * after SETTLE_MS) has freed the buffers `what` would use.
 */
export async function gpuAlone(dev: FlashDevice, live: () => boolean, what: string): Promise<void> {
  await dev.device.queue.onSubmittedWorkDone();
  if (!live()) throw abandoned(what);
}

const abandoned = (what: string) =>
  new TransportError(`${what} abandoned: its buffers were freed while it waited for the GPU (the run had already failed: its first error is the one to act on)`);

/** Throws the communicator's abort reason, if it has one. */
function stopIfAborted(abortedBy?: () => Error | null): void {
  const stop = abortedBy?.();
  if (stop) throw stop;
}

/** Several independent async sections run one at a time (one-device mode: ranks measured alone). */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const prev = this.tail;
    let release!: () => void;
    this.tail = new Promise((r) => (release = r));
    await prev;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/**
 * Copies on one device; `wait` false (pipelined one-device runs) does not wait for the copy but
 * first for everything submitted before it (gpuAlone), so it never shares the GPU with a rank's
 * passes.
 */
export function deviceCopy(lock?: Mutex, wait = true): Mover {
  return (from, to, src, dst, abortedBy) => {
    const go = async () => {
      stopIfAborted(abortedBy);
      const enc = from.device.createCommandEncoder({ label: 'comm.copy' });
      src.forEach((s, i) => enc.copyBufferToBuffer(s.buffer, s.offset ?? 0, dst[i].buffer, dst[i].offset ?? 0, align4(s.bytes)));
      const cmd = enc.finish();
      // Not aborted, and the buffers still there: a run that failed meanwhile and gave up waiting
      // (a hung device) may have freed them; one aborted while this waited for the GPU has not
      // yet (its wind-down waits for this copy), but submits no more.
      const live = () => !abortedBy?.() && src.every((s) => from.tracker.has(s.buffer)) && dst.every((d) => to.tracker.has(d.buffer));
      try {
        if (!wait) await gpuAlone(from, live, 'transfer (copy)');
        else if (!live()) throw abandoned('transfer (copy)');   // waited behind the one-device lock
      } catch (e) {
        throw abortedBy?.() ?? e;
      }
      from.device.queue.submit([cmd]);
      if (wait) await from.device.queue.onSubmittedWorkDone();
      checkDevice(from, 'transfer (copy)');
    };
    return lock ? lock.run(go) : go();
  };
}

/**
 * Copies the ranges into one mappable staging buffer of `dev`, maps it and hands the mapped bytes
 * to `use` (range i at the i-th offset, each align4(bytes) long) before unmapping; the staging
 * bytes are charged to `dev`'s rank while they live.
 */
export async function withStaged<T>(dev: FlashDevice, src: BufRange[], charge: (bytes: number) => void, use: (data: ArrayBuffer, offsets: number[]) => T): Promise<T> {
  const offsets: number[] = [];
  const total = src.reduce((a, s) => (offsets.push(a), a + align4(s.bytes)), 0);
  const buf = dev.tracker.create({ label: 'comm.staging', size: total, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  charge(total);
  try {
    const enc = dev.device.createCommandEncoder({ label: 'comm.stage' });
    src.forEach((s, i) => enc.copyBufferToBuffer(s.buffer, s.offset ?? 0, buf, offsets[i], align4(s.bytes)));
    dev.device.queue.submit([enc.finish()]);
    try {
      await buf.mapAsync(GPUMapMode.READ);
    } catch (e) {
      checkDevice(dev, 'transfer (map)');
      throw e;
    }
    const out = use(buf.getMappedRange(), offsets);
    buf.unmap();
    return out;
  } finally {
    dev.tracker.destroy(buf);
    charge(-total);
  }
}

/** Staging bytes are charged to the sending rank through `charge` (per-rank memory ledger). */
export function staging(charge: (dev: FlashDevice, bytes: number) => void = () => {}): Mover {
  return async (from, to, src, dst, abortedBy) => {
    stopIfAborted(abortedBy);
    if (from === to) return deviceCopy()(from, to, src, dst, abortedBy);
    await withStaged(from, src, (b) => charge(from, b), (data, offsets) => {
      stopIfAborted(abortedBy);   // aborted while the staging buffer mapped: nothing is written
      dst.forEach((d, i) => to.device.queue.writeBuffer(d.buffer, d.offset ?? 0, data, offsets[i], align4(src[i].bytes)));
    });
    await to.device.queue.onSubmittedWorkDone();
    checkDevice(to, 'transfer (write)');
  };
}

interface Channel {
  send?: BufRange[];
  recv?: BufRange[];
  done: Promise<TransferResult>;
  resolve: (r: TransferResult) => void;
  reject: (e: unknown) => void;
}

/** The result of an exchange that moved nothing. */
export const nothing = (): TransferResult => ({ bytes: 0, messages: 0, start: performance.now(), end: performance.now() });

/** Ranks of this process, each on `devices[rank]` (the same device for all in one-device mode). */
export class InProcessCommunicator implements Communicator {
  private channels = new Map<string, Channel>();
  private aborted: Error | null = null;
  /** Movers started and not yet settled (settled()). */
  private inflight = new Set<Promise<unknown>>();

  constructor(readonly devices: FlashDevice[], private mover: Mover) {}

  /**
   * The dry run's communicator (src/cp/launch/dry.ts): R ranks with no device, every send paired with its
   * receive and their sizes checked, and nothing moved (its mover never touches the devices it is given).
   */
  static dry(R: number): InProcessCommunicator {
    return new InProcessCommunicator(Array.from({ length: R }, () => null as unknown as FlashDevice), async () => {});
  }

  get size(): number {
    return this.devices.length;
  }

  sendRecv(rank: number, to: number, send: BufRange[], from: number, recv: BufRange[], tag: string): Pending {
    return join([this.post(rank, to, tag, 'send', send), this.post(from, rank, tag, 'recv', recv)]);
  }

  allGather(rank: number, group: number[], mine: BufRange[], into: BufRange[][], tag: string): Pending {
    return this.allToAll(rank, group, group.map((m) => (m === rank ? [] : mine)), into.map((x, i) => (group[i] === rank ? [] : x)), tag);
  }

  allToAll(rank: number, group: number[], send: BufRange[][], recv: BufRange[][], tag: string): Pending {
    return join(group.flatMap((m, i) => m === rank
      ? [this.local(rank, send[i], recv[i])]
      : [this.post(rank, m, tag, 'send', send[i]), this.post(m, rank, tag, 'recv', recv[i])]));
  }

  wait(p: Pending): Promise<TransferResult> {
    return p;
  }

  abort(reason: Error): void {
    this.aborted = reason;
    for (const ch of this.channels.values()) ch.reject(reason);
    this.channels.clear();
  }

  /** A rank's own share of a collective: a copy on its device, no link bytes. */
  private async local(rank: number, src: BufRange[], dst: BufRange[]): Promise<TransferResult> {
    if (this.aborted) throw this.aborted;
    if (!src.length) return nothing();
    const start = performance.now();
    await this.track(this.mover(this.devices[rank], this.devices[rank], src, dst, () => this.aborted));
    return { bytes: 0, messages: 0, start, end: performance.now() };
  }

  /** One end of the channel from → to; the transfer starts when both ends are posted. */
  private post(from: number, to: number, tag: string, side: 'send' | 'recv', items: BufRange[]): Pending {
    if (this.aborted) return Promise.reject(this.aborted);
    if (!items.length) return Promise.resolve(nothing());
    const key = `${from}>${to}:${tag}`;
    let ch = this.channels.get(key);
    if (!ch) {
      let resolve!: Channel['resolve'], reject!: Channel['reject'];
      const done = new Promise<TransferResult>((a, b) => ((resolve = a), (reject = b)));
      done.catch(() => {});
      ch = { done, resolve, reject };
      this.channels.set(key, ch);
    }
    if (ch[side]) throw internalError(`communicator: ${side} ${key} posted twice (a rank program posted the same exchange twice)`);
    ch[side] = items;
    if (ch.send && ch.recv) this.start(from, to, key, ch);
    // The sender's result carries the bytes; the receiver's only the times.
    return side === 'send' ? ch.done : ch.done.then((r) => ({ ...r, bytes: 0, messages: 0 }));
  }

  private start(from: number, to: number, key: string, ch: Channel): void {
    this.channels.delete(key);
    const src = ch.send!, dst = ch.recv!;
    if (src.length !== dst.length || src.some((s, i) => s.bytes !== dst[i].bytes))
      return ch.reject(internalError(`communicator: ${key} sends ${src.map((s) => s.bytes)} bytes but receives ${dst.map((d) => d.bytes)} (the ranks' programs disagree)`));
    const start = performance.now();
    const self = from === to; // a rank sending to itself moves nothing over a link
    const bytes = self ? 0 : src.reduce((a, s) => a + s.bytes, 0);
    this.track(this.mover(this.devices[from], this.devices[to], src, dst, () => this.aborted)).then(
      () => ch.resolve({ bytes, messages: self ? 0 : 1, start, end: performance.now() }),
      (e) => ch.reject(e),
    );
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    const drop = () => this.inflight.delete(p);
    p.then(drop, drop);
    return p;
  }

  async settled(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }
}

/** One result for several halves. */
async function join(halves: Pending[]): Promise<TransferResult> {
  const rs = await Promise.all(halves);
  const sum = (f: (r: TransferResult) => number) => rs.reduce((a, r) => a + f(r), 0);
  return { bytes: sum((r) => r.bytes), messages: sum((r) => r.messages), start: Math.min(...rs.map((r) => r.start)), end: Math.max(...rs.map((r) => r.end)) };
}
