/**
 * The orchestrator: exact attention over one sequence split across R ranks (devices).
 *
 * Forward, step t = 0..R−1: rank r holds the K/V chunk that started on rank (r − t) mod R.
 * It first starts sending that chunk on to rank r+1 (transfer overlaps compute), then runs the
 * forward kernel for each (Q segment, K/V segment) pair the schedule does not skip, with the
 * segments' global positions (so causal masking is exact), and merges each partial (O, LSE)
 * into its f32 accumulators through LSE (shaders/merge.wgsl).
 *
 * Backward: Δ = rowsum(dO ∘ O) once per rank; then R steps in which K/V travel as in the
 * forward (prefetched), dQ accumulates locally, and each chunk's running dK/dV sum travels one
 * step behind its K/V: at step t a rank computes its partial for the chunk it holds into
 * scratch while that chunk's sum arrives from the previous rank (overlapping compute), then
 * adds (ring-flash-attention's second ring). After the last step one more hop brings every
 * dK/dV home.
 */
import { DeviceLostError, InputError } from '../errors.js';
import { FlashDevice, adapterName, checkDevice } from '../gpu/device.js';
import { GpuTimer } from '../gpu/timer.js';
import { toHalfArray } from '../f16.js';
import { AttentionOptions, AttentionShape, ResolvedOptions, resolveOptions, validateShape } from '../shape.js';
import { FlashForward } from '../kernels/flashForward.js';
import { FlashBackward } from '../kernels/flashBackward.js';
import { MergeKernel } from '../kernels/merge.js';
import { Precision, PrecisionRequest, elemBytes, readback, resolvePrecision } from '../kernels/common.js';
import { HostTensor, toPrecision } from '../kernels/attention.js';
import { Layout, RingSchedule, Segment, ringSchedule } from './schedule.js';
import { Chunk, Rank } from './rank.js';
import { StagingTransport, Transport, TransferItem, TransferResult } from './transport.js';

export interface RingOptions extends Omit<AttentionOptions, 'qPos' | 'kPos'> {
  layout?: Layout;
  precision?: PrecisionRequest;
  transport?: Transport;
  /** A step that takes longer than this rejects (a hung device). Default 120 s. */
  stepTimeoutMs?: number;
  /** Called after every step of every phase (progress bars, live views). */
  onStep?: (ev: { phase: Phase; step: number; steps: number }) => void;
}

export type Phase = 'forward' | 'backward';

export interface StepRecord {
  phase: Phase;
  step: number;
  rank: number;
  kvFrom: number;
  /** Kernel launches (pairs not skipped) and visible score entries of this step. */
  pairs: number;
  visible: number;
  /** Host times in ms from the start of the phase. */
  start: number;
  computeEnd: number;
  transferEnd: number;
  end: number;
  computeMs: number;
  /** GPU time of the step's passes from timestamp queries (null without 'timestamp-query'). */
  gpuComputeMs: number | null;
  transferMs: number;
  transferBytes: number;
  /** Transfer time not hidden behind this step's compute. */
  unhiddenMs: number;
  /** Time this rank waited for the slowest rank of the step. */
  idleMs: number;
}

export interface RingTimeline {
  kind: 'flashring.timeline';
  version: 1;
  createdAt: string;
  adapters: string[];
  R: number;
  layout: Layout;
  causal: boolean;
  precision: Precision;
  shape: AttentionShape;
  schedule: { workPerRank: number[]; imbalance: number; shards: Segment[][] };
  phases: { phase: Phase; wallMs: number; steps: StepRecord[] }[];
  ranks: { rank: number; peakBytes: number; liveBytesAfter: number }[];
  summary: {
    computeMs: number;
    transferMs: number;
    unhiddenTransferMs: number;
    /** 1 − unhidden / transfer: the share of transfer time hidden behind compute. */
    overlapEfficiency: number;
    /** Unhidden transfer time over the summed step wall time of all ranks. */
    unhiddenFraction: number;
    bytesMoved: number;
  };
}

