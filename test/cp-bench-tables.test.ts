/**
 * The CP bench's tables (`node bench/cp-run.mjs` sweep, scale, steps, places, procs, table) as a person reads them, from
 * results made up to show what a run on a CPU adapter (lavapipe) at tiny sizes gave: each table's first line names the
 * adapter and says when it is a CPU, whose timings are no GPU's performance figures; columns line up however wide a cell
 * (the sweep's runs, the steps' TFLOP/s); a value too small for its decimals is not written as 0 (peak MiB, GiB, s); an
 * absent one (no timestamps, no transfer between rank processes) reads '-' or 'n/a', never NaN, undefined or 0.00.
 */
import { describe, expect, it } from 'vitest';
import { table } from '../bench/cp.js';
import { StepsResult, stepsTable } from '../bench/cpSteps.js';
import { PlacesResult, placesTable } from '../bench/cpPlaces.js';
import { ProcRow, procRow, procsTable } from '../bench/cpProcs.js';
import { RingTimeline } from '../src/cp/launch/ringAttention.js';

const CPU = 'llvmpipe: Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6) 0.0.1';
const CPU_NOTE = /^adapter: llvmpipe: Mesa .* \(a CPU adapter: its timings are not GPU performance figures\)$/;

/** Columns line up: under each header label, every row's cell ends where the label ends (`right`) or starts where it starts. */
function columnsLineUp(lines: string[], labels: { label: string; right: boolean }[]): void {
  const [head, ...rows] = lines;
  for (const { label, right } of labels) {
    const at = head.indexOf(label);
    expect(at, label).toBeGreaterThanOrEqual(0);
    for (const r of rows) {
      if (right) {
        const end = at + label.length;
        expect(r[end - 1], `${label} in '${r}'`).toMatch(/\S/);
        expect(r[end] ?? ' ', `${label} in '${r}'`).toBe(' ');
      } else {
        expect(r[at], `${label} in '${r}'`).toMatch(/\S/);
        expect(r[at - 1] ?? ' ', `${label} in '${r}'`).toBe(' ');
      }
    }
  }
}

const NEVER = /NaN|undefined|Infinity|null|\b0\.00 GiB|\b0\.0 s\b/;

function sweepRow(R: number, scheme: string, runs: (number | null)[], peakBytes: number, err: number) {
  const k = runs.every((x) => x !== null) ? [...runs].sort((a, b) => a! - b!)[runs.length >> 1] : null;
  return {
    R, scheme, layout: 'zigzag', N: 64, H: 4, D: 16, fwdKernelMs: k, bwdKernelMs: k, kernelMs: k, kernelMsRuns: runs, vsR1: k === null ? null : k / 1.4,
    vsR1Paired: R === 1 || k === null ? null : 3.17, pairedRatios: [], pairedR1Ms: R === 1 ? [] : [1.3, 1.5], kernelMsBest: null, vsR1Best: null,
    fwdWallMs: 3, bwdWallMs: 4, warmUpS: 1, maxPeakBytesPerRank: peakBytes, bytesMovedPerRank: 1000,
    predicted: { link: 'nvlink-h200', totalMs: 0.0354, stepMs: [0.01, 0.0254], commFraction: 0.0004, tflopsPerGpu: 0.000085 }, maxErrVsR1: err,
  };
}

