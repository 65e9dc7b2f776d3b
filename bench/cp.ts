/**
 * Context-parallel benchmark for the GPU host (run through bench/cp-h200.sh):
 *
 *   sweep  one-device mode (R ranks on one GPU, each rank's compute timed alone; pipelined, so the
 *          GPU runs the steps back to back, and each run queued behind ~0.3 s of untimed work, so
 *          the GPU's clock is up when it starts), causal f16:
 *          summed GPU kernel time per R and scheme against R=1 (the work is the same, only the
 *          split differs), each point warmed up (>= 1 s) and the median of 5 runs, each right after an R=1 run (paired ratios), outputs checked on a sixth, R=1 measured
 *          once as every scheme's baseline; every result checked against the R=1 result; the
 *          link model's prediction for an NVLink H200 node from the measured step times.
 *          FLOPs: forward 4·B·H·visible·D (visible = N(N+1)/2 causal), backward ×2.5.
 *   scale  one exact forward+backward at a sequence no host tensor holds: each rank's shard is
 *          generated where it is loaded (hash-based f16 values), outputs read back on sampled
 *          rows and checked against the single-device kernel (query blocks: O, LSE, dQ over all
 *          heads; key blocks: dK, dV for one head), with time and peak bytes.
 *   procs  one process per rank (--R, default 2; --gpu-per-rank: rank r sees only GPU r), N in a
 *          comma list: measured timeline per rank, comm fraction, per-GPU TFLOP/s, host-staging
 *          bandwidth, and the link model's prediction from a one-device run at that bandwidth
 *          (bench/cpProcs.ts; for two identical GPUs).
 *   steps  where p2p's kernel time goes: each kind of zigzag step's kernel passes beside the
 *          single-device kernel on a plain call of the same work, and R = 1 (bench/cpSteps.ts).
 *   table  prints the two JSON files' tables.
 *
 * node bench/cp-run.mjs <mode> [options]: `node bench/cp-run.mjs --help` lists each mode's options,
 * their defaults (the GPU host's sizes) and a run small enough for a CPU adapter (usage() below).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FlashDevice, acquireDevices, adapterName } from '../src/gpu/device.js';
import { nodeGPU } from '../src/gpu/node.js';
import { HostTensor, attentionBackward, attentionForward, toF32, toPrecision } from '../src/kernels/attention.js';
import { contextParallel, RingOptions, RingTimeline, RowReader, ShardSource } from '../src/cp/launch/ringAttention.js';
import { checkRing } from '../src/cp/launch/dry.js';
import { hostSource, readAll } from '../src/cp/launch/hostIO.js';
import { LINKS } from '../src/cp/plan/linkModel.js';
import { Scheme } from '../src/cp/schemes/registry.js';
import { Segment, shardTokens } from '../src/cp/plan/schedule.js';
import { AttentionShape, MAX_HEAD_DIM, numel, resolveOptions } from '../src/shape.js';
import { InputError, LimitError } from '../src/errors.js';
import { userMistake } from '../src/cli/main.js';
import { counted } from '../src/plural.js';
import { numberArg, NumberRule, parseCommand } from '../src/cli/args.js';
import { OUTPUT_KINDS, OutputPlan } from '../src/cli/files.js';
import { FlashForward } from '../src/kernels/flashForward.js';
import { storage } from '../src/gpu/buffers.js';
import { randn, relErr } from '../src/reference/compare.js';
import { median } from '../src/stats.js';
import { warmUp } from '../src/bench/kernels.js';
import { procsBench, procsTable } from './cpProcs.js';
import { RunMeta, adapterLine, duration, fig } from './cpFormat.js';
import { aligned } from '../src/table.js';
import { formatBytes } from '../src/bytes.js';
import { stepsBench, stepsTable } from './cpSteps.js';
import { placesBench, placesTable } from './cpPlaces.js';

const GIB = 2 ** 30;
const f64 = (x: HostTensor | Float32Array) => Float64Array.from(x instanceof Uint16Array ? toF32(x) : x);

function kernelMs(tl: RingTimeline, phase: 'forward' | 'backward'): number | null {
  const steps = tl.phases.find((p) => p.phase === phase)?.steps ?? [];
  return steps.some((s) => s.gpuComputeMs === null) ? null : steps.reduce((a, s) => a + (s.gpuComputeMs ?? 0), 0);
}

interface SweepRow {
  /** The scheme run; R=1 is one rank (every scheme is the same work) and is the baseline of all of them. */
  R: number; scheme: Scheme; layout: string; N: number; H: number; D: number;
  /** Medians over the repeats; `runs` keeps every repeat's summed kernel time (fwd+bwd). */
  fwdKernelMs: number | null; bwdKernelMs: number | null; kernelMs: number | null; kernelMsRuns: (number | null)[]; vsR1: number | null;
  /** Median of the ratios to the R = 1 run timed right before each repeat (point's `pair`), and the ratios. */
  vsR1Paired: number | null; pairedRatios: number[];
  /** The R = 1 runs timed beside the repeats (kernel ms). */
  pairedR1Ms: number[];
  /**
   * The fastest repeat, and it against the fastest R = 1 run of the whole sweep (the baseline's
   * and every paired one): the H200's clock dips only slow a run down, so the fastest runs are
   * the ones at its steady clock (docs/performance.md, sixth round).
   */
  kernelMsBest: number | null; vsR1Best: number | null;
  fwdWallMs: number; bwdWallMs: number; warmUpS: number; maxPeakBytesPerRank: number; bytesMovedPerRank: number;
  predicted: { link: string; totalMs: number; stepMs: number[]; commFraction: number; tflopsPerGpu: number };
  maxErrVsR1: number;
}

interface SweepResult {
  rows: SweepRow[]; skipped: { R: number; scheme: Scheme; why: string }[]; repeats: number; budgetS: number | null;
  /** The schemes asked for (--schemes; absent in files written before it: all three). */
  schemes?: Scheme[];
}

const REPEATS = 5;
const med = (xs: (number | null)[]) => (xs.some((x) => x === null) ? null : median(xs as number[]));

type Outputs = Awaited<ReturnType<typeof readAll>>;