export interface RingResult {
  o: HostTensor;
  lse: Float32Array;
  dq?: HostTensor;
  dk?: HostTensor;
  dv?: HostTensor;
  precision: Precision;
  timeline: RingTimeline;
}

export interface RingInputs {
  q: HostTensor;
  k: HostTensor;
  v: HostTensor;
  /** Gradient of the loss with respect to O: runs the backward too. */
  dout?: HostTensor;
}

/** Rows of a [B, H, N, D] tensor at the given token positions → [B, H, n, D]. */
function gather(x: HostTensor, B: number, H: number, N: number, D: number, seg: Segment): HostTensor {
  const out = new (x.constructor as { new (n: number): HostTensor })(B * H * seg.count * D);
  for (let bh = 0; bh < B * H; bh++)
    for (let i = 0; i < seg.count; i++) {
      const src = (bh * N + seg.offset + i * seg.stride) * D;
      out.set(x.subarray(src, src + D), (bh * seg.count + i) * D);
    }
  return out;
}

function scatter(dst: Float32Array, part: Float32Array, B: number, H: number, N: number, D: number, seg: Segment): void {
  for (let bh = 0; bh < B * H; bh++)
    for (let i = 0; i < seg.count; i++) {
      const at = (bh * N + seg.offset + i * seg.stride) * D;
      dst.set(part.subarray((bh * seg.count + i) * D, (bh * seg.count + i + 1) * D), at);
    }
}

function pairOptions(base: ResolvedOptions, q: Segment, k: Segment, masked: boolean): ResolvedOptions {
  return { ...base, causal: masked, qPos: { offset: q.offset, stride: q.stride }, kPos: { offset: k.offset, stride: k.stride } };
}

/**
 * Runs one step on every rank. Rejects with a DeviceLostError naming the rank and step as soon
 * as any device of the ring is lost, or when a step hangs past the timeout; never leaves a
 * rank's promise unobserved.
 */
