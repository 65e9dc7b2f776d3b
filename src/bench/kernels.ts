/**
 * Kernel sweep: forward, backward and forward+backward TFLOP/s of the FlashAttention kernels
 * over N, D, causal and precision, timed with GPU timestamps (host clock where the adapter has
 * none): warm-up (warmUp), then the median of `reps` runs on random inputs (never
 * zeros).
 * FLOPs: forward 4·B·H·N²·D (two matmuls), ×0.5 causal; backward 2.5× forward; fwd+bwd 3.5×.
 * Each (D, precision, causal) is first checked against the float64 reference at a small size:
 * a configuration that is wrong gets no speed reported.
 */
import { FlashDevice } from '../gpu/device.js';
import { GpuTimer } from '../gpu/timer.js';
import { AttentionOptions, AttentionShape, attentionFlops, numel, resolveOptions } from '../shape.js';
import { KernelPath } from '../kernels/pipeline.js';
import { describePlan } from '../kernels/tiles.js';
import { Precision, elemBytes } from '../kernels/precision.js';
import { storage, upload } from '../gpu/buffers.js';
import { FlashForward } from '../kernels/flashForward.js';
import { FlashBackward } from '../kernels/flashBackward.js';
import { toPrecision } from '../kernels/attention.js';
import { checkAgainstReference } from '../kernels/check.js';
import { median } from '../stats.js';
import { randn } from '../reference/compare.js';

export interface KernelRow {
  pass: 'fwd' | 'bwd' | 'fwd+bwd';
  B: number; H: number; N: number; D: number;
  causal: boolean;
  precision: Precision;
  /** The pass's kernel path: the forward's, the backward's (each chooses its own: FlashBackward.create can fall back to
   *  the portable kernels where the forward has tensor cores), or for fwd+bwd the two as "fwd+bwd" where they differ. */
  path: KernelPath | `${KernelPath}+${KernelPath}`;
  /** The forward's and the backward's tile plans (describePlan), e.g. "fwd Br128 Bc32 WG256 RB1 pad8 pipe2 | bwd …". */
  tiles: string;
  ms: number;
  tflops: number;
  timer: 'gpu-timestamps' | 'host';
  checkErr: number;
}

/** The spot check's sequence length (B = 1, 2 query heads, 1 K/V head): its error is each row's checkErr. */
export const SPOT_CHECK_N = 67;

/** Max relative error of O, LSE, dQ, dK, dV at a small shape, against float64. */
export async function spotCheck(dev: FlashDevice, D: number, p: Precision, causal: boolean): Promise<{ err: number; ok: boolean }> {
  const r = await checkAgainstReference(dev, { B: 1, Hq: 2, Hkv: 1, Nq: SPOT_CHECK_N, Nk: SPOT_CHECK_N, D }, { causal, precision: p, seed: 1 });
  return { err: Math.max(r.errO, r.errLSE, r.errDQ, r.errDK, r.errDV), ok: r.ok };
}

/**
 * The most timed repeats a point may ask for (bench --reps, tune --reps): each repeat of a forward and backward
 * writes 4 timestamps, and a WebGPU query set holds at most 4096 (a larger one is invalid: every timed pass fails).
 */
export const MAX_REPS = 1000;

/** Untimed warm-up before timed repeats on a GPU (milliseconds of host time). */
const WARM_MS = 1000;

/**
 * Untimed warm-up: `minRuns` runs, then on GPU adapters more until WARM_MS have passed (at most
 * `maxRuns`). On the H200 the first runs after a pause took up to 5× the steady time, for up to
 * ~0.3 s of work (clock ramp; docs/performance.md), so a fixed count is not enough.
 */
export async function warmUp(dev: FlashDevice, run: () => Promise<unknown>, minRuns: number, maxRuns: number): Promise<void> {
  const t0 = performance.now();
  for (let i = 0; i < minRuns || (!dev.isCPU && performance.now() - t0 < WARM_MS && i < maxRuns); i++) await run();
}

/**
 * Whether a tensor of `bytes` can be bound on the device (maxStorageBufferBindingSize) and the
 * eight of a forward and backward held (2^40 bytes in all): the bench's and autotune's bound.
 */
export function tensorFits(dev: FlashDevice, bytes: number): boolean {
  return bytes <= dev.device.limits.maxStorageBufferBindingSize && 8 * bytes <= 2 ** 40;
}

/** The buffers of a timed forward and backward: random Q, K, V, dO (seeds 11-14) and room for the outputs. */
export type BenchBuffers = Record<'q' | 'k' | 'v' | 'dout' | 'o' | 'lse' | 'delta' | 'dq' | 'dk' | 'dv', GPUBuffer>;