const total = (tl: RingTimeline) => (kernelMs(tl, 'forward') ?? NaN) + (kernelMs(tl, 'backward') ?? NaN);

/**
 * One sweep point: warm-up (≥ 1 s of the same run on a GPU, as the kernel bench), then REPEATS
 * timed runs back to back, then one more that reads every output back for the check (its
 * timeline is not used: reading back and comparing leaves the GPU idle for seconds, and the run
 * after such a pause measured 1.5–2.7× slower on the H200, bench/results/cp-h200-2026-12-01-v2).
 * With `pair` (the R = 1 options), each timed run follows a timed run of R = 1, and `paired`
 * holds the ratios of these neighbours: the same R = 1 work measured 61 to 128 ms in steady runs
 * on the H200 (bench/results/cp-h200-2026-12-01-v3), in levels that hold for several runs, so a
 * ratio of neighbours is steadier than a ratio of medians taken minutes apart.
 * Kernel times are the repeats' medians; the timeline kept is the median one's.
 */
async function point(dev: FlashDevice, s: AttentionShape, src: ShardSource, opts: RingOptions, pair?: RingOptions, heat?: Heater): Promise<{ timelines: RingTimeline[]; kept: RingTimeline; out: Outputs; warmUpS: number; paired: number[]; pairedR1: number[] }> {
  const run = (o: RingOptions, collect: (read: RowReader) => Promise<void>) => (heat?.(), contextParallel([dev], s, src, o, collect));
  const t0 = performance.now();
  await warmUp(dev, () => run(opts, async () => {}), 1, 100);
  const warmUpS = (performance.now() - t0) / 1e3;
  let out: Outputs | null = null;
  const timelines: RingTimeline[] = [];
  const paired: number[] = [];
  const pairedR1: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const b = pair ? total((await run(pair, async () => {})).timeline) : NaN;
    const tl = (await run(opts, async () => {})).timeline;
    timelines.push(tl);
    if (pair) {
      paired.push(total(tl) / b);
      pairedR1.push(b);
    }
  }
  await run(opts, async (read) => { out = await readAll(s, read, true); });
  const order = [...timelines].sort((a, b) => total(a) - total(b) || a.phases[0].wallMs - b.phases[0].wallMs);
  return { timelines, kept: order[order.length >> 1], out: out!, warmUpS, paired, pairedR1 };
}

/**
 * The best columns: every row's fastest run against the fastest R = 1 run of the sweep (the
 * baseline's repeats and the R = 1 run paired with each repeat of every point). The R = 1 row's
 * best is that same run, so its ratio is 1 by construction: it was once the fastest of its own
 * repeats only, while the denominator also took the paired runs, so a faster paired R = 1 run
 * put the baseline at 1.13 or 1.50. Every quantity is one run's summed kernel ms (fwd + bwd).
 */
export function bestRatios(rows: Pick<SweepRow, 'R' | 'kernelMsRuns' | 'pairedR1Ms' | 'kernelMsBest' | 'vsR1Best'>[]): void {
  const fastest = (xs: (number | null | undefined)[]) => {
    const ok = xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
    return ok.length ? Math.min(...ok) : null;
  };
  // Derived from the runs here, also for sweeps written before these fields (bench/results up to round 5); rows[0] is R = 1.
  const r1 = fastest([...rows[0]?.kernelMsRuns ?? [], ...rows.flatMap((r) => r.pairedR1Ms ?? [])]);
  for (const r of rows) {
    r.kernelMsBest = r.R === 1 ? r1 : fastest(r.kernelMsRuns);
    r.vsR1Best = r1 && r.kernelMsBest !== null ? r.kernelMsBest / r1 : null;
  }
}

/** How many R = 1 runs the baseline's best is the fastest of: its own repeats and every paired one. */
const r1RunCount = (rows: SweepRow[]) => (rows[0]?.kernelMsRuns.length ?? 0) + rows.reduce((a, r) => a + (r.pairedR1Ms?.length ?? 0), 0);

const SWEEP_SCHEMES: Scheme[] = ['p2p', 'all_gather', 'a2a'];

/** Why the ring refuses `scheme` at R for this shape (a2a splits heads: H must be divisible by R), or null: it runs. */
function whyNot(s: AttentionShape, opts: RingOptions, R: number, scheme: Scheme): string | null {
  try {
    checkRing(s, { ...opts, scheme }, R);
    return null;
  } catch (e) {
    if (e instanceof InputError) return e.message;
    throw e;
  }
}

/** Queues GPU work (not timed) that keeps the GPU busy while the host prepares the next run. */
type Heater = () => void;

/**
 * A heater: about 0.3 s of non-causal forward passes (N = 16384, H = 16, D = 128, f16; as many as
 * one timed pass says fill 0.3 s, 1 to 10) queued ahead of a timed run. Between runs the host uploads and checks for a second or so; the H200's
 * SM clock then fell to 345–1500 MHz and the next run's kernels ran up to 3× slower
 * (bench/results/cp-h200-2026-12-01-v4: clocks.csv). The run's own passes start after it on the
 * same queue, so their timestamps measure them alone, at the clock the load holds.
 */
async function makeHeater(dev: FlashDevice): Promise<{ heat: Heater; free: () => void }> {
  if (dev.isCPU) return { heat: () => {}, free: () => {} }; // no clock to keep up; and 22 TFLOP would take hours
  const s: AttentionShape = { B: 1, Hq: 16, Hkv: 16, Nq: 16384, Nk: 16384, D: 128 };
  const fwd = await FlashForward.create(dev, s.D, { precision: 'f16', out: 'f32', grad: 'f32' }, 'auto');
  const bufs = { q: storage(dev, numel(s, 'q') * 2, 'heater.q'), k: storage(dev, numel(s, 'kv') * 2, 'heater.k'), v: storage(dev, numel(s, 'kv') * 2, 'heater.v'), o: storage(dev, numel(s, 'q') * 4, 'heater.o'), lse: storage(dev, numel(s, 'lse') * 4, 'heater.lse') };
  const o = resolveOptions(s, {});
  const submit = (passes: number) => {
    const enc = dev.device.createCommandEncoder({ label: 'heater' });
    const temps: GPUBuffer[] = [];
    for (let i = 0; i < passes; i++) fwd.encode(enc, bufs, s, o, temps);
    dev.device.queue.submit([enc.finish()]);
    for (const b of temps) dev.tracker.destroy(b);
  };
  submit(1); // compiles and ramps up; the second pass's time sizes the heat
  await dev.device.queue.onSubmittedWorkDone();
  const t0 = performance.now();
  submit(1);
  await dev.device.queue.onSubmittedWorkDone();
  const passes = Math.max(1, Math.min(10, Math.round(300 / (performance.now() - t0))));
  const heat = () => submit(passes);
  return { heat, free: () => Object.values(bufs).forEach((b) => dev.tracker.destroy(b)) };
}

