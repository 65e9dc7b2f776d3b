/**
 * One rank of a process-per-rank ring (processRanks.ts): run by bin/rank-process.mjs. Acquires
 * the one GPU this process sees, builds the rank's kernels and context over a
 * ProcessCommunicator, runs its rank program's forward, waits for the parent's word to run the
 * backward, and sends back its outputs, steps and memory.
 */
import { adapterName, acquireDevices } from '../gpu/device.js';
import { readback } from '../gpu/buffers.js';
import { nodeGPU, releaseNodeGPU } from '../gpu/node.js';
import { resolvePrecision } from '../kernels/precision.js';
import { Problem, RankIO } from './chunks.js';
import { ProcessCommunicator, DataMessage } from './processComm.js';
import { RankDone, RankInit, ToParent } from './processRanks.js';
import { RankContext } from './rank.js';
import { kernelsOf, loadShard, rankKernels } from './ringAttention.js';
import { resolveScheme } from './scheme.js';
import { TimelineRecorder } from './timeline.js';

type FromParent = RankInit | DataMessage | { type: 'backward' } | { type: 'abort'; why: string };

const send = (m: ToParent) => process.send!(m);

export function rankProcessMain(): void {
  let comm: ProcessCommunicator | null = null;
  const early: DataMessage[] = [];
  let goBackward!: () => void;
  const backward = new Promise<void>((r) => (goBackward = r));
  process.on('message', (m: FromParent) => {
    if (m.type === 'init') run(m, (c) => { comm = c; early.splice(0).forEach((x) => c.deliver(x)); }, backward).catch((e: Error) => {
      send({ type: 'error', rank: m.rank, name: e.name, message: e.message });
      process.exitCode = 1;
      process.disconnect?.();
    });
    else if (m.type === 'data') comm ? comm.deliver(m) : early.push(m);
    else if (m.type === 'backward') goBackward();
    else if (m.type === 'abort') comm?.abort(new Error(`aborted: ${m.why}`));
  });
  process.on('disconnect', () => setTimeout(() => process.exit(process.exitCode ?? 0), 100).unref());
}

async function run(init: RankInit, ready: (c: ProcessCommunicator) => void, backward: Promise<void>): Promise<void> {
  const gpu = await nodeGPU();
  const [dev] = await acquireDevices(gpu, 1);
  try {
    const p = resolvePrecision(dev, init.precision);
    const sch = resolveScheme(init.scheme, init.R, init.shape, init.hierarchicalSizes);
    const pb: Problem = { shape: init.shape, base: init.base, eb: p === 'f16' ? 2 : 4 };
    const kernels = await rankKernels(dev, init.shape.D, p, init.backward);
    const rec = new TimelineRecorder(init.R, sch.steps);
    let ctx: RankContext | null = null;
    const comm = new ProcessCommunicator(init.R, dev, (m) => send(m), (b) => ctx?.charge(b));
    ctx = new RankContext(init.rank, dev, comm, kernels, rec, null, 2 * init.R + 8);
    ready(comm);
    const segs = init.shards[init.rank];
    const io = loadShard(ctx, pb, init.shards, { backward: init.backward, rows: (name, seg) => init.inputs[name]![segs.indexOf(seg)] }, p);
    send({ type: 'ready', rank: init.rank });
    const kept = await sch.program.forward(ctx, pb, io);
    send({ type: 'forward-done', rank: init.rank });
    if (init.backward) {
      await backward;
      await sch.program.backward(ctx, pb, io, kept);
    }
    const outputs = await readOutputs(ctx, io, init.backward);
    const g = await ctx.timer.read();
    for (const r of rec.records) r.gpuComputeMs = dev.hasTimestamps ? r.gpuIntervals.reduce((a, k) => a + (Number.isNaN(g[k]) ? 0 : g[k]), 0) : null;
    const records = rec.phases().flatMap((ph) => ph.steps);
    const phaseStart = Object.fromEntries((['forward', 'backward'] as const).flatMap((ph) => {
      const t = rec.phaseStart(ph);
      return t === undefined ? [] : [[ph, performance.timeOrigin + t]];
    }));
    const done: RankDone = { type: 'done', rank: init.rank, adapter: adapterName(dev.adapter), kernels: kernelsOf(kernels), outputs, records, phaseStart, memory: ctx.memory() };
    ctx.free();
    send(done);
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