async function stepAll<T>(ranks: Rank[], phase: Phase, step: number, timeoutMs: number, work: (rk: Rank) => Promise<T>): Promise<T[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const lostError = (rk: Rank, why: string) =>
    new DeviceLostError(`rank ${rk.index} (${adapterName(rk.dev.adapter)}) lost its device during ${phase} step ${step}: ${why}`, rk.index, step);
  const anyLost = Promise.race(
    ranks.map((rk) => rk.dev.device.lost.then((info) => { throw lostError(rk, info.message || info.reason); })),
  );
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeviceLostError(`the ring's ${phase} step ${step} did not finish within ${timeoutMs} ms`, undefined, step)), timeoutMs);
  });
  anyLost.catch(() => {});
  hung.catch(() => {});
  const all = Promise.allSettled(ranks.map((rk) => work(rk)));
  try {
    const settled = await Promise.race([all, anyLost, hung]);
    const failed = settled.find((x) => x.status === 'rejected') as PromiseRejectedResult | undefined;
    if (failed) {
      const lost = ranks.find((rk) => rk.dev.lostReason);
      if (lost) throw lostError(lost, lost.dev.lostReason!);
      throw failed.reason;
    }
    return settled.map((x) => (x as PromiseFulfilledResult<T>).value);
  } catch (e) {
    // Let the other ranks' in-flight work finish (it fails fast on a lost device) so that their
    // temporaries are freed before the caller frees the ring; bounded, so a hung rank cannot hold us.
    await Promise.race([all, new Promise((r) => setTimeout(r, SETTLE_MS))]);
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

/** How long a failed step waits for the other ranks' in-flight work before rejecting. */
const SETTLE_MS = 5_000;

export async function ringAttention(devs: FlashDevice[], s: AttentionShape, t: RingInputs, opts: RingOptions = {}): Promise<RingResult> {
  validateShape(s);
  if ('qPos' in opts || 'kPos' in opts) throw new InputError('the ring sets token positions itself; do not pass qPos/kPos');
  if (s.Nq !== s.Nk) throw new InputError(`the ring splits one sequence: Nq (${s.Nq}) must equal Nk (${s.Nk})`);
  const R = devs.length;
  const layout = opts.layout ?? 'zigzag';
  const N = s.Nq;
  const sched = ringSchedule(N, R, layout, !!opts.causal);
  const precisions = devs.map((d) => resolvePrecision(d, opts.precision));
  const p = precisions[0];
  if (precisions.some((x) => x !== p)) throw new InputError(`the ranks' devices resolve to different precisions (${precisions.join(', ')}); pass precision explicitly`);
  for (const d of devs) checkDevice(d, 'ring start');
  const base = resolveOptions(s, { causal: opts.causal, scale: opts.scale });
  const types = { precision: p, out: 'f32' as const, grad: 'f32' as const };
  const backward = !!t.dout;
  const eb = elemBytes(p);
  const timeoutMs = opts.stepTimeoutMs ?? 120_000;
  const transport = opts.transport ?? new StagingTransport();
  const { B, Hq, Hkv, D } = s;
  const q = toPrecision(t.q, p), k = toPrecision(t.k, p), v = toPrecision(t.v, p);
  const dout = t.dout && toPrecision(t.dout, p);
  for (const [name, x, H] of [['Q', q, Hq], ['K', k, Hkv], ['V', v, Hkv], ...(dout ? [['dO', dout, Hq]] : [])] as [string, HostTensor, number][])
    if (x.length !== B * H * N * D) throw new InputError(`${name} has ${x.length} elements; shape [${B},${H},${N},${D}] needs ${B * H * N * D}`);

  const kernels = await Promise.all(
    devs.map(async (d) => ({
      fwd: await FlashForward.create(d, D, types),
      merge: await MergeKernel.create(d, D),
      bwd: backward ? await FlashBackward.create(d, D, types) : null,
    })),
  );
  const ranks = devs.map((d, r) => new Rank(r, d, sched.shards[r]));
  for (const d of devs) d.tracker.resetPeak();
  const timers: GpuTimer[] = devs.map((d) => new GpuTimer(d, R * (backward ? 2 : 1)));
  // Slot buffers are sized for the largest segment of that index over all ranks.
  const maxSeg: number[] = [];
  sched.shards.forEach((sh) => sh.forEach((sg, i) => (maxSeg[i] = Math.max(maxSeg[i] ?? 0, sg.count))));
  const kvBytes = (n: number) => B * Hkv * n * D * eb;
  const gradBytes = (n: number) => B * Hkv * n * D * 4;

  const newChunk = (rk: Rank, label: string): Chunk => ({
    from: -1, segs: [],
    k: maxSeg.map((n, i) => rk.alloc(kvBytes(n), `${label}.k${i}`)),
    v: maxSeg.map((n, i) => rk.alloc(kvBytes(n), `${label}.v${i}`)),
    dk: backward ? maxSeg.map((n, i) => rk.alloc(gradBytes(n), `${label}.dk${i}`)) : [],
    dv: backward ? maxSeg.map((n, i) => rk.alloc(gradBytes(n), `${label}.dv${i}`)) : [],
  });
  const loadOwnKV = (rk: Rank) => {
    const c = rk.slots![0];
    c.from = rk.index;
    c.segs = rk.shard;
    rk.shard.forEach((sg, i) => {
      rk.write(c.k[i], gather(k, B, Hkv, N, D, sg));
      rk.write(c.v[i], gather(v, B, Hkv, N, D, sg));
    });
  };
  const items = (c: Chunk, dst: Chunk, what: 'kv' | 'grad'): TransferItem[] =>
    c.segs.flatMap((sg, i) =>
      what === 'kv'
        ? [{ src: c.k[i], dst: dst.k[i], bytes: kvBytes(sg.count) }, { src: c.v[i], dst: dst.v[i], bytes: kvBytes(sg.count) }]
        : [{ src: c.dk[i], dst: dst.dk[i], bytes: gradBytes(sg.count) }, { src: c.dv[i], dst: dst.dv[i], bytes: gradBytes(sg.count) }],
    );
  /** Sends a chunk's K/V or dK/dV from one of `from`'s slots into one of `to`'s (metadata follows). */
  const hand = (from: Rank, to: Rank, what: 'kv' | 'grad', fromSlot = 0, toSlot = 1): Promise<TransferResult> => {
    const c = from.slots![fromSlot], dst = to.slots![toSlot];
    dst.from = c.from;
    dst.segs = c.segs;
    return transport.send(from.dev, to.dev, items(c, dst, what));
  };

  try {
    // Per rank, per Q segment: Q, the f32 accumulators O/LSE and the partial O/LSE of one pair.
    const local = ranks.map((rk) => {
      rk.slots = [newChunk(rk, 'slotA'), newChunk(rk, 'slotB')];
      loadOwnKV(rk);
      return rk.shard.map((sg, i) => {
        const rows = B * Hq * sg.count;
        return {
          q: rk.upload(gather(q, B, Hq, N, D, sg), `q${i}`),
          o: rk.alloc(rows * D * 4, `o${i}`),
          lse: rk.upload(new Float32Array(rows).fill(-Infinity), `lse${i}`),
          oPart: rk.alloc(rows * D * 4, `oPart${i}`),
          lsePart: rk.alloc(rows * 4, `lsePart${i}`),
          dout: dout ? rk.upload(gather(dout, B, Hq, N, D, sg), `dout${i}`) : null,
          delta: backward ? rk.alloc(rows * 4, `delta${i}`) : null,
          dq: backward ? rk.alloc(rows * D * 4, `dq${i}`) : null,
        };
      });
    });
    const pairShape = (qs: Segment, ks: Segment): AttentionShape => ({ B, Hq, Hkv, Nq: qs.count, Nk: ks.count, D });
    const phases: RingTimeline['phases'] = [];

    const runPhase = async (
      phase: Phase, stepFn: (rk: Rank, step: number, t0: number) => Promise<StepRecord>,
      beforeStep?: (step: number) => void, finish?: (t0: number) => Promise<StepRecord[]>,
    ) => {
      const records: StepRecord[] = [];
      const t0 = performance.now();
      for (let step = 0; step < R; step++) {
        beforeStep?.(step);
        const recs = await stepAll(ranks, phase, step, timeoutMs, (rk) => stepFn(rk, step, t0));
        const end = Math.max(...recs.map((r) => r.end));
        for (const r of recs) r.idleMs = end - r.end;
        records.push(...recs);
        for (const rk of ranks) rk.slots = [rk.slots![1], rk.slots![0]];
        opts.onStep?.({ phase, step, steps: R });
      }
      if (finish) records.push(...(await finish(t0)));
      phases.push({ phase, wallMs: performance.now() - t0, steps: records });
    };

    const record = (phase: Phase, rk: Rank, step: number, t0: number, start: number, computeEnd: number, xfers: TransferResult[]): StepRecord => {
      const plan = sched.steps[step][rk.index];
      const transferEnd = Math.max(computeEnd, ...xfers.map((x) => x.end));
      const end = Math.max(computeEnd, transferEnd);
      return {
        phase, step, rank: rk.index, kvFrom: plan.kvFrom,
        pairs: plan.pairs.filter((pp) => pp.kind !== 'skip').length, visible: plan.visible,
        start: start - t0, computeEnd: computeEnd - t0, transferEnd: transferEnd - t0, end: end - t0,
        computeMs: computeEnd - start, gpuComputeMs: null,
        transferMs: xfers.reduce((a, x) => a + (x.end - x.start), 0),
        transferBytes: xfers.reduce((a, x) => a + x.bytes, 0),
        unhiddenMs: end - computeEnd, idleMs: 0,
      };
    };

    const fwdStep = async (rk: Rank, step: number, t0: number): Promise<StepRecord> => {
      const start = performance.now();
      const cur = rk.slots![0];
      const plan = sched.steps[step][rk.index];
      if (cur.from !== plan.kvFrom) throw new Error(`ring bug: rank ${rk.index} holds chunk ${cur.from} at step ${step}, schedule says ${plan.kvFrom}`);
      const send = step < R - 1 ? hand(rk, ranks[(rk.index + 1) % R], 'kv') : null;
      send?.catch(() => {}); // observed below; a compute failure must not leave it unhandled
      const { fwd, merge } = kernels[rk.index];
      const live = plan.pairs.filter((pp) => pp.kind !== 'skip');
      const temps: GPUBuffer[] = [];
      const enc = rk.dev.device.createCommandEncoder({ label: `ring.fwd.rank${rk.index}.step${step}` });
      live.forEach((pp, i) => {
        const qs = rk.shard[pp.qSeg], ks = cur.segs[pp.kSeg], L = local[rk.index][pp.qSeg];
        const tw = (u: number) => timers[rk.index].writes(step, 2 * i + u, 2 * live.length);
        fwd.encode(enc, { q: L.q, k: cur.k[pp.kSeg], v: cur.v[pp.kSeg], o: L.oPart, lse: L.lsePart }, pairShape(qs, ks), pairOptions(base, qs, ks, pp.kind === 'masked'), temps, tw(0));
        merge.encode(enc, { o: L.o, lse: L.lse }, { o: L.oPart, lse: L.lsePart }, B * Hq * qs.count, temps, tw(1));
      });
      rk.dev.device.queue.submit([enc.finish()]);
      await rk.dev.device.queue.onSubmittedWorkDone();
      for (const b of temps) rk.dev.tracker.destroy(b);
      checkDevice(rk.dev, `forward step ${step}`);
      const computeEnd = performance.now();
      return record('forward', rk, step, t0, start, computeEnd, send ? [await send] : []);
    };

    await runPhase('forward', fwdStep);

    if (backward) {
      // Fresh own K/V in slot A, zeroed dK/dV accumulators, Δ per Q segment.
      for (const rk of ranks) {
        loadOwnKV(rk);
        const enc = rk.dev.device.createCommandEncoder({ label: `ring.bwd.prep.rank${rk.index}` });
        for (const c of rk.slots!) for (const b of [...c.dk, ...c.dv]) enc.clearBuffer(b);
        const temps: GPUBuffer[] = [];
        local[rk.index].forEach((L, i) => {
          const sg = rk.shard[i], c = rk.slots![0];
          kernels[rk.index].bwd!.encode(enc,
            { q: L.q, k: c.k[0], v: c.v[0], o: L.o, dout: L.dout!, lse: L.lse, delta: L.delta!, dq: L.dq!, dk: c.dk[0], dv: c.dv[0] },
            { B, Hq, Hkv, Nq: sg.count, Nk: sg.count, D }, base, temps, { dq: false, dkdv: false });
        });
        rk.dev.device.queue.submit([enc.finish()]);
        await rk.dev.device.queue.onSubmittedWorkDone();
        for (const b of temps) rk.dev.tracker.destroy(b);
      }
      // Each step computes its dK/dV partial for the chunk it holds into scratch while the running
      // sum for that chunk arrives from the previous rank (sent at the start of the step, so the
      // hop overlaps compute), then adds. K/V are prefetched for the next step as in the forward.
      const scratch = ranks.map((rk) => ({
        dk: maxSeg.map((n, i) => rk.alloc(gradBytes(n), `dkPart${i}`)),
        dv: maxSeg.map((n, i) => rk.alloc(gradBytes(n), `dvPart${i}`)),
      }));
      let sends: { kv: Promise<TransferResult> | null; acc: Promise<TransferResult> | null }[] = [];
      const startSends = (step: number) => {
        const next = (rk: Rank) => ranks[(rk.index + 1) % R];
        // Sums first (they read slots[1] before any K/V prefetch retargets those slots' metadata).
        const acc = ranks.map((rk) => (step > 0 ? hand(rk, next(rk), 'grad', 1, 0) : null));
        const kv = ranks.map((rk) => (step < R - 1 ? hand(rk, next(rk), 'kv') : null));
        sends = ranks.map((_, r) => ({ kv: kv[r], acc: acc[r] }));
        for (const x of sends) { x.kv?.catch(() => {}); x.acc?.catch(() => {}); }
      };
      const bwdStep = async (rk: Rank, step: number, t0: number): Promise<StepRecord> => {
        const start = performance.now();
        const cur = rk.slots![0];
        const plan = sched.steps[step][rk.index];
        if (cur.from !== plan.kvFrom) throw new Error(`ring bug: rank ${rk.index} holds chunk ${cur.from} at backward step ${step}, schedule says ${plan.kvFrom}`);
        const live = plan.pairs.filter((pp) => pp.kind !== 'skip');
        const sc = scratch[rk.index];
        const temps: GPUBuffer[] = [];
        const dev = rk.dev.device;
        if (live.length) {
          const enc = dev.createCommandEncoder({ label: `ring.bwd.rank${rk.index}.step${step}` });
          for (const b of [...sc.dk, ...sc.dv]) enc.clearBuffer(b);
          live.forEach((pp, i) => {
            const qs = rk.shard[pp.qSeg], ks = cur.segs[pp.kSeg], L = local[rk.index][pp.qSeg];
            kernels[rk.index].bwd!.encode(enc,
              { q: L.q, k: cur.k[pp.kSeg], v: cur.v[pp.kSeg], o: L.o, dout: L.dout!, lse: L.lse, delta: L.delta!, dq: L.dq!, dk: sc.dk[pp.kSeg], dv: sc.dv[pp.kSeg] },
              pairShape(qs, ks), pairOptions(base, qs, ks, pp.kind === 'masked'), temps,
              { accumulate: true, skipPreprocess: true, timestampWrites: timers[rk.index].writes(R + step, i, live.length) });
          });
          dev.queue.submit([enc.finish()]);
          await dev.queue.onSubmittedWorkDone();
          checkDevice(rk.dev, `backward step ${step}`);
        }
        const computeEnd = performance.now();
        const incoming = sends[(rk.index - 1 + R) % R].acc;
        if (incoming) await incoming;
        if (live.length) {
          const enc = dev.createCommandEncoder({ label: `ring.bwd.add.rank${rk.index}.step${step}` });
          cur.segs.forEach((sg, i) => {
            kernels[rk.index].merge.encodeAdd(enc, cur.dk[i], sc.dk[i], B * Hkv * sg.count, temps);
            kernels[rk.index].merge.encodeAdd(enc, cur.dv[i], sc.dv[i], B * Hkv * sg.count, temps);
          });
          dev.queue.submit([enc.finish()]);
          await dev.queue.onSubmittedWorkDone();
          checkDevice(rk.dev, `backward step ${step} (add)`);
        }
        for (const b of temps) rk.dev.tracker.destroy(b);
        const own = sends[rk.index];
        const xfers = [...(own.kv ? [await own.kv] : []), ...(own.acc ? [await own.acc] : [])];
        return record('backward', rk, step, t0, start, computeEnd, xfers);
      };
      // After the last step every rank holds a finished dK/dV sum in slots[1]; one more hop takes
      // it home (rank r's chunk ends on rank r − 1 + R mod R, so the hop goes to rank r + 1).
      const homeHop = async (t0: number): Promise<StepRecord[]> =>
        stepAll(ranks, 'backward', R, timeoutMs, async (rk) => {
          const start = performance.now();
          const x = await hand(rk, ranks[(rk.index + 1) % R], 'grad', 1, 0);
          const end = performance.now();
          return {
            phase: 'backward' as const, step: R, rank: rk.index, kvFrom: rk.slots![1].from, pairs: 0, visible: 0,
            start: start - t0, computeEnd: start - t0, transferEnd: end - t0, end: end - t0, computeMs: 0, gpuComputeMs: 0,
            transferMs: x.end - x.start, transferBytes: x.bytes, unhiddenMs: end - start, idleMs: 0,
          };
        });
      await runPhase('backward', bwdStep, startSends, homeHop);
    }

    // Results back to the host, in global token order.
    const o = new Float32Array(B * Hq * N * D), lse = new Float32Array(B * Hq * N);
    const grads = backward ? { dq: new Float32Array(B * Hq * N * D), dk: new Float32Array(B * Hkv * N * D), dv: new Float32Array(B * Hkv * N * D) } : null;
    for (const rk of ranks) {
      for (const [i, sg] of rk.shard.entries()) {
        const L = local[rk.index][i], rows = B * Hq * sg.count;
        scatter(o, new Float32Array(await readback(rk.dev, L.o, rows * D * 4)), B, Hq, N, D, sg);
        scatter(lse, new Float32Array(await readback(rk.dev, L.lse, rows * 4)), B, Hq, N, 1, sg);
        if (grads) {
          const home = rk.slots![0];
          if (home.from !== rk.index) throw new Error(`ring bug: rank ${rk.index} ended with chunk ${home.from}`);
          scatter(grads.dq, new Float32Array(await readback(rk.dev, L.dq!, rows * D * 4)), B, Hq, N, D, sg);
          scatter(grads.dk, new Float32Array(await readback(rk.dev, home.dk[i], gradBytes(sg.count))), B, Hkv, N, D, sg);
          scatter(grads.dv, new Float32Array(await readback(rk.dev, home.dv[i], gradBytes(sg.count))), B, Hkv, N, D, sg);
        }
      }
    }
    // GPU times per step.
    const gpu = await Promise.all(timers.map((tm) => tm.read()));
    for (const ph of phases)
      for (const r of ph.steps) {
        if (r.step >= R) continue; // the home hop moves data only
        const ms = gpu[r.rank][(ph.phase === 'backward' ? R : 0) + r.step];
        r.gpuComputeMs = Number.isNaN(ms) ? (r.pairs === 0 && devs[r.rank].hasTimestamps ? 0 : null) : ms;
      }
    const all = phases.flatMap((ph) => ph.steps);
    const sum = (f: (r: StepRecord) => number) => all.reduce((a, r) => a + f(r), 0);
    const transferMs = sum((r) => r.transferMs), unhidden = sum((r) => r.unhiddenMs);
    const timeline: RingTimeline = {
      kind: 'flashring.timeline', version: 1, createdAt: new Date().toISOString(),
      adapters: devs.map((d) => adapterName(d.adapter)), R, layout, causal: !!opts.causal, precision: p, shape: s,
      schedule: { workPerRank: sched.workPerRank, imbalance: sched.imbalance, shards: sched.shards },
      phases,
      ranks: [],
      summary: {
        computeMs: sum((r) => r.computeMs), transferMs, unhiddenTransferMs: unhidden,
        overlapEfficiency: transferMs > 0 ? Math.max(0, 1 - unhidden / transferMs) : 1,
        unhiddenFraction: sum((r) => r.end - r.start) > 0 ? unhidden / sum((r) => r.end - r.start) : 0,
        bytesMoved: sum((r) => r.transferBytes),
      },
    };
    const cast = (x: Float32Array): HostTensor => (p === 'f16' ? toHalfArray(x) : x);
    const result: RingResult = { o: cast(o), lse, precision: p, timeline, ...(grads ? { dq: cast(grads.dq), dk: cast(grads.dk), dv: cast(grads.dv) } : {}) };
    for (const rk of ranks) {
      const snap = rk.dev.tracker.snapshot();
      rk.free();
      timeline.ranks.push({ rank: rk.index, peakBytes: snap.peakBytes, liveBytesAfter: rk.dev.tracker.snapshot().liveBytes });
    }
    return result;
  } finally {
    for (const rk of ranks) rk.free();
    for (const tm of timers) tm.destroy();
  }
}

export type { RingSchedule };
