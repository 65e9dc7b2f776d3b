/**
 * One rank of a process-per-rank ring (processRanks.ts): run by bin/rank-process.mjs. Acquires
 * the one GPU this process sees, says what it offers (shader-f16) and waits for the precision
 * every rank runs in and its rows in it, builds the rank's kernels and checks its own program against
 * that GPU's limits, waits for the parent's word that every rank passed its check (so that no
 * process does GPU work before another's refusal), builds its context over a
 * ProcessCommunicator, runs its rank program's forward, waits for the parent's word to run the
 * backward, and sends back its outputs, steps and memory. A watchdog thread ends it should its parent die while
 * its main thread is stuck (watchParent); should that thread not run, its main thread watches instead (mainThreadWatch).
 */
import { rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { adapterName, acquireDevices } from '../../gpu/device.js';
import { atExit } from '../../exit.js';
import { InternalError, TransportError, errorFields } from '../../errors.js';
import { readback } from '../../gpu/buffers.js';
import { nodeGPU, releaseNodeGPU } from '../../gpu/node.js';
import { elemBytes, resolvePrecision } from '../../kernels/precision.js';
import { Problem, RankIO } from '../rank/chunks.js';
import { ProcessCommunicator, DataMessage } from '../transport/processComm.js';
import { FromParent, RankDone, RankInit, RankInputs, ToParent } from './processRanks.js';
import { RankContext, timerIntervals } from '../rank/rank.js';
import { checkedRankKernels, kernelsOf, stepGpuTime, warm } from './stage.js';
import { loadShard } from '../rank/shard.js';
import { endOnceParentGone } from './parentGone.mjs';
import { resolveScheme } from '../schemes/registry.js';
import { TimelineRecorder } from '../rank/timeline.js';

/** To the parent, while it listens (after a failure it may have let go of this process). */
const send = (m: ToParent, then?: () => void) => (process.connected ? process.send!(m, () => then?.()) : then?.());

export function rankProcessMain(): void {
  // From its start, before any message: a rank that blocks on its first one is watched too (watchParent).
  const { parent, spool } = spawnArgs(process.argv.slice(2));
  const watching = watchParent(parent, spool);
  let comm: ProcessCommunicator | null = null;
  const early: DataMessage[] = [];
  let goBackward!: () => void, goStart!: () => void, goProceed!: () => void, goInputs!: (m: RankInputs) => void;
  const inputs = new Promise<RankInputs>((r) => (goInputs = r));
  const backward = new Promise<void>((r) => (goBackward = r));
  const start = new Promise<void>((r) => (goStart = r));
  const proceed = new Promise<void>((r) => (goProceed = r));
  process.on('message', (m: FromParent) => {
    if (m.type === 'init') {
      run(m, watching, (c) => { comm = c; early.splice(0).forEach((x) => c.deliver(x)); }, { inputs, proceed, start, backward }).catch((e: unknown) => {
        process.exitCode = 1;
        send({ type: 'error', rank: m.rank, ...errorFields(e) }, () => process.connected && process.disconnect());
      });
    }
    else if (m.type === 'data') comm ? comm.deliver(m) : early.push(m);
    else if (m.type === 'inputs') goInputs(m);
    else if (m.type === 'proceed') goProceed();
    else if (m.type === 'start') goStart();
    else if (m.type === 'backward') goBackward();
    else if (m.type === 'abort') comm?.abort(new TransportError(`rank aborted because the run failed elsewhere (${m.why}); that error is the one to act on`));
  });
  process.on('disconnect', () => {
    removeSpoolAtExit(spool);
    setTimeout(() => process.exit(process.exitCode ?? 0), 100).unref();
  });
}

/**
 * The arguments processRanks.ts spawnRank gives a rank process: the parent's pid and the spool folder ('' for none).
 * Throws an InternalError for anything else: this program is the ring's, not one to run by hand.
 */
export function spawnArgs(argv: readonly string[]): { parent: number; spool: string | null } {
  const [pid, spool] = argv;
  if (argv.length !== 2 || !/^[1-9]\d*$/.test(pid)) {
    throw new InternalError(`a rank process takes its parent's pid and the spool folder as its arguments, got ${JSON.stringify(argv)}: ` +
      'it is started by a ring in process mode (flashring … --cp-mode processes), not by hand');
  }
  return { parent: Number(pid), spool: spool || null };
}

/**
 * The ring's spool folder (ipc.ts: the parent's) removed when this process exits after its parent let go of it (the
 * parent's run is over: nothing uses the folder any more) or was gone: a parent killed with SIGKILL runs no exit
 * handler, and the folder (on /dev/shm: memory) with the files in flight would stay.
 */
function removeSpoolAtExit(spool: string | null): void {
  if (spool) atExit(() => rmSync(spool, { recursive: true, force: true }));
}

/** How often a watch (the watchdog thread's, parentWatch.mjs, or the main thread's fallback) looks whether the parent is still there. */
const PARENT_POLL_MS = 1000;

/**
 * How long the watchdog thread has to say it is watching before the rank watches from its main thread instead (a
 * plain-JavaScript thread says so within milliseconds; a slow start costs one line, the thread still watching once up).
 */
export const WATCH_START_MS = 5000;

/**
 * The watchdog for a parent killed outright (SIGKILL, the OOM killer) while this process's main thread is stuck in a
 * synchronous driver call, and so never sees the channel close ('disconnect' above): a worker thread, running on its
 * own event loop, that removes the spool folder and ends the process once the parent (pid `parent`) is gone
 * (parentWatch.mjs). Started with the process; settles once the thread is watching (run waits for that before any GPU
 * work: a thread not yet running when the main thread blocks might never be) or, failing that, once the main thread
 * watches instead (mainThreadWatch): the thread failed (its module unreadable, an error at load or later), ended, or
 * did not say it was watching within WATCH_START_MS. Unref'd: it never keeps a rank that has ended its work alive.
 */
function watchParent(parent: number, spool: string | null): Promise<void> {
  const fallBack = mainThreadWatch(parent, spool);
  let w: Worker;
  try {
    w = new Worker(new URL('./parentWatch.mjs', import.meta.url), { workerData: { parent, spool, pollMs: PARENT_POLL_MS } });
  } catch (e) {
    fallBack(`could not start (${(e as Error).message})`);
    return Promise.resolve();
  }
  w.unref();
  return new Promise((watching) => {
    const settle = (why?: string) => {
      clearTimeout(late);
      if (why) fallBack(why);
      watching();
    };
    const late = setTimeout(() => settle(`did not say it was watching within ${WATCH_START_MS / 1000} s`), WATCH_START_MS).unref();
    w.once('message', () => settle());
    w.on('error', (e) => settle(`failed (${e.message.split('\n')[0]})`));
    w.once('exit', (code) => settle(`ended (code ${code})`));
  });
}

/**
 * The fallback should the watchdog thread not be running (watchParent): `(why) => void`, whose first call says so (a
 * line on stderr, which reaches the user marked [rank r]: processRanks.ts spawnRank) and from then on looks, on this
 * process's main thread, every PARENT_POLL_MS, whether the parent is gone, as the thread would (endOnceParentGone).
 * The rank runs on (a ring on a machine whose worker threads misbehave still runs), but this watch, like the channel's
 * close, cannot act while the main thread is stuck in a driver call: the line says which process to end by hand then.
 */
function mainThreadWatch(parent: number, spool: string | null): (why: string) => void {
  let on = false;
  return (why) => {
    if (on) return;
    on = true;
    process.stderr.write(`the watchdog thread on the parent process ${why}; watching it from the main thread instead, which cannot while this rank ` +
      `is stuck in a driver call: should the command be killed outright while this rank hangs, end process ${process.pid} yourself\n`);
    setInterval(endOnceParentGone(parent, spool), PARENT_POLL_MS).unref();
  };
}

/**
 * The parent's words a rank waits for: every rank's device known (inputs: the precision and its rows), every rank
 * checked (proceed), every rank ready (start), every forward done (backward).
 */
interface Words { inputs: Promise<RankInputs>; proceed: Promise<void>; start: Promise<void>; backward: Promise<void> }

async function run(init: RankInit, watching: Promise<void>, ready: (c: ProcessCommunicator) => void, { inputs, proceed, start, backward }: Words): Promise<void> {
  await watching;
  const gpu = await nodeGPU();
  const [dev] = await acquireDevices(gpu, 1, { tuning: init.tuning });
  try {
    // The ranks agree on one precision (the parent's agreedPrecision) before any builds a kernel.
    send({ type: 'device', rank: init.rank, adapter: adapterName(dev.adapter), hasF16: dev.hasF16 });
    const { precision, exactMax, inputs: rows } = await inputs;
    const p = resolvePrecision(dev, precision);
    const sch = resolveScheme(init.scheme, init.R, init.shape, init.hierarchicalSizes);
    const pb: Problem = { shape: init.shape, base: init.base, eb: elemBytes(p) };
    // This rank's dispatches and buffers checked on its own device's limits (a refusal names this rank and its
    // device); GPU work (the warm-up, the shard's upload) only once every rank's process has passed its own.
    const kernels = await checkedRankKernels(dev, init.rank, pb, init.shards, sch, init.backward, p, exactMax);
    send({ type: 'checked', rank: init.rank });
    await proceed;
    await warm(dev, kernels, pb.shape.D, p);
    // This process records its own rank's steps only: each one it ends is reported (the parent's onStep).
    const rec = new TimelineRecorder(1, sch.steps, ({ phase, step }) => send({ type: 'step', rank: init.rank, phase, step }));
    let ctx: RankContext | null = null;
    const comm = new ProcessCommunicator(init.R, dev, (m) => send(m), (b) => ctx?.charge(b), init.spool);
    ctx = new RankContext(init.rank, dev, comm, kernels, rec, null, timerIntervals(init.R));
    ready(comm);
    const segs = init.shards[init.rank];
    const io = loadShard(ctx, pb, init.shards, { backward: init.backward, rows: (name, seg) => rows[name]![segs.indexOf(seg)] }, p);
    send({ type: 'ready', rank: init.rank });
    await start;
    const kept = await sch.program.forward(ctx, pb, io);
    send({ type: 'forward-done', rank: init.rank });
    if (init.backward) {
      await backward;
      await sch.program.backward(ctx, pb, io, kept);
    }
    const outputs = await readOutputs(ctx, io, init.backward);
    const g = await ctx.timer.read();
    for (const r of rec.records) stepGpuTime(r, dev, g);
    const records = rec.phases().flatMap((ph) => ph.steps);
    const phaseStart = Object.fromEntries((['forward', 'backward'] as const).flatMap((ph) => {
      const t = rec.phaseStart(ph);
      return t === undefined ? [] : [[ph, performance.timeOrigin + t]];
    }));
    ctx.free();   // before the ledger is read: liveBytes after it shows a leak, as in-process
    send({ type: 'done', rank: init.rank, adapter: adapterName(dev.adapter), kernels: kernelsOf(kernels), outputs, records, phaseStart, memory: ctx.memory() });
  } finally {
    dev.destroy();
    releaseNodeGPU();
  }
}

async function readOutputs(ctx: RankContext, io: RankIO, backward: boolean): Promise<RankDone['outputs']> {
  const read = (bufs: GPUBuffer[]) => Promise.all(bufs.map(async (b) => new Float32Array(await readback(ctx.dev, b, b.size))));
  return {
    o: await read(io.o), lse: await read(io.lse),
    dq: backward ? await read(io.dq) : [], dk: backward ? await read(io.dk) : [], dv: backward ? await read(io.dv) : [],
  };
}
