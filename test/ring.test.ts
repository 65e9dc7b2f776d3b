import { describe, expect, it, beforeAll, vi } from 'vitest';
import { autoF16Path, testDevices, tunedDevice } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape, plannedSteps } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { ringAttention, ringAttentionWithBackwardO, RingOptions, RingResult } from '../src/cp/launch/ringAttention.js';
import { LAYOUTS } from '../src/cp/plan/schedule.js';
import { InProcessCommunicator, deviceCopy } from '../src/cp/transport/communicator.js';
import { RankContext, RankKernels } from '../src/cp/rank/rank.js';
import { TimelineRecorder } from '../src/cp/rank/timeline.js';
import { rankKernels, stepGpuTime } from '../src/cp/launch/stage.js';
import { FlashForward } from '../src/kernels/flashForward.js';
import { FlashBackward } from '../src/kernels/flashBackward.js';
import { MergeKernel } from '../src/kernels/merge.js';
import { schemeNames, Scheme } from '../src/cp/schemes/registry.js';
import { attentionForward, attentionBackward } from '../src/kernels/attention.js';
import { referenceForward, referenceBackward } from '../src/reference/attention.js';
import { gradReference } from './gradRef.js';
import { DeviceLostError, InputError } from '../src/errors.js';
import { acquireDevices } from '../src/gpu/device.js';
import { nodeGPU } from '../src/gpu/node.js';

let one: FlashDevice;
let three: FlashDevice[];
beforeAll(async () => {
  [one] = await testDevices(1);
  three = await testDevices(3);
});

/** a2a+p2p's split per R: a2a inside groups of A, a ring of P groups. */
const SIZES: Record<number, string> = { 1: '1,1', 2: '2,1', 3: '1,3', 4: '2,2', 8: '2,4' };

/** Every output against the float64 reference and the single-device kernel. */
async function check(devs: FlashDevice[], s: AttentionShape, causal: boolean, seed: number, runs: (Omit<RingOptions, 'causal' | 'precision'> & { tag: string })[]) {
  const x = makeInputs(s, seed);
  const r = refInputs(x, 'f32');
  const rf = referenceForward(s, r.q, r.k, r.v, { causal });
  const rb = referenceBackward(s, r.q, r.k, r.v, r.dout, { causal });
  const single = await attentionForward(one, s, x, { causal, precision: 'f32' });
  const singleB = await attentionBackward(one, s, { ...x, o: single.o, lse: single.lse }, { causal, precision: 'f32' });
  const got: RingResult[] = [];
  for (const { tag, ...opts } of runs) {
    const res = await ringAttention(devs, s, x, { causal, precision: 'f32', ...opts });
    const f = TOL.f32.out, g = TOL.f32.grad;
    const pairs: [string, Float32Array | Uint16Array, Float64Array, Float32Array | Uint16Array, number][] = [
      ['O', res.o, rf.o, single.o, f], ['LSE', res.lse, rf.lse, single.lse, f],
      ['dQ', res.dq!, rb.dq, singleB.dq, g], ['dK', res.dk!, rb.dk, singleB.dk, g], ['dV', res.dv!, rb.dv, singleB.dv, g],
    ];
    for (const [name, a, ref, one1, tol] of pairs) {
      expect(err(a, ref), `${name} vs reference ${tag}`).toBeLessThanOrEqual(tol);
      expect(err(a, Float64Array.from(one1)), `${name} vs single device ${tag}`).toBeLessThanOrEqual(tol);
    }
    for (const rk of res.timeline.ranks) expect(rk.peakBytes, tag).toBeGreaterThan(0);
    for (const rk of res.timeline.ranks) expect(rk.liveBytesAfter, tag).toBe(0);
    for (const d of devs) expect(d.tracker.snapshot().liveBuffers, tag).toBe(0);
    // The dry run (what cp-plan predicts from) plans exactly what the rank programs reported.
    const tl = res.timeline;
    const key = (x: { phase: string; step: number; rank: number }) => `${x.phase}:${x.step}:${x.rank}`;
    const pick = (x: { flops: number; transferBytes: number; messages: number; overlapped: boolean }) =>
      ({ flops: x.flops, transferBytes: x.transferBytes, messages: x.messages, overlapped: x.overlapped });
    const planned = new Map((await plannedSteps({ shape: s, causal, layout: tl.layout, R: tl.R, scheme: tl.scheme, hierarchy: tl.hierarchy, eb: 4 })).map((x) => [key(x), pick(x)]));
    const recorded = new Map(tl.phases.flatMap((ph) => ph.steps).map((x) => [key(x), pick(x)]));
    expect(recorded, `plan ${tag}`).toEqual(planned);
    got.push(res);
  }
  return got;
}

