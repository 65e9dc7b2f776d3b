/**
 * Cancelling a one-device ring whose steps are long (the page's Cancel on SwiftShader: seconds per
 * rank's compute). The GPU's completion is slowed here (each onSubmittedWorkDone resolves SLOW_MS
 * late), so that the ranks queued behind the one-device lock when the run stops would take longer
 * than the old fixed grace period (5 s) to go through. The run must reject only after the work
 * already sent is done, submit nothing after it rejects (a late submission uses buffers it has
 * freed: "used in submit while destroyed", an error that landed in the next run's check), and
 * leave the device clean for the next run.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testDevices } from './gpu.js';
import { makeInputs, SEED, AttentionShape } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { ringAttention } from '../src/cp/launch/ringAttention.js';

const SLOW_MS = 1500;
const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 64, Nk: 64, D: 16 };
const x = makeInputs(s, SEED + 7);
class Cancelled extends Error {}

let one: FlashDevice;
beforeAll(async () => {
  [one] = await testDevices(1);
  await ringAttention([one], s, x, { ranks: 4, causal: true, precision: 'f32' }); // kernels compiled before the clock matters
});

/** The device's submissions counted, and its completions late by SLOW_MS (undone after each test). */
function slowGpu(): { submits: () => number } {
  const queue = one.device.queue, done = queue.onSubmittedWorkDone, submit = queue.submit;
  let n = 0;
  queue.onSubmittedWorkDone = () => done.call(queue).then(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), SLOW_MS)));
  queue.submit = function (cmds: Iterable<GPUCommandBuffer>) {
    n++;
    submit.call(queue, cmds);
  };
  restore = () => {
    delete (queue as { submit?: unknown }).submit;
    delete (queue as { onSubmittedWorkDone?: unknown }).onSubmittedWorkDone;
    if (queue.submit !== submit) queue.submit = submit;
    if (queue.onSubmittedWorkDone !== done) queue.onSubmittedWorkDone = done;
  };
  return { submits: () => n };
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
