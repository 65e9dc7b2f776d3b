/**
 * Context-parallel attention: exact attention over one sequence split across R ranks. This file
 * only sets the stage: it checks the request, picks the scheme's rank program (schemes/registry.ts)
 * and the communicator (one-device or multi-adapter), hands each rank its shard, runs the R rank
 * programs (forward, then backward), and gathers the results and the timeline. What a rank does
 * is in its program (schemes/p2p.ts, allGather.ts, ulysses.ts); what crosses ranks, in transport/.
 *
 * Modes:
 *   one-device     one FlashDevice, R ranks on it: transfers are device copies and each rank's
 *                  compute holds the device alone, so its time is its own (nothing contends).
 *   multi-adapter  one FlashDevice per rank (one per physical adapter): staging transfers, which
 *                  run behind the ranks' compute.
 */
import { DeviceLostError, InputError } from '../../errors.js';
import { FlashDevice, adapterName, checkDevice } from '../../gpu/device.js';
import { AttentionOptions, AttentionShape } from '../../shape.js';
import { PrecisionRequest, resolvePrecision, Precision } from '../../kernels/precision.js';
import { HostTensor } from '../../kernels/attention.js';
import { needsExactMaxFor } from '../../kernels/stale.js';
import { checkGrid } from '../../kernels/pipeline.js';
import { shapeGrid } from '../../kernels/kernel.js';
import { Layout, Segment } from '../plan/schedule.js';
import { InProcessCommunicator, Mutex, deviceCopy, staging } from '../transport/communicator.js';
import { Problem } from '../rank/chunks.js';
import { HostOutputs, RowReader, ShardSource, hostSource, readAll, rowReader } from './hostIO.js';
import { RankContext, timerIntervals } from '../rank/rank.js';
import { RingKernels, STEP_TIMEOUT_MS, kernelsOf, predictOn, readyKernels, ringProblem, ringResult, stepGpuTime } from './stage.js';
import { ResolvedScheme, Scheme } from '../schemes/registry.js';
import { Phase, RingTimeline, StepRecord, TimelineRecorder, makeTimeline } from '../rank/timeline.js';
import { loadShard } from '../rank/shard.js';
import { checkRing } from './dry.js';
import { Link, Rate } from '../plan/linkModel.js';

export type { Phase, RingTimeline, StepRecord, Scheme, RowReader, ShardSource, RingKernels };

export interface RingOptions extends Omit<AttentionOptions, 'qPos' | 'kPos'> {
  layout?: Layout;
  precision?: PrecisionRequest;
  /** Megatron-LM's --cp-comm-type (default p2p). */
  scheme?: Scheme;
  /** a2a+p2p: [a2a group size, ring size] or 'A,P' (Megatron-LM's --hierarchical-context-parallel-sizes). */
  hierarchicalSizes?: string | number[];
  /** CP size R. With one device, R ranks share it (one-device mode); else one device per rank. Default: devices.length. */
  ranks?: number;
  /** No rank finishing a step for this long rejects (a hung device). Default 120 s. */
  stepTimeoutMs?: number;
  /** A link (linkModel.ts): the timeline gains `predicted`, what R GPUs on it would show. */
  link?: Link;
  /** With `link`: compute at this rate (TFLOP/s) instead of the measured step times. */
  computeTflops?: Rate;
  /**
   * One-device mode: do not wait for the GPU to finish each step; a rank encodes its step while
   * the GPU still runs the one before and submits it as soon as that has run (gpuAlone: never two
   * ranks' work at once), so the GPU's gaps are short and its clock up (on the H200 the SM clock
   * fell to 345–1300 MHz between waited steps, and kernel times with it); kernel times (GPU
   * timestamps, which it needs) are then steady, while the measured wall times are the host's. Each phase still ends when its GPU work has: the step timeout
   * bounds that wait, and buffers a program frees are free on the GPU before the next phase's
   * exist (a program that frees and then allocates within a phase calls RankContext.settle).
   * Default false: the measured timeline shows each rank's turn on the GPU.
   */
  pipelined?: boolean;
  /**
   * Called when every rank has finished a step of a phase (progress bars, live views). One that
   * throws stops the run as `signal` does, and the run rejects with its error.
   */
  onStep?: (ev: { phase: Phase; step: number; steps: number }) => void;
  /**
   * The forward's exact running row max (src/kernels/stale.ts). Undefined (the default): decided
   * from the inputs' largest finite |V| (ShardSource.vMaxAbs, which ringAttention's host tensors
   * give), taken where the stale max could overflow f32, or where an f32 source does not say.
   */
  exactMax?: boolean;
  /**
   * Cancels the run: no rank submits any more work, the work already sent to the GPU (one rank's
   * compute in one-device mode, which can take seconds at a large N) is waited for, the buffers
   * are freed, and the run rejects with the signal's reason. The device is then free for another
   * run, which sees nothing of this one (no late submissions, no errors of its work).
   */
  signal?: AbortSignal;
}

