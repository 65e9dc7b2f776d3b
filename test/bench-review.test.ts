/**
 * bench as an ML engineer runs it (review): flags refused before any device in one line, the results files saying
 * what they are (complete or cut short, the adapter a CPU's, robustness), the tables without NaN, progress in a log.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchCommand, benchMeta, checkSizes, kernelTable, progress, ringTable, saver, stoppedNote } from '../src/bench/run.js';
import type { OutputPlan } from '../src/cli/files.js';
import type { RingRow } from '../src/bench/ring.js';
import type { FlashDevice } from '../src/gpu/device.js';
import { InputError } from '../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'bench-review-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const refusal = (p: Promise<unknown>) => p.then(() => { throw new Error('not refused'); }, (e: unknown) => e as Error);
const TINY = ['--N', '16', '--D', '16', '--heads', '1', '--causal', 'false', '--precision', 'f32', '--no-ring', '--no-memory'];

describe('bench flags refused before any device, in one line', () => {
  const cases: [string, string[], RegExp][] = [
    // 4 timestamps a repeat (forward and backward): a query set past WebGPU's 4096 crashed the process (exit 139).
    ['--reps beyond the timer', [...TINY, '--reps', '100000'], /^--reps: '100000' is not a positive integer up to 1000$/],
    // TP 3 splits none of the sweep's lengths: the memory sweep wrote files with no rows, and refused the next run's.
    ['--memory-tp that splits no length', ['--no-kernels', '--no-ring', '--memory-tp', '3'], /^--memory-tp 3: .*/],
    ['--memory-tp beyond the heads', ['--no-kernels', '--no-ring', '--memory-tp', '64'], /^--memory-tp 64: --num-attention-heads 32 .*is not divisible by --tensor-model-parallel-size 64/],
    // A value given twice measured the point twice (memory --seq-lengths refuses it).
    ['--N twice', [...TINY.slice(2), '--N', '16,32,16'], /^--N: 16 is given twice: give each value once$/],
    ['--layouts twice', ['--no-kernels', '--no-memory', '--layouts', 'zigzag,zigzag'], /^--layouts: zigzag is given twice: give each value once$/],
    // Every head of a call is dispatched at once: past the grid's limit each point failed with advice for the library.
    ['--heads past the grid', [...TINY.filter((x, i, a) => x !== '--heads' && a[i - 1] !== '--heads'), '--heads', '70000'], /^--heads: '70000' is not a positive integer up to 65535$/],
  ];
  for (const [name, argv, why] of cases)
    it(name, async () => {
      const out = join(dir, name.replace(/\W+/g, '-'));
      const e = await refusal(benchCommand([...argv, '--out', out]));
      expect(e).toBeInstanceOf(InputError);
      expect(e.message).toMatch(why);
      expect(existsSync(out)).toBe(false);
    });
});

describe("bench's size check: only the sweeps that run", () => {
  // A device binding at most 128 MiB (lavapipe's); 70000 heads at N = 16, D = 16 take 70 MiB per f32 tensor.
  const dev = { device: { limits: { maxStorageBufferBindingSize: 2 ** 27 } }, adapter: { description: 'test adapter' } } as unknown as FlashDevice;
  const cfg = { B: 1, H: 70000, Ns: [16], Ds: [16], ringNs: [4096], sweeps: { kernels: true, ring: false } } as unknown as Parameters<typeof checkSizes>[1];
  it('--no-ring: the ring\'s default --ring-N 4096 is not checked (it refused the kernel sweep naming it)', () => {
    expect(() => checkSizes(dev, cfg, ['f32'])).not.toThrow();
  });
  it('--no-kernels: the kernel sweep\'s --N is not checked', () => {
    expect(() => checkSizes(dev, { ...cfg, Ns: [4096], ringNs: [16], sweeps: { kernels: false, ring: true } }, ['f32'])).not.toThrow();
  });
  it('a sweep that runs is checked, its flag named', () => {
    expect(() => checkSizes(dev, { ...cfg, sweeps: { kernels: true, ring: true } }, ['f32'])).toThrow(/^--batch 1 --heads 70000 --ring-N 4096 --D 16 needs 17500 MiB per tensor/);
  });
});

