/**
 * The communicator of a rank that lives in its own process (one GPU per process). Two identical
 * GPUs cannot be told apart inside one process (Dawn gives every requestAdapter() the first
 * adapter of a name, measured on a 2×H200 host: docs/ring.md), so each rank process sees only its own GPU and the
 * ranks talk through the parent process, which forwards messages (ipc.ts, the parent's half):
 *   send     the ranges are copied into a mappable staging buffer, mapped, and written to a file
 *            in the run's spool folder (on /dev/shm where there is one: memory, no disk), whose
 *            name is posted; without a spool the bytes travel in the message itself (Node IPC
 *            serializes them twice on the way through the parent: ~0.1 GB/s on a small VM,
 *            a few times less than the spool);
 *   receive  the bytes of the message with the same (tag, sender) go into the ranges with
 *            queue.writeBuffer (the file is then removed).
 * A message may arrive before its receive is posted: it waits in host memory, and is written
 * once the receive is posted (a receiver's post says its buffers are free, as in-process). The
 * sender's result carries the bytes (one message per peer), the receiver's only the times.
 */
import { open, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FlashDevice, checkDevice } from '../../gpu/device.js';
import { TransportError, internalError } from '../../errors.js';
import { BufRange, Communicator, Pending, TransferResult, align4, deviceCopy, nothing, withStaged } from './communicator.js';

/** Bytes from one rank to another; `parts[i]` fills the receiver's range i. */
export interface DataMessage {
  type: 'data';
  tag: string;
  from: number;
  to: number;
  /** The ranges' exact byte counts; the parts are those rounded up to 4 (copy granularity). */
  bytes: number[];
  /** The parts, in the message or, one after another, in this spool file. */
  parts: Uint8Array<ArrayBuffer>[];
  file?: string;
}

/**
 * A file-system error on a spool file (ENOSPC where a container's /dev/shm fills, EACCES, …) as a
 * TransportError saying what to do; anything else as it is.
 */
function spoolError(e: unknown, file: string, doing: 'write' | 'read'): unknown {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (typeof code !== 'string') return e;
  return new TransportError(`communicator: cannot ${doing} the spool file ${file} (${code}: ${(e as Error).message}); free space in ${dirname(file)} (a container's /dev/shm is often 64 MiB: docker --shm-size) or run the ring in one process (--cp-mode one-device)`);
}

/** A message's parts read back from its spool file (then removed), or as they came. */
async function unspool(m: DataMessage): Promise<DataMessage> {
  if (!m.file) return m;
  const file = await readFile(m.file).catch((e) => { throw spoolError(e, m.file!, 'read'); });
  const data = new Uint8Array(file.buffer as ArrayBuffer, file.byteOffset, file.byteLength);
  await rm(m.file, { force: true });
  let off = 0;
  const parts = m.bytes.map((b) => data.subarray(off, (off += align4(b))));
  if (off !== data.byteLength) throw new TransportError(`communicator: spool file ${m.file} holds ${data.byteLength} bytes, not ${off}: cut short, or changed by another process; check that its file system (${dirname(m.file)}) has free space and that nothing else cleans it, then run again`);
  return { ...m, parts, file: undefined };
}

interface Waiter {
  resolve: (m: DataMessage) => void;
  reject: (e: Error) => void;
}

export class ProcessCommunicator implements Communicator {
  private inbox = new Map<string, DataMessage[]>();
  private waiting = new Map<string, Waiter[]>();
  private failed: Error | null = null;

  /** `post` hands a message to the parent; `charge` counts staging bytes against the rank; `spool`: a folder all ranks share. */
  constructor(readonly size: number, private dev: FlashDevice, private post: (m: DataMessage) => void, private charge: (bytes: number) => void = () => {}, private spool: string | null = null) {}

  /** A message from the parent: to the receive that waits for it, or into the inbox. */
  deliver(m: DataMessage): void {
    const key = `${m.from}:${m.tag}`;
    const w = this.waiting.get(key);
    if (w?.length) w.shift()!.resolve(m);
    else this.inbox.set(key, [...(this.inbox.get(key) ?? []), m]);
  }

  sendRecv(rank: number, to: number, send: BufRange[], from: number, recv: BufRange[], tag: string): Pending {
    return this.exchange(rank, [[to, send]], [[from, recv]], tag);
  }

  allGather(rank: number, group: number[], mine: BufRange[], into: BufRange[][], tag: string): Pending {
    const others = group.map((m, i) => [m, i] as const).filter(([m]) => m !== rank);
    return this.exchange(rank, others.map(([m]) => [m, mine]), others.map(([m, i]) => [m, into[i]]), tag);
  }

