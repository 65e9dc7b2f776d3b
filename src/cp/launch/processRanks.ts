/**
 * Context parallelism with one rank per process (Node only): the mode two identical GPUs need,
 * since a process cannot tell them apart (processComm.ts). The parent spawns R rank processes
 * (bin/rank-process.mjs, optionally behind a wrapper that hides the other GPUs from each, e.g.
 * scripts/only-gpu.sh), hands each its shard, forwards their messages (through the transport's
 * ProcessLink, src/cp/transport/ipc.ts, which also owns the spool folder), starts the backward
 * once every forward is done, and assembles outputs and one timeline. Each rank process runs
 * the same rank program as the in-process modes over a ProcessCommunicator.
 *
 * Protocol (Node IPC, 'advanced' serialization, so typed arrays travel as bytes):
 *   parent → rank   init, inputs (all ranks' devices known: the precision every rank runs in, and
 *                   its rows in it), proceed (all ranks checked), start (all ranks ready), data
 *                   (forwarded), backward (all forwards done), abort
 *   rank → parent   device (its adapter, and whether it has shader-f16: no GPU work yet), checked
 *                   (its program fits its device's limits), ready, data, step (one of its steps
 *                   ended), forward-done, done, error
 * The ranks agree on one precision before any builds a kernel (agreedPrecision: float16 inputs
 * with 'auto' run in f16 only where every rank's adapter has shader-f16, else in f32 on all). A
 * rank checks only its own program, on its own device, and does GPU work only after proceed: a
 * refusal of any rank ends the run before any process has made a buffer or submitted work.
 * performance.now() has a different origin in each process, so a rank reports each phase's
 * start as timeOrigin + now (wall-clock ms) and its steps relative to it; the parent aligns them.
 * onStep fires when every rank has ended a step, as in-process.
 */
import { ChildProcess, StdioOptions, fork } from 'node:child_process';
import { createInterface } from 'node:readline';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DAWN_NOISE } from '../../gpu/dawnNoise.mjs';
import { DeviceLostError, ErrorFields, InputError, rebuildError } from '../../errors.js';
import { HostTensor } from '../../kernels/attention.js';
import { needsExactMaxFor } from '../../kernels/stale.js';
import { Precision, PrecisionRequest, elemBytes, precisionRequest } from '../../kernels/precision.js';
import { plural } from '../../plural.js';
import { KernelTuning, currentProcessTuning, resolveTuning } from '../../kernels/tuning.js';
import { AttentionShape, ResolvedOptions } from '../../shape.js';
import { Problem } from '../rank/chunks.js';
import { DataMessage } from '../transport/processComm.js';
import { ProcessLink } from '../transport/ipc.js';
import { atExit } from '../../exit.js';
import { InputName, RingInputs, hostSource, readAll, segmentReader } from './hostIO.js';
import { RingKernels, RingOptions, RingResult } from './ringAttention.js';
import { STEP_TIMEOUT_MS, predictOn, ringProblem, ringResult } from './stage.js';
import { checkRing } from './dry.js';
import { Layout, Segment } from '../plan/schedule.js';
import { Phase, RingTimeline, StepRecord, makeTimeline, withIdle } from '../rank/timeline.js';
import { Scheme } from '../schemes/registry.js';

/** What a rank process needs first: the problem and how to reach the others (its rows come once the precision is agreed: RankInputs). */
export interface RankInit {
  type: 'init';
  rank: number; R: number;
  shape: AttentionShape; base: ResolvedOptions;
  scheme: Scheme; hierarchicalSizes?: string | number[]; shards: Segment[][]; backward: boolean;
  /** The folder the ranks exchange bytes through (processComm.ts), or null for bytes in messages. */
  spool: string | null;
  /** The kernel pins every rank builds with (ProcessRingOptions.tuning, resolved once in the parent). */
  tuning: Readonly<KernelTuning>;
}

/** What a rank process says of its device before any GPU work: its name, and whether it has shader-f16. */
export interface RankDevice {
  type: 'device';
  rank: number;
  adapter: string;
  hasF16: boolean;
}

/** The rest of what a rank needs, once every rank's device is known: the precision all run in, and its rows in it. */
export interface RankInputs {
  type: 'inputs';
  precision: Precision;
  /** This rank's rows of each input, one array per segment of its shard. */
  inputs: Partial<Record<InputName, HostTensor[]>>;
  /** The forward's exact running row max (src/kernels/stale.ts), decided by the parent from V. */
  exactMax: boolean;
}