export function benchBuffers(dev: FlashDevice, s: AttentionShape, p: Precision): BenchBuffers {
  const eb = elemBytes(p);
  const host = (n: number, seed: number) => toPrecision(randn(n, seed), p);
  return {
    q: upload(dev, host(numel(s, 'q'), 11), 'bench.q'), k: upload(dev, host(numel(s, 'kv'), 12), 'bench.k'),
    v: upload(dev, host(numel(s, 'kv'), 13), 'bench.v'), dout: upload(dev, host(numel(s, 'q'), 14), 'bench.dout'),
    o: storage(dev, numel(s, 'q') * eb, 'bench.o'), lse: storage(dev, numel(s, 'lse') * 4, 'bench.lse'),
    delta: storage(dev, numel(s, 'lse') * 4, 'bench.delta'), dq: storage(dev, numel(s, 'q') * eb, 'bench.dq'),
    dk: storage(dev, numel(s, 'kv') * eb, 'bench.dk'), dv: storage(dev, numel(s, 'kv') * eb, 'bench.dv'),
  };
}

/**
 * Forward and backward (or one of them: `passes`) at one shape and mask, on `given` buffers (benchBuffers of the same
 * shape and precision; autotune times every candidate on one set) or fresh ones: warm-up (at
 * least `warm[0]` runs, at most `warm[1]`), then `reps` timed runs of each. Returns the GPU
 * timestamps (null where the adapter has none or they are unusable) and the host times, each
 * [forward, backward] medians.
 */
export async function timeForwardBackward(
  dev: FlashDevice, s: AttentionShape, opts: AttentionOptions, p: Precision, reps: number, warm: [number, number], path?: KernelPath, given?: BenchBuffers,
  passes: 'both' | 'fwd' | 'bwd' = 'both',
): Promise<{ gpu: [number, number] | null; host: [number, number]; path: KernelPath; bwdPath: KernelPath; plans: [string, string] }> {
  const types = { precision: p, out: p, grad: p };
  const fwd = await FlashForward.create(dev, s.D, types, path);
  const bwd = await FlashBackward.create(dev, s.D, types, path);
  const o = resolveOptions(s, opts);
  const bufs = given ?? benchBuffers(dev, s, p);
  // The passes timed (the other's entry is NaN); the backward alone still needs one forward for O and LSE.
  const timed = passes === 'fwd' ? [0] : passes === 'bwd' ? [1] : [0, 1];
  const timer = new GpuTimer(dev, timed.length * reps);
  const hostMs: number[][] = [[], []];
  const run = async (which: number, tw?: GPUComputePassTimestampWrites) => {
    const temps: GPUBuffer[] = [];
    const enc = dev.device.createCommandEncoder({ label: 'bench' });
    if (which === 0) fwd.encode(enc, bufs, s, o, temps, tw);
    else bwd.encode(enc, bufs, s, o, temps, { timestampWrites: tw });
    const t0 = performance.now();
    dev.device.queue.submit([enc.finish()]);
    await dev.device.queue.onSubmittedWorkDone();
    for (const b of temps) dev.tracker.destroy(b);
    return performance.now() - t0;
  };
  try {
    if (passes === 'bwd') await run(0);
    await warmUp(dev, async () => { for (const w of timed) await run(w); }, warm[0], warm[1]);
    for (let i = 0; i < reps; i++) for (const [k, which] of timed.entries()) hostMs[which].push(await run(which, timer.writes(timed.length * i + k, 0, 1)));
    const gpu = await timer.read();
    const useGpu = dev.hasTimestamps && gpu.every((x) => Number.isFinite(x) && x > 0);
    const med = (xs: number[]) => (xs.length ? median(xs)! : NaN);
    const gpuOf = (which: number) => (timed.includes(which) ? med(gpu.filter((_, j) => timed[j % timed.length] === which)) : NaN);
    return {
      gpu: useGpu ? [gpuOf(0), gpuOf(1)] : null,
      host: [med(hostMs[0]), med(hostMs[1])], path: fwd.path, bwdPath: bwd.path, plans: [describePlan(fwd.plan), describePlan(bwd.plan)],
    };
  } finally {
    timer.destroy();
    if (!given) for (const b of Object.values(bufs)) dev.tracker.destroy(b);
  }
}

/** Times forward and backward at one shape; returns fwd, bwd and fwd+bwd rows. */
export async function timeKernels(
  dev: FlashDevice, s: AttentionShape, causal: boolean, p: Precision, reps: number, checkErr: number,
): Promise<KernelRow[]> {
  const t = await timeForwardBackward(dev, s, { causal }, p, reps, [2, 200]);
  const [fMs, bMs] = t.gpu ?? t.host;
  const paths = { fwd: t.path, bwd: t.bwdPath, 'fwd+bwd': t.path === t.bwdPath ? t.path : (`${t.path}+${t.bwdPath}` as const) };
  const row = (pass: KernelRow['pass'], ms: number): KernelRow => ({
    pass, B: s.B, H: s.Hq, N: s.Nq, D: s.D, causal, precision: p, path: paths[pass], tiles: `fwd ${t.plans[0]} | bwd ${t.plans[1]}`, ms,
    tflops: attentionFlops(s, causal, pass) / (ms * 1e-3) / 1e12, timer: t.gpu ? 'gpu-timestamps' : 'host', checkErr,
  });
  return [row('fwd', fMs), row('bwd', bMs), row('fwd+bwd', fMs + bMs)];
}
