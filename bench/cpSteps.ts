/**
 * Where a p2p zigzag ring's kernel time goes, one step kind at a time (bench/cp.ts `steps`):
 * GPU time of each kernel pass of the three kinds of step a rank runs (its own chunk, the
 * diagonal; a chunk from an earlier rank, j < r; from a later one, j > r), as the ring encodes
 * them (two-run positions, the forward merging into O and LSE in its epilogue off the diagonal,
 * the backward adding onto dQ and the running dK/dV sums in place), beside the single-device kernel on a plain call of the same visible work (the
 * diagonal: one causal call of the shard's length; off the diagonal: a dense call of the visible
 * rectangle), and R = 1's one causal call of N. Summed over the R² steps of a ring (R diagonal,
 * R(R−1)/2 of each other kind) this splits p2p's ratio to R = 1 into the ring's own cost (its
 * steps against the plain calls of the same shapes) and the kernels' cost of short calls (the
 * plain calls against R = 1). Medians of `reps` timed repeats after three untimed ones, all
 * queued back to back (the GPU's clock stays up). Δ (the backward's preprocess) is computed once,
 * untimed, as the ring computes it once per rank outside its timed passes. The finalize pass the
 * ring runs once a rank after its last forward step (rows no step gave mass: NaN; a read of the
 * rank's LSE rows) is not in these rows. With N not divisible by 2R the ranks' steps differ by a
 * token or so; one step per kind stands for all of them.
 */
import { FlashDevice } from '../src/gpu/device.js';
import { GpuTimer } from '../src/gpu/timer.js';
import { storage, upload } from '../src/gpu/buffers.js';
import { FlashForward } from '../src/kernels/flashForward.js';
import { FlashBackward } from '../src/kernels/flashBackward.js';
import { toPrecision } from '../src/kernels/attention.js';
import { randn } from '../src/reference/compare.js';
import { AttentionOptions, AttentionShape, attentionPairFlops, resolveOptions } from '../src/shape.js';
import { Segment, classifyPair, shardLayout } from '../src/cp/plan/schedule.js';
import { median } from '../src/stats.js';
import { RunMeta, adapterLine, fig } from './cpFormat.js';
import { aligned } from '../src/table.js';

type Pass = 'fwd' | 'dkdv' | 'dq';
const PASSES: Pass[] = ['fwd', 'dkdv', 'dq'];
export type PassMs = Record<Pass, number>;

export interface StepRow {
  R: number;
  kind: 'R=1' | 'diagonal' | 'j<r' | 'j>r';
  /** Steps of this kind in a ring of R (summed over ranks). */
  count: number;
  /** Visible (query, key) pairs per head of one step. */
  visible: number;
  /** The step as the ring encodes it (R = 1: the one causal call). */
  ring: PassMs;
  /** The single-device kernel on a plain call of the same visible work (no merge). */
  plain: PassMs;
}

export interface StepsResult {
  N: number; H: number; D: number; reps: number;
  rows: StepRow[];
  /** Per R: summed kernel ms of the ring's steps, of the plain calls, and R = 1's. */
  totals: { R: number; ringMs: number; plainMs: number; r1Ms: number }[];
  /** Step kinds not timed, and why (a step with no visible work: N < 2R leaves zigzag chunks empty). */
  skipped: { R: number; kind: StepRow['kind']; count: number; why: string }[];
}

/** Forward and backward kernel ms of a step: what the ring's kernel time counts. */
const stepMs = (m: PassMs) => m.fwd + m.dkdv + m.dq;

