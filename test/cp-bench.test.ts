/**
 * The CP bench (bench/cp.ts) at small sizes. The scale run: it generates each rank's shard from
 * global positions itself (no host tensor), so it must place a zigzag shard's two runs where the
 * ring does; its sampled rows (the middle of the sequence, the last rows: rank 0's second run)
 * are checked against the single-device kernel. The steps bench: its step kinds, counts and
 * visible work, which turn its times into the split of p2p's ratio to R = 1. The command line
 * (`node bench/cp-run.mjs`), as the flashring command treats one: usage on --help, an ordinary
 * mistake one line and exit code 2 before any device work, Dawn's adapter warnings hidden. The
 * sweep: every point not run named with why; the R = 1 row's best ratio 1 by construction.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { bestRatios, cpBench } from '../bench/cp.js';
import { testDevices } from './gpu.js';
import { StepsResult } from '../bench/cpSteps.js';
import { PlacesResult, fitLength, placesOf, shapeOf } from '../bench/cpPlaces.js';

describe('bench/cp.ts scale', () => {
  it('a small scale run: sampled rows of both runs of the zigzag shards match the single-device kernel', async () => {
    const [dev] = await testDevices(1);
    if (!dev.hasF16) return expect(process.env.CI).not.toBe('true'); // the scale run is f16
    const out = mkdtempSync(join(tmpdir(), 'flashring-cp-'));
    try {
      expect(await cpBench(['scale', '--N', '1024', '--H', '2', '--D', '16', '--R', '4', '--gpu-gib', '1', '--out', out])).toBe(0);
      const { errors } = JSON.parse(readFileSync(join(out, 'cp-scale.json'), 'utf8')) as { errors: Record<string, number> };
      expect(Object.keys(errors)).toEqual(expect.arrayContaining(['o@960', 'dq@960', 'dk@512.h0']));
      for (const [k, e] of Object.entries(errors)) expect(e, k).toBeLessThanOrEqual(/^(o|lse)@/.test(k) ? 5e-3 : 2e-2);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('bench/cp.ts steps', () => {
  it("--out's result files: another program's file there is refused before any device, kept as it was; --force overwrites it; an earlier run's is overwritten", async () => {
    const [dev] = await testDevices(1);
    if (!dev.hasF16) return expect(process.env.CI).not.toBe('true'); // the steps are f16
    const out = mkdtempSync(join(tmpdir(), 'flashring-cp-')), file = join(out, 'cp-steps-6.json');
    const err = vi.spyOn(console, 'error').mockImplementation(() => {}), log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const args = ['steps', '--N', '6', '--H', '2', '--D', '16', '--R', '4', '--reps', '1', '--out', out];
    try {
      writeFileSync(file, '{"mine": 1}');
      expect(await cpBench(args)).toBe(2);
      expect(String(err.mock.calls.at(-1)?.[0])).toMatch(/^cp-run steps: --out .*cp-steps-6\.json exists and is not a cp-run result .*pass --force to overwrite it$/);
      expect(readFileSync(file, 'utf8')).toBe('{"mine": 1}');
      expect(await cpBench([...args, '--force'])).toBe(0);
      expect(JSON.parse(readFileSync(file, 'utf8')).kind).toBe('flashring.cp-steps');
      expect(await cpBench(args)).toBe(0);   // its own result of the run before: overwritten
      expect(readdirSync(out).sort()).toEqual(['cp-steps-6.json']);   // no temporary left
    } finally {
      err.mockRestore();
      log.mockRestore();
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('a step kind with no visible work (N < 2R) is named as skipped, not dropped silently', async () => {
    const [dev] = await testDevices(1);
    if (!dev.hasF16) return expect(process.env.CI).not.toBe('true'); // the steps are f16
    const out = mkdtempSync(join(tmpdir(), 'flashring-cp-'));
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(await cpBench(['steps', '--N', '6', '--H', '2', '--D', '16', '--R', '4', '--reps', '1', '--out', out])).toBe(0);
      const res = JSON.parse(readFileSync(join(out, 'cp-steps-6.json'), 'utf8')) as StepsResult;
      expect(res.skipped).toEqual([{ R: 4, kind: 'j>r', count: 6, why: expect.stringMatching(/no visible work at N=6/) }]);
      expect(String(log.mock.calls.at(-1)?.[0])).toMatch(/^skipped R=4 j>r \(6 steps\): no visible work/m);
    } finally {
      log.mockRestore();
      rmSync(out, { recursive: true, force: true });
    }
  });


  it('times each kind of zigzag step beside a plain call of the same visible work, and sums them over the ring', async () => {
    const [dev] = await testDevices(1);
    if (!dev.hasF16) return expect(process.env.CI).not.toBe('true'); // the steps are f16
    const out = mkdtempSync(join(tmpdir(), 'flashring-cp-'));
    try {
      const err = vi.spyOn(console, 'error');
      expect(await cpBench(['steps', '--N', '256', '--H', '2', '--D', '16', '--R', '2,4', '--reps', '2', '--out', out])).toBe(0);
      // Its progress says R = 1's one call once (it read 'steps R=1 R=1: …').
      expect(err.mock.calls.map((c) => String(c[0])).filter((l) => l.startsWith('steps R=1'))).toEqual([expect.stringMatching(/^steps R=1 \(one call\): ring [\d.]+ ms, plain [\d.]+ ms$/)]);
      err.mockRestore();
      const res = JSON.parse(readFileSync(join(out, 'cp-steps-256.json'), 'utf8')) as StepsResult;
      expect(res.rows.map((r) => `${r.R} ${r.kind} ${r.count}`)).toEqual(['1 R=1 1', '2 diagonal 2', '2 j<r 1', '2 j>r 1', '4 diagonal 4', '4 j<r 6', '4 j>r 6']);
      // Visible pairs: chunks of c = N/2R tokens; a shard's own chunk pair sees two triangles and a square, other pairs one shard × one chunk.
      for (const r of res.rows) {
        const c = 256 / (2 * r.R);
        expect(r.visible, `${r.R} ${r.kind}`).toBe(r.kind === 'R=1' ? (256 * 257) / 2 : r.kind === 'diagonal' ? c * (2 * c + 1) : 2 * c * c);
        for (const ms of [...Object.values(r.ring), ...Object.values(r.plain)]) expect(ms, `${r.R} ${r.kind}`).toBeGreaterThan(0);
      }
      // Every step of the ring counted once: R² steps per R.
      for (const R of [2, 4]) expect(res.rows.filter((r) => r.R === R).reduce((a, r) => a + r.count, 0)).toBe(R * R);
      expect(res.totals.map((t) => t.R)).toEqual([2, 4]);
      for (const t of res.totals) expect(t.ringMs).toBeGreaterThan(0);
      expect(res.skipped).toEqual([]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('bench/cp.ts places', () => {
  it('each pass runs W workgroups of one length: one row block (forward, dq) or key block (dkdv) per head; every (pass, L, W) timed, the places read off', async () => {
    const own = { rowsFwd: 128, rowsBwd: 64, keysBwd: 32 };
    expect(shapeOf('fwd', 7, 512, 64, own)).toEqual({ B: 1, Hq: 7, Hkv: 7, Nq: 128, Nk: 512, D: 64 });
    expect(shapeOf('dq', 7, 512, 64, own)).toEqual({ B: 1, Hq: 7, Hkv: 7, Nq: 64, Nk: 512, D: 64 });
    expect(shapeOf('dkdv', 7, 512, 64, own)).toEqual({ B: 1, Hq: 7, Hkv: 7, Nq: 512, Nk: 32, D: 64 });
    // The step read off a sweep: the W before the first time over 1.5× the previous (the H200's D = 64 dkdv at L = 2048).
    const w64 = [[33, 0.216], [66, 0.265], [132, 0.283], [133, 0.297], [264, 0.304], [265, 0.577], [528, 0.59]].map(([W, ms]) => ({ W, ms }));
    expect(placesOf(w64)).toBe(264);
    expect(placesOf(w64.slice(0, 5))).toBeNull();
    // The length fit: an exact line comes back exact; fewer than three lengths give none.
    expect(fitLength([256, 1024, 4096].map((L) => ({ L, ms: 0.05 + 1.5e-4 * L })))).toEqual({ fixedUs: expect.closeTo(50, 6), perRowNs: expect.closeTo(150, 6), worst: expect.closeTo(0, 9) });
    expect(fitLength([{ L: 1, ms: 1 }, { L: 2, ms: 2 }])).toBeNull();
    const [dev] = await testDevices(1);
    if (!dev.hasF16) return expect(process.env.CI).not.toBe('true'); // f16 kernels
    const out = mkdtempSync(join(tmpdir(), 'flashring-cp-'));
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const err = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect(await cpBench(['places', '--N', '32,64', '--H', '1,3', '--D', '16', '--reps', '1', '--out', out])).toBe(0);
      const res = JSON.parse(readFileSync(join(out, 'cp-places-D16.json'), 'utf8')) as PlacesResult;
      expect(res.rows.map((r) => `${r.pass} ${r.L} ${r.W}`)).toEqual(['fwd', 'dkdv', 'dq'].flatMap((p) => [32, 64].flatMap((L) => [1, 3].map((W) => `${p} ${L} ${W}`))));
      for (const r of res.rows) expect(r.ms, `${r.pass} ${r.L} ${r.W}`).toBeGreaterThan(0);
      const table = String(log.mock.calls.at(-1)?.[0]).split('\n');
      expect(table.filter((l) => /^(fwd|dkdv|dq) +L=(32|64) +W1 [\d.]+ \(1\.00\) +W3 [\d.]+ \([\d.]+\) +\| (no step|places 1)$/.test(l))).toHaveLength(6);
    } finally {
      log.mockRestore();
      err.mockRestore();
      rmSync(out, { recursive: true, force: true });
    }
  });
});

const RUN = join(__dirname, '..', 'bench', 'cp-run.mjs');
const cpRun = (args: string[]) =>
  promisify(execFile)(process.execPath, [RUN, ...args], { timeout: 60_000 }).then(
    (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
    (e) => ({ code: e.code as number, out: e.stdout as string, err: e.stderr as string }),
  );
const lines = (text: string) => text.split('\n').filter((l) => l !== '');

describe('node bench/cp-run.mjs: the command line', () => {
  it('--help prints the usage: every mode with its options, defaults and a small example (one for a CPU adapter); exit 0', async () => {
    const r = await cpRun(['--help']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/^usage: node bench\/cp-run\.mjs <mode>/);
    for (const m of ['sweep', 'scale', 'steps', 'places', 'procs', 'table']) expect(r.out).toMatch(new RegExp(`^  ${m} `, 'm'));
    expect(r.out).toContain('--N 16384  --H 16  --D 128  --R 1,2,4,8  --schemes p2p,all_gather,a2a  --budget-s none');
    expect(r.out).toContain('node bench/cp-run.mjs sweep --N 64 --H 4 --D 16 --R 1,2,4');
    for (const o of ['--N', '--H', '--D', '--R', '--budget-s', '--gpu-gib', '--reps', '--latency-us', '--gpu-per-rank', '--out']) expect(r.out).toContain(`  ${o} `);
  });

  it('progress read by something that stops early (stderr closed) ends the bench quietly, exit 0', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [RUN, 'sweep', '--N', '64', '--H', '4', '--D', '16', '--R', '1,2', '--out', mkdtempSync(join(tmpdir(), 'cp-epipe-'))], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.destroy(); // the progress lines' reader is gone: the first one meets a closed pipe
    const code = await new Promise((res) => child.on('close', res));
    expect(code).toBe(0);
  });

  it('with no mode prints the usage on stderr and exits 2 (the defaults are GPU-host sizes: nothing starts unasked)', async () => {
    const r = await cpRun([]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^usage: /);
    expect(r.out).toBe('');
  });

  it('an unknown mode, an unknown option or a bad number is one line and exit 2, no stack trace', async () => {
    const cases: [string[], RegExp][] = [
      [['swep'], /^cp-run: unknown mode 'swep': use sweep, scale, steps, places, procs, table \(see node bench\/cp-run\.mjs --help\)$/],
      [['sweep', '--bogus', '1'], /^cp-run: unknown option '--bogus' \(see node bench\/cp-run\.mjs --help\)$/],
      [['sweep', '--N', 'abc'], /^cp-run sweep: --N must be a positive integer \(tokens\), got 'abc'$/],
    ];
    const rs = await Promise.all(cases.map(([a]) => cpRun(a)));
    rs.forEach((r, i) => {
      expect(r.code, cases[i][0].join(' ')).toBe(2);
      expect(lines(r.err), cases[i][0].join(' ')).toHaveLength(1);
      expect(r.err.trim()).toMatch(cases[i][1]);
      expect(r.out).toBe('');
    });
  });
});

describe('bench/cp.ts options checked up front', () => {
  afterEach(() => vi.restoreAllMocks());
  // Each: the arguments (small shapes besides the bad value, so that a check gone missing fails
  // fast instead of starting a GPU-host-sized run), and the one line after `cp-run <mode>: `.
  const cases: [string, RegExp][] = [
    ['sweep --N 0 --H 2 --D 16 --R 1', /--N must be a positive integer \(tokens\), got '0'/],
    ['sweep --N 64 --H 2.5 --D 16 --R 1', /--H must be a positive integer \(heads\), got '2.5'/],
    ['sweep --N 64 --H 2 --D 12 --R 1', /--D must be a multiple of 8 from 8 to 256 \(head dim\), got '12'/],
    ['sweep --N 64 --H 2 --D 512 --R 1', /--D must be a multiple of 8 from 8 to 256/],
    ['sweep --N 64 --H 2 --D 16 --R 1,x', /--R must be a comma list, each a positive integer \(ranks\), got '1,x'/],
    ['sweep --N 64 --H 2 --D 16 --R 1,2,2', /--R '1,2,2' names a value twice/],
    ['sweep --N 4 --H 2 --D 16 --R 1,8', /--R 8 is more than --N 4 tokens/],
    ['sweep --N 64 --H 2 --D 16 --R 1 --budget-s -5', /--budget-s must be a positive number of seconds, got '-5'/],
    ['sweep --N 64 --H 2 --D 16 --R 1 --reps 3', /--reps is not an option of sweep/],
    ['sweep --N 64 --H 2 --D 16 --R 1 --schemes p2p,ring', /--schemes: 'ring' is not a scheme of the sweep: give a comma list of p2p, all_gather, a2a/],
    ['sweep --N 64 --H 2 --D 16 --R 1 --schemes a2a,a2a', /--schemes 'a2a,a2a' names a scheme twice/],
    ['steps --N 64 --H 2 --D 16 --R 2 --schemes p2p', /--schemes is not an option of steps/],
    ['steps --N 64 --H 2 --D 16 --R 2 --reps 0', /--reps must be a positive integer, got '0'/],
    ['scale --N 1024 --H 2 --D 16 --R 4 --gpu-gib abc', /--gpu-gib must be a positive number of GiB, got 'abc'/],
    ['scale --N 1024 --H 2 --D 16 --R 2,4 --gpu-gib 1', /--R must be a positive integer \(ranks\), got '2,4'/],
    ['scale --N 100 --H 2 --D 16 --R 4 --gpu-gib 1', /--N must be an even integer >= 128 for scale/],
    ['scale --gpu-gib 1', /the scale run needs 48\.1 GiB on the device .* more than 90% of --gpu-gib 1/],
    ['procs --N 64 --H 2 --D 16 --R 2 --latency-us -1', /--latency-us must be a number of microseconds, 0 or more, got '-1'/],
    ['procs --N 64,abc --H 2 --D 16 --R 2', /--N must be a comma list, each a positive integer \(tokens\), got '64,abc'/],
  ];
  for (const [args, msg] of cases)
    it(`${args}: one line, exit 2`, async () => {
      const err = vi.spyOn(console, 'error').mockImplementation(() => {});
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      const out = mkdtempSync(join(tmpdir(), 'flashring-cp-'));
      try {
        expect(await cpBench([...args.split(' '), '--out', out])).toBe(2);
        expect(err).toHaveBeenCalledTimes(1);
        expect(String(err.mock.calls[0][0])).toMatch(new RegExp(`^cp-run ${args.split(' ')[0]}: ${msg.source}`));
        expect(log).not.toHaveBeenCalled();
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });

  it('table with no results in --out: one line, exit 2 (was an empty table)', async () => {
    const err = vi.spyOn(console, 'error').mockImplementation(() => {});
    const out = mkdtempSync(join(tmpdir(), 'flashring-cp-'));
    try {
      expect(await cpBench(['table', '--out', out])).toBe(2);
      expect(err).toHaveBeenCalledTimes(1);
      expect(String(err.mock.calls[0][0])).toMatch(/^cp-run table: --out .* holds neither cp-sweep\.json nor cp-scale\.json/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

describe('bench/cp.ts sweep', () => {
  it("the best columns: R=1's best is the fastest of every R=1 run (its own and the paired ones), so its ratio is exactly 1", () => {
    // A paired R=1 run (8) faster than the baseline's own repeats (10, 12): the baseline row read 1.25 against itself.
    const rows = [
      { R: 1, kernelMsRuns: [10, 12], pairedR1Ms: [], kernelMsBest: null, vsR1Best: null },
      { R: 2, kernelMsRuns: [20, null, 18], pairedR1Ms: [9, 8, 11], kernelMsBest: null, vsR1Best: null },
    ];
    bestRatios(rows);
    expect(rows.map((r) => [r.kernelMsBest, r.vsR1Best])).toEqual([[8, 1], [18, 18 / 8]]);
  });

  it('a point past --budget-s is named as skipped with the time used and the last point\'s, in ms below a second (it read "0 s used")', async () => {
    const [dev] = await testDevices(1);
    if (!dev.hasF16) return expect(process.env.CI).not.toBe('true'); // the sweep is f16
    const out = mkdtempSync(join(tmpdir(), 'flashring-cp-'));
    try {
      const r = await cpRun(['sweep', '--N', '64', '--H', '4', '--D', '16', '--R', '1,2', '--schemes', 'p2p', '--budget-s', '0.001', '--out', out]);
      expect(r.code, r.err).toBe(0);
      const why = /^skipped R=2 p2p: would end past the 0\.001 s budget \((\S+ m?s) used, the last point took (\S+ m?s)\)$/m.exec(r.out);
      expect(why, r.out).not.toBeNull();
      for (const t of why!.slice(1)) expect(t).toMatch(/^(?!0 s$|0\.0 s$)\d[\d.e-]* m?s$/);
      const res = JSON.parse(readFileSync(join(out, 'cp-sweep.json'), 'utf8'));
      expect(res.skipped).toEqual([{ R: 2, scheme: 'p2p', why: expect.stringMatching(/budget/) }]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('a tiny sweep through cp-run.mjs: no Dawn warnings; only the --schemes asked; a2a at R=3 with 4 heads named as skipped (table and JSON); R=1 best 1.00', async () => {
    const [dev] = await testDevices(1);
    if (!dev.hasF16) return expect(process.env.CI).not.toBe('true'); // the sweep is f16
    const out = mkdtempSync(join(tmpdir(), 'flashring-cp-'));
    try {
      const r = await cpRun(['sweep', '--N', '64', '--H', '4', '--D', '16', '--R', '1,3', '--schemes', 'a2a,p2p', '--out', out]);
      expect(r.code, r.err).toBe(0);
      expect(r.err).not.toMatch(/Warning: maxDynamic/);
      // The table opens with the adapter, a CPU one said to be one (its timings are no GPU's figures).
      expect(r.out.split('\n')[0]).toMatch(dev.isCPU ? /^adapter: .* \(a CPU adapter: its timings are not GPU performance figures\)$/ : /^adapter: (?!.*CPU adapter)/);
      expect(r.out).toMatch(/^skipped R=3 a2a: a2a splits heads over 3 ranks: .* must both be divisible by 3: .* take any$/m);
      const res = JSON.parse(readFileSync(join(out, 'cp-sweep.json'), 'utf8'));
      expect(res.skipped).toEqual([{ R: 3, scheme: 'a2a', why: expect.stringMatching(/divisible by 3/) }]);
      expect(res.rows.map((x: { R: number; scheme: string }) => `${x.R} ${x.scheme}`)).toEqual(['1 p2p', '3 p2p']);
      expect(res.schemes).toEqual(['a2a', 'p2p']);
      expect(r.out).toMatch(/^not asked \(--schemes a2a,p2p\): all_gather$/m);
      const r1Runs = [...res.rows[0].kernelMsRuns, ...res.rows.flatMap((x: { pairedR1Ms: number[] }) => x.pairedR1Ms)];
      expect(res.rows[0].kernelMsBest).toBe(Math.min(...r1Runs));
      expect(res.rows[0].vsR1Best).toBe(1);
      expect(r.out).toMatch(/^1  baseline .* 1\.00( +\S+){5}$/m); // the vs R=1 best column: five columns follow it
      for (const x of res.rows.slice(1)) {
        expect(x.kernelMsBest).toBe(Math.min(...x.kernelMsRuns));
        expect(x.vsR1Best).toBeCloseTo(x.kernelMsBest / Math.min(...r1Runs), 12);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