/** What a rank process sends back after its backward (or its forward, without one). */
export interface RankDone {
  type: 'done';
  rank: number;
  adapter: string;
  kernels: RingKernels;
  /** Its segments' O, LSE (and dQ, dK, dV), f32, [B, H, count, D] or [B, H, count]. */
  outputs: Record<'o' | 'lse' | 'dq' | 'dk' | 'dv', Float32Array[]>;
  /** Steps with times relative to `phaseStart` (wall-clock ms) of their phase. */
  records: StepRecord[];
  phaseStart: Partial<Record<Phase, number>>;
  memory: { peakBytes: number; liveBytes: number };
}

export type ToParent = DataMessage | RankDone | RankDevice | { type: 'checked' | 'ready' | 'forward-done'; rank: number } | ({ type: 'error'; rank: number } & ErrorFields)
  | { type: 'step'; rank: number; phase: Phase; step: number };
export type FromParent = RankInit | RankInputs | DataMessage | { type: 'proceed' | 'start' | 'backward' } | { type: 'abort'; why: string };

export interface ProcessRingOptions extends RingOptions {
  ranks: number;
  /** Command a rank process runs behind (e.g. ['bash', 'scripts/only-gpu.sh', '{rank}']): '{rank}' is replaced. */
  wrapper?: readonly string[];
  /**
   * Kernel pins for every rank's device (default: this process's, tuning.ts): as the in-process ring's
   * devices carry theirs, so that both modes run the same kernels.
   */
  tuning?: KernelTuning;
  /**
   * Called once every rank process has its device and the ranks have agreed on `precision` (agreedPrecision:
   * float16 inputs with 'auto' run in f32 where a rank's adapter has no shader-f16), before any rank does GPU
   * work; `devices` are what each rank said of its adapter. One that throws (or rejects) fails the run, as
   * onStep does: the CLI notes the fallback here and checks the room its outputs take at that precision.
   */
  onPrecision?: (precision: Precision, devices: readonly RankDevice[]) => void | Promise<void>;
}

const WORKER = fileURLToPath(new URL('../../../bin/rank-process.mjs', import.meta.url));
const ONLY_GPU = fileURLToPath(new URL('../../../scripts/only-gpu.sh', import.meta.url));

/** The numbers K of the host's /dev/nvidiaK device nodes (none on CPU machines). */
export function nvidiaDevices(): number[] {
  let names: string[] = [];
  try {
    names = readdirSync('/dev');
  } catch {
    return [];
  }
  return names.filter((n) => /^nvidia\d+$/.test(n)).map((n) => Number(n.slice('nvidia'.length))).sort((a, b) => a - b);
}

/**
 * The wrapper that shows rank r's process only GPU r (scripts/only-gpu.sh, run as root), for
 * `wrapper` of ringAttentionProcesses. Throws an InputError unless every rank has its
 * /dev/nvidiaR node; a host with no NVIDIA nodes at all (CPU adapters) hides nothing and passes.
 */
export function gpuPerRankWrapper(R: number, devices = nvidiaDevices()): string[] {
  let run = 0; // ranks 0, 1, … that have their node
  while (devices.includes(run)) run++;
  if (devices.length > 0 && run < R) {
    const need = R === 1 ? '1 rank needs /dev/nvidia0' : `${R} ranks need /dev/nvidia0 … /dev/nvidia${R - 1}`;
    const fewer = run >= 1 ? `use --cp ${run} or leave out --gpu-per-rank` : 'leave out --gpu-per-rank';
    throw new InputError(`one GPU per rank: ${need}, but this host has ${devices.map((d) => `/dev/nvidia${d}`).join(', ')}; ${fewer} (ranks then share the first GPU)`);
  }
  return ['bash', ONLY_GPU, '{rank}'];
}

/** The ranks' `devices` as a message names them: 'rank 1 (llvmpipe)', 'ranks 1, 3 (GPU A, GPU B)', each adapter once. */
export function ranksNamed(devices: readonly RankDevice[]): string {
  return `${plural(devices.length, 'rank')} ${devices.map((d) => d.rank).join(', ')} (${adapterNames(devices)})`;
}
const adapterNames = (devices: readonly RankDevice[]) => [...new Set(devices.map((d) => d.adapter))].join(', ');

/**
 * The one precision every rank runs in, from what each rank said of its adapter: 'auto' is f16 where the
 * inputs are f16 (`half`) and every rank's adapter has shader-f16, else f32 on every rank (as the in-process
 * modes fall back for an adapter without it); f16 asked for where a rank's adapter lacks it is an InputError
 * naming those ranks.
 */