function sweepRow(R: number, scheme: Scheme, s: AttentionShape, pt: Awaited<ReturnType<typeof point>>, errs: number[], r1: number | null): SweepRow {
  const { timelines: tls, kept } = pt;
  const f = med(tls.map((tl) => kernelMs(tl, 'forward'))), b = med(tls.map((tl) => kernelMs(tl, 'backward')));
  const runs = tls.map((tl) => { const x = kernelMs(tl, 'forward'), y = kernelMs(tl, 'backward'); return x === null || y === null ? null : x + y; });
  const k = med(runs);
  const p = kept.predicted!;
  return {
    R, scheme, layout: kept.layout, N: s.Nq, H: s.Hq, D: s.D, fwdKernelMs: f, bwdKernelMs: b, kernelMs: k, kernelMsRuns: runs,
    vsR1: k !== null && r1 ? k / r1 : null, warmUpS: pt.warmUpS,
    vsR1Paired: pt.paired.length && pt.paired.every(Number.isFinite) ? median(pt.paired) : null, pairedRatios: pt.paired,
    pairedR1Ms: pt.pairedR1.filter(Number.isFinite), kernelMsBest: null, vsR1Best: null, // bestRatios fills both
    fwdWallMs: median(tls.map((tl) => tl.phases[0].wallMs))!, bwdWallMs: median(tls.map((tl) => tl.phases[1].wallMs))!,
    maxPeakBytesPerRank: Math.max(...kept.ranks.map((r) => r.peakBytes)), bytesMovedPerRank: kept.summary.bytesMoved / R,
    predicted: { link: p.link.name, totalMs: p.totalMs, stepMs: p.stepMs, commFraction: p.commFraction, tflopsPerGpu: p.tflopsPerGpu },
    maxErrVsR1: Math.max(...errs),
  };
}

/**
 * The one-device sweep. R=1 is measured once (one rank runs the same work under every scheme's
 * name) and is the baseline and the reference outputs of every scheme. Points run R by R; one
 * that would end past `budgetS` (its estimate: 1.5× the last point's time) is skipped and named,
 * and the JSON is rewritten after every point, so a run cut short still leaves its table.
 */
async function sweep(dev: FlashDevice, N: number, H: number, D: number, Rs: number[], schemes: Scheme[], write: WriteResult, budgetS: number | null, meta: object): Promise<SweepResult> {
  const t0 = performance.now();
  const s: AttentionShape = { B: 1, Hq: H, Hkv: H, Nq: N, Nk: N, D };
  const x = { q: toPrecision(randn(numel(s, 'q'), 1), 'f16'), k: toPrecision(randn(numel(s, 'kv'), 2), 'f16'), v: toPrecision(randn(numel(s, 'kv'), 3), 'f16'), dout: toPrecision(randn(numel(s, 'q'), 4), 'f16') };
  const src = hostSource(s, x);
  // Pipelined: waiting for every step let the H200's SM clock fall to 345–1300 MHz (kernel times 3× apart).
  const opts: RingOptions = { causal: true, precision: 'f16', layout: 'zigzag', link: LINKS['nvlink-h200'], pipelined: true };
  const { heat, free } = await makeHeater(dev);
  try {
    const res: SweepResult = { rows: [], skipped: [], repeats: REPEATS, budgetS, schemes };
    const save = () => {
      bestRatios(res.rows);
      return write('cp-sweep.json', result('sweep', { ...meta, ...res }));
    };
    const tBase = performance.now();
    const base = await point(dev, s, src, { ...opts, ranks: 1 }, undefined, heat);
    const ref = base.out;
    res.rows.push(sweepRow(1, 'p2p', s, base, [0], null));
    const r1 = res.rows[0].kernelMs;
    res.rows[0].vsR1 = r1 === null ? null : 1;
    await save();
    let last = (performance.now() - tBase) / 1e3;
    console.error(`sweep R=1 (baseline): kernels ${fig(r1, 1, 'n/a')} ms (runs ${res.rows[0].kernelMsRuns.map((k) => fig(k, 1, 'n/a')).join(', ')}), ${((performance.now() - t0) / 1e3).toFixed(1)} s so far`);
    // Every point not run is named with why, in the table and the JSON (a point missing silently reads as forgotten).
    const skip = (R: number, scheme: Scheme, why: string) => {
      res.skipped.push({ R, scheme, why });
      console.error(`sweep R=${R} ${scheme}: skipped: ${why}`);
    };
    for (const R of Rs.filter((r) => r > 1))
      for (const scheme of schemes) {
        const refused = whyNot(s, opts, R, scheme);
        if (refused) {
          skip(R, scheme, refused);
          continue;
        }
        const elapsed = (performance.now() - t0) / 1e3;
        if (budgetS !== null && elapsed + 1.5 * last > budgetS) {
          skip(R, scheme, `would end past the ${budgetS} s budget (${duration(elapsed * 1e3)} used, the last point took ${duration(last * 1e3)})`);
          continue;
        }
        const pt = await point(dev, s, src, { ...opts, ranks: R, scheme }, { ...opts, ranks: 1 }, heat);
        const errs = (['o', 'lse'] as const).map((n) => relErr(pt.out[n], ref[n])).concat((['dq', 'dk', 'dv'] as const).map((n) => relErr(pt.out.grads![n], ref.grads![n])));
        const row = sweepRow(R, scheme, s, pt, errs, r1);
        res.rows.push(row);
        if (R === 4 && scheme === 'p2p') await write(SWEEP_TIMELINE, JSON.stringify(pt.kept));
        await save();
        last = (performance.now() - t0) / 1e3 - elapsed;
        console.error(`sweep R=${R} ${scheme}: kernels ${fig(row.kernelMs, 1, 'n/a')} ms (runs ${row.kernelMsRuns.map((k) => fig(k, 1, 'n/a')).join(', ')}), paired vs R=1 ${fig(row.vsR1Paired, 2, 'n/a')} (${row.pairedRatios.map((x) => fig(x, 2, 'n/a')).join(', ')}), err ${row.maxErrVsR1.toExponential(2)}, ${last.toFixed(1)} s`);
      }
    await save();
    return res;
  } finally {
    free();
  }
}