describe("the CP bench's tables", () => {
  it('sweep: the adapter line, columns aligned however wide the runs, a small peak not 0, the baseline no error against itself, no timestamps n/a', () => {
    const rows = [
      sweepRow(1, 'p2p', [1.4, 1.4, 2.8, 1.3, 1.4], 52_000, 0),
      sweepRow(4, 'p2p', [14.1, 14.0, 17.6, 26.1, 13.4], 120_000, 2.4e-7),
      sweepRow(4, 'a2a', [null, null, null, null, null], 80_000, 0),
    ];
    const text = table({ adapter: CPU, rows, skipped: [], repeats: 5, budgetS: null } as never, null);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(CPU_NOTE);
    const t = lines.slice(2, 6);
    columnsLineUp(t, [{ label: 'runs', right: false }, ...['vs R=1', 'paired', 'pred ms', 'comm%', 'TFLOP/s/GPU', 'peak MiB/rank', 'err vs R=1'].map((label) => ({ label, right: true }))]);
    const cells = (l: string) => l.trim().split(/\s+/);
    expect(cells(t[1]).slice(-2)).toEqual(['0.050', '-']); // 52 kB: 0.05 MiB, not 0; R=1 is the reference itself
    expect(cells(t[2]).slice(-2)).toEqual(['0.11', '2.4e-7']);
    expect(t[3]).toMatch(/^4 +a2a +n\/a +n\/a n\/a n\/a n\/a n\/a +n\/a/);
    expect(text).not.toMatch(NEVER);
    // Not named where the file does not name it (results written before the bench did).
    expect(table({ rows, skipped: [], repeats: 5, budgetS: null } as never, null).split('\n')[0]).toBe('adapter: not recorded (a result written before the bench named it)');
  });

  it('scale: ms below a second, bytes in the unit they fill, no kernel time (no timestamps) as -, a GPU named without the CPU note', () => {
    const steps = (phase: 'forward' | 'backward', gpu: number | null) => [{ phase, step: 0, rank: 0, gpuComputeMs: gpu }];
    const timeline = {
      R: 4, scheme: 'p2p', layout: 'zigzag', ranks: [{ rank: 0, peakBytes: 180_000 }],
      phases: [{ phase: 'forward', wallMs: 120, steps: steps('forward', null) }, { phase: 'backward', wallMs: 140, steps: steps('backward', null) }],
      predicted: { totalMs: 2.5, commFraction: 0.0002, tflopsPerGpu: 0.00222 },
    } as unknown as RingTimeline;
    const sc = { adapter: CPU, s: { B: 1, Hq: 2, Hkv: 2, Nq: 1024, Nk: 1024, D: 16 }, timeline, wallMs: 400, devicePeak: 700_000, perRankEstimate: 170_000, errors: { 'o@480': 2e-4 } };
    const text = table(null, sc as never);
    expect(text.split('\n')[0]).toMatch(CPU_NOTE);
    expect(text).toContain('  wall 400.0 ms (forward 120.0 ms, backward 140.0 ms); kernels - + - (no GPU timestamps)');
    expect(text).toContain('  peak bytes: device 683.59 KiB, per rank max 175.78 KiB (estimate 166.02 KiB)');
    expect(text).toMatch(/\n {2}predicted nvlink-h200: 2\.5 ms, comm 0\.020%, 0\.00222 TFLOP\/s per GPU$/);
    expect(text).not.toMatch(NEVER);
    expect(table(null, { ...sc, adapter: 'NVIDIA H200' } as never).split('\n')[0]).toBe('adapter: NVIDIA H200');
  });

  it('steps: the adapter line; the TFLOP/s columns aligned when a figure is longer (0.000743); sub-millisecond passes not 0.000', () => {
    const ms = (x: number) => ({ fwd: x, dkdv: 2 * x, dq: x });
    const res: StepsResult & { adapter: string } = {
      adapter: CPU, N: 256, H: 2, D: 16, reps: 2, skipped: [],
      rows: [
        { R: 1, kind: 'R=1', count: 1, visible: 32896, ring: ms(2.186), plain: ms(2.186) },
        { R: 2, kind: 'j>r', count: 1, visible: 8192, ring: { fwd: 0.499, dkdv: 3.082, dq: 0.444 }, plain: ms(0.45) },
        { R: 4, kind: 'diagonal', count: 4, visible: 2080, ring: ms(0.0004), plain: ms(0.0004) },
      ],
      totals: [{ R: 2, ringMs: 10.2, plainMs: 8.3, r1Ms: 7.2 }, { R: 4, ringMs: 0.004, plainMs: 0.004, r1Ms: 7.2 }],
    };
    const lines = stepsTable(res).split('\n');
    expect(lines[0]).toMatch(CPU_NOTE);
    columnsLineUp(lines.slice(2, 6), ['count', 'ring fwd', 'dq', 'plain fwd', 'TFLOP/s fwd ring/plain', 'bwd ring/plain'].map((label) => ({ label, right: true })));
    expect(lines[5]).toMatch(/^4 +diagonal +4 +0\.00040 +0\.00080 +0\.00040 /);
    columnsLineUp(lines.slice(6, 9), ['plain calls ms', 'R=1 ms', 'ring/R=1'].map((label) => ({ label, right: true })));
    expect(lines[8]).toMatch(/^4 +0\.0040 +0\.0040 +7\.2 /);
    expect(lines.join('\n')).not.toMatch(NEVER);
  });

  it('places: the adapter line first, then the rows as before', () => {
    const res: PlacesResult & { adapter: string } = {
      adapter: CPU, D: 16, reps: 2, tiles: 'fwd Br64 | bwd Br32', rowsFwd: 64, rowsBwd: 32, keysBwd: 32,
      rows: [{ pass: 'fwd', D: 16, W: 1, L: 64, ms: 0.191 }, { pass: 'fwd', D: 16, W: 2, L: 64, ms: 0.0002 }],
    };
    const lines = placesTable(res).split('\n');
    expect(lines[0]).toMatch(CPU_NOTE);
    expect(lines[2]).toBe('fwd   L=64     W1 0.191 (1.00)  W2 0.00020 (0.0010)  | no step');
  });

  it('procs: one rank moves nothing between processes: no staging bandwidth and no prediction (-, was 0.00 and NaN); the ranks\' adapters named', () => {
    const tl = (bytes: number) => ({
      adapters: [CPU], R: 1, summary: { unhiddenFraction: 0 },
      phases: [{ phase: 'forward', wallMs: 6.8, steps: [{ rank: 0, computeMs: 0.3, transferMs: 0.2, idleMs: 0, transferBytes: bytes, flops: 1e6 }] }],
    }) as unknown as RingTimeline;
    const one = procRow(64, 1, 'p2p', [tl(0), tl(0), tl(0)]);
    expect(one.stagingGbps).toBeNull();
    const two = procRow(64, 2, 'p2p', [tl(4096), tl(4096), tl(4096)]);
    expect(two.stagingGbps).toBeCloseTo((4096 * 8) / 0.2e-3 / 1e9, 9);
    const rows: ProcRow[] = [one, { ...two, predicted: { totalMs: 17.4, commFraction: 0.3, tflopsPerGpu: 0.0002, link: { gbps: two.stagingGbps!, latencyUs: 10 } }, predictedVsMeasured: 0.54 }];
    const lines = procsTable(rows).split('\n');
    expect(lines[0]).toMatch(CPU_NOTE);
    columnsLineUp(lines.slice(1, 4), ['wall ms', 'comm %', 'staging Gbit/s', 'predicted ms', 'pred/meas'].map((label) => ({ label, right: true })));
    expect(lines[2]).toMatch(/^64 +1 +p2p +6\.8 +0\.0 +\S+ +- +- +- +0\.30\/0\.20\/0$/);
    expect(lines[3]).toMatch(/ 0\.164 +17\.4 +0\.54 +0\.30\/0\.20\/0  0\/0\/0$/);
    expect(lines.join('\n')).toMatch(/\n- = no bytes went between rank processes \(R=1\): no staging bandwidth, so no prediction at it$/);
    expect(lines.join('\n')).not.toMatch(NEVER);
  });
});