export function agreedPrecision(req: PrecisionRequest, half: boolean, devices: readonly RankDevice[]): Precision {
  const without = devices.filter((d) => !d.hasF16);
  if (req === 'auto') return half && !without.length ? 'f16' : 'f32';
  if (req === 'f16' && without.length) {
    throw new InputError(`${plural(without.length, 'rank')} ${without.map((d) => d.rank).join(', ')}: precision f16 needs the 'shader-f16' feature, which ${plural(without.length, 'its adapter', 'their adapters')} (${adapterNames(without)}) ${plural(without.length, 'does', 'do')} not offer; ` +
      'use f32, or auto (f16 where every rank has shader-f16, else f32 on all), or run these ranks on GPUs that have it');
  }
  return req;
}

/** The ring over R rank processes; the same result as ringAttention, with mode 'processes'. */
export async function ringAttentionProcesses(s: AttentionShape, t: RingInputs, opts: ProcessRingOptions): Promise<RingResult> {
  const { R, layout, sch } = checkRing(s, opts, opts.ranks);
  opts.signal?.throwIfAborted();
  const req = opts.precision === undefined ? 'auto' : precisionRequest(opts.precision);
  const src = hostSource(s, t);
  src.check?.();
  // 'auto' follows the data as in-process, decided once every rank has its device (agreedPrecision).
  const half = [t.q, t.k, t.v].every((x) => x instanceof Uint16Array);
  const { pb, shards } = ringProblem(s, opts, R, layout, 'f32');   // the precision's element size: pb.eb below, once agreed
  const names: InputName[] = src.backward ? ['q', 'k', 'v', 'dout'] : ['q', 'k', 'v'];
  const tuning = resolveTuning(opts.tuning ?? currentProcessTuning());
  let precision: Precision = 'f32';
  const agree = async (devices: RankDevice[]): Promise<RankInputs[]> => {
    precision = agreedPrecision(req, half, devices);
    await opts.onPrecision?.(precision, devices);
    const exactMax = opts.exactMax ?? needsExactMaxFor(s.Nk, src.vMaxAbs, precision === 'f16');
    return shards.map((segs) => ({ type: 'inputs', precision, exactMax, inputs: Object.fromEntries(names.map((n) => [n, segs.map((sg) => src.rows(n, sg, precision))])) }));
  };
  const link = await ProcessLink.open();
  const inits: RankInit[] = shards.map((_, rank) => ({
    type: 'init', rank, R, shape: s, base: pb.base, scheme: sch.scheme, hierarchicalSizes: opts.hierarchicalSizes, shards, backward: src.backward, spool: link.spool, tuning,
  }));
  const done = await runProcesses(inits, agree, opts, sch.steps, link).finally(() => link.close());
  const timeline = predictOn(assemble(done, { ...pb, eb: elemBytes(precision) }, sch.scheme, sch.hierarchy, layout, precision, shards), opts);
  // The ranks' segments, sent back as host copies, placed as the in-process modes place them.
  const out = await readAll(s, segmentReader(s, shards, async (r, name, i, offset, bytes) => {
    const part = done[r].outputs[name][i];
    return part.subarray(offset / 4, (offset + bytes) / 4);
  }), src.backward);
  return ringResult(out, precision, timeline, done[0].kernels);
}

/** A rank process's error as the class it had there (errors.ts's ERROR_CLASSES), naming the rank; any other class is an internal error. */
export function rankError(rank: number, f: ErrorFields): Error {
  return rebuildError(f, `rank ${rank}`, rank);
}

const SETTLE_MS = 2000;

/**
 * What the parent does with each rank's 'step': once every rank has ended a (phase, step), the caller's
 * onStep; one that throws (a Cancel) fails the run (`fail`), as in-process.
 */
function stepCounter(R: number, opts: ProcessRingOptions, steps: Record<Phase, number>, fail: (e: Error) => void): (m: { phase: Phase; step: number }) => void {
  const ended = new Map<string, number>();   // ranks that ended each (phase, step)
  return (m) => {
    const key = `${m.phase}:${m.step}`, n = (ended.get(key) ?? 0) + 1;
    ended.set(key, n);
    if (n !== R) return;
    try {
      opts.onStep?.({ phase: m.phase, step: m.step, steps: steps[m.phase] });
    } catch (e) {
      fail(e as Error);
    }
  };
}

/**
 * What the parent does with each rank's 'device': once every rank has said what its adapter offers,
 * `agree` (the precision, and each rank's rows in it) and each rank its RankInputs (`tell`); a refusal
 * (f16 asked for where a rank lacks it, the caller's onPrecision) fails the run (`fail`) before any GPU work.
 */