/** Deterministic f16 values in ±[2^-5, 2): bits from a 32-bit hash of (tensor, element index). */
function halfAt(t: number, e: number): number {
  let h = (e ^ Math.imul(t + 1, 0x9e3779b9)) >>> 0;
  h ^= h >>> 16; h = Math.imul(h, 0x7feb352d); h ^= h >>> 15; h = Math.imul(h, 0x846ca68b); h ^= h >>> 16;
  return ((h >>> 31) << 15) | ((10 + ((h >>> 10) % 5)) << 10) | (h & 0x3ff);
}

const TENSOR = { q: 0, k: 1, v: 2, dout: 3 } as const;

/** Rows [B=1, heads h0..h0+nh−1, positions, D] of a generated tensor. */
function generate(name: keyof typeof TENSOR, H: number, N: number, D: number, seg: Segment, h0 = 0, nh = H): Uint16Array {
  const out = new Uint16Array(nh * seg.count * D);
  const pos = shardTokens([seg]); // a zigzag shard is one segment of two runs
  let j = 0;
  for (let h = h0; h < h0 + nh; h++)
    for (let i = 0; i < seg.count; i++) {
      const e0 = (h * N + pos[i]) * D;
      for (let d = 0; d < D; d++) out[j++] = halfAt(TENSOR[name], e0 + d);
    }
  return out;
}

/**
 * Device bytes per rank at the p2p ring's peak (its backward), f16 inputs, n = N/R tokens:
 * Q, K, V, dO (f16) + O, dQ, dK, dV (f32) + LSE, Δ (f32 per row) + two spare K/V slots (f16)
 * + two dK/dV running sums (f32; the dK/dV pass adds onto them in place) = 48·H·n·D + 8·H·n
 * (docs/ring.md: e·(2q + 6kv) + 8q + 8ℓ + 24kv).
 */
function p2pPeakPerRank(N: number, R: number, H: number, D: number): number {
  const n = Math.ceil(N / R), row = H * n * D;
  return 4 * row * 2 + 4 * row * 4 + 2 * H * n * 4 + 2 * 2 * row * 2 + 2 * 2 * row * 4;
}

async function scale(dev: FlashDevice, N: number, H: number, D: number, R: number, gpuGib: number) {
  const s: AttentionShape = { B: 1, Hq: H, Hkv: H, Nq: N, Nk: N, D };
  const perRank = p2pPeakPerRank(N, R, H, D);
  // That it fits gpuGib is checked before the device starts (checkScaleRun).
  console.error(`scale: N=${N} H=${H} D=${D} R=${R}: about ${formatBytes(perRank)} per rank, ${formatBytes(R * perRank)} on the device (limit ${gpuGib} GiB)`);
  const src: ShardSource = {
    backward: true,
    rows: (name, seg, p) => {
      if (p !== 'f16') throw new Error('the scale run is f16');
      return generate(name, H, N, D, seg);
    },
  };
  const ROWS = 64;
  const qBlocks = [N / 2 - ROWS / 2, N - ROWS], kBlocks = [0, N / 2], head = Math.max(0, H - 3);
  const block = (p0: number) => Array.from({ length: ROWS }, (_, i) => p0 + i);
  const got: Record<string, Float32Array> = {};
  dev.tracker.resetPeak();
  const t0 = performance.now();
  const { timeline } = await contextParallel([dev], s, src, { causal: true, precision: 'f16', layout: 'zigzag', ranks: R, link: LINKS['nvlink-h200'], stepTimeoutMs: 600_000, pipelined: true }, async (read) => {
    for (const q0 of qBlocks) for (const n of ['o', 'lse', 'dq'] as const) got[`${n}@${q0}`] = await read(n, block(q0));
    for (const k0 of kBlocks) for (const n of ['dk', 'dv'] as const) got[`${n}@${k0}`] = await read(n, block(k0));
  });
  const wallMs = performance.now() - t0;
  const devicePeak = dev.tracker.snapshot().peakBytes;
  console.error(`scale: ring done in ${duration(wallMs)}; checking sampled rows against the single-device kernel`);
  return { s, timeline, wallMs, devicePeak, perRankEstimate: perRank, errors: await checkScale(dev, s, got, qBlocks, kBlocks, head, ROWS) };
}

