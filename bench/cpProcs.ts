/**
 * `node bench/cp-run.mjs procs`: context parallelism with one process per rank (the mode two
 * identical GPUs need; src/cp/launch/processRanks.ts), measured against the link model.
 *
 * For each N and scheme (p2p zigzag, all_gather, a2a; causal f16): a warm-up run, then REPS
 * timed runs of R rank processes (`--gpu-per-rank`: rank r sees only GPU r, through
 * scripts/only-gpu.sh). From the median run: per rank compute, transfer and idle ms, the
 * exposed-communication fraction, per-GPU TFLOP/s (the steps' FLOPs / R / wall), and the host-staging
 * bandwidth the transfers reached (the best step's bytes / transfer ms: a step's transfer time
 * includes waiting for the peer, least in the fastest step). Then the same problem in one-device
 * mode on this process's adapter, predicted with a custom link at that bandwidth and the
 * per-message latency `--latency-us` (default 10): predicted against measured step time.
 */
import { FlashDevice, acquireDevices, adapterName } from '../src/gpu/device.js';
import { nodeGPU } from '../src/gpu/node.js';
import { toPrecision } from '../src/kernels/attention.js';
import { randn } from '../src/reference/compare.js';
import { contextParallel, RingTimeline } from '../src/cp/launch/ringAttention.js';
import { hostSource } from '../src/cp/launch/hostIO.js';
import { gpuPerRankWrapper, ringAttentionProcesses } from '../src/cp/launch/processRanks.js';
import { Scheme } from '../src/cp/schemes/registry.js';
import { AttentionShape, numel } from '../src/shape.js';
import { adapterLine, fig } from './cpFormat.js';
import { aligned } from '../src/table.js';

const REPS = 3;

export interface ProcRow {
  N: number; R: number; scheme: Scheme; wallMs: number; wallRuns: number[];
  perRank: { rank: number; computeMs: number; transferMs: number; idleMs: number }[];
  commFraction: number; tflopsPerGpu: number;
  /** The best step's bytes over its transfer time; null where no bytes went between rank processes (R = 1). */
  stagingGbps: number | null;
  /** The ranks' adapters, as the median run's timeline names them. */
  adapters: string[];
  predicted: { totalMs: number; commFraction: number; tflopsPerGpu: number; link: { gbps: number; latencyUs: number } } | null;
  predictedVsMeasured: number | null;
}

const wall = (tl: RingTimeline) => tl.phases.reduce((a, ph) => a + ph.wallMs, 0);

export function procRow(N: number, R: number, scheme: Scheme, tls: RingTimeline[]): ProcRow {
  const order = [...tls].sort((a, b) => wall(a) - wall(b));
  const tl = order[order.length >> 1];
  const steps = tl.phases.flatMap((ph) => ph.steps);
  const perRank = Array.from({ length: R }, (_, rank) => {
    const mine = steps.filter((st) => st.rank === rank);
    const sum = (f: (x: (typeof mine)[number]) => number) => mine.reduce((a, x) => a + f(x), 0);
    return { rank, computeMs: sum((x) => x.computeMs), transferMs: sum((x) => x.transferMs), idleMs: sum((x) => x.idleMs) };
  });
  // A step's transfer time includes waiting for the peer's half; the fastest step waited least.
  const rates = steps.filter((st) => st.transferBytes > 0 && st.transferMs > 0).map((st) => (st.transferBytes * 8) / (st.transferMs * 1e-3) / 1e9);
  return {
    N, R, scheme, wallMs: wall(tl), wallRuns: tls.map(wall), perRank,
    // FLOPs as the steps count them (4·B·H·visible·D, ×2.5 backward), the link model's measure too.
    commFraction: tl.summary.unhiddenFraction, tflopsPerGpu: steps.reduce((a, st) => a + st.flops, 0) / R / (wall(tl) * 1e-3) / 1e12,
    stagingGbps: rates.length ? Math.max(...rates) : null, adapters: tl.adapters, predicted: null, predictedVsMeasured: null,
  };
}

/** The one-device run of the same problem, predicted on a link at the measured staging bandwidth. */
async function predictOneDevice(dev: FlashDevice, s: AttentionShape, x: ReturnType<typeof inputs>, r: ProcRow, gbps: number, latencyUs: number): Promise<void> {
  const link = { name: 'custom', gbps, latencyUs };
  const { timeline } = await contextParallel([dev], s, hostSource(s, x), { causal: true, precision: 'f16', layout: 'zigzag', ranks: r.R, scheme: r.scheme, link }, async () => {});
  const p = timeline.predicted!;
  r.predicted = { totalMs: p.totalMs, commFraction: p.commFraction, tflopsPerGpu: p.tflopsPerGpu, link: { gbps: link.gbps, latencyUs } };
  r.predictedVsMeasured = p.totalMs / r.wallMs;
}