export interface RingResult {
  o: HostTensor;
  lse: Float32Array;
  dq?: HostTensor;
  dk?: HostTensor;
  dv?: HostTensor;
  precision: Precision;
  timeline: RingTimeline;
  /** The kernels the ranks ran ('auto': the fastest exact path the adapter offers). */
  kernels: RingKernels;
}

export type { RingInputs } from './hostIO.js';
import type { RingInputs } from './hostIO.js';

/** How long a run that failed because its device hung waits for the ranks' in-flight work before rejecting (other failures wait up to the step timeout). */
const SETTLE_MS = 5_000;

interface Stage {
  R: number;
  mode: RingTimeline['mode'];
  pipelined: boolean;
  rankDevs: FlashDevice[];
  p: Precision;
  sch: ResolvedScheme;
  layout: Layout;
  exactMax: boolean;
}

function checkRequest(devs: FlashDevice[], s: AttentionShape, opts: RingOptions, vMaxAbs: () => number | undefined): Stage {
  const { R, layout, sch } = checkRing(s, opts, opts.ranks ?? devs.length);
  if (devs.length !== 1 && devs.length !== R) throw new InputError(`${R} ranks need one device (one-device mode) or ${R} devices, got ${devs.length}`);
  const precisions = devs.map((d) => resolvePrecision(d, opts.precision));
  const p = precisions[0];
  if (precisions.some((x) => x !== p)) throw new InputError(`the ranks' devices resolve to different precisions (${precisions.join(', ')}); pass precision explicitly`);
  for (const d of devs) checkDevice(d, 'ring start');
  for (const d of devs) checkGrid(d, shapeGrid(s));   // heads and batch per dispatch (the row blocks: makeRanks, once the kernels are built)
  // One device is one-device mode at any R: at R = 1 too (one rank, no ring), not multi-adapter.
  const mode = devs.length === 1 ? 'one-device' : 'multi-adapter';
  if (opts.pipelined && devs.length > 1) throw new InputError('pipelined runs need one-device mode (R ranks on one device)');
  if (opts.pipelined && !devs[0].hasTimestamps)
    throw new InputError(`pipelined runs time their steps by GPU timestamps, and ${adapterName(devs[0].adapter)} has no timestamp-query: run without pipelined`);
  return { R, mode, pipelined: !!opts.pipelined, rankDevs: Array.from({ length: R }, (_, r) => devs[devs.length === 1 ? 0 : r]), p, sch, layout, exactMax: opts.exactMax ?? needsExactMaxFor(s.Nk, vMaxAbs(), p === 'f16') };
}

/**
 * One context per rank, on its device, with the scheme's communicator. Every dispatch the ranks'
 * programs will make is checked against the devices' grid limits, and every buffer against the
 * buffer and binding sizes, before the kernels' warm-up (readyKernels): a LimitError comes before
 * any GPU work.
 */
async function makeRanks(st: Stage, pb: Problem, shards: Segment[][], backward: boolean, rec: TimelineRecorder): Promise<RankContext[]> {
  const kernels = await readyKernels(st.rankDevs, pb, shards, st.sch, backward, st.p, st.exactMax);
  const lock = st.mode === 'one-device' ? new Mutex() : null;
  const ctxs: RankContext[] = [];
  const charge = (dev: FlashDevice, bytes: number) => ctxs.find((c) => c.dev === dev)?.charge(bytes);
  const comm = new InProcessCommunicator(st.rankDevs, lock ? deviceCopy(lock, !st.pipelined) : staging(charge));
  st.rankDevs.forEach((d, r) => ctxs.push(new RankContext(r, d, comm, kernels[r], rec, lock, timerIntervals(st.R), !st.pipelined)));
  return ctxs;
}

/** What runAll needs of the run besides its ranks and the work: the recorder, the hang watch, pipelining, the caller's signal. */
interface RunWatch {
  rec: TimelineRecorder;
  timeoutMs: number;
  pipelined: boolean;
  signal?: AbortSignal;
}

/**
 * Runs `work` on every rank. Rejects with a DeviceLostError naming the rank as soon as any
 * device is lost, when no rank finishes a step for `timeoutMs`, or with the signal's reason when
 * the caller aborts; on failure the ranks stop submitting (stopAll) and the work already sent is
 * waited for before this rejects, so the caller frees nothing a submitted command still uses.
 * Pipelined, the phase ends when its queued GPU work has (within `timeoutMs` of the last
 * submission), so a hang or a lost device is still caught here, and what the programs freed is
 * free on the GPU.
 */