async function checkScale(dev: FlashDevice, s: AttentionShape, got: Record<string, Float32Array>, qBlocks: number[], kBlocks: number[], head: number, ROWS: number) {
  const { Hq: H, Nq: N, D } = s;
  const all: Segment = { offset: 0, stride: 1, count: N };
  const k = generate('k', H, N, D, all), v = generate('v', H, N, D, all);
  const errors: Record<string, number> = {};
  for (const q0 of qBlocks) {
    const seg = { offset: q0, stride: 1, count: ROWS };
    const qs = { ...s, Nq: ROWS };
    const ro = { causal: true, precision: 'f16' as const, qPos: { offset: q0, stride: 1 }, kPos: { offset: 0, stride: 1 } };
    const q = generate('q', H, N, D, seg), dout = generate('dout', H, N, D, seg);
    const f = await attentionForward(dev, qs, { q, k, v }, ro);
    const b = await attentionBackward(dev, qs, { q, k, v, o: f.o, lse: f.lse, dout }, ro);
    errors[`o@${q0}`] = relErr(got[`o@${q0}`], f64(f.o));
    errors[`lse@${q0}`] = relErr(got[`lse@${q0}`], f64(f.lse));
    errors[`dq@${q0}`] = relErr(got[`dq@${q0}`], f64(b.dq));
  }
  // dK/dV of a key block need every query: one head, its full forward first (O, LSE), then the block's backward.
  const h1 = { ...s, Hq: 1, Hkv: 1 };
  const q = generate('q', H, N, D, all, head, 1), dout = generate('dout', H, N, D, all, head, 1);
  const kh = k.subarray(head * N * D, (head + 1) * N * D), vh = v.subarray(head * N * D, (head + 1) * N * D);
  const f = await attentionForward(dev, h1, { q, k: kh, v: vh }, { causal: true, precision: 'f16' });
  for (const k0 of kBlocks) {
    const ro = { causal: true, precision: 'f16' as const, qPos: { offset: 0, stride: 1 }, kPos: { offset: k0, stride: 1 } };
    const kb = kh.subarray(k0 * D, (k0 + ROWS) * D), vb = vh.subarray(k0 * D, (k0 + ROWS) * D);
    const b = await attentionBackward(dev, { ...h1, Nk: ROWS }, { q, k: kb, v: vb, o: f.o, lse: f.lse, dout }, ro);
    for (const n of ['dk', 'dv'] as const) errors[`${n}@${k0}.h${head}`] = relErr(got[`${n}@${k0}`].subarray(head * ROWS * D, (head + 1) * ROWS * D), f64(b[n]));
  }
  return errors;
}

/** The sweep's table: the adapter, then a row a point, its columns padded to their widest cell (a run's five times, a tiny peak). */
function sweepTable(sw: SweepResult & RunMeta): string[] {
  const r0 = sw.rows[0];
  bestRatios(sw.rows);
  const head = ['R', 'scheme', 'kernel ms (fwd+bwd)', 'runs', 'vs R=1', 'paired', 'best', 'vs R=1 best', 'pred ms', 'comm%', 'TFLOP/s/GPU', 'peak MiB/rank', 'err vs R=1'];
  const cells = sw.rows.map((r) => [
    String(r.R), r.R === 1 ? 'baseline' : r.scheme, fig(r.kernelMs, 1, 'n/a'), r.kernelMsRuns.map((k) => fig(k, 1, 'n/a')).join(' '),
    fig(r.vsR1, 2, 'n/a'), r.R === 1 ? '-' : fig(r.vsR1Paired, 2, 'n/a'), fig(r.kernelMsBest, 1, 'n/a'), fig(r.vsR1Best, 2, 'n/a'),
    fig(r.predicted.totalMs, 1), fig(100 * r.predicted.commFraction, 1), r.predicted.tflopsPerGpu.toPrecision(3),
    // R=1 is paired with nothing, and its outputs are the reference: no error against itself.
    fig(r.maxPeakBytesPerRank / 2 ** 20, 0), r.R === 1 ? '-' : r.maxErrVsR1.toExponential(1),
  ]);
  const L = [adapterLine(sw),
    `one-device sweep: N=${r0.N} H=${r0.H} D=${r0.D} causal f16 zigzag; each point: warm-up (>= 1 s on a GPU), median of ${counted(sw.repeats ?? 1, 'run')}, each after an R=1 run (paired: median of the neighbours' ratios); predicted on nvlink-h200 from measured step compute`,
    ...aligned([head, ...cells], [0, 1, 3])];
  L.push('R=1 is one rank: the same work under every scheme name, measured once and the baseline (vs R=1) and reference outputs of every scheme (its paired and err: -); n/a: not measured (no GPU timestamps).');
  L.push(`best: a point's fastest run; R=1's is the fastest of all ${r1RunCount(sw.rows)} R=1 runs (its own and those paired with every point), the denominator of vs R=1 best.`);
  for (const k of sw.skipped ?? []) L.push(`skipped R=${k.R} ${k.scheme}: ${k.why}`);
  const notAsked = SWEEP_SCHEMES.filter((x) => sw.schemes && !sw.schemes.includes(x));
  if (notAsked.length) L.push(`not asked (--schemes ${sw.schemes!.join(',')}): ${notAsked.join(', ')}`);
  return L;
}

type ScaleRun = Awaited<ReturnType<typeof scale>> & RunMeta;

/** The scale run's summary: times in ms below a second, bytes in the unit they fill, '-' for kernel time where there are no timestamps. */
function scaleTable(sc: ScaleRun): string[] {
  const tl = sc.timeline;
  const k = (ph: 'forward' | 'backward') => kernelMs(tl, ph);
  const timed = k('forward') !== null && k('backward') !== null;
  const ok = Object.entries(sc.errors).every(([n, e]) => e <= (/^(o|lse)@/.test(n) ? 5e-3 : 2e-2));
  const p = tl.predicted!;
  return [adapterLine(sc),
    `scale: N=${sc.s.Nq} H=${sc.s.Hq} D=${sc.s.D} causal f16, R=${tl.R} ${tl.scheme} ${tl.layout} one-device`,
    `  wall ${duration(sc.wallMs)} (forward ${duration(tl.phases[0].wallMs)}, backward ${duration(tl.phases[1].wallMs)}); kernels ${duration(k('forward'))} + ${duration(k('backward'))}${timed ? '' : ' (no GPU timestamps)'}`,
    `  peak bytes: device ${formatBytes(sc.devicePeak)}, per rank max ${formatBytes(Math.max(...tl.ranks.map((r) => r.peakBytes)))} (estimate ${formatBytes(sc.perRankEstimate)})`,
    `  sampled rows vs single-device kernel (f16: O/LSE <= 5e-3, grads <= 2e-2): ${ok ? 'PASS' : 'FAIL'}: ${Object.entries(sc.errors).map(([n, e]) => `${n} ${e.toExponential(1)}`).join(', ')}`,
    `  predicted nvlink-h200: ${duration(p.totalMs)}, comm ${fig(100 * p.commFraction, 1)}%, ${p.tflopsPerGpu.toPrecision(3)} TFLOP/s per GPU`];
}

