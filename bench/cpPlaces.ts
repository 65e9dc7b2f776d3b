/**
 * How many workgroups of each kernel pass the GPU runs at once ("places"), and what a workgroup
 * costs beside its tiles (bench/cp.ts `places`): the short calls of a ring (bench/cpSteps.ts) have
 * few workgroups, or short ones. Each pass runs with exactly W workgroups of one length: W heads
 * of one row block each (the forward and dq: Nq = the rows a workgroup owns, Nk = L keys; dkdv:
 * Nk = the keys a workgroup owns, Nq = L rows), not causal, f16. A pass whose W fit the places at
 * once costs about one workgroup's time; past them the time steps up by a wave. The launch model
 * (bench/launch-model.py) assumes the places; this measures them. Medians of `reps` timed repeats
 * after three untimed ones, queued back to back, in a second sweep (the first warms the GPU's clock).
 */
import { FlashDevice } from '../src/gpu/device.js';
import { GpuTimer } from '../src/gpu/timer.js';
import { storage, upload } from '../src/gpu/buffers.js';
import { FlashForward } from '../src/kernels/flashForward.js';
import { FlashBackward } from '../src/kernels/flashBackward.js';
import { backwardRows, describePlan } from '../src/kernels/tiles.js';
import { toPrecision } from '../src/kernels/attention.js';
import { randn } from '../src/reference/compare.js';
import { AttentionShape, resolveOptions } from '../src/shape.js';
import { median } from '../src/stats.js';
import { RunMeta, adapterLine, fig } from './cpFormat.js';

export type PlacesPass = 'fwd' | 'dkdv' | 'dq';
export interface PlacesRow { pass: PlacesPass; D: number; W: number; L: number; ms: number }
export interface PlacesResult { D: number; reps: number; tiles: string; rowsFwd: number; rowsBwd: number; keysBwd: number; rows: PlacesRow[] }

/** The call that gives `pass` exactly W workgroups of length L. */
export function shapeOf(pass: PlacesPass, W: number, L: number, D: number, own: { rowsFwd: number; rowsBwd: number; keysBwd: number }): AttentionShape {
  if (pass === 'dkdv') return { B: 1, Hq: W, Hkv: W, Nq: L, Nk: own.keysBwd, D };
  return { B: 1, Hq: W, Hkv: W, Nq: pass === 'fwd' ? own.rowsFwd : own.rowsBwd, Nk: L, D };
}

type Buffers = Record<'q' | 'k' | 'v' | 'dout' | 'o' | 'lse' | 'delta' | 'dq' | 'dk' | 'dv', GPUBuffer>;

/** n f16 values: a block of 2^20 random ones repeated (timing needs finite, varied data, not 10^8 fresh draws on the host). */
function patterned(n: number, seed: number): Uint16Array {
  const block = toPrecision(randn(Math.min(n, 1 << 20), seed), 'f16') as Uint16Array;
  const out = new Uint16Array(n);
  for (let i = 0; i < n; i += block.length) out.set(block.subarray(0, Math.min(block.length, n - i)), i);
  return out;
}

/** Buffers for the largest call of the sweep (a smaller call uses their start). */
function buffersFor(dev: FlashDevice, shapes: AttentionShape[]): Buffers {
  const nq = Math.max(...shapes.map((s) => s.Hq * s.Nq * s.D)), nk = Math.max(...shapes.map((s) => s.Hkv * s.Nk * s.D));
  const rows = Math.max(...shapes.map((s) => s.Hq * s.Nq));
  return {
    q: upload(dev, patterned(nq, 1), 'places.q'), k: upload(dev, patterned(nk, 2), 'places.k'), v: upload(dev, patterned(nk, 3), 'places.v'),
    dout: upload(dev, patterned(nq, 4), 'places.dout'), o: storage(dev, nq * 4, 'places.o'), lse: storage(dev, rows * 4, 'places.lse'),
    delta: storage(dev, rows * 4, 'places.delta'), dq: storage(dev, nq * 4, 'places.dq'), dk: storage(dev, nk * 4, 'places.dk'), dv: storage(dev, nk * 4, 'places.dv'),
  };
}

/** Kernel ms (median of reps) of one pass at one shape: the forward's O and LSE and Δ made first, untimed. */
async function timePass(dev: FlashDevice, k: { fwd: FlashForward; bwd: FlashBackward }, b: Buffers, pass: PlacesPass, s: AttentionShape, reps: number): Promise<number> {
  const o = resolveOptions(s, {});
  const timer = new GpuTimer(dev, reps);
  const temps: GPUBuffer[] = [];
  try {
    const enc = dev.device.createCommandEncoder({ label: 'places' });
    k.fwd.encode(enc, b, s, o, temps);
    k.bwd.encode(enc, b, s, o, temps, { accumulate: true, dq: false, dkdv: false }); // Δ alone
    for (let i = -3; i < reps; i++) {
      const tw = i < 0 ? undefined : timer.writes(i, 0, 1);
      if (pass === 'fwd') k.fwd.encode(enc, b, s, o, temps, tw);
      else k.bwd.encode(enc, b, s, o, temps, { accumulate: true, skipPreprocess: true, dq: pass === 'dq', dkdv: pass === 'dkdv', timestampWrites: tw });
    }
    dev.device.queue.submit([enc.finish()]);
    return median(await timer.read())!;
  } finally {
    timer.destroy();
    for (const x of temps) dev.tracker.destroy(x);
  }
}