function deviceBarrier(R: number, agree: (devices: RankDevice[]) => Promise<RankInputs[]>, tell: (rank: number, m: RankInputs) => void,
  fail: (e: Error) => void): (m: RankDevice) => void {
  const devices: RankDevice[] = [];
  return (m) => {
    devices[m.rank] = m;
    if (devices.filter(Boolean).length === R) agree(devices).then((ins) => ins.forEach((x, r) => tell(r, x)), fail);
  };
}

/**
 * Spawns the rank processes, forwards their messages, and returns each one's result. The ranks
 * agree on a precision once each has its device (deviceBarrier), start their forward together
 * (after every one has its device and kernels: a rank still compiling would show as its peers'
 * transfer time) and their backward together.
 */
function runProcesses(inits: RankInit[], agree: (devices: RankDevice[]) => Promise<RankInputs[]>, opts: ProcessRingOptions, steps: Record<Phase, number>,
  link: ProcessLink): Promise<RankDone[]> {
  const R = inits.length, timeoutMs = opts.stepTimeoutMs ?? STEP_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const results: RankDone[] = [];
    const stepEnded = stepCounter(R, opts, steps, fail);   // fail: declared below, hoisted
    const kids: ChildProcess[] = [];
    // The words every rank must say before the parent tells them all the next (checked → proceed, …).
    const said = { checked: 0, ready: 0, 'forward-done': 0 }, then = { checked: 'proceed', ready: 'start', 'forward-done': 'backward' } as const;
    let finished = false;
    const seen: number[] = inits.map(() => performance.now());   // when each rank last said anything
    const tell = (k: ChildProcess, m: object) => { if (k.connected) k.send(m, () => {}); };   // a gone process reports through 'exit'
    // The rows are made once every rank has said what its adapter offers: that time is no rank's silence.
    const devicesKnown = deviceBarrier(R, agree, (r, m) => { seen[r] = performance.now(); if (!finished) tell(kids[r], m); }, fail);
    const watchdog = setInterval(() => { if (performance.now() - Math.max(...seen) > timeoutMs) fail(silentRank(seen, timeoutMs)); }, Math.min(1000, timeoutMs));
    // The caller's cancel (RingOptions.signal) fails the run as a throwing onStep does; each rank's device is its own.
    const onAbort = () => fail(opts.signal!.reason);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    /** Aborts every rank, waits (at most SETTLE_MS) for the processes to end, then kills what is left and rejects. */
    function fail(e: Error) {
      if (finished) return;
      finished = true;
      clearInterval(watchdog);
      opts.signal?.removeEventListener('abort', onAbort);
      for (const k of kids) { tell(k, { type: 'abort', why: e.message }); if (k.connected) k.disconnect(); }
      const gone = kids.map((k) => (!running(k) ? Promise.resolve() : new Promise<void>((r) => k.once('exit', () => r()))));
      Promise.race([Promise.all(gone), new Promise((r) => setTimeout(r, SETTLE_MS).unref())]).then(() => {
        for (const k of kids) if (running(k)) k.kill('SIGKILL');
        reject(e);
      });
    }
    function onMessage(rank: number, m: ToParent) {
      seen[rank] = performance.now();
      if (m.type === 'data') {
        try {
          link.route(m);
        } catch (e) {
          fail(e as Error);
        }
      }
      else if (m.type === 'checked' || m.type === 'ready' || m.type === 'forward-done') {
        const w = m.type;
        if (++said[w] === R) kids.forEach((k) => tell(k, { type: then[w] }));
      }
      else if (m.type === 'device') devicesKnown(m);
      else if (m.type === 'step') stepEnded(m);
      else if (m.type === 'error') fail(rankError(rank, m));
      else if (m.type === 'done') {
        results[rank] = m;
        if (results.filter(Boolean).length === R) {
          finished = true;
          clearInterval(watchdog);
          opts.signal?.removeEventListener('abort', onAbort);
          kids.forEach((k) => k.connected && k.disconnect());
          resolve(results);
        }
      }
    }
    try {
      for (const init of inits) kids.push(spawnRank(init, opts.wrapper ?? [], onMessage, fail, () => finished || !!results[init.rank]));
      killAtExit(kids);
      link.connect(kids.map((k) => (m) => tell(k, m)));
      kids.forEach((k, r) => tell(k, inits[r]));
    } catch (e) {
      fail(e as Error);
    }
    if (opts.signal?.aborted) onAbort(); // aborted before the listener was there
  });
}

const running = (k: ChildProcess) => k.exitCode === null && k.signalCode === null;

