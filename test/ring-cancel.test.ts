/**
 * Cancelling a one-device ring whose steps are long (the page's Cancel on SwiftShader: seconds per
 * rank's compute). The GPU's completion is slowed here (each onSubmittedWorkDone resolves SLOW_MS
 * late), so that the ranks queued behind the one-device lock when the run stops would take longer
 * than the old fixed grace period (5 s) to go through. The run must reject only after the work
 * already sent is done, submit nothing after it rejects (a late submission uses buffers it has
 * freed: "used in submit while destroyed", an error that landed in the next run's check), and
 * leave the device clean for the next run. Pipelined and multi-adapter runs likewise: a transfer
 * that was waiting (for the GPU, for a staging map) when the run was aborted submits and writes
 * nothing after the abort.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDevices } from './gpu.js';
import { makeInputs, SEED, AttentionShape } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { RingOptions, ringAttention } from '../src/cp/launch/ringAttention.js';

const SLOW_MS = 1500;
const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 64, Nk: 64, D: 16 };
const x = makeInputs(s, SEED + 7);
class Cancelled extends Error {}

let one: FlashDevice;
let two: FlashDevice[];
beforeAll(async () => {
  two = await testDevices(2);
  one = two[0];
  await ringAttention([one], s, x, { ranks: 4, causal: true, precision: 'f32' }); // kernels compiled before the clock matters
  await ringAttention(two, s, x, { ranks: 2, causal: true, precision: 'f32' });
});

/** A transfer's wait, as slowGpu sees it begin: a copy encoded (before it waits for the GPU), or a staging buffer's map asked. */
type TransferWait = 'comm.copy' | 'comm.staging map';

/**
 * The devices' submissions and queue writes counted (with each command buffer's label), and their
 * completions late by `ms`, staging maps too (undone after each test). `after` holds what was
 * submitted or written once `mark()` was called. `onWait` is told when a transfer begins to wait.
 */
function slowGpu(devs: FlashDevice[] = [one], ms = SLOW_MS, onWait?: (w: TransferWait) => void): { submits: () => number; mark: () => void; after: string[] } {
  let n = 0, marked = false;
  const after: string[] = [];
  const undo: (() => void)[] = [];
  const seen = (what: string) => {
    n++;
    if (marked) after.push(what);
  };
  const late = <T>(p: Promise<T>) => p.then((v) => new Promise<T>((r) => setTimeout(() => r(v), ms)));
  const patch = <O extends object, K extends keyof O>(o: O, k: K, f: O[K]) => {
    const own = Object.prototype.hasOwnProperty.call(o, k), was = o[k];
    o[k] = f;
    undo.push(() => (own ? (o[k] = was) : delete o[k]));
  };
  const finish = GPUCommandEncoder.prototype.finish, labels = new WeakMap<object, string>();
  patch(GPUCommandEncoder.prototype, 'finish', function (this: GPUCommandEncoder, d?: GPUCommandBufferDescriptor) {
    const c = finish.call(this, d);
    labels.set(c, this.label);
    if (this.label === 'comm.copy') onWait?.('comm.copy');
    return c;
  });
  const map = GPUBuffer.prototype.mapAsync;
  patch(GPUBuffer.prototype, 'mapAsync', function (this: GPUBuffer, ...a: Parameters<GPUBuffer['mapAsync']>) {
    if (this.label === 'comm.staging') onWait?.('comm.staging map');
    return late(map.apply(this, a));
  });
  for (const q of new Set(devs.map((d) => d.device.queue))) {
    const { submit, writeBuffer, onSubmittedWorkDone: done } = q;
    patch(q, 'onSubmittedWorkDone', () => late(done.call(q)));
    patch(q, 'submit', (cmds: Iterable<GPUCommandBuffer>) => {
      for (const c of cmds) seen(labels.get(c) || '?');
      submit.call(q, cmds);
    });
    patch(q, 'writeBuffer', ((...a: Parameters<GPUQueue['writeBuffer']>) => (seen('writeBuffer'), writeBuffer.apply(q, a))) as GPUQueue['writeBuffer']);
  }
  restore = () => {
    for (const u of undo.splice(0).reverse()) u();
  };
  return { submits: () => n, mark: () => void (marked = true), after };
}
let restore = () => {};
afterEach(() => restore());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('cancelling a ring with long steps', () => {
  it('onStep throwing: the ring rejects once the work already sent is done, and submits nothing after', async () => {
    const gpu = slowGpu();
    const e = await ringAttention([one], s, x, {
      ranks: 4, causal: true, precision: 'f32',
      onStep: (ev) => { if (ev.phase === 'forward' && ev.step === 0) throw new Cancelled('cancelled'); },
    }).then(() => null, (err) => err);
    expect(e).toBeInstanceOf(Cancelled);
    const atReject = gpu.submits();
    expect(one.tracker.snapshot().liveBuffers).toBe(0);
    // Long enough for every rank the old grace period left behind to come to its submit.
    await sleep(5 * SLOW_MS);
    expect(gpu.submits() - atReject).toBe(0);
  }, 60_000);

  it('an AbortSignal stops the ring within the compute in flight; the next run on the device sees no error of it', async () => {
    const gpu = slowGpu();
    const ac = new AbortController();
    let abortedAt = 0;
    const run = ringAttention([one], s, x, {
      ranks: 4, causal: true, precision: 'f32', signal: ac.signal,
      // Aborted while a rank's step-1 compute is on the GPU (each takes SLOW_MS here).
      onStep: (ev) => { if (ev.phase === 'forward' && ev.step === 0) setTimeout(() => { abortedAt = performance.now(); ac.abort(new Cancelled('cancelled')); }, SLOW_MS / 3); },
    });
    const e = await run.then(() => null, (err) => err);
    expect(e).toBeInstanceOf(Cancelled);
    // One compute (its own wait and the queue's, side by side) and a copy at most: not the rest of the step's ranks.
    expect(performance.now() - abortedAt).toBeLessThan(3 * SLOW_MS);
    const atReject = gpu.submits();
    expect(one.tracker.snapshot().liveBuffers).toBe(0);
    await sleep(4 * SLOW_MS);
    expect(gpu.submits() - atReject).toBe(0);
    restore();
    // Aborted before it starts: rejects with the reason, touching nothing.
    const pre = new AbortController();
    pre.abort(new Cancelled('early'));
    await expect(ringAttention([one], s, x, { ranks: 2, precision: 'f32', signal: pre.signal })).rejects.toThrow('early');
    const next = await ringAttention([one], s, x, { ranks: 2, causal: true, precision: 'f32' });
    expect(next.o).toBeDefined();
    expect(one.uncaptured).toEqual([]);
  }, 60_000);
});

