/**
 * Repeated calls on one device keep no growing state (issue 34, item 4). A warm call (kernels
 * built) may leave nothing behind: not JS heap, not pipelines or shader modules, not tracked
 * buffers, not subscriptions to the device's loss. Each term is measured on its own, the heap as
 * the median over batches of the growth per call after forced GCs (one batch can catch a GC's
 * or the JIT's noise; the median of six cannot).
 *
 * Before the fix, each ringAttention phase attached a reaction to `device.lost` (a promise that
 * stays pending while the device lives), and its closure held the whole call: rank contexts,
 * their buffers' wrappers, the timeline, the communicator, for the device's lifetime. On lavapipe,
 * this test's medians before: 38 KB/call (one device), 22 KB/call (two devices); after: 0.6–4 KB
 * (what the JIT still compiles and the GC has not settled; it does not accumulate over 500 calls).
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it, beforeAll } from 'vitest';
import { testDevices } from './gpu.js';
import { makeInputs } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { ringAttention, RingOptions } from '../src/cp/launch/ringAttention.js';
import { attentionForward, attentionBackward } from '../src/kernels/attention.js';
import { toHalfArray } from '../src/f16.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/**
 * Live heap: the least heapUsed over several full GCs, each followed by turns of the event loop.
 * One reading after a GC can still count garbage on pages the concurrent sweeper has not reached
 * (±200 KB between readings here); the least of five does not.
 */
async function heapUsed(): Promise<number> {
  let least = Infinity;
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 2));
    least = Math.min(least, process.memoryUsage().heapUsed);
  }
  return least;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Growth bound per warm call: the leak was ~40 KB a call; what remains is JIT and GC noise. */
const MAX_BYTES_PER_CALL = 10 * 1024;

/** Counts what a call leaves on a device: pipelines and modules built, device.lost reactions, loss subscriptions. */
function watch(dev: FlashDevice) {
  const n = { pipelines: 0, modules: 0, lostReactions: 0, lostSubscriptions: 0 };
  const d = dev.device as GPUDevice & Record<string, unknown>;
  const wrap = <K extends 'createComputePipelineAsync' | 'createComputePipeline' | 'createShaderModule'>(k: K, count: () => void) => {
    const f = d[k].bind(d) as (...a: unknown[]) => unknown;
    (d as Record<string, unknown>)[k] = (...a: unknown[]) => (count(), f(...a));
  };
  wrap('createComputePipelineAsync', () => n.pipelines++);
  wrap('createComputePipeline', () => n.pipelines++);
  wrap('createShaderModule', () => n.modules++);
  // The device's lost promise is one object: count every reaction attached to it from here on.
  const lost = d.lost as Promise<GPUDeviceLostInfo> & Record<string, unknown>;
  const then = lost.then;
  lost.then = function (this: Promise<GPUDeviceLostInfo>, ...a: Parameters<typeof then>) {
    n.lostReactions++;
    return then.apply(this, a);
  } as typeof then;
  const onLost = dev.onLost.bind(dev);
  dev.onLost = (fn) => {
    n.lostSubscriptions++;
    const off = onLost(fn);
    return () => (n.lostSubscriptions--, off());
  };
  return n;
}

interface Growth {
  perCall: number[];
  median: number;
  total: number;
}

/**
 * `warm` calls, then `batches` batches of `per`; after every measured call each device's tracker
 * holds what it held before (and no loss subscription is left), after every batch the heap growth
 * per call is recorded. Pipelines, modules and device.lost reactions count over the measured calls.
 */
async function measure(devs: FlashDevice[], call: (i: number) => Promise<void>, warm = 20, batches = 6, per = 10) {
  for (let i = 0; i < warm; i++) await call(i);
  const ns = devs.map(watch);
  const base = devs.map((d) => d.tracker.snapshot());
  const perCall: number[] = [];
  const h0 = await heapUsed();
  let h = h0;
  for (let b = 0; b < batches; b++) {
    for (let k = 0; k < per; k++) {
      await call(warm + b * per + k);
      devs.forEach((d, i) => {
        const t = d.tracker.snapshot();
        expect([t.liveBytes, t.liveBuffers], `device ${i} tracker after a call`).toEqual([base[i].liveBytes, base[i].liveBuffers]);
        expect(ns[i].lostSubscriptions, `device ${i} loss subscriptions after a call`).toBe(0);
      });
    }
    const h2 = await heapUsed();
    perCall.push((h2 - h) / per);
    h = h2;
  }
  const g: Growth = { perCall, median: median(perCall), total: (h - h0) / (batches * per) };
  return { g, ns };
}

const kb = (x: number) => `${(x / 1024).toFixed(1)} KB`;
const report = (what: string, g: Growth) =>
  console.log(`${what}: heap growth per warm call, median ${kb(g.median)} (batches: ${g.perCall.map(kb).join(', ')}; overall ${kb(g.total)})`);