/** The tables of a sweep and a scale run (either may be absent; `table` mode reads both from --out), each under its adapter. */
export function table(sw: (SweepResult & RunMeta) | null, sc: ScaleRun | null): string {
  return [...(sw?.rows.length ? sweepTable(sw) : []), ...(sc ? scaleTable(sc) : [])].join('\n');
}

type Mode = 'sweep' | 'scale' | 'steps' | 'places' | 'procs' | 'table';

interface ModeSpec {
  summary: string;
  /** The options the mode takes, with their defaults (the GPU host's sizes; bench/cp-h200.sh). */
  defaults: Record<string, string>;
  /** Options that take a comma list here. */
  lists: string[];
  /** A run small enough for a CPU adapter (lavapipe): seconds. */
  example: string;
}

/** Each mode's options: what --help lists and what parsing accepts (an option of another mode is a mistake, not ignored). */
const MODES: Record<Mode, ModeSpec> = {
  sweep: {
    summary: 'R ranks on one device against R=1, per scheme (p2p, all_gather, a2a): kernel ms, paired ratios, link-model prediction',
    defaults: { N: '16384', H: '16', D: '128', R: '1,2,4,8', schemes: SWEEP_SCHEMES.join(','), 'budget-s': 'none', out: 'bench/out', force: 'off' }, lists: ['R'],
    example: 'sweep --N 64 --H 4 --D 16 --R 1,2,4 --out /tmp/cp',
  },
  scale: {
    summary: 'one exact forward+backward at a sequence no host tensor holds, sampled rows checked against the single-device kernel',
    defaults: { N: '1048576', H: '8', D: '128', R: '8', 'gpu-gib': '139', out: 'bench/out', force: 'off' }, lists: [],
    example: 'scale --N 1024 --H 2 --D 16 --R 4 --gpu-gib 1 --out /tmp/cp',
  },
  steps: {
    summary: "where p2p's kernel time goes: each kind of zigzag step beside a plain call of the same work, and R=1",
    defaults: { N: '16384', H: '16', D: '128', R: '2,4,8', reps: '20', out: 'bench/out', force: 'off' }, lists: ['R'],
    example: 'steps --N 256 --H 2 --D 16 --R 2,4 --reps 2 --out /tmp/cp',
  },
  places: {
    summary: 'how many workgroups of each pass run at once: W workgroups (--H, one per head) of one length (--N keys or rows), not causal',
    defaults: { N: '2048', H: '66,132,133,198,264,265,330,396,397,528', D: '128', reps: '10', out: 'bench/out', force: 'off' }, lists: ['N', 'H'],
    example: 'places --N 64 --H 1,2 --D 16 --reps 2 --out /tmp/cp',
  },
  procs: {
    summary: 'one process per rank: measured timeline, comm fraction, staging bandwidth, the link model at that bandwidth',
    defaults: { N: '16384,65536,131072', H: '16', D: '128', R: '2', 'latency-us': '10', 'gpu-per-rank': 'off', out: 'bench/out', force: 'off' }, lists: ['N'],
    example: 'procs --N 256 --H 2 --D 16 --R 2 --out /tmp/cp   (about a minute: every run starts R processes)',
  },
  table: { summary: 'prints the tables of cp-sweep.json and cp-scale.json in --out', defaults: { out: 'bench/out' }, lists: [], example: 'table --out /tmp/cp' },
};

const OPTIONS: Record<string, { type: 'string' | 'boolean'; arg: string; help: string }> = {
  N: { type: 'string', arg: 'n', help: 'sequence length in tokens (procs: a comma list; places: the workgroups\' lengths, a comma list)' },
  H: { type: 'string', arg: 'h', help: 'attention heads (places: a comma list of workgroup counts, one workgroup per head)' },
  D: { type: 'string', arg: 'd', help: `head dim: a multiple of 8, at most ${MAX_HEAD_DIM}` },
  R: { type: 'string', arg: 'r', help: 'ranks (context-parallel size); sweep, steps: a comma list (R=1 always runs: the baseline)' },
  schemes: { type: 'string', arg: 'list', help: `sweep: the schemes to run, a comma list of ${SWEEP_SCHEMES.join(', ')}` },
  'budget-s': { type: 'string', arg: 'S', help: 'sweep: start no point that would end past S seconds (skipped points are named)' },
  'gpu-gib': { type: 'string', arg: 'G', help: 'scale: GPU memory; a run needing more than 90% of it is refused up front' },
  reps: { type: 'string', arg: 'n', help: 'steps, places: timed repeats of each kernel pass (the median is kept)' },
  'latency-us': { type: 'string', arg: 'U', help: "procs: per-message latency of the predicted link" },
  'gpu-per-rank': { type: 'boolean', arg: '', help: 'procs: rank r sees only GPU r (two identical GPUs)' },
  out: { type: 'string', arg: 'dir', help: 'folder for the JSON results (table: where it reads them)' },
  force: { type: 'boolean', arg: '', help: "overwrite a result file in --out that is not an earlier cp-run's (one that is, is overwritten without it)" },
};

const HELP_CMD = 'node bench/cp-run.mjs --help';
const HINT = `(see ${HELP_CMD})`;

export function usage(): string {
  const w = Math.max(...Object.entries(OPTIONS).map(([k, o]) => k.length + o.arg.length));
  return [
    'usage: node bench/cp-run.mjs <mode> [options]   (the context-parallel bench; --help: this text)',
    '',
    'Defaults are the GPU host\'s sizes (bench/cp-h200.sh), far too big for a CPU adapter (lavapipe):',
    'there give small shapes, as every example below does (seconds each, but procs).',
    '',
    ...Object.entries(MODES).flatMap(([m, spec]) => [
      `  ${m.padEnd(5)}  ${spec.summary}`,
      `         ${Object.entries(spec.defaults).map(([k, v]) => (OPTIONS[k].type === 'boolean' ? `[--${k}]` : `--${k} ${v}`)).join('  ')}`,
      `         e.g. node bench/cp-run.mjs ${spec.example}`,
    ]),
    '',
    'options:',
    ...Object.entries(OPTIONS).map(([k, o]) => `  --${`${k} ${o.arg}`.padEnd(w + 1)}  ${o.help}`),
  ].join('\n');
}