async function runAll(ctxs: RankContext[], phase: Phase, work: (c: RankContext) => Promise<unknown>, w: RunWatch): Promise<unknown[]> {
  w.signal?.throwIfAborted();
  const lostError = (c: RankContext, why: string) =>
    new DeviceLostError(`rank ${c.index} (${adapterName(c.dev.adapter)}) lost its device during the ${phase}: ${why}`, c.index);
  const devRanks = [...new Map(ctxs.map((c) => [c.dev, c])).values()];
  // Through onLost, unsubscribed when the phase ends: a reaction on device.lost itself would
  // never be released, and it held this whole call (contexts, buffers, timeline) for the
  // device's lifetime (~40 KB of heap per call on a reused device).
  let unsubscribe: (() => void)[] = [];
  const anyLost = new Promise<never>((_, reject) => {
    unsubscribe = devRanks.map((c) => c.dev.onLost((info) => reject(lostError(c, info.message || info.reason))));
  });
  let timer: ReturnType<typeof setInterval> | undefined;
  const hang = new DeviceLostError(`no rank finished a ${phase} step within ${w.timeoutMs} ms (a hung device?)`);
  const hung = new Promise<never>((_, reject) => {
    w.rec.lastProgress = performance.now();
    timer = setInterval(() => {
      if (performance.now() - w.rec.lastProgress > w.timeoutMs) reject(hang);
    }, Math.min(1000, w.timeoutMs));
  });
  const onAbort = () => abortReject(w.signal!.reason);
  let abortReject!: (e: unknown) => void;
  const aborted = new Promise<never>((_, reject) => (abortReject = reject));
  w.signal?.addEventListener('abort', onAbort, { once: true });
  for (const p of [anyLost, hung, aborted]) p.catch(() => {});
  const drain = async <T>(x: T) => {
    if (!w.pipelined) return x;
    w.rec.lastProgress = performance.now();
    await Promise.all(devRanks.map((c) => c.dev.device.queue.onSubmittedWorkDone()));
    return x;
  };
  const works = ctxs.map((c) => work(c));
  // The first rank to fail (a lost device, a caller's onStep cancelling) ends the phase at once:
  // the others may be waiting for its messages, which would come only at the hang watch.
  const firstFailure = new Promise<never>((_, reject) => works.forEach((wk) => wk.catch(reject)));
  firstFailure.catch(() => {});
  const all = Promise.allSettled(works).then(drain);
  try {
    const settled = await Promise.race([all, anyLost, hung, aborted, firstFailure]);
    return settled.map((x) => (x as PromiseFulfilledResult<unknown>).value);
  } catch (e) {
    await stopAll(ctxs, all, e as Error, e === hang ? SETTLE_MS : w.timeoutMs);
    // A rank's error from its device going away names the rank (its device's lost promise may
    // resolve after the rank's own operation failed, and checkDevice's error names no rank).
    const lost = ctxs.find((c) => c.dev.lostReason);
    throw lost && !(e instanceof DeviceLostError && e.rank !== undefined) ? lostError(lost, lost.dev.lostReason!) : e;
  } finally {
    clearInterval(timer);
    w.signal?.removeEventListener('abort', onAbort);
    for (const u of unsubscribe) u();
  }
}

/**
 * A failed (or cancelled) phase: every rank stops submitting, the exchanges are aborted, and the
 * work already sent is waited for (the rank programs, transfers already started, such as a copy
 * queued behind the one-device lock, and then the devices' queues: asked only once the programs
 * and transfers have settled, so what they submitted last is in what is waited for), up to
 * `boundMs` (a hung device never finishes; a rank or copy that comes to submit after that finds
 * its buffers gone and submits nothing). Only then may the caller free the buffers, and only then
 * does the next run on the device start: no error of this run's work can land in another's.
 */
async function stopAll(ctxs: RankContext[], all: Promise<unknown>, why: Error, boundMs: number): Promise<void> {
  for (const c of ctxs) c.halt(why);
  const comm = ctxs[0].comm;
  comm.abort(why);
  const devs = [...new Set(ctxs.map((c) => c.dev))];
  let bound: ReturnType<typeof setTimeout> | undefined;
  const done = Promise.allSettled([all, comm.settled()]).then(() => Promise.all(devs.map((d) => d.device.queue.onSubmittedWorkDone().catch(() => {}))));
  await Promise.race([done, new Promise((r) => (bound = setTimeout(r, boundMs)))]);
  clearTimeout(bound);
}