const runsFor = (R: number) =>
  schemeNames().flatMap((scheme: Scheme) => LAYOUTS.map((layout) => ({
    tag: `${scheme} ${layout} R=${R}`, scheme, layout, ranks: R, ...(scheme === 'a2a+p2p' ? { hierarchicalSizes: SIZES[R] } : {}),
  })));

describe('context parallelism: every scheme x layout vs float64 reference and the single-device kernel', () => {
  // N = 29 divides evenly by no R > 1 (nor 2R zigzag chunks); Hq = 2R, Hkv = R: GQA, and heads split for a2a.
  for (const R of [1, 2, 3, 4, 8])
    it(`R=${R} causal, one-device mode, forward + backward`, async () => {
      const s: AttentionShape = { B: 1, Hq: 2 * R, Hkv: R, Nq: 29, Nk: 29, D: 8 };
      const got = await check([one], s, true, SEED + R, runsFor(R));
      const p2p = got[0].timeline;
      expect(p2p.mode).toBe('one-device');
      // Ring: R steps per rank forward; backward R steps plus the hop that brings dK/dV home (none at R = 1: no ring, no hop).
      expect(p2p.phases.map((p) => p.steps.length)).toEqual([R * R, R * (R > 1 ? R + 1 : 1)]);
      if (R > 1) for (const res of got) expect(res.timeline.summary.bytesMoved, res.timeline.scheme).toBeGreaterThan(0);
      // all_gather under zigzag gathers K/V into one run of all N tokens: one kernel call per Q segment per pass.
      const ag = got.find((g) => g.timeline.scheme === 'all_gather' && g.timeline.layout === 'zigzag')!.timeline;
      expect(ag.phases.map((p) => p.steps.length)).toEqual([2 * R, 2 * R]);
      for (const st of ag.phases.flatMap((p) => p.steps).filter((x) => x.label === 'attend')) expect(st.pairs).toBe(ag.schedule.shards[st.rank].length);
    });

  it('full (non-causal) attention, B=2, every scheme, R=3', async () => {
    const s: AttentionShape = { B: 2, Hq: 6, Hkv: 3, Nq: 20, Nk: 20, D: 16 };
    await check([one], s, false, SEED + 50, runsFor(3).filter((r) => r.layout === 'zigzag'));
  });

  it('multi-adapter mode: three devices, staging transfers, every scheme', async () => {
    const s: AttentionShape = { B: 1, Hq: 6, Hkv: 3, Nq: 23, Nk: 23, D: 8 };
    const got = await check(three, s, true, SEED + 60, runsFor(3).filter((r) => r.layout === 'striped'));
    for (const res of got) expect(res.timeline.mode).toBe('multi-adapter');
  });

  it('f16 ring with GQA, causal, zigzag, a2a+p2p', async () => {
    if (!one.hasF16) return expect(process.env.CI).not.toBe('true');
    const g: AttentionShape = { B: 2, Hq: 4, Hkv: 2, Nq: 50, Nk: 50, D: 32 };
    const x = makeInputs(g, SEED + 99);
    const r = refInputs(x, 'f16');
    const rf = referenceForward(g, r.q, r.k, r.v, { causal: true });
    for (const opts of [{ scheme: 'p2p' as const }, { scheme: 'a2a+p2p' as const, hierarchicalSizes: '2,2' }]) {
      const { result: got, backwardO } = await ringAttentionWithBackwardO([one], g, x, { causal: true, layout: 'zigzag', precision: 'f16', ranks: 4, ...opts });
      // The gradients against the backward of the ranks' own inputs: O as they kept it (f32), checked there (gradRef.ts).
      const rb = gradReference(g, r, { causal: true }, backwardO, 'f16', opts.scheme);
      // The ranks take the fastest exact path and say which (tensor cores where the adapter has them).
      const path = autoF16Path(one);
      // A reason only where 'auto' fell back (not where the tuning asked for the portable kernels).
      const fellBack = path === 'scalar' && one.tuning.path !== 'scalar';
      expect(got.kernels).toEqual({ forward: path, backward: path, fallbackReason: fellBack ? expect.stringMatching(/subgroup|f16/) : null });
      expect(err(got.o, rf.o)).toBeLessThanOrEqual(TOL.f16.out);
      expect(err(got.lse, rf.lse)).toBeLessThanOrEqual(TOL.f16.out);
      for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k]!, rb[k]), k).toBeLessThanOrEqual(TOL.f16.grad);
    }
  });

  // The tensor-core backward accumulating into dQ, dK, dV (every pair call; the old values are nonzero from a segment's second pair on) with
  // whole 16-row blocks and workgroups of 128 rows, partial ones at the shard ends: the epilogue that
  // reads a block's old values ahead (shaders/flash_bwd_sgmm.wgsl old_block). Tensor cores only.
  // Both epilogues of the f32 gradients the ring accumulates in (flashBackward.ts): direct (the default: the
  // accumulators start from the old values and are stored straight, the scale in dS) and staged, at two head
  // dims; a shape whose gradient buffers are under a matrix takes the staged one whatever the pin.
  it('f16 ring on tensor cores, shards of whole and partial blocks: the accumulating backward, both epilogues', async (ctx) => {
    if (!one.hasF16 || autoF16Path(one) !== 'subgroup-matrix') ctx.skip();
    const staged = await tunedDevice({ sgmmEpilogue: 'staged' });
    for (const g of [{ B: 1, Hq: 2, Hkv: 2, Nq: 600, Nk: 600, D: 64 }, { B: 1, Hq: 2, Hkv: 1, Nq: 300, Nk: 300, D: 128 }, { B: 1, Hq: 1, Hkv: 1, Nq: 6, Nk: 6, D: 64 }]) {
      const x = makeInputs(g, SEED + 98);
      const r = refInputs(x, 'f16');
      const rf = referenceForward(g, r.q, r.k, r.v, { causal: true });
      for (const dev of [one, staged]) {
        const { result: got, backwardO } = await ringAttentionWithBackwardO([dev], g, x, { causal: true, layout: 'zigzag', precision: 'f16', ranks: 2, scheme: 'p2p' });
        const what = `${g.Nq}x${g.D} ${dev.tuning.sgmmEpilogue ?? 'direct'}`;
        const rb = gradReference(g, r, { causal: true }, backwardO, 'f16', what);   // as in the test above
        expect(got.kernels.backward, what).toBe('subgroup-matrix');
        expect(err(got.o, rf.o), what).toBeLessThanOrEqual(TOL.f16.out);
        for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k]!, rb[k]), `${what} ${k}`).toBeLessThanOrEqual(TOL.f16.grad);
      }
    }
  });

  it('the timeline accounts for every step: compute, transfer, idle, overlap', async () => {
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 1, Nq: 45, Nk: 45, D: 16 };
    const x = makeInputs(s, SEED + 5);
    const got = await ringAttention([one], s, { q: x.q, k: x.k, v: x.v }, { causal: true, layout: 'contiguous', precision: 'f32', ranks: 4 });
    const tl = got.timeline;
    expect(tl.phases.map((p) => p.phase)).toEqual(['forward']);
    const steps = tl.phases[0].steps;
    for (const st of steps) {
      expect(st.end).toBeGreaterThanOrEqual(st.computeEnd);
      expect(st.idleMs).toBeGreaterThanOrEqual(0);
      // K and V of the chunk it holds (B=1, Hkv=1, D=16, f32); nothing at the last step.
      const held = tl.schedule.shards[st.kvFrom][0].count;
      expect(st.transferBytes).toBe(st.step < 3 ? 2 * held * 16 * 4 : 0);
      expect(st.flops).toBe(4 * 2 * st.visible * 16);
      if (one.hasTimestamps) expect(st.gpuComputeMs).not.toBeNull();
    }
    // Causal contiguous: rank 0 only ever computes its own diagonal chunk.
    expect(steps.filter((st) => st.rank === 0 && st.pairs > 0).length).toBe(1);
    expect(steps.reduce((a, st) => a + st.visible, 0)).toBe((45 * 46) / 2);
    expect(tl.summary.overlapEfficiency).toBeGreaterThanOrEqual(0);
    expect(tl.summary.overlapEfficiency).toBeLessThanOrEqual(1);
    expect(JSON.parse(JSON.stringify(tl)).kind).toBe('flashring.timeline');
  });

  it('every kernel a backward runs is timed: p2p at R=12 (dQ, then dK/dV onto the running sum: 3R computes a rank), all_gather\'s adds', async () => {
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 1, Nq: 48, Nk: 48, D: 16 };
    const x = makeInputs(s, SEED + 9);
    for (const [scheme, R] of [['p2p', 12], ['all_gather', 3]] as [Scheme, number][]) {
      const { timeline } = await ringAttention([one], s, x, { scheme, causal: true, precision: 'f32', ranks: R });
      const steps = timeline.phases.flatMap((p) => p.steps).filter((st) => st.computeMs > 0);
      expect(steps.length, scheme).toBeGreaterThan(0);
      // A step whose compute asked for more timer intervals than a rank has reads null, never short.
      if (one.hasTimestamps) for (const st of steps) expect(st.gpuComputeMs, `${scheme} ${st.phase} rank ${st.rank} step ${st.step}`).not.toBeNull();
      // A ring step with work runs kernels, and they are timed.
      if (one.hasTimestamps) for (const st of steps.filter((x) => x.pairs > 0)) expect(st.gpuComputeMs!, `${scheme} ${st.phase} rank ${st.rank} step ${st.step}`).toBeGreaterThan(0);
      if (one.hasTimestamps && scheme === 'all_gather') {
        const adds = timeline.phases.find((p) => p.phase === 'backward')!.steps.filter((st) => st.step === 1);
        for (const st of adds) expect(st.gpuComputeMs!, `rank ${st.rank}'s adds`).toBeGreaterThan(0);
      }
    }
  });

  it('a step whose compute found no timer interval left reads null GPU time, never a short sum', () => {
    const r = { gpuIntervals: [0, -1], gpuComputeMs: null as number | null };
    const dev = { hasTimestamps: true } as FlashDevice;
    stepGpuTime(r as Parameters<typeof stepGpuTime>[0], dev, [1.5]);
    expect(r.gpuComputeMs).toBeNull();
    r.gpuIntervals = [0];
    stepGpuTime(r as Parameters<typeof stepGpuTime>[0], dev, [1.5]);
    expect(r.gpuComputeMs).toBe(1.5);
  });

  it('a rank\'s kernels run once, untimed, before any step (a first dispatch that compiles stays out of step times and predictions), once per device', async () => {
    // A device of its own: its kernel cache is empty, so its first rankKernels warms them.
    const [d] = await testDevices(1);
    let submits = 0;
    const submit = d.device.queue.submit.bind(d.device.queue);
    d.device.queue.submit = (cmds: Iterable<GPUCommandBuffer>) => { submits++; submit(cmds); };
    const live = d.tracker.snapshot().liveBuffers;
    // Every kernel a ring runs is dispatched in that one submission: forward, backward, the add, the finalize.
    const spies = [vi.spyOn(FlashForward.prototype, 'encode'), vi.spyOn(FlashBackward.prototype, 'encode'), vi.spyOn(MergeKernel.prototype, 'encodeAdd'), vi.spyOn(MergeKernel.prototype, 'encodeFinalize')];
    let k: Awaited<ReturnType<typeof rankKernels>>;
    try {
      k = await rankKernels(d, 24, 'f32', true);
      expect(spies.map((x) => x.mock.calls.length), 'forward, backward, add, finalize encoded').toEqual([1, 1, 1, 1]);
    } finally {
      for (const x of spies) x.mockRestore();
    }
    expect(submits, 'the first rank on a device warms its kernels').toBe(1);
    await Promise.all([rankKernels(d, 24, 'f32', true), rankKernels(d, 24, 'f32', true)]);
    expect(submits, 'later ranks on the same device find them warm').toBe(1);
    expect(k.bwd).not.toBeNull();
    expect(d.tracker.snapshot().liveBuffers, 'the warm-up frees what it made').toBe(live);
  });

  it('pipelined one-device runs (steps submitted without waiting) give the same outputs bit for bit', async () => {
    const s: AttentionShape = { B: 1, Hq: 4, Hkv: 2, Nq: 37, Nk: 37, D: 16 };
    const x = makeInputs(s, SEED + 11);
    const cases: Omit<RingOptions, 'causal' | 'precision'>[] = [
      { scheme: 'p2p' }, { scheme: 'p2p', layout: 'striped' }, { scheme: 'all_gather' }, { scheme: 'a2a', ranks: 2 }, { scheme: 'a2a+p2p', hierarchicalSizes: '2,2' },
    ];
    for (const opts of cases) {
      const base: RingOptions = { causal: true, layout: 'zigzag', precision: 'f32', ranks: 4, ...opts };
      const waited = await ringAttention([one], s, x, base);
      const piped = await ringAttention([one], s, x, { ...base, pipelined: true });
      expect(piped.timeline.pipelined, opts.scheme).toBe(true);
      expect(waited.timeline.pipelined, opts.scheme).toBeUndefined();
      for (const k of ['o', 'lse', 'dq', 'dk', 'dv'] as const) expect(Buffer.compare(Buffer.from(piped[k]!.buffer), Buffer.from(waited[k]!.buffer)), `${opts.scheme} ${k}`).toBe(0);
      expect(piped.timeline.ranks.map((r) => r.peakBytes)).toEqual(waited.timeline.ranks.map((r) => r.peakBytes));
      expect(one.tracker.snapshot().liveBuffers).toBe(0);
    }
  });

  it('pipelined one-device runs submit nothing while earlier work is still on the GPU (each rank timed alone)', async () => {
    // Without gpuAlone the queue starts the next rank's passes beside the last rank's (they share
    // no buffer) and each pass's timestamps count the other's time: on the H200 74 ms for 16.
    const s: AttentionShape = { B: 1, Hq: 4, Hkv: 2, Nq: 48, Nk: 48, D: 16 };
    const x = makeInputs(s, SEED + 12);
    const queue = one.device.queue;
    let submitted = 0, done = 0, overlapping = 0;
    const submit = queue.submit;
    queue.submit = function (cmds: Iterable<GPUCommandBuffer>) {
      // The timers' read-back after the run may follow the last pass at once: it is not timed work.
      if (done < submitted && !new Error().stack?.includes('GpuTimer.read')) overlapping++;
      const n = ++submitted;
      submit.call(queue, cmds);
      void queue.onSubmittedWorkDone().then(() => (done = Math.max(done, n)));
    };
    try {
      for (const scheme of ['p2p', 'all_gather', 'a2a'] as const) {
        await ringAttention([one], s, x, { causal: true, layout: 'zigzag', precision: 'f32', ranks: scheme === 'a2a' ? 2 : 4, scheme, pipelined: true });
      }
    } finally {
      delete (queue as { submit?: unknown }).submit;
      if (queue.submit !== submit) queue.submit = submit;
    }
    expect(submitted).toBeGreaterThan(20);
    expect(overlapping).toBe(0);
  });

  it('pipelined: a copy or a step still waiting for the GPU when its run failed and freed the buffers submits nothing', async () => {
    // A hung device: runAll frees after SETTLE_MS while a rank or a copy may still wait in gpuAlone.
    const queue = one.device.queue;
    let release!: (v: undefined) => void;
    const gate = new Promise<undefined>((r) => (release = r));
    const done = queue.onSubmittedWorkDone;
    let submits = 0;
    const submit = queue.submit;
    queue.onSubmittedWorkDone = () => gate;
    queue.submit = function (cmds: Iterable<GPUCommandBuffer>) {
      submits++;
      submit.call(queue, cmds);
    };
    try {
      const a = one.tracker.create({ label: 't.a', size: 64, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
      const b = one.tracker.create({ label: 't.b', size: 64, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
      const copy = deviceCopy(undefined, false)(one, one, [{ buffer: a, bytes: 64 }], [{ buffer: b, bytes: 64 }]);
      const rec = new TimelineRecorder(1, { forward: 1, backward: 0 });
      const ctx = new RankContext(0, one, new InProcessCommunicator([one], deviceCopy()), {} as RankKernels, rec, null, 2, false);
      const step = ctx.compute(ctx.begin('forward', 0, { label: 'ring', kvFrom: 0, pairs: 0, visible: 0, flops: 0 }), 'attend', (enc) => enc.clearBuffer(ctx.alloc(64, 'x')));
      await new Promise((r) => setTimeout(r, 20));
      one.tracker.destroy(a);
      one.tracker.destroy(b);
      ctx.free();
      release(undefined);
      await expect(copy).rejects.toThrow(/transfer \(copy\) abandoned: its buffers were freed/);
      await expect(step).rejects.toThrow(/rank 0: step abandoned: its buffers were freed/);
      expect(submits).toBe(0);
    } finally {
      delete (queue as { submit?: unknown; onSubmittedWorkDone?: unknown }).submit;
      delete (queue as { submit?: unknown; onSubmittedWorkDone?: unknown }).onSubmittedWorkDone;
      if (queue.submit !== submit) queue.submit = submit;
      if (queue.onSubmittedWorkDone !== done) queue.onSubmittedWorkDone = done;
    }
    expect(one.tracker.snapshot().liveBuffers).toBe(0);
  });

  it('work per rank counts what each scheme computes: the sequence schedule for p2p and all_gather, head shards for a2a', async () => {
    const s: AttentionShape = { B: 1, Hq: 4, Hkv: 2, Nq: 64, Nk: 64, D: 8 };
    const x = makeInputs(s, SEED + 8);
    const work = async (scheme: Scheme, layout: 'contiguous' | 'zigzag') =>
      (await ringAttention([one], s, { q: x.q, k: x.k, v: x.v }, { scheme, layout, causal: true, precision: 'f32', ranks: 2 })).timeline.schedule;
    // Causal, contiguous, R = 2: the first half sees its own triangle (32·33/2 = 528 scores), the
    // second all of the first half and its triangle (1024 + 528); a2a's ranks take two heads of
    // the whole sequence each (64·65/2 scores per head): half of the total each.
    expect(await work('p2p', 'contiguous')).toMatchObject({ workPerRank: [528, 1552] });
    expect((await work('all_gather', 'contiguous')).workPerRank).toEqual([528, 1552]);
    const a2a = await work('a2a', 'contiguous');
    expect(a2a).toMatchObject({ workPerRank: [1040, 1040], imbalance: 1 });
    expect((await work('p2p', 'zigzag')).workPerRank).toEqual([1040, 1040]);
  });

  it('memory per rank: all_gather holds the full K/V, a2a head shards, p2p two slots', async () => {
    const s: AttentionShape = { B: 1, Hq: 4, Hkv: 4, Nq: 64, Nk: 64, D: 8 };
    const x = makeInputs(s, SEED + 7);
    const peak = async (scheme: Scheme) =>
      (await ringAttention([one], s, { q: x.q, k: x.k, v: x.v }, { scheme, layout: 'contiguous', precision: 'f32', ranks: 4 })).timeline.ranks.map((r) => r.peakBytes);
    const kv = 2 * 64 * 4 * 8 * 4; // K and V of the whole sequence, f32
    const [p, g] = [await peak('p2p'), await peak('all_gather')];
    // all_gather holds the whole sequence's K/V (its own chunk copied into the run); p2p two spare
    // slots of one chunk each (no partial (O, LSE): its later steps merge in the forward's epilogue).
    for (let r = 0; r < 4; r++) expect(g[r] - p[r]).toBe((4 / 4) * kv - (2 / 4) * kv);
  });

  it('rejects bad requests with one line naming the problem', async () => {
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 1, Nq: 45, Nk: 45, D: 16 };
    const x = makeInputs(s, 1);
    const tiny: AttentionShape = { ...s, Nq: 3, Nk: 3 };
    const xt = makeInputs(tiny, 2);
    const cases: [Promise<unknown>, RegExp][] = [
      [ringAttention([one], tiny, xt, { ranks: 4 }), /4 ranks but the sequence only 3 tokens/],
      [ringAttention([], s, x), /integer >= 1/],
      [ringAttention([one], s, x, { ranks: 2, layout: 'spiral' as never }), /unknown layout/],
      [ringAttention([one], s, x, { ranks: 2, scheme: 'ring' as never }), /unknown cp-comm-type 'ring'/],
      [ringAttention([one], s, x, { ranks: 2, scheme: 'a2a' }), /a2a splits heads over 2 ranks: .*key\/value heads \(1\)/],
      [ringAttention([one], { ...s, Hq: 3, Hkv: 3 }, makeInputs({ ...s, Hq: 3, Hkv: 3 }, 3), { ranks: 2, scheme: 'a2a' }), /query heads \(3\)/],
      [ringAttention([one], s, x, { ranks: 4, scheme: 'a2a+p2p', hierarchicalSizes: '2,3' }), /multiply to 6, not the context-parallel size 4/],
      [ringAttention([one], s, x, { ranks: 4, scheme: 'a2a+p2p' }), /needs hierarchical sizes/],
      [ringAttention(three.slice(0, 2), s, x, { ranks: 3 }), /one device .* or 3 devices, got 2/],
      [ringAttention([one], { ...s, Nq: 44 }, x, { ranks: 2 }), /Nq \(44\) must equal Nk/],
      [ringAttention(three, s, x, { ranks: 3, pipelined: true }), /pipelined runs need one-device mode/],
      [ringAttention([Object.assign(Object.create(Object.getPrototypeOf(one)), one, { hasTimestamps: false })], s, x, { ranks: 2, pipelined: true }), /has no timestamp-query: run without pipelined/],
    ];
    for (const [p, re] of cases) {
      const e = await p.then(() => null, (e) => e);
      expect(e, String(re)).toBeInstanceOf(InputError);
      expect(e.message).toMatch(re);
      expect(e.message).not.toContain('\n');
    }
  });
});

describe('ring faults', () => {
  it('a caller cancelling from onStep (the page\'s Cancel) ends the run at once with its error; no buffers are left', async () => {
    const s: AttentionShape = { B: 1, Hq: 4, Hkv: 4, Nq: 64, Nk: 64, D: 16 };
    const x = makeInputs(s, SEED + 4);
    class Cancelled extends Error {}
    // Steps after which a copy may still be queued behind the one-device lock when the others are aborted.
    const at: [Scheme, 'forward' | 'backward', number][] = [['p2p', 'forward', 0], ['a2a', 'forward', 1], ['a2a', 'backward', 1], ['all_gather', 'backward', 0]];
    for (const [scheme, phase, step] of at) {
      const tag = `${scheme} ${phase}:${step}`;
      const t0 = performance.now();
      // The rank that ends the step last throws; the others have gone on and wait for its messages.
      const e = await ringAttention([one], s, x, {
        scheme, ranks: 4, causal: true, precision: 'f32', stepTimeoutMs: 60_000,
        onStep: (ev) => { if (ev.phase === phase && ev.step === step) throw new Cancelled('cancelled'); },
      }).then(() => null, (err) => err);
      expect(e, tag).toBeInstanceOf(Cancelled);
      expect(performance.now() - t0, tag).toBeLessThan(15_000); // was the hang watch: stepTimeoutMs
      expect(one.tracker.snapshot().liveBuffers, tag).toBe(0);
    }
    // That no copy queued by the run touches its freed buffers afterwards is the next test's
    // (Dawn in Node logs "used in submit while destroyed" natively, where no test can read it).
  });

  it('after an abort, settled() waits for transfers already started (a copy queued behind the one-device lock)', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const copies: number[] = [];
    const comm = new InProcessCommunicator([one, one], async (_f, _t, src) => { await gate; copies.push(src.length); });
    const buf = one.tracker.create({ label: 'settle.buf', size: 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
    const r = [{ buffer: buf, bytes: 16 }];
    const started = [comm.sendRecv(0, 1, r, 1, r, 't'), comm.sendRecv(1, 0, r, 0, r, 't')]; // both ends posted: the copies run
    started.forEach((p) => p.catch(() => {}));
    const pending = comm.sendRecv(0, 1, r, 1, r, 'u'); // one end only: rejected by the abort
    comm.abort(new Error('a rank failed'));
    await expect(pending).rejects.toThrow('a rank failed');
    let done = false;
    const settled = comm.settled().then(() => { done = true; });
    await new Promise((res) => setTimeout(res, 50));
    expect([done, copies.length]).toEqual([false, 0]); // the buffers are not the caller's to free yet
    release();
    await settled;
    expect(copies).toEqual([1, 1]);
    one.tracker.destroy(buf);
  });

  it('a device destroyed mid-ring rejects within seconds naming the rank; no buffers are left', async () => {
    const own = await acquireDevices(await nodeGPU(), 3);
    const s: AttentionShape = { B: 1, Hq: 4, Hkv: 4, Nq: 600, Nk: 600, D: 32 };
    const x = makeInputs(s, SEED + 3);
    const t0 = performance.now();
    const run = ringAttention(own, s, x, {
      layout: 'contiguous', precision: 'f32',
      onStep: ({ phase, step }) => { if (phase === 'forward' && step === 0) own[1].destroy(); },
    });
    const e = await run.then(() => null, (err) => err);
    expect(e).toBeInstanceOf(DeviceLostError);
    expect(String(e.message)).toMatch(/rank 1/);
    expect(performance.now() - t0).toBeLessThan(30_000);
    // No grace period: the ring waits for every rank's in-flight work before it rejects.
    for (const d of own) expect(d.tracker.snapshot().liveBuffers, `device ${d.index}`).toBe(0);
    own[0].destroy();
    own[2].destroy();
  });
});