function inputs(s: AttentionShape) {
  return { q: toPrecision(randn(numel(s, 'q'), 1), 'f16'), k: toPrecision(randn(numel(s, 'kv'), 2), 'f16'), v: toPrecision(randn(numel(s, 'kv'), 3), 'f16'), dout: toPrecision(randn(numel(s, 'q'), 4), 'f16') };
}

export async function procsBench(Ns: number[], H: number, D: number, R: number, gpuPerRank: boolean, latencyUs: number, write: (result: object) => Promise<void>): Promise<ProcRow[]> {
  const rows: ProcRow[] = [];
  const wrapper = gpuPerRank ? { wrapper: gpuPerRankWrapper(R) } : {};
  const save = () => write({ date: new Date().toISOString(), R, H, D, gpuPerRank, rows });
  for (const N of Ns) {
    const s: AttentionShape = { B: 1, Hq: H, Hkv: H, Nq: N, Nk: N, D };
    const x = inputs(s);
    for (const scheme of ['p2p', 'all_gather', 'a2a'] as Scheme[]) {
      if (scheme === 'a2a' && H % R !== 0) continue;
      const run = () => ringAttentionProcesses(s, x, { ranks: R, scheme, causal: true, layout: 'zigzag', precision: 'f16', ...wrapper });
      await run();   // warm-up: processes, pipelines, clocks
      const tls: RingTimeline[] = [];
      for (let i = 0; i < REPS; i++) tls.push((await run()).timeline);
      rows.push(procRow(N, R, scheme, tls));
      await save();
      const r = rows.at(-1)!;
      console.error(`procs N=${N} R=${R} ${scheme}: wall ${fig(r.wallMs, 1)} ms, comm ${fig(100 * r.commFraction, 1)}%, staging ${r.stagingGbps === null ? 'none (nothing went between rank processes)' : `${r.stagingGbps.toPrecision(3)} Gbit/s`}`);
    }
  }
  // The predictions, after the rank processes are gone (this process's device would share GPU 0).
  const [dev] = await acquireDevices(await nodeGPU(), 1);
  try {
    for (const N of Ns) {
      const s: AttentionShape = { B: 1, Hq: H, Hkv: H, Nq: N, Nk: N, D };
      const x = inputs(s);   // once per N, as for the measured runs
      // No bandwidth measured (nothing went between rank processes): no link to predict on.
      for (const r of rows.filter((row) => row.N === N)) if (r.stagingGbps !== null) await predictOneDevice(dev, s, x, r, r.stagingGbps, latencyUs);
    }
    await write({ date: new Date().toISOString(), adapter: adapterName(dev.adapter), R, H, D, gpuPerRank, rows });
  } finally {
    dev.destroy();
  }
  return rows;
}

/** The table under the ranks' adapters: a row a (N, scheme), '-' where no bandwidth was measured and so nothing predicted. */
export function procsTable(rows: ProcRow[]): string {
  const cells = rows.map((r) => [
    String(r.N), String(r.R), r.scheme, fig(r.wallMs, 1), fig(100 * r.commFraction, 1), r.tflopsPerGpu.toPrecision(3), r.stagingGbps === null ? '-' : r.stagingGbps.toPrecision(3),
    fig(r.predicted?.totalMs, 1), fig(r.predictedVsMeasured, 2), r.perRank.map((p) => `${fig(p.computeMs, 0)}/${fig(p.transferMs, 0)}/${fig(p.idleMs, 0)}`).join('  '),
  ]);
  const head = ['N', 'R', 'scheme', 'wall ms', 'comm %', 'TFLOP/s/GPU', 'staging Gbit/s', 'predicted ms', 'pred/meas', 'per rank compute/transfer/idle ms'];
  const lines = [adapterLine(rows.flatMap((r) => r.adapters ?? [])), ...aligned([head, ...cells], [0, 1, 2, 9])];
  if (rows.some((r) => r.stagingGbps === null)) lines.push(`- = no bytes went between rank processes (R=1): no staging bandwidth, so no prediction at it`);
  return lines.join('\n');
}