/** Each term on its own (soft: a failing run reports all of them). */
function expectBounded(g: Growth, ns: ReturnType<typeof watch>[]) {
  expect.soft(g.median, 'median heap growth per warm call (bytes)').toBeLessThan(MAX_BYTES_PER_CALL);
  ns.forEach((n, i) => {
    expect.soft(n.pipelines, `device ${i}: pipelines built by warm calls`).toBe(0);
    expect.soft(n.modules, `device ${i}: shader modules built by warm calls`).toBe(0);
    expect.soft(n.lostReactions, `device ${i}: reactions attached to device.lost by warm calls`).toBe(0);
  });
}

const s = { B: 1, Hq: 4, Hkv: 4, Nq: 32, Nk: 32, D: 16 };
const x = makeInputs(s, 7);
const half = { q: toHalfArray(x.q), k: toHalfArray(x.k), v: toHalfArray(x.v), dout: toHalfArray(x.dout) };

let one: FlashDevice;
let two: FlashDevice[];
beforeAll(async () => {
  [one] = await testDevices(1);
  two = await testDevices(2);
});

describe('repeated calls on one device keep no growing state', () => {
  it('ringAttention, one device: R = 2 and 4, every scheme, forward and backward, causal and not', async () => {
    // One batch = one cycle of these; the warm-up (two cycles) builds every kernel they use.
    const runs: (RingOptions & { bwd: boolean; f16?: boolean })[] = [
      { ranks: 2, scheme: 'p2p', causal: true, bwd: true },
      { ranks: 2, scheme: 'all_gather', causal: false, bwd: true },
      { ranks: 2, scheme: 'a2a', causal: true, bwd: false },
      { ranks: 4, scheme: 'p2p', causal: false, bwd: false },
      { ranks: 4, scheme: 'all_gather', causal: true, bwd: true },
      { ranks: 4, scheme: 'a2a', causal: false, bwd: true },
      { ranks: 4, scheme: 'a2a+p2p', hierarchicalSizes: '2,2', causal: true, bwd: true },
      { ranks: 2, scheme: 'p2p', causal: false, bwd: false, layout: 'striped' },
      { ranks: 4, scheme: 'p2p', causal: true, bwd: true, ...(one.hasTimestamps ? { pipelined: true } : {}) },
      { ranks: 2, scheme: 'p2p', causal: true, bwd: true, f16: one.hasF16 },
    ];
    const { g, ns } = await measure([one], async (i) => {
      const { bwd, f16, ...opts } = runs[i % runs.length];
      const t = f16 ? half : x;
      const res = await ringAttention([one], s, bwd ? t : { q: t.q, k: t.k, v: t.v }, opts);
      expect(res.o.length).toBe(s.B * s.Hq * s.Nq * s.D);
    });
    report('ring, one device', g);
    expectBounded(g, ns);
  });

  it('ringAttention, two devices (multi-adapter): every scheme, forward and backward', async () => {
    const runs: (RingOptions & { bwd: boolean })[] = [
      { scheme: 'p2p', causal: true, bwd: true },
      { scheme: 'all_gather', causal: false, bwd: true },
      { scheme: 'a2a', causal: true, bwd: false },
      { scheme: 'p2p', causal: false, bwd: false },
      { scheme: 'a2a', causal: false, bwd: true },
    ];
    const { g, ns } = await measure(two, async (i) => {
      const { bwd, ...opts } = runs[i % runs.length];
      await ringAttention(two, s, bwd ? x : { q: x.q, k: x.k, v: x.v }, { precision: 'f32', ...opts });
    });
    report('ring, two devices', g);
    expectBounded(g, ns);
  });

  it('attentionForward and attentionBackward on one device', async () => {
    const { g, ns } = await measure([one], async (i) => {
      const causal = i % 2 === 0;
      const f = await attentionForward(one, s, x, { causal, precision: 'f32' });
      await attentionBackward(one, s, { ...x, o: f.o, lse: f.lse }, { causal, precision: 'f32' });
    });
    report('single device', g);
    expectBounded(g, ns);
  });

  it('onLost: listeners called once on loss, unsubscribed ones not, late ones at once', async () => {
    const [d] = await testDevices(1);
    const got: string[] = [];
    d.onLost(() => got.push('a'));
    const off = d.onLost(() => got.push('b'));
    off();
    d.destroy();
    await d.device.lost;
    await new Promise((r) => setTimeout(r, 0));
    expect(got).toEqual(['a']);
    const late = await new Promise<GPUDeviceLostInfo>((r) => d.onLost(r));
    expect(late.reason).toBe('destroyed');
    expect(d.lostReason).toBe('destroyed');
  });
});