describe("bench's ring table", () => {
  const row = { R: 2, layout: 'zigzag', N: 64, B: 1, H: 1, D: 64, causal: true, precision: 'f32', backward: true, fwdWallMs: 9, bwdWallMs: 20.9, gpuKernelMs: 4, unhiddenFraction: 0.13, overlapEfficiency: 0.75, bytesMoved: 1, peakBytesPerRank: [1, 1], imbalance: 1 } as RingRow;
  it('a time it has not (no timestamp queries: gpuKernelMs null) reads -, never NaN or 0.0', () => {
    const lines = ringTable([{ ...row, gpuKernelMs: null, bwdWallMs: null }]);
    expect(lines.join('\n')).not.toMatch(/NaN|Infinity/);
    expect(lines[2]).toMatch(/ 9\.0 +- +- +13\.0%/);
  });
  it('the kernel table keeps its columns in line past a long path (subgroup-matrix+scalar was padded to 15), the ms under its name', () => {
    const k = { pass: 'fwd+bwd', N: 4096, D: 128, causal: true, precision: 'f16', ms: 12.5, tflops: 88.123, peerTflops: null, ratio: null, gemmShare: null, checkErr: 2.1e-4 };
    const lines = kernelTable([{ ...k, path: 'subgroup-matrix+scalar' }, { ...k, pass: 'forward', path: 'scalar', ms: 3.25, peerTflops: 301.4, ratio: 0.292 }] as never);
    for (const col of ['ms', 'TFLOP/s', 'checkErr*']) {
      const end = lines[0].indexOf(col) + col.length;
      expect(lines.slice(1).map((l) => l.slice(0, end).match(/\S+$/)?.[0]), col).toEqual(col === 'ms' ? ['12.500', '3.250'] : col === 'TFLOP/s' ? ['88.123', '88.123'] : ['2.1e-4', '2.1e-4']);
    }
    expect(lines[2]).toMatch(/ 301\.4 +0\.292 +- +2\.1e-4$/);
  });
  it('its columns line up with the header', () => {
    const [, head, line] = ringTable([row]);
    for (const [col, value] of [['fwd ms', '9.0'], ['bwd ms', '20.9'], ['gpu kernels ms', '4.0']])
      expect(line.indexOf(value) + value.length).toBe(head.indexOf(col) + col.length);
  });
});

describe("bench's results say what they are", () => {
  const adapter = { description: 'llvmpipe', vendor: 'mesa', architecture: 'software', device: 'llvmpipe-x' };
  const dev = { adapter, isCPU: true } as unknown as FlashDevice;
  const out = join(dir, 'results');
  const cfg = { outDir: out, robust: true, sweeps: { kernels: true, ring: true } } as unknown as Parameters<typeof saver>[2];
  it('the adapter a CPU, and robustness on (the CSV had robust, the JSON nothing: the command line loses --robust)', () => {
    const meta = benchMeta(dev, ['--quick'], cfg, new Date('2026-12-06T00:00:00Z'));
    expect(meta).toMatchObject({ kind: 'flashring.bench', adapter: 'llvmpipe', cpuAdapter: true, robust: true, command: 'flashring bench --quick' });
  });
  it('"complete": false in every save during the sweeps, true only in the last (an interrupted run\'s files said nothing)', async () => {
    const written: { path: string; data: unknown }[][] = [];
    const plan = { write: async (files: { path: string; data: unknown }[]) => void written.push(files) } as unknown as OutputPlan;
    const state = { kernelRows: [], ringRows: [], failures: [] };
    const save = saver({ kind: 'flashring.bench' }, 'stamp', cfg, undefined, plan, [], state);
    await save();
    await save(true);
    const json = (i: number) => JSON.parse(written[i].find((f) => f.path.endsWith('.json'))!.data as string);
    expect(json(0).complete).toBe(false);
    expect(json(1).complete).toBe(true);
  });
  it('a run stopped by a signal says what the files it leaves hold', () => {
    const state = { kernelRows: [{}, {}, {}] as never[], ringRows: [{}] as never[], failures: [] };
    expect(stoppedNote(state, join(out, 'bench-stamp.json'), { kernels: 12, ring: 6 })).toBe(
      `bench stopped before its end: ${join(out, 'bench-stamp.json')} (and its CSVs) holds what it finished, 3 of 12 kernel rows and 1 of 6 ring points, with "complete": false`);
    expect(stoppedNote({ kernelRows: [], ringRows: [], failures: [] }, 'x.json', { kernels: 3, ring: 0 })).toBe('bench stopped before its end: no point finished, no results written');
  });
});

describe("bench's progress in a log (stderr no terminal)", () => {
  it('a line each time another tenth of a phase is done, naming the next point, and one at its end', () => {
    const was = process.env.FLASHRING_STDERR_TTY;
    process.env.FLASHRING_STDERR_TTY = '0';
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => (lines.push(String(s)), true));
    try {
      for (let i = 0; i < 20; i++) progress(`kernels N=${i}`, i, 20);
      progress('kernels done', 20, 20);
    } finally {
      spy.mockRestore();
      if (was === undefined) delete process.env.FLASHRING_STDERR_TTY;
      else process.env.FLASHRING_STDERR_TTY = was;
    }
    // A long sweep in a log said nothing until its phase ended.
    expect(lines).toHaveLength(10);
    expect(lines[0]).toBe('  2 of 20 points done; next: kernels N=2\n');
    expect(lines[9]).toBe('kernels done (20 points)\n');
    expect(lines.join('')).not.toMatch(/\r/);
  });
});