/**
 * This process exiting (a signal, its parent gone: the CLI turns both into an exit) kills every rank process still
 * there: one that listens ends when its channel closes, but a hung one (stuck in a driver call, or stopped) would
 * outlive the command, holding its GPU. Withdrawn once every one has ended.
 */
function killAtExit(kids: ChildProcess[]): void {
  const forget = atExit(() => { for (const k of kids) if (running(k)) k.kill('SIGKILL'); });
  for (const k of kids) k.once('exit', () => { if (!kids.some(running)) forget(); });
}

/**
 * The watchdog's error once no rank has said anything for `timeoutMs`: the ranks wait on each other, so the one
 * silent longest (`seen`: when each last spoke) is the one that hung, and the others went quiet waiting on it.
 */
function silentRank(seen: readonly number[], timeoutMs: number): DeviceLostError {
  const rank = seen.indexOf(Math.min(...seen)), secs = Math.round((performance.now() - seen[rank]) / 1000);
  const others = seen.length > 1 ? ', the other ranks waiting on it' : '';
  return new DeviceLostError(`no rank process sent anything within ${timeoutMs / 1000} s: rank ${rank}'s process has sent nothing for ${secs} s${others} ` +
    `(a hung device, or a stopped process?); the run was ended: check rank ${rank}'s GPU, then run again`, rank);
}

/**
 * One rank process (behind the wrapper, if any), its stderr passed on without Dawn's noise. Its arguments, this
 * process's pid and the spool folder (or ''), are what its watchdog on this process needs (rankProcess.ts
 * watchParent): given at its start, not in the init message, it watches from before its first message.
 */
function spawnRank(init: RankInit, wrapper: readonly string[], onMessage: (rank: number, m: ToParent) => void, fail: (e: Error) => void, over: () => boolean): ChildProcess {
  const wrap = wrapper.map((a) => a.replace('{rank}', String(init.rank)));
  const stdio: StdioOptions = ['inherit', 'inherit', 'pipe', 'ipc'];
  const args = [String(process.pid), init.spool ?? ''];
  const child = wrap.length
    ? fork(WORKER, args, { serialization: 'advanced', stdio, execPath: wrap[0], execArgv: [...wrap.slice(1), process.execPath] })
    : fork(WORKER, args, { serialization: 'advanced', stdio });
  // Dawn's two lines per adapter on some drivers (as bin/flashring.mjs drops them); the rest passes.
  createInterface({ input: child.stderr! }).on('line', (l) => { if (!DAWN_NOISE.test(l)) process.stderr.write(`[rank ${init.rank}] ${l}\n`); });
  child.on('message', (m: ToParent) => onMessage(init.rank, m));
  child.on('exit', (code, signal) => {
    // Ended by a signal no one here sent: from outside (kill, the OOM killer); a code: its own lines above say why.
    const why = signal ? `signal ${signal}) before it finished: killed from outside, or by the system (out of memory? dmesg says); run again`
      : `code ${code}) before it finished${code ? `; its lines above, marked [rank ${init.rank}], say why` : ''}`;
    if (!over()) fail(new DeviceLostError(`rank ${init.rank}'s process exited (${why}`, init.rank));
  });
  child.on('error', (e) => fail(new DeviceLostError(`rank ${init.rank}'s process: ${e.message}`, init.rank)));
  return child;
}

/** One timeline from the ranks' records: each phase's steps shifted to its earliest start. */
function assemble(done: RankDone[], pb: Problem, scheme: Scheme, hierarchy: [number, number], layout: Layout, precision: Precision,
  shards: Segment[][]): RingTimeline {
  const phases: RingTimeline['phases'] = [];
  for (const phase of ['forward', 'backward'] as Phase[]) {
    const starts = done.map((d) => d.phaseStart[phase]).filter((x): x is number => x !== undefined);
    if (!starts.length) continue;
    const t0 = Math.min(...starts);
    const steps = withIdle(done.flatMap((d) => d.records.filter((r) => r.phase === phase).map((r) => {
      const dt = d.phaseStart[phase]! - t0;
      return { ...r, start: r.start + dt, computeEnd: r.computeEnd + dt, transferEnd: r.transferEnd + dt, end: r.end + dt };
    })));
    phases.push({ phase, wallMs: Math.max(...steps.map((r) => r.end)), steps });
  }
  return makeTimeline({
    adapters: done.map((d) => d.adapter), mode: 'processes', scheme, hierarchy, R: done.length, layout, precision, shape: pb.shape,
    ranks: done.map((d) => ({ rank: d.rank, peakBytes: d.memory.peakBytes, liveBytesAfter: d.memory.liveBytes })),
  }, pb.base, shards, phases);
}