/**
 * Runs the ring on a slowed GPU (completions and staging maps `ms` late) and aborts it the moment a
 * transfer of kind `at` begins to wait, once every rank has finished the forward's first step
 * (gpu.mark() at the abort, so `after` holds what was submitted or written after it). Returns the
 * run's error, what came after the abort, and whether the abort came at all (a transfer was waiting).
 */
async function abortedInWait(devs: FlashDevice[], opts: RingOptions, at: TransferWait, ms = 1000): Promise<{ e: unknown; after: string[]; aborted: boolean }> {
  const ac = new AbortController();
  let armed = false, aborted = false;
  const gpu = slowGpu(devs, ms, (w) => {
    if (!armed || aborted || w !== at) return;
    aborted = true;
    // While that transfer waits (its wait is `ms` late); what other ranks submit before then is theirs to.
    setTimeout(() => { gpu.mark(); ac.abort(new Cancelled('cancelled')); }, 0);
  });
  const e = await ringAttention(devs, s, x, {
    ...opts, signal: ac.signal,
    onStep: (ev) => { if (ev.phase === 'forward' && ev.step === 0) armed = true; },
  }).then(() => null, (err) => err);
  await sleep(3 * ms);   // longer than any wait the transfer was in
  return { e, after: gpu.after, aborted };
}

describe('cancelling while a transfer waits (no submission or write after the abort)', () => {
  // The abort comes the moment a transfer begins to wait (slowGpu's onWait), whatever the machine's
  // pace: before the fix that transfer went on to submit (a copy) or write (a staging transfer).
  it('pipelined one-device: a copy that waited for the GPU through the abort submits nothing', async () => {
    expect(one.hasTimestamps).toBe(true);   // lavapipe (Mesa ≥ 25) has timestamp-query: pipelined runs need it
    const r = await abortedInWait([one], { ranks: 4, causal: true, precision: 'f32', pipelined: true }, 'comm.copy');
    expect(r.aborted).toBe(true);   // a copy was waiting when the run was aborted
    expect(r.e).toBeInstanceOf(Cancelled);
    expect(one.tracker.snapshot().liveBuffers).toBe(0);
    expect(r.after).toEqual([]);
    restore();
    expect(one.uncaptured).toEqual([]);
  }, 120_000);

  it('multi-adapter: a staging transfer whose map completes after the abort writes nothing', async () => {
    const r = await abortedInWait(two, { ranks: 2, causal: true, precision: 'f32' }, 'comm.staging map');
    expect(r.aborted).toBe(true);   // a staging map was pending when the run was aborted
    expect(r.e).toBeInstanceOf(Cancelled);
    for (const d of two) expect(d.tracker.snapshot().liveBuffers).toBe(0);
    expect(r.after).toEqual([]);
    restore();
    const next = await ringAttention(two, s, x, { ranks: 2, causal: true, precision: 'f32' });
    expect(next.o).toBeDefined();
    for (const d of two) expect(d.uncaptured).toEqual([]);
  }, 120_000);
});