/** The mode (null: none given) and the options given; every parsing mistake is one InputError line (parseCommand). */
function parseCp(argv: string[]): { mode: Mode | null; values: Record<string, string | boolean | undefined> } {
  const options = Object.fromEntries(Object.entries(OPTIONS).map(([k, o]) => [k, { type: o.type }]));
  const parsed = parseCommand('cp-run', argv, options, true, HELP_CMD);
  const [mode, ...extra] = parsed.positionals;
  if (extra.length) throw new InputError(`one mode at a time, got '${parsed.positionals.join(' ')}' ${HINT}`);
  if (mode !== undefined && !Object.hasOwn(MODES, mode)) throw new InputError(`unknown mode '${mode}': use ${Object.keys(MODES).join(', ')} ${HINT}`);
  return { mode: (mode as Mode) ?? null, values: parsed.values as Record<string, string | boolean | undefined> };
}

interface CpConfig {
  mode: Mode; N: number[]; H: number; Hs: number[]; D: number; R: number[]; out: string; schemes: Scheme[];
  budgetS: number | null; gpuGib: number; reps: number; latencyUs: number; gpuPerRank: boolean; force: boolean;
}

const RULES: Record<string, NumberRule> = {
  N: { integer: true, min: 1, what: 'a positive integer (tokens)' },
  H: { integer: true, min: 1, what: 'a positive integer (heads)' },
  D: { integer: true, min: 8, max: MAX_HEAD_DIM, what: `a multiple of 8 from 8 to ${MAX_HEAD_DIM} (head dim)` },
  R: { integer: true, min: 1, what: 'a positive integer (ranks)' },
  reps: { integer: true, min: 1, what: 'a positive integer' },
  'budget-s': { above: 0, what: 'a positive number of seconds' },
  'gpu-gib': { above: 0, what: 'a positive number of GiB' },
  'latency-us': { min: 0, what: 'a number of microseconds, 0 or more' },
};

/** A numeric option's value(s) (a comma list where the mode takes one), or one line naming the option and what it must be. */
function numbers(flag: string, raw: string, list: boolean): number[] {
  const rule = RULES[flag];
  const bad = () => new InputError(`--${flag} must be ${list ? `a comma list, each ${rule.what}` : rule.what}, got '${raw}'`);
  const xs = (list ? raw.split(',') : [raw]).map((p) => {
    try {
      return numberArg(flag, p, rule);
    } catch {
      throw bad();
    }
  });
  if (flag === 'D' && xs[0] % 8 !== 0) throw bad();
  if (new Set(xs).size < xs.length) throw new InputError(`--${flag} '${raw}' names a value twice: give each once`);
  return xs;
}

/**
 * Every option of the mode checked before any device work (a mistake costs no adapter start and
 * no minutes of a sweep): numbers, ranks against tokens, and the scale run's shape and memory.
 */
function validate(mode: Mode, values: Record<string, string | boolean | undefined>): CpConfig {
  const spec = MODES[mode];
  for (const k of Object.keys(values))
    if (!Object.hasOwn(spec.defaults, k)) throw new InputError(`--${k} is not an option of ${mode} (its options: ${Object.keys(spec.defaults).map((o) => `--${o}`).join(', ')}) ${HINT}`);
  const num = (k: string) => {
    const raw = (values[k] as string | undefined) ?? spec.defaults[k];
    return raw === undefined || raw === 'none' ? [] : numbers(k, raw, spec.lists.includes(k));
  };
  const [N, H, D, R, budget, gpuGib, reps, latency] = ['N', 'H', 'D', 'R', 'budget-s', 'gpu-gib', 'reps', 'latency-us'].map(num);
  for (const r of R) for (const n of N)
    if (r > n) throw new InputError(`--R ${r} is more than --N ${n} tokens: every rank needs at least one token`);
  const c: CpConfig = {
    mode, N, H: H[0], Hs: H, D: D[0], R, out: (values.out as string | undefined) ?? spec.defaults.out, budgetS: budget[0] ?? null,
    gpuGib: gpuGib[0], reps: reps[0], latencyUs: latency[0], gpuPerRank: !!values['gpu-per-rank'], force: !!values.force,
    schemes: sweepSchemes((values.schemes as string | undefined) ?? SWEEP_SCHEMES.join(',')),
  };
  if (mode === 'scale') checkScaleRun(c);
  return c;
}

/** --schemes: a comma list of the sweep's schemes, each once. */
function sweepSchemes(raw: string): Scheme[] {
  const xs = raw.split(',');
  for (const x of xs)
    if (!(SWEEP_SCHEMES as string[]).includes(x)) throw new InputError(`--schemes: '${x}' is not a scheme of the sweep: give a comma list of ${SWEEP_SCHEMES.join(', ')}`);
  if (new Set(xs).size < xs.length) throw new InputError(`--schemes '${raw}' names a scheme twice: give each once`);
  return xs as Scheme[];
}

/** The scale run's check samples 64-row blocks at N/2 − 32, N − 64 (queries) and 0, N/2 (keys); its ring must fit --gpu-gib. */
function checkScaleRun(c: CpConfig): void {
  const [N] = c.N, [R] = c.R;
  if (N % 2 !== 0 || N < 128) throw new InputError(`--N must be an even integer >= 128 for scale (its check samples 64-row blocks at N/2 and at the end), got ${N}`);
  const need = R * p2pPeakPerRank(N, R, c.H, c.D);
  if (need > 0.9 * c.gpuGib * GIB)
    throw new LimitError(`the scale run needs ${(need / GIB).toFixed(1)} GiB on the device (N=${N}, H=${c.H}, D=${c.D}, R=${R}), more than 90% of --gpu-gib ${c.gpuGib}: lower --N or --H, or raise --gpu-gib`);
}

/** A JSON result in --out, null where there is none. */
async function readResult(out: string, f: string) {
  const path = join(out, f);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError(`${path} is not JSON (${(e as Error).message}): rerun the mode that writes it`);
  }
}

async function tableMode(out: string): Promise<number> {
  const [sw, sc] = [await readResult(out, 'cp-sweep.json'), await readResult(out, 'cp-scale.json')];
  if (!sw && !sc) throw new InputError(`--out ${out} holds neither cp-sweep.json nor cp-scale.json: run sweep or scale with --out ${out} first`);
  console.log(table(sw, sc));
  return 0;
}