const PASSES = ['fwd', 'dkdv', 'dq'] as const;

export async function placesBench(dev: FlashDevice, D: number, Ws: number[], Ls: number[], reps: number, onRow?: (r: PlacesRow) => void): Promise<PlacesResult> {
  const types = { precision: 'f16' as const, out: 'f32' as const, grad: 'f32' as const };
  const [fwd, bwd] = await Promise.all([FlashForward.create(dev, D, types), FlashBackward.create(dev, D, types)]);
  // What a workgroup owns, by the kernels' own rules: the forward's Br rows (flashForward.ts), dq's rows and dkdv's keys (backwardRows).
  const rb = backwardRows(bwd.plan), own = { rowsFwd: fwd.plan.BR, rowsBwd: rb.q, keysBwd: rb.kv };
  const calls = PASSES.flatMap((pass) => Ls.flatMap((L) => Ws.map((W) => ({ pass, L, W, s: shapeOf(pass, W, L, D, own) }))));
  const b = buffersFor(dev, calls.map((c) => c.s));
  try {
    // The sweep once untimed first: a GPU idle between processes starts at a low clock, and a sweep of
    // light calls does not raise it (bench/results/2026-12-03-places-h200: a first sweep 1.1-4.5x slow).
    for (const c of calls) await timePass(dev, { fwd, bwd }, b, c.pass, c.s, 2);
    const rows: PlacesRow[] = [];
    for (const c of calls) {
      const row = { pass: c.pass, D, W: c.W, L: c.L, ms: await timePass(dev, { fwd, bwd }, b, c.pass, c.s, reps) };
      rows.push(row);
      onRow?.(row);
    }
    return { D, reps, tiles: `fwd ${describePlan(fwd.plan)} | bwd ${describePlan(bwd.plan)}`, ...own, rows };
  } finally {
    for (const x of Object.values(b)) dev.tracker.destroy(x);
  }
}

/**
 * The places a sweep shows: the W before the first step up, a time over 1.5× the previous W's (a
 * second wave); null when no step shows (every W fit, or the W are too far apart to tell).
 */
export function placesOf(rs: { W: number; ms: number }[]): number | null {
  for (let i = 1; i < rs.length; i++) if (rs[i].ms > 1.5 * rs[i - 1].ms) return rs[i - 1].W;
  return null;
}

/** Least squares of ms = fixed + perRow·L over a pass's lengths at one W: fixed in µs, per row in ns, the worst point's relative miss. */
export function fitLength(pts: { L: number; ms: number }[]): { fixedUs: number; perRowNs: number; worst: number } | null {
  const n = pts.length;
  if (n < 3) return null;
  const sx = pts.reduce((a, p) => a + p.L, 0), sy = pts.reduce((a, p) => a + p.ms, 0);
  const sxx = pts.reduce((a, p) => a + p.L * p.L, 0), sxy = pts.reduce((a, p) => a + p.L * p.ms, 0);
  const b = (n * sxy - sx * sy) / (n * sxx - sx * sx), a = (sy - b * sx) / n;
  return { fixedUs: a * 1e3, perRowNs: b * 1e6, worst: Math.max(...pts.map((p) => Math.abs(p.ms - (a + b * p.L)) / p.ms)) };
}

/** The table: per pass and length, ms at each W and over the smallest W's (waves show as 1, 2, 3 …), and the places read off it (placesOf). */
export function placesTable(res: PlacesResult & RunMeta): string {
  const out = [adapterLine(res), `places: D=${res.D}, f16, not causal; ${res.tiles}; W workgroups of one length (fwd ${res.rowsFwd} rows, dkdv ${res.keysBwd} keys, dq ${res.rowsBwd} rows), kernel ms (median of ${res.reps})`];
  for (const pass of PASSES)
    for (const L of [...new Set(res.rows.map((r) => r.L))]) {
      const rs = res.rows.filter((r) => r.pass === pass && r.L === L).sort((a, b) => a.W - b.W);
      if (!rs.length) continue;
      const base = rs[0].ms, places = placesOf(rs);
      out.push(`${pass.padEnd(5)} L=${String(L).padEnd(6)} ${rs.map((r) => `W${r.W} ${fig(r.ms, 3)} (${fig(r.ms / base, 2)})`).join('  ')}  | ${places === null ? 'no step' : `places ${places}`}`);
    }
  // Time against length at each W (three lengths or more): a workgroup's fixed cost and its cost a row, for the whole call (all its waves).
  for (const pass of PASSES)
    for (const W of [...new Set(res.rows.map((r) => r.W))]) {
      const f = fitLength(res.rows.filter((r) => r.pass === pass && r.W === W));
      if (f) out.push(`fit   ${pass.padEnd(5)} W${W}: ${f.fixedUs.toFixed(1)} µs fixed, ${f.perRowNs.toFixed(1)} ns a row or key (worst point ${(100 * f.worst).toFixed(1)}% off)`);
    }
  return out.join('\n');
}