export async function stepsBench(dev: FlashDevice, N: number, H: number, D: number, Rs: number[], reps: number, onRow?: (r: StepRow) => void): Promise<StepsResult> {
  const types = { precision: 'f16' as const, out: 'f32' as const, grad: 'f32' as const };
  const [fwd, bwd] = await Promise.all([FlashForward.create(dev, D, { ...types, merge: true }), FlashBackward.create(dev, D, types)]);
  const n = H * N * D;
  const half = (seed: number) => upload(dev, toPrecision(randn(n, seed), 'f16'), 'steps.in');
  const b = {
    q: half(1), k: half(2), v: half(3), dout: half(4),
    o: storage(dev, n * 4, 'steps.o'), lse: storage(dev, H * N * 4, 'steps.lse'),
    delta: storage(dev, H * N * 4, 'steps.delta'), dq: storage(dev, n * 4, 'steps.dq'), dk: storage(dev, n * 4, 'steps.dk'), dv: storage(dev, n * 4, 'steps.dv'),
  };
  /** A call's passes; `ring`: as the ring encodes a step (reached row blocks only), `merge`: a step after a rank's first. */
  const time = async (Nq: number, Nk: number, opts: AttentionOptions, ring: boolean, merge = false): Promise<PassMs> => {
    const s: AttentionShape = { B: 1, Hq: H, Hkv: H, Nq, Nk, D };
    const o = resolveOptions(s, opts);
    const timer = new GpuTimer(dev, PASSES.length * reps);
    const temps: GPUBuffer[] = [];
    const enc = dev.device.createCommandEncoder({ label: 'steps' });
    bwd.encode(enc, b, s, o, temps, { accumulate: true, dq: false, dkdv: false }); // Δ alone
    for (let i = -3; i < reps; i++)
      PASSES.forEach((p, k) => {
        const tw = i < 0 ? undefined : timer.writes(i * PASSES.length + k, 0, 1);
        if (p === 'fwd') fwd.encode(enc, { q: b.q, k: b.k, v: b.v, o: b.o, lse: b.lse }, s, o, temps, tw, ring, merge);
        else bwd.encode(enc, b, s, o, temps, { accumulate: true, skipPreprocess: true, dq: p === 'dq', dkdv: p === 'dkdv', timestampWrites: tw });
      });
    dev.device.queue.submit([enc.finish()]);
    try {
      const t = await timer.read();
      return Object.fromEntries(PASSES.map((p, k) => [p, median(t.filter((_, j) => j % PASSES.length === k))!])) as PassMs;
    } finally {
      timer.destroy();
      for (const x of temps) dev.tracker.destroy(x);
    }
  };
  try {
    const rows: StepRow[] = [];
    const push = (r: StepRow) => (rows.push(r), onRow?.(r));
    const r1 = await time(N, N, { causal: true }, true);
    push({ R: 1, kind: 'R=1', count: 1, visible: (N * (N + 1)) / 2, ring: r1, plain: r1 });
    const totals: StepsResult['totals'] = [];
    const skipped: StepsResult['skipped'] = [];
    for (const R of Rs.filter((r) => r > 1)) {
      const shards = shardLayout(N, R, 'zigzag').map((segs) => segs[0]);
      const at = (q: Segment, k: Segment) => ({ causal: true, qPos: q, kPos: k });
      const kinds: [StepRow['kind'], number, number, number][] = [['diagonal', 0, 0, R], ['j<r', 1, 0, (R * (R - 1)) / 2], ['j>r', 0, 1, (R * (R - 1)) / 2]];
      let ringMs = 0, plainMs = 0;
      for (const [kind, r, j, count] of kinds) {
        const q = shards[r], k = shards[j];
        const { visible } = classifyPair(q, k, true);
        if (visible === 0) {
          // N < 2R: a rank's chunk from a later rank can be empty; named, so the rows' counts not summing to R² is explained.
          skipped.push({ R, kind, count, why: `no visible work at N=${N} (N < 2R=${2 * R}: some zigzag chunks are empty)` });
          continue;
        }
        // The ring merges every step but a rank's first (its own chunk, the diagonal: written directly).
        const ring = await time(q.count, k.count, at(q, k), true, kind !== 'diagonal');
        // The same visible work as one plain call: a causal call of the shard, or the dense rectangle.
        const plain = kind === 'diagonal' ? await time(q.count, q.count, { causal: true }, false)
          : await time(kind === 'j<r' ? q.count : visible / k.count, kind === 'j<r' ? visible / q.count : k.count, {}, false);
        push({ R, kind, count, visible, ring, plain });
        ringMs += count * stepMs(ring);
        plainMs += count * stepMs(plain);
      }
      totals.push({ R, ringMs, plainMs, r1Ms: stepMs(r1) });
    }
    return { N, H, D, reps, rows, totals, skipped };
  } finally {
    for (const x of Object.values(b)) dev.tracker.destroy(x);
  }
}

/** TFLOP/s at three significant figures below 100, so a CPU adapter's hundredths of a TFLOP/s do not print as 0.0. */
function tflops(res: StepsResult, visible: number, ms: number, pass: 'fwd' | 'bwd'): string {
  const x = attentionPairFlops(visible, 1, res.H, res.D, pass) / (ms * 1e9);
  return x >= 100 ? x.toFixed(1) : x.toPrecision(3);
}

/** "ring / plain" cells whose slashes line up: each side padded to its widest over the rows. */
function pairs(xs: [string, string][]): string[] {
  const a = Math.max(...xs.map(([x]) => x.length)), b = Math.max(...xs.map(([, y]) => y.length));
  return xs.map(([x, y]) => `${x.padStart(a)} / ${y.padStart(b)}`);
}

export function stepsTable(res: StepsResult & RunMeta): string {
  const f = (x: number) => fig(x, 3);
  const fwd = pairs(res.rows.map((r) => [tflops(res, r.visible, r.ring.fwd, 'fwd'), tflops(res, r.visible, r.plain.fwd, 'fwd')]));
  const bwd = pairs(res.rows.map((r) => [tflops(res, r.visible, r.ring.dkdv + r.ring.dq, 'bwd'), tflops(res, r.visible, r.plain.dkdv + r.plain.dq, 'bwd')]));
  const steps = aligned([
    ['R', 'step', 'count', 'ring fwd', 'dkdv', 'dq', '|', 'plain fwd', 'dkdv', 'dq', '|', 'TFLOP/s fwd ring/plain', 'bwd ring/plain'],
    ...res.rows.map((r, i) => [String(r.R), r.kind, String(r.count), f(r.ring.fwd), f(r.ring.dkdv), f(r.ring.dq), '|', f(r.plain.fwd), f(r.plain.dkdv), f(r.plain.dq), '|', fwd[i], bwd[i]]),
  ], [0, 1]);
  const sums = aligned([
    ['R', 'summed over the ring: ring steps ms', 'plain calls ms', 'R=1 ms', '|', 'ring/plain (the ring\'s own cost)', 'plain/R=1 (short calls)', 'ring/R=1'],
    ...res.totals.map((t) => [String(t.R), fig(t.ringMs, 1), fig(t.plainMs, 1), fig(t.r1Ms, 1), '|', fig(t.ringMs / t.plainMs, 2), fig(t.plainMs / t.r1Ms, 2), fig(t.ringMs / t.r1Ms, 2)]),
  ], [0]);
  const L = [adapterLine(res),
    `p2p zigzag steps: N=${res.N} H=${res.H} D=${res.D} causal f16, kernel ms (median of ${res.reps}); plain = the single-device kernel on a call of the same visible work`,
    ...steps, ...sums];
  for (const k of res.skipped ?? []) L.push(`skipped R=${k.R} ${k.kind} (${k.count} steps): ${k.why}`);
  return L.join('\n');
}