  allToAll(rank: number, group: number[], send: BufRange[][], recv: BufRange[][], tag: string): Pending {
    const me = group.indexOf(rank);
    const others = group.map((m, i) => [m, i] as const).filter(([m]) => m !== rank);
    return this.exchange(rank, others.map(([m, i]) => [m, send[i]]), others.map(([m, i]) => [m, recv[i]]), tag, me >= 0 ? [send[me], recv[me]] : null);
  }

  wait(p: Pending): Promise<TransferResult> {
    return p;
  }

  abort(reason: Error): void {
    this.failed = reason;
    for (const ws of this.waiting.values()) for (const w of ws) w.reject(reason);
    this.waiting.clear();
  }

  /** Every copy and write here happens inside a rank's own exchange, which its caller awaits: nothing runs behind it. */
  async settled(): Promise<void> {}

  /**
   * Posts every receive, then reads and sends each send (a rank sending to itself copies on its
   * device), then waits for the receives; `local` is a rank's own share of a collective.
   */
  private async exchange(rank: number, sends: (readonly [number, BufRange[]])[], recvs: (readonly [number, BufRange[]])[], tag: string, local: [BufRange[], BufRange[]] | null = null): Promise<TransferResult> {
    if (this.failed) throw this.failed;
    const start = performance.now();
    const selfSend = sends.find(([to]) => to === rank), selfRecv = recvs.find(([from]) => from === rank);
    const own = local ?? (selfSend && selfRecv ? [selfSend[1], selfRecv[1]] as [BufRange[], BufRange[]] : null);
    const incoming = recvs.filter(([from, r]) => from !== rank && r.length).map(([from, r]) => this.receive(from, tag).then(unspool).then((m) => this.write(r, m, tag)));
    incoming.forEach((p) => p.catch(() => {}));
    // Every send staged at once (one copy and map each, in flight together), then posted.
    const out = sends.filter(([to, s]) => to !== rank && s.length);
    const staged = await Promise.all(out.map(([, s]) => this.read(s)));
    await Promise.all(out.map(async ([to, s], i) => {
      const m: DataMessage = { type: 'data', tag, from: rank, to, bytes: s.map((x) => x.bytes), parts: staged[i] };
      if (this.spool) {
        m.file = join(this.spool, `${rank}-${to}-${encodeURIComponent(tag)}`);
        const file = m.file;
        const fh = await open(file, 'wx').catch((e) => { throw spoolError(e, file, 'write'); });
        try {
          await fh.writev(m.parts).catch((e) => { throw spoolError(e, file, 'write'); });
        } finally {
          await fh.close();
        }
        m.parts = [];
      }
      this.post(m);
    }));
    const bytes = out.reduce((a, [, s]) => a + s.reduce((b, x) => b + x.bytes, 0), 0);
    if (own && own[0].length) await deviceCopy()(this.dev, this.dev, own[0], own[1]);
    await Promise.all(incoming);
    if (incoming.length) await this.dev.device.queue.onSubmittedWorkDone();
    checkDevice(this.dev, `transfer ${tag}`);
    return out.length || incoming.length || own?.[0].length ? { bytes, messages: out.length, start, end: performance.now() } : nothing();
  }

  private receive(from: number, tag: string): Promise<DataMessage> {
    if (this.failed) return Promise.reject(this.failed);
    const key = `${from}:${tag}`;
    const queued = this.inbox.get(key);
    if (queued?.length) {
      const m = queued.shift()!;
      if (!queued.length) this.inbox.delete(key);
      return Promise.resolve(m);
    }
    return new Promise((resolve, reject) => this.waiting.set(key, [...(this.waiting.get(key) ?? []), { resolve, reject }]));
  }

  /** The ranges' bytes, through one mappable staging buffer (copied out before it is unmapped). */
  private read(src: BufRange[]): Promise<Uint8Array<ArrayBuffer>[]> {
    return withStaged(this.dev, src, this.charge, (data, offsets) => src.map((s, i) => new Uint8Array(data.slice(offsets[i], offsets[i] + align4(s.bytes)))));
  }

  private write(dst: BufRange[], m: DataMessage, tag: string): void {
    if (m.bytes.length !== dst.length || m.parts.length !== dst.length || m.bytes.some((b, i) => b !== dst[i].bytes))
      throw internalError(`communicator: ${m.from}>${m.to}:${tag} sends ${m.bytes} bytes but receives ${dst.map((d) => d.bytes)} (the ranks' programs disagree)`);
    m.parts.forEach((p, i) => this.dev.device.queue.writeBuffer(dst[i].buffer, dst[i].offset ?? 0, p));
  }
}