export async function ringAttention(devs: FlashDevice[], s: AttentionShape, t: RingInputs, opts: RingOptions = {}): Promise<RingResult> {
  return (await ringAttentionWithBackwardO(devs, s, t, opts)).result;
}

/**
 * ringAttention, and O as the ranks' backward took it besides: f32 at either precision (the ranks keep the merged O
 * in f32 and take Δ = rowsum(dO ∘ O) from it), where the result's O at f16 is its rounding. A reference of the
 * backward's own inputs needs this O (test/gradRef.ts, docs/numerics.md).
 */
export async function ringAttentionWithBackwardO(
  devs: FlashDevice[], s: AttentionShape, t: RingInputs, opts: RingOptions = {},
): Promise<{ result: RingResult; backwardO: Float32Array }> {
  // 'auto' follows the data (f16 bits in → f16 where the device has it; f32 in → f32), as the single-device path.
  if ((opts.precision ?? 'auto') === 'auto' && devs.length) opts = { ...opts, precision: resolvePrecision(devs[0], 'auto', [t.q, t.k, t.v]) };
  const src = hostSource(s, t);
  let out: HostOutputs | null = null;
  const { timeline, precision, kernels } = await contextParallel(devs, s, src, opts, async (read) => void (out = await readAll(s, read, src.backward)));
  return { result: ringResult(out!, precision, timeline, kernels), backwardO: out!.o };
}

/**
 * The run itself, for inputs that come shard by shard (`ShardSource`: a rank loads only its own
 * rows, so no host holds the whole sequence) and outputs read back through `collect` while the
 * ranks' buffers are alive (all of them, or sampled rows at scale). Unless `opts.exactMax` says
 * otherwise, the forward's running max is decided from `src.vMaxAbs` (the exact max where the
 * stale one could overflow f32: src/kernels/stale.ts); an f32 source that does not give it runs
 * the exact max.
 */
export async function contextParallel(
  devs: FlashDevice[], s: AttentionShape, src: ShardSource, opts: RingOptions, collect: (read: RowReader) => Promise<void>,
): Promise<{ timeline: RingTimeline; precision: Precision; kernels: RingKernels }> {
  const st = checkRequest(devs, s, opts, () => src.vMaxAbs);   // V scanned only where exactMax is not given
  src.check?.();
  const { R, p } = st;
  const { pb, shards } = ringProblem(s, opts, R, st.layout, p);
  const rec = new TimelineRecorder(R, st.sch.steps, opts.onStep);
  opts.signal?.throwIfAborted();
  const ctxs = await makeRanks(st, pb, shards, src.backward, rec);
  const w: RunWatch = { rec, timeoutMs: opts.stepTimeoutMs ?? STEP_TIMEOUT_MS, pipelined: st.pipelined, signal: opts.signal };
  try {
    const ios = ctxs.map((c) => loadShard(c, pb, shards, src, p));
    const kept = await runAll(ctxs, 'forward', (c) => st.sch.program.forward(c, pb, ios[c.index]), w);
    if (src.backward) await runAll(ctxs, 'backward', (c) => st.sch.program.backward(c, pb, ios[c.index], kept[c.index]), w);
    opts.signal?.throwIfAborted();
    await collect(rowReader(pb.shape, shards, (r) => ctxs[r].dev, ios));
    const gpu = await Promise.all(ctxs.map((c) => c.timer.read()));
    for (const c of ctxs) c.free();
    const timeline = predictOn(runTimeline(st, pb, shards, rec, ctxs, gpu), opts);
    return { timeline, precision: p, kernels: kernelsOf(ctxs[0].kernels) };
  } finally {
    for (const c of ctxs) c.free();
  }
}

function runTimeline(
  st: Stage, pb: Problem, shards: Segment[][], rec: TimelineRecorder, ctxs: RankContext[], gpu: number[][],
): RingTimeline {
  for (const r of rec.records) stepGpuTime(r, ctxs[r.rank].dev, gpu[r.rank]);
  return makeTimeline({
    adapters: st.rankDevs.map((d) => adapterName(d.adapter)), mode: st.mode, ...(st.pipelined ? { pipelined: true } : {}), scheme: st.sch.scheme, hierarchy: st.sch.hierarchy,
    R: st.R, layout: st.layout, precision: st.p, shape: pb.shape,
    ranks: ctxs.map((c) => ({ rank: c.index, peakBytes: c.memory().peakBytes, liveBytesAfter: c.memory().liveBytes })),
  }, pb.base, shards, rec.phases());
}