async function procsMode(c: CpConfig, write: WriteResult): Promise<number> {
  const [R] = c.R;
  const rows = await procsBench(c.N, c.H, c.D, R, c.gpuPerRank, c.latencyUs, (obj) => write('cp-procs.json', result('procs', obj)));
  console.log(procsTable(rows));
  // bench/cpProcs.ts leaves out what the ring refuses (a2a with heads not divisible by R): named here, with the ring's reason.
  for (const N of c.N)
    for (const scheme of SWEEP_SCHEMES) {
      if (rows.some((r) => r.N === N && r.scheme === scheme)) continue;
      const s: AttentionShape = { B: 1, Hq: c.H, Hkv: c.H, Nq: N, Nk: N, D: c.D };
      console.log(`skipped N=${N} R=${R} ${scheme}: ${whyNot(s, { causal: true, layout: 'zigzag' }, R, scheme) ?? 'not run by bench/cpProcs.ts'}`);
    }
  return 0;
}

async function deviceMode(c: CpConfig, write: WriteResult): Promise<number> {
  const [dev] = await acquireDevices(await nodeGPU(), 1);
  try {
    const meta = { adapter: adapterName(dev.adapter), date: new Date().toISOString() };
    if (c.mode === 'sweep') {
      const res = await sweep(dev, c.N[0], c.H, c.D, c.R, c.schemes, write, c.budgetS, meta);
      console.log(table({ ...meta, ...res }, null));
    } else if (c.mode === 'scale') {
      const sc = await scale(dev, c.N[0], c.H, c.D, c.R[0], c.gpuGib);
      await write('cp-scale.json', result('scale', { ...meta, ...sc }));
      console.log(table(null, { ...meta, ...sc }));
    } else if (c.mode === 'places') {
      const res = await placesBench(dev, c.D, c.Hs, c.N, c.reps, (r) => console.error(`places ${r.pass} L=${r.L} W=${r.W}: ${fig(r.ms, 3)} ms`));
      await write(`cp-places-D${c.D}.json`, result('places', { ...meta, ...res }));
      console.log(placesTable({ ...meta, ...res }));
    } else {
      const [N] = c.N;
      const res = await stepsBench(dev, N, c.H, c.D, c.R, c.reps,
        (r) => console.error(`steps R=${r.R}${r.kind === 'R=1' ? ' (one call)' : ` ${r.kind}`}: ring ${fig(r.ring.fwd + r.ring.dkdv + r.ring.dq, 3)} ms, plain ${fig(r.plain.fwd + r.plain.dkdv + r.plain.dq, 3)} ms`));
      await write(`cp-steps-${N}.json`, result('steps', { ...meta, ...res }));
      console.log(stepsTable({ ...meta, ...res }));
    }
    return 0;
  } finally {
    dev.destroy();
  }
}

/** Writes a result file of --out: its name and text (resultWriter). */
type WriteResult = (name: string, text: string) => Promise<void>;

/** The timeline the sweep keeps of its R = 4 p2p point. */
const SWEEP_TIMELINE = 'cp-timeline-R4-p2p.json';

/** A mode's result as written: JSON whose first key names it ("kind": "flashring.cp-MODE"), so a later run knows it for its own. */
const result = (mode: Mode, obj: object): string => JSON.stringify({ kind: `flashring.cp-${mode}`, ...obj }, null, 1);

/** What an earlier run's result file begins with (result). */
const CP_RESULT = { what: 'a cp-run result (JSON beginning "kind": "flashring.cp-…")', looks: (h: string) => /^\s*\{\s*"kind"\s*:\s*"flashring\.cp-/.test(h) };

/** The files a mode writes in --out. */
function resultNames(c: CpConfig): string[] {
  const names: Record<Exclude<Mode, 'table'>, string[]> = {
    sweep: ['cp-sweep.json', SWEEP_TIMELINE], scale: ['cp-scale.json'], places: [`cp-places-D${c.D}.json`], steps: [`cp-steps-${c.N[0]}.json`], procs: ['cp-procs.json'],
  };
  return names[c.mode as Exclude<Mode, 'table'>];
}

/**
 * The writer of a mode's results, checked before any device work: a file of its names in --out is overwritten only
 * where it is an earlier cp-run's (or with --force); each write goes through a temporary renamed into place, so a
 * run stopped mid-write leaves the last whole file (src/cli/files.ts OutputPlan). It wrote over any file there.
 */
async function resultWriter(c: CpConfig): Promise<WriteResult> {
  const names = resultNames(c);
  const kinds = Object.fromEntries(names.map((n) => [n, n === SWEEP_TIMELINE ? OUTPUT_KINDS.timeline : CP_RESULT]));
  const plan = await OutputPlan.make([], [{ flag: 'out', path: c.out, kind: 'dir', names, kinds }], { force: c.force });
  return (name, text) => plan.write([{ path: join(c.out, name), data: text }]);
}

/**
 * `node bench/cp-run.mjs <mode> [options]`: the exit code. --help prints the usage (stdout, 0); no mode
 * prints it on stderr (2: the defaults are GPU-host sizes, hours on a CPU adapter, so nothing starts
 * unasked). An ordinary mistake is one line `cp-run [mode]: …` and 2, as the flashring command
 * does; a bug keeps its stack trace.
 */
export async function cpBench(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) return (console.log(usage()), 0);
  let mode: Mode | null = null;
  try {
    const parsed = parseCp(argv);
    if (!parsed.mode) return (console.error(usage()), 2); // a mistake's output goes to stderr, as flashring's
    mode = parsed.mode;
    const c = validate(mode, parsed.values);
    if (mode === 'table') return await tableMode(c.out);
    const write = await resultWriter(c);
    return await (mode === 'procs' ? procsMode(c, write) : deviceMode(c, write));
  } catch (e) {
    const line = await userMistake(e);
    if (line === null) throw e;
    console.error(`cp-run${mode ? ` ${mode}` : ''}: ${line}`);
    return 2;
  }
}
