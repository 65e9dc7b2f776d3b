/** The `flashring` command end to end, as a user runs it (a child process, .npy files in and out). */
import { describe, expect, it, onTestFinished } from 'vitest';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { encodeNpy, parseNpy } from '../src/cli/npy.js';
import { OUTPUT_KINDS } from '../src/cli/files.js';
import { RUN_RECORD, recordLists } from '../src/cli/outputs.js';
import { referenceForward, referenceBackward } from '../src/reference/attention.js';
import { relErr, TOL } from '../src/reference/compare.js';
import { makeInputs, SEED } from './cases.js';
import { fromHalfArray, roundToHalf, toHalfArray } from '../src/f16.js';
import { gpuPerRankWrapper } from '../src/cp/launch/processRanks.js';
import { timelineBound } from '../src/cli/timelineBound.js';
import { resolveScheme } from '../src/cp/schemes/registry.js';
import { nodeGPU } from '../src/gpu/node.js';

const run = promisify(execFile);
const BIN = join(__dirname, '..', 'bin', 'flashring.mjs');
const cli = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [BIN, ...args], { timeout: 120_000, env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
    (e) => ({ code: e.code as number, out: e.stdout as string, err: e.stderr as string }),
  );

/** The host can give each of R ranks its own GPU (or has none to hide: CPU), as --gpu-per-rank checks it. */
const hasGpusFor = (R: number) => {
  try {
    gpuPerRankWrapper(R);
    return true;
  } catch {
    return false;
  }
};

/**
 * Whether the adapter the command picks (acquireDevices asks for high-performance) offers shader-f16, asked of
 * Dawn here: the oracle for what float16 inputs give, not the command's own note (a wrong "no shader-f16" and
 * f32 outputs would agree with that).
 */
const adapterHasF16 = async () =>
  !!(await (await nodeGPU()).requestAdapter({ powerPreference: 'high-performance' }))?.features.has('shader-f16');

/** The bound of a p2p --timeline file with the backward, from the run's facts as the file gives them. */
function writtenBound(file: string): number {
  const tl = JSON.parse(readFileSync(file, 'utf8'));
  const { scheme, steps } = resolveScheme('p2p', tl.R, tl.shape);
  return timelineBound({ R: tl.R, mode: tl.mode, pipelined: false, scheme, layout: tl.layout, precision: tl.precision, shape: tl.shape, steps, backward: true, adapters: tl.adapters });
}

describe('flashring attention', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flashring-cli-'));
  const s = { B: 1, Hq: 2, Hkv: 1, Nq: 40, Nk: 40, D: 16 };
  const x = makeInputs(s, SEED + 77);
  const save = (name: string, data: Float32Array, H: number) => writeFileSync(join(dir, name), encodeNpy({ dtype: 'f4', shape: [1, H, 40, 16], data }));
  save('q.npy', x.q, 2); save('k.npy', x.k, 1); save('v.npy', x.v, 1); save('do.npy', x.dout, 2);
  const ref = referenceForward(s, x.q, x.k, x.v, { causal: true });
  const refB = referenceBackward(s, x.q, x.k, x.v, x.dout, { causal: true });
  const load = (out: string, n: string) => Float64Array.from(parseNpy(new Uint8Array(readFileSync(join(out, `${n}.npy`)))).data as Float32Array);

  // The ring's timeline goes into the --out folder the run itself creates (it does not exist before).
  for (const extra of [[], ['--cp', '3', '--layout', 'striped', '--timeline', join(dir, 'ring', 't.json')],
    ['--cp', '2', '--cp-mode', 'processes', '--gpu-per-rank', '--timeline', join(dir, 'procs', 't.json')]]) {
    const what = !extra.length ? 'one device' : extra.includes('processes') ? 'two rank processes' : 'ring of 3';
    it(`writes O, LSE and gradients matching the reference (${what})`, async () => {
      const out = join(dir, !extra.length ? 'single' : extra.includes('processes') ? 'procs' : 'ring');
      const r = await cli(['attention', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy'), '--do', join(dir, 'do.npy'),
        '--causal', '--precision', 'f32', '--out', out, ...extra]);
      if (extra.includes('--gpu-per-rank') && !hasGpusFor(2)) {
        // A host with NVIDIA GPUs but fewer than the ranks: refused up front, one line, exit 2.
        expect(r.code, r.err).toBe(2);
        expect(r.err).toMatch(/one GPU per rank: 2 ranks need \/dev\/nvidia0 … \/dev\/nvidia1, but this host has /);
        return;
      }
      expect(r.code, r.err).toBe(0);
      expect(relErr(load(out, 'o'), ref.o)).toBeLessThanOrEqual(TOL.f32.out);
      expect(relErr(load(out, 'lse'), ref.lse)).toBeLessThanOrEqual(TOL.f32.out);
      for (const g of ['dq', 'dk', 'dv'] as const) expect(relErr(load(out, g), refB[g]), g).toBeLessThanOrEqual(TOL.f32.grad);
      expect(parseNpy(new Uint8Array(readFileSync(join(out, 'dk.npy')))).shape).toEqual([1, 1, 40, 16]);
      if (extra.length) expect(JSON.parse(readFileSync(join(out, 't.json'), 'utf8')).kind).toBe('flashring.timeline');
      // What a rerun finds there reads as this command's own output, so it may be overwritten (src/cli/files.ts).
      if (extra.length) expect(OUTPUT_KINDS.timeline.looks(readFileSync(join(out, 't.json'), 'latin1'))).toBe(true);
      // Its size within the bound the room check counted (src/cli/timelineBound.ts), with the adapter names it lists.
      if (extra.length) expect(readFileSync(join(out, 't.json')).length).toBeLessThanOrEqual(writtenBound(join(out, 't.json')));
      expect(recordLists(readFileSync(join(out, RUN_RECORD), 'utf8'))).toEqual(['o.npy', 'dq.npy', 'dk.npy', 'dv.npy', 'lse.npy']);
      // The record says what made the arrays: the inputs, the mask, the scale used (1/√16), the ring's settings.
      const ring = !extra.length ? null : extra.includes('processes') ? { ranks: 2, scheme: 'p2p', layout: 'zigzag', mode: 'processes', gpuPerRank: true } : { ranks: 3, scheme: 'p2p', layout: 'striped', mode: 'one-device' };
      const record = JSON.parse(readFileSync(join(out, RUN_RECORD), 'utf8'));
      expect(record.run).toEqual({
        inputs: Object.fromEntries(['q', 'k', 'v', 'do'].map((n) => [n, join(dir, `${n}.npy`)])), causal: true, window: null, documents: null, scale: 0.25, precisionRequest: 'f32', ring,
      });
      // And what it ran on, under bench's JSON's names: the adapter its header names, and Dawn's robustness transform (off here).
      expect(Object.keys(record)).toEqual(['kind', 'version', 'createdAt', 'files', 'shape', 'precision', 'adapter', 'robust', 'run']);
      expect(record.adapter).toBe(/^attention .* on (.*)$/m.exec(r.out)![1]);
      expect(record.robust).toBe(process.env.FLASHRING_ROBUST === '1');
      // Results on stdout; stderr (not a terminal here) has no carriage-return progress, one line per finished phase.
      expect(r.out).toMatch(extra.length ? /^attention \{"B":1,"Hq":2,"Hkv":1,"Nq":40,"Nk":40,"D":16\} causal=true, CP R=\d .*\n {2}work per rank/m : /^forward \(f32\) .*; wrote .*o\.npy/m);
      // One header, as a single device's run has (the ring's said its shape on a line of its own, then again with its settings).
      expect(r.out.split('\n').filter((l) => l && !l.startsWith(' ')).map((l) => l.replace(/ .*/, ''))).toEqual(extra.length ? ['attention', 'wrote'] : ['attention', 'forward']);
      expect(r.out).toMatch(/wrote .*o\.npy, .*lse\.npy, .*flashring-run\.json/);
      expect(r.err).not.toContain('\r');
      if (extra.length && !extra.includes('processes')) expect(r.err).toMatch(/^ {2}forward: \d+ steps? done$/m);
      // One device: each pass and the writing, a line as it starts and one as it ends with its time (a long run is not silent).
      if (!extra.length)
        for (const phase of ['forward \\(f32\\)', 'backward \\(f32\\)', 'writing the outputs into .*single'])
          expect(r.err).toMatch(new RegExp(`^ {2}${phase}: started\\n(.*\\n)* {2}${phase}: done in \\d+\\.\\d ms$`, 'm'));
    });
  }

  it('a run without --do into a folder with an earlier run\'s gradients says they are not from it', async () => {
    const out = join(dir, 'again');
    const args = ['attention', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy'), '--precision', 'f32', '--out', out];
    expect((await cli([...args, '--do', join(dir, 'do.npy')])).code).toBe(0);
    const r = await cli([...args.slice(0, -1), `${out}/.`]); // a path join() would normalize: the names still read right
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/^note: .*again\/\. also holds dq\.npy, dk\.npy, dv\.npy from an earlier run; this run did not write them$/m);
    expect(existsSync(join(out, 'dq.npy'))).toBe(true); // said, not deleted
    // The record keeps listing the earlier gradients, so a third run with --do may overwrite them.
    expect(JSON.parse(readFileSync(join(out, RUN_RECORD), 'utf8'))).toMatchObject({ files: ['o.npy', 'lse.npy', 'dq.npy', 'dk.npy', 'dv.npy'], fromEarlierRuns: ['dq.npy', 'dk.npy', 'dv.npy'] });
    expect((await cli([...args, '--do', join(dir, 'do.npy')])).code).toBe(0);
  });

  it("the run record says Dawn's robustness transform was on (robust: true) where --robust or FLASHRING_ROBUST=1 asked for it, as bench's JSON", async () => {
    const args = ['attention', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy'), '--precision', 'f32'];
    for (const [how, extra, env] of [['--robust', ['--robust'], {}], ['FLASHRING_ROBUST=1', [], { FLASHRING_ROBUST: '1' }], ['neither', [], { FLASHRING_ROBUST: '0' }]] as const) {
      const out = join(dir, `robust-${how.length}`);
      const r = await cli([...args, '--out', out, ...extra], env);
      expect(r.code, r.err).toBe(0);
      const record = JSON.parse(readFileSync(join(out, RUN_RECORD), 'utf8'));
      expect([how, record.robust], r.err).toEqual([how, how !== 'neither']);
      expect(record.adapter).toBe(/^attention .* on (.*)$/m.exec(r.out)![1]);
    }
  });

  it('a2a+p2p without sizes takes the largest a2a group below R that divides the heads, and says so', async () => {
    save('kv2.npy', x.q, 2); // two K/V heads: groups of 2 at R = 4
    const r = await cli(['attention', '--q', join(dir, 'q.npy'), '--k', join(dir, 'kv2.npy'), '--v', join(dir, 'kv2.npy'), '--out', join(dir, 'hier'), '--cp', '4', '--cp-comm-type', 'a2a+p2p']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/^note: a2a\+p2p sizes 2,2 chosen: the largest a2a group below 4 that divides the heads/m);
    expect(r.out).toMatch(/^attention .*, CP R=4 a2a\+p2p 2,2 /m);
  });

  it('multi-adapter ranks on one adapter are said to share its GPU', async () => {
    const r = await cli(['attention', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy'), '--out', join(dir, 'ma'), '--cp', '2', '--cp-mode', 'multi-adapter']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/^note: the 2 ranks' devices are on one adapter \(.*\): they share its GPU, .*--cp-mode processes --gpu-per-rank$/m);
  });

  it('bad input: one line naming the problem, exit code 2, nothing written', async () => {
    writeFileSync(join(dir, 'k8.npy'), encodeNpy({ dtype: 'f4', shape: [1, 1, 40, 8], data: new Float32Array(320) }));
    const r = await cli(['attention', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k8.npy'), '--v', join(dir, 'k8.npy'), '--out', join(dir, 'bad')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/flashring attention: head dim mismatch: Q has D=16, K\/V have D=8/);
    expect(existsSync(join(dir, 'bad', 'o.npy'))).toBe(false);
    const r2 = await cli(['attention', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy'), '--out', join(dir, 'bad'), '--cp', '0']);
    expect(r2.code).toBe(2);
    expect(r2.err).toMatch(/--cp must be an integer from 1 to 64 \(ranks of the ring\), got '0'/);
    const r3 = await cli(['attention', '--bogus']);
    expect(r3.code).toBe(2);
    expect(r3.err).toMatch(/unknown option '--bogus'/);
  });
});

/** Runs `cases` two at a time (each a child process). */
async function pool<T, R>(cases: T[], f: (c: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(cases.length);
  let next = 0;
  const worker = async () => { while (next < cases.length) { const i = next++; out[i] = await f(cases[i]); } };
  await Promise.all([worker(), worker()]);
  return out;
}

describe('flashring attention: every bad input is one line, exit 2, before any GPU work, nothing written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flashring-bad-'));
  const s = { B: 1, Hq: 2, Hkv: 1, Nq: 16, Nk: 16, D: 16 };
  const x = makeInputs(s, SEED + 5);
  const f = (n: string) => join(dir, n);
  writeFileSync(f('q.npy'), encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 16], data: x.q }));
  writeFileSync(f('k.npy'), encodeNpy({ dtype: 'f4', shape: [1, 1, 16, 16], data: x.k }));
  writeFileSync(f('v.npy'), encodeNpy({ dtype: 'f4', shape: [1, 1, 16, 16], data: x.v }));
  writeFileSync(f('kbig.npy'), encodeNpy({ dtype: 'f4', shape: [1, 1, 16, 16], data: x.k.map((a, i) => (i === 7 ? 70000 : a)) }));
  const k = readFileSync(f('k.npy'));
  writeFileSync(f('v2cut.npy'), Uint8Array.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 2, 0, 0x76, 0]));
  writeFileSync(f('tail.npy'), Buffer.concat([k, Buffer.from([1, 2, 3, 4])]));
  writeFileSync(f('cut.npy'), k.subarray(0, k.length - 5));
  writeFileSync(f('fortran.npy'), Buffer.from(k.toString('latin1').replace("'fortran_order': False", "'fortran_order': True "), 'latin1'));
  writeFileSync(f('int.npy'), Buffer.from(k.toString('latin1').replace("'descr': '<f4'", "'descr': '<i4'"), 'latin1'));
  writeFileSync(f('q12.npy'), encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 12], data: x.q.subarray(0, 2 * 16 * 12) }));
  writeFileSync(f('kv12.npy'), encodeNpy({ dtype: 'f4', shape: [1, 1, 16, 12], data: x.k.subarray(0, 16 * 12) }));
  writeFileSync(f('afile'), 'not a folder');
  mkdirSync(f('folder'));
  const base = (out: string) => ['attention', '--q', f('q.npy'), '--k', f('k.npy'), '--v', f('v.npy'), '--out', out];
  const cases: [string[], RegExp][] = [
    [[...base(f('o1')), '--scale', '-0.125'], /--scale must be a positive number within float32's range, .* \(e\.g\. 0\.125\), got '-0\.125'/],
    [[...base(f('o1')), '--scale=-1'], /--scale must be a positive number .*got '-1'/],
    [[...base(f('o1')), '--scale', ''], /--scale must be a positive number .*got ''/],
    [[...base(f('o1')), '--scale', '0x10'], /--scale must be a positive number .*got '0x10'/],
    [[...base(f('o1')), '--scale', '0'], /--scale must be a positive number .*got '0'/],
    [[...base(f('o1')), '--scale', 'Infinity'], /--scale must be a positive number .*got 'Infinity'/],
    [[...base(f('o1')), '--scale', '1e39'], /--scale must be a positive number within float32's range, 1\.18e-38 to 3\.40e\+38 .*got '1e39'/],
    [[...base(f('o1')), '--scale', '1e-40'], /--scale must be a positive number within float32's range.*got '1e-40'/],
    [[...base(f('o1')), '--causal=yes'], /option '--causal' does not take an argument/],
    [[...base(f('o1')), '--robust=1'], /option '--robust' does not take an argument: give --robust alone \(or FLASHRING_ROBUST=1\), got '--robust=1'/],
    [[...base(f('o1')), 'stray'], /unexpected argument 'stray'/],
    [[...base(f('o1')), '--cp', '-1'], /--cp must be an integer from 1 to 64 .*got '-1'/],
    [[...base(f('o1')), '--cp', '1000'], /--cp must be an integer from 1 to 64 .*got '1000'/],
    [[...base(f('o1')), '--cp', '20'], /--cp 20 is more ranks than the 16 tokens/],
    [[...base(f('o1')), '--cp', '2.5'], /--cp must be an integer/],
    [[...base(f('o1')), '--layout', 'zigzag'], /--layout only applies to a context-parallel run: add --cp R/],
    [[...base(f('o1')), '--timeline', f('t.json')], /--timeline only applies to a context-parallel run/],
    [[...base(f('o1')), '--cp', '2', '--layout', 'spiral'], /--layout must be one of contiguous, zigzag, striped, got 'spiral'/],
    [[...base(f('o1')), '--cp', '2', '--cp-mode', 'threads'], /--cp-mode must be one-device, multi-adapter or processes, got 'threads'/],
    [[...base(f('o1')), '--cp', '2', '--gpu-per-rank'], /--gpu-per-rank needs --cp-mode processes/],
    [[...base(f('o1')), '--cp', '2', '--cp-mode', 'multi-adapter', '--pipelined'], /--pipelined needs --cp-mode one-device/],
    [[...base(f('o1')), '--q', f('v.npy')], /--q is given twice: give it once/],
    [[...base(f('o1')), '--precision', 'f64'], /--precision must be f32, f16 or auto, got 'f64'/],
    [base(f('afile')), /--out .*afile exists and is not a folder/],
    [base(join(f('afile'), 'sub')), /--out .*a part of that path is a file|is a file, not a folder/],
    [base('/proc/flashring-x'), /--out \/proc\/flashring-x: \/proc is a system folder/],
    [[...base(f('o1')), '--cp', '2', '--timeline', f('folder')], /--timeline .*folder is a folder; give a file name/],
    [[...base(f('o1')), '--cp', '2', '--timeline', '/proc/t.json'], /--timeline \/proc\/t\.json: \/proc is a system folder/],
    [[...base(f('o1')), '--cp', '2', '--timeline', join(f('nowhere'), 't.json')], /--timeline .*the folder .*nowhere does not exist/],
    [['attention', '--q', f('q.npy'), '--k', f('v2cut.npy'), '--v', f('v.npy'), '--out', f('o1')], /.*v2cut\.npy: truncated header: a version 2 file needs 12 bytes/],
    [['attention', '--q', f('q.npy'), '--k', f('tail.npy'), '--v', f('v.npy'), '--out', f('o1')], /.*tail\.npy: 4 unexpected bytes after the data/],
    [['attention', '--q', f('q.npy'), '--k', f('cut.npy'), '--v', f('v.npy'), '--out', f('o1')], /.*cut\.npy: truncated data/],
    [['attention', '--q', f('q.npy'), '--k', f('fortran.npy'), '--v', f('v.npy'), '--out', f('o1')], /.*fortran\.npy: Fortran-order arrays are not supported/],
    [['attention', '--q', f('q.npy'), '--k', f('int.npy'), '--v', f('v.npy'), '--out', f('o1')], /.*int\.npy: dtype '<i4' is not supported/],
    [['attention', '--q', f('q.npy'), '--k', f('missing.npy'), '--v', f('v.npy'), '--out', f('o1')], /--k .*missing\.npy: no such file/],
    [['attention', '--q', f('q.npy'), '--k', f('kbig.npy'), '--v', f('v.npy'), '--out', f('o1'), '--precision', 'f16'], /K \(.*kbig\.npy\) holds 70000 \(element 7\), beyond float16's range/],
    [['attention', '--q', f('q12.npy'), '--k', f('kv12.npy'), '--v', f('kv12.npy'), '--out', f('o1')], /head dim D=12 is not supported: it must be a multiple of 8/],
    [[...base(f('o1')), '--cp', '2', '--link', 'pcie5', '--link-gbps', '100'], /--link-gbps and --link-latency-us describe --link custom; 'pcie5' is a preset/],
    [[...base(f('o1')), '--cp', '2', '--link-gbps', '100'], /--link-gbps and --link-latency-us go with --link custom \(both of them\)/],
    [[...base(f('o1')), '--cp', '4', '--cp-comm-type', 'a2a+p2p'], /a2a\+p2p needs an a2a group size A with 1 < A < R that divides R = 4 and the heads \(2 query, 1 key\/value\); none does/],
    [['selftest', '--seed', '-1'], /--seed must be an integer from 0 to 4294967295, got '-1'/],
    [['start', '--port', '99999'], /--port must be a port number \(0\.\.65535\), got '99999'/],
    [['start', '--no-serve', '--port', '5'], /--port has no effect with --no-serve \(nothing is served\): leave one out/],
    [['info', 'stray'], /unexpected argument 'stray'/],
    [['bench', '--reps', '0x3'], /--reps: '0x3' is not a positive integer/],
    [['bench', '--causal', 'yes'], /--causal: 'yes' is not one of false, true/],
    [['bench', '--out', '/proc/b'], /--out \/proc\/b: \/proc is a system folder/],
    [['replay'], /at least one Megatron-LM log or activation_memory\.csv is required/],
    [['bench', '--D', '64,7'], /--D 7: head dim D=7 is not supported: it must be a multiple of 8, at most 256/],
    // A stray comma is refused, not dropped (it may stand for a value meant), as memory --seq-lengths refuses it.
    [['bench', '--N', '64,,128'], /--N 64,,128: entry 2 of 3 is empty \(a stray comma\?\)\n/],
    [['tune', '--precision', 'f32,'], /--precision f32,: entry 2 of 2 is empty/],
    [['bench', '--N', ' '], /--N needs at least one value, got ' '\n/],
  ];

  it('each case: exit 2, exactly one line naming flag and value, no stack trace, no output written', async () => {
    // No adapter matches this name: a case that reached the device would end in the line naming the
    // adapters there are, not in its validation message. So each message below proves validation came
    // before any device was asked for (no wall-clock bound: the suite runs on busy machines too).
    const results = await pool(cases, ([args]) => cli(args, { FLASHRING_ADAPTER: 'no-such-adapter-validation-comes-first' }));
    results.forEach((r, i) => {
      const [args, re] = cases[i];
      const what = `flashring ${args.join(' ')}\n${r.err}`;
      expect(r.code, what).toBe(2);
      expect(r.err.trim().split('\n'), what).toHaveLength(1);
      expect(r.err, what).toMatch(new RegExp(`^flashring ${args[0]}: ${re.source}`));
      expect(r.err, what).not.toMatch(/^\s+at /m);
    });
    expect(readdirSync(dir).sort()).toEqual(['afile', 'cut.npy', 'folder', 'fortran.npy', 'int.npy', 'k.npy', 'kbig.npy', 'kv12.npy', 'q.npy', 'q12.npy', 'tail.npy', 'v.npy', 'v2cut.npy'].sort());
    expect(readdirSync(f('folder'))).toEqual([]);
  }, 480_000);   // 26 s alone; 146 s seen with two suites at once

  it('precision follows the data: f32 in → f32 out; f64 in → f32 with a note; f16 in → f16 (shader-f16) or f32 with a note', async () => {
    writeFileSync(f('q64.npy'), encodeNpy({ dtype: 'f8', shape: [1, 2, 16, 16], data: Float64Array.from(x.q) }));
    const toHalf = (a: Float32Array) => encodeNpy({ dtype: 'f2', shape: [1, a.length / 256, 16, 16], data: toHalfArray(a) });
    writeFileSync(f('qh.npy'), toHalf(x.q)); writeFileSync(f('kh.npy'), toHalf(x.k)); writeFileSync(f('vh.npy'), toHalf(x.v));
    const dtypeOf = (out: string, n: string) => parseNpy(new Uint8Array(readFileSync(join(out, `${n}.npy`)))).dtype;
    const r32 = await cli(base(f('auto32')));
    expect(r32.code, r32.err).toBe(0);
    expect(r32.out).toMatch(/forward \(f32\)/);
    expect([dtypeOf(f('auto32'), 'o'), dtypeOf(f('auto32'), 'lse')]).toEqual(['f4', 'f4']);
    const ref = referenceForward(s, x.q, x.k, x.v, {});
    expect(relErr(Float64Array.from(parseNpy(new Uint8Array(readFileSync(join(f('auto32'), 'o.npy')))).data as Float32Array), ref.o)).toBeLessThanOrEqual(TOL.f32.out);
    const r64 = await cli(['attention', '--q', f('q64.npy'), '--k', f('k.npy'), '--v', f('v.npy'), '--out', f('auto64')]);
    expect(r64.code, r64.err).toBe(0);
    expect(r64.err).toMatch(/^note: Q is float64; computing in f32 and writing float32$/m);
    expect(dtypeOf(f('auto64'), 'o')).toBe('f4');
    const r16 = await cli(['attention', '--q', f('qh.npy'), '--k', f('kh.npy'), '--v', f('vh.npy'), '--out', f('auto16')]);
    expect(r16.code, r16.err).toBe(0);
    const f16 = await adapterHasF16();
    if (!f16) expect(process.env.CI, 'CI\'s lavapipe has shader-f16').not.toBe('true');
    expect(dtypeOf(f('auto16'), 'o')).toBe(f16 ? 'f2' : 'f4');
    if (f16) expect(r16.err).not.toMatch(/no shader-f16/);
    else expect(r16.err).toMatch(/^note: the inputs are float16 but .* has no shader-f16; computing in f32 and writing float32$/m);
    // The numbers of the float16 runs: against float64 attention on the values the half inputs hold.
    const valuesOf = (out: string, n: string) => {
      const a = parseNpy(new Uint8Array(readFileSync(join(out, `${n}.npy`))));
      return Float64Array.from(a.dtype === 'f2' ? fromHalfArray(a.data as Uint16Array) : (a.data as Float32Array));
    };
    const h = { q: roundToHalf(x.q), k: roundToHalf(x.k), v: roundToHalf(x.v) };
    const ref16 = referenceForward(s, h.q, h.k, h.v, {});
    const tol16 = TOL[f16 ? 'f16' : 'f32'];
    expect(relErr(valuesOf(f('auto16'), 'o'), ref16.o)).toBeLessThanOrEqual(tol16.out);
    expect(relErr(valuesOf(f('auto16'), 'lse'), ref16.lse)).toBeLessThanOrEqual(tol16.out);
    // float16 Q, K, V with a float32 dO: f32 throughout, said once.
    writeFileSync(f('do32.npy'), encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 16], data: x.dout }));
    const mixed = await cli(['attention', '--q', f('qh.npy'), '--k', f('kh.npy'), '--v', f('vh.npy'), '--do', f('do32.npy'), '--out', f('mixed')]);
    expect(mixed.code, mixed.err).toBe(0);
    expect(mixed.err).toMatch(/^note: Q, K, V are float16 but dO is not; computing in f32 and writing float32 \(--precision f16 computes in f16\)$/m);
    expect([dtypeOf(f('mixed'), 'o'), dtypeOf(f('mixed'), 'dq')]).toEqual(['f4', 'f4']);
    // Computed in f32 on the half inputs' values (and dO's f32 values): the f32 contract.
    const refMixed = referenceBackward(s, h.q, h.k, h.v, x.dout, {});
    expect(relErr(valuesOf(f('mixed'), 'o'), ref16.o)).toBeLessThanOrEqual(TOL.f32.out);
    expect(relErr(valuesOf(f('mixed'), 'lse'), ref16.lse)).toBeLessThanOrEqual(TOL.f32.out);
    for (const g of ['dq', 'dk', 'dv'] as const) expect(relErr(valuesOf(f('mixed'), g), refMixed[g]), g).toBeLessThanOrEqual(TOL.f32.grad);
    // [H, N, D] inputs give [H, N, D] outputs (LSE [H, N]), single device and ring; one [B, H, N, D] input, the 4-D form.
    const three = (name: string, a: Float32Array) => writeFileSync(f(name), encodeNpy({ dtype: 'f4', shape: [a.length / 256, 16, 16], data: a }));
    three('q3.npy', x.q); three('k3.npy', x.k); three('v3.npy', x.v); three('do3.npy', x.dout);
    const shapeOf = (out: string, n: string) => parseNpy(new Uint8Array(readFileSync(join(out, `${n}.npy`)))).shape;
    for (const extra of [[], ['--cp', '2']]) {
      const out = f(`three${extra.length}`);
      const r3 = await cli(['attention', '--q', f('q3.npy'), '--k', f('k3.npy'), '--v', f('v3.npy'), '--do', f('do3.npy'), '--out', out, ...extra]);
      expect(r3.code, r3.err).toBe(0);
      expect(['o', 'lse', 'dq', 'dk', 'dv'].map((n) => shapeOf(out, n))).toEqual([[2, 16, 16], [2, 16], [2, 16, 16], [1, 16, 16], [1, 16, 16]]);
    }
    const r4 = await cli(['attention', '--q', f('q3.npy'), '--k', f('k.npy'), '--v', f('v3.npy'), '--out', f('mixed34')]);
    expect(r4.code, r4.err).toBe(0);
    expect(shapeOf(f('mixed34'), 'o')).toEqual([1, 2, 16, 16]);
  }, 120_000);
});

describe('flashring around the GPU: adapters, Dawn noise, the self-test seed', () => {
  it('FLASHRING_ADAPTER naming no adapter says so and lists the adapters there are', async () => {
    const r = await cli(['info'], { FLASHRING_ADAPTER: 'no-such-gpu-xyz' });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^flashring info: no WebGPU adapter matches FLASHRING_ADAPTER='no-such-gpu-xyz' .*the adapters here: '[^']+'/);
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });

  it("info shows no Dawn 'artificially reduced' warnings; selftest prints its seed and repeats with --seed", async () => {
    const info = await cli(['info']);
    expect(info.code).toBe(0);
    expect(info.err).not.toMatch(/artificially reduced/);
    // The tiles each precision's portable kernels take (f16 where the adapter offers shader-f16: CI's lavapipe does).
    expect(info.out).toMatch(/^ {2}f32 tiles: D=64: fwd Br×Bc \d+×\d+/m);
    const f16 = await adapterHasF16();
    expect(info.out).toMatch(new RegExp(`kernel features: shader-f16 ${f16 ? 'yes' : 'no'},`));
    if (f16) expect(info.out).toMatch(/^ {2}f16 tiles \(portable kernels\): D=64: fwd Br×Bc \d+×\d+/m);
    // --json gives the same tiles as data (it left them out): the text's first f32 tile, read back from the JSON.
    const json = await cli(['info', '--json']);
    const first = (JSON.parse(json.out) as { tiles: { f32: { D: number; fwd: { Br: number; Bc: number } }[]; f16: unknown[] | null } }[])[0];
    expect(first.tiles.f32.map((t) => t.D)).toEqual([64, 128, 256]);
    expect(info.out).toContain(`f32 tiles: D=64: fwd Br×Bc ${first.tiles.f32[0].fwd.Br}×${first.tiles.f32[0].fwd.Bc}`);
    expect(first.tiles.f16 === null).toBe(!f16);
    // Where the forward's P~ shares Q's workgroup array (D = 128 on lavapipe's 32 KiB: 64-column chunks), the text says so.
    const at128 = (first.tiles.f32[1] as unknown as { fwd: { chunk: number; sharedP: boolean } }).fwd;
    expect(info.out.includes(`(chunk ${at128.chunk}, P~ in Q's array)`)).toBe(at128.sharedP);
    const st = await cli(['selftest', '--seed', '12345']);
    expect(st.code, st.err).toBe(0);
    expect(st.out).toMatch(/seed 12345\)/);
    expect(st.err).not.toMatch(/artificially reduced/);
  }, 120_000);
});

describe('flashring output into a reader that stops early', () => {
  it('ends quietly, exit 0, no stack trace (as `flashring memory … | head`)', async () => {
    const child = spawn(process.execPath, [BIN, 'memory', '--preset', 'llama3-8b', '--sweep'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the reader is gone before the first line: every write meets a closed pipe
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise((res) => child.on('close', res));
    expect(err).not.toMatch(/Unhandled|EPIPE|^\s+at /m);
    expect(code).toBe(0);
  });

  it('replay --csv writes its file before its report reaches stdout (`replay … --csv p.csv | head` lost the file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashring-replay-head-')), csv = join(dir, 'p.csv');
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const child = spawn(process.execPath, [BIN, 'replay', join(__dirname, 'fixtures/megatron/core_0.4_tp8.log'), '--csv', csv], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const code = await new Promise((res) => child.on('close', res));
    expect(code, err).toBe(0);
    expect(readFileSync(csv, 'utf8')).toMatch(/^seq_len,tp,cp,pp,sp,recompute/);
  });
});

describe('flashring memory and replay', () => {
  it('memory --json gives the breakdown of the model', async () => {
    const r = await cli(['memory', '--preset', 'seed-32L-4096h', '--seq-length', '32768', '--tensor-model-parallel-size', '8', '--sequence-parallel', '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.perLayerBytes).toBe(34 * 32768 * 4096 / 8 + 4 * 32 * 32768 / 8); // sbh·34/t + LSE/t
    expect(j.fits).toBe(true);
  });

  it('replay turns fixture logs into points and names what a log lacks', async () => {
    const r = await cli(['replay', join(__dirname, 'fixtures/megatron/core_0.16_tp4_cp2_sp_selective.log'), join(__dirname, 'fixtures/megatron/core_0.4_tp8.log')]);
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^seq_len,tp,cp,pp,sp,recompute/);
    expect(r.out.trim().split('\n')).toHaveLength(3);
    expect(r.err).toMatch(/core_0.4_tp8.log.*\n.*context_parallel_size not found/);
  });
});

describe('flashring bench options', () => {
  it('the GEMM ceiling probe is a bench of its own: --ceiling says where it went (exit 2), and bench/ceiling/run.mjs checks its flags', async () => {
    const help = await cli(['bench', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).not.toMatch(/--ceiling\b/);
    // The default results folder is relative to where the command runs, and the help says so.
    expect(help.out).toMatch(/--out DIR +results folder \(default bench\/out\), relative to the working folder/);
    for (const flag of [['--ceiling'], ['--ceiling-size=512']]) {
      const moved = await cli(['bench', ...flag, '--no-memory']);
      expect(moved.code).toBe(2);
      expect(moved.err).toMatch(/^flashring bench: --ceiling(-size)?: the GEMM ceiling probe is a bench of its own now: node bench\/ceiling\/run.mjs --help\n$/);
    }
    const bad = await run(process.execPath, [join(__dirname, '..', 'bench', 'ceiling', 'run.mjs'), '--size', '1000']).then(() => null, (e) => e);
    expect(bad?.code).toBe(2);
    expect(bad?.stderr).toMatch(/--size must be a multiple of 256, got 1000/);
    const usage = await run(process.execPath, [join(__dirname, '..', 'bench', 'ceiling', 'run.mjs'), '--help']);
    expect(usage.stdout).toMatch(/^usage: node bench\/ceiling\/run.mjs/);
  });

  it("the GEMM ceiling's f32 tilings are set against the peer's f32 matmul (TF32 off), not its f16 one", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashring-ceiling-'));
    const peer = join(dir, 'peer.json');
    writeFileSync(peer, JSON.stringify({ kind: 'flashring.peer', results: [
      { pass: 'gemm', N: 512, dtype: 'float16', tflops: 1000 }, { pass: 'gemm', N: 512, dtype: 'float32', tflops: 0.25 }] }));
    const r = await run(process.execPath, [join(__dirname, '..', 'bench', 'ceiling', 'run.mjs'), '--quick', '--peer', peer, '--out', join(dir, 'out')]);
    expect(r.stdout).toMatch(/PyTorch f16 matmul 1000\.0 TFLOP\/s, f32 matmul, TF32 off, 0\.3/);
    const json = JSON.parse(readFileSync(join(dir, 'out', readdirSync(join(dir, 'out')).find((f) => f.endsWith('.json'))!), 'utf8'));
    expect(json.peerF32.tflops).toBe(0.25);
    const f32 = (json.rows as { tiling: string; tflops: number | null }[]).filter((x) => x.tiling.startsWith('f32 ') && x.tflops !== null);
    expect(f32.length).toBeGreaterThan(0);
    for (const row of f32) {
      const line = r.stdout.split('\n').find((l) => l.trim().startsWith(row.tiling))!;
      expect(Number(/ratio (\S+)/.exec(line)![1]), row.tiling).toBeCloseTo(row.tflops! / 0.25, 3);
    }
  }, 120_000);

  it("bench's portable rows: their share of the peer's f32 matmul (TF32 off), beside the ratio to the attention peer", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'flashring-gemm-share-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const peer = join(dir, 'peer.json'), out = join(dir, 'out');
    const shape = { N: 32, D: 16, H: 1, B: 1, causal: false, ms: 1 };
    writeFileSync(peer, JSON.stringify({ kind: 'flashring.peer', results: [
      { ...shape, pass: 'fwd', dtype: 'float32', backend: 'efficient', tflops: 2e-4 }, { ...shape, pass: 'fwd', dtype: 'float16', backend: 'flash', tflops: 9 },
      { pass: 'gemm', N: 512, D: 0, H: 0, B: 1, causal: false, dtype: 'float16', backend: 'matmul', ms: 1, tflops: 1000 },
      { pass: 'gemm', N: 512, D: 0, H: 0, B: 1, causal: false, dtype: 'float32', backend: 'matmul', ms: 1, tflops: 0.25 }] }));
    const r = await cli(['bench', '--N', '32', '--D', '16', '--heads', '1', '--batch', '1', '--reps', '1', '--causal', 'false', '--precision', 'f32',
      '--no-ring', '--no-memory', '--peer', peer, '--out', out], { FLASHRING_PATH: 'scalar' });
    expect(r.code, r.err).toBe(0);
    // The summary's bwd line: no attention peer (ratio '-'), a GEMM share all the same.
    expect(r.out).toMatch(/^bwd\s.*\s-\s+\d+\.\d{3}\s+\d\.\de[-+]\d+$/m);
    const csv = readFileSync(join(out, readdirSync(out).find((f) => f.endsWith('-kernels.csv'))!), 'utf8').trim().split('\n').map((l) => l.split(','));
    const col = (name: string) => csv[0].indexOf(name);
    const rows = csv.slice(1);
    expect(rows.length).toBeGreaterThan(1);
    for (const row of rows) {
      const tflops = Number(row[col('tflops')]);
      expect(row[col('path')]).toBe('scalar');
      expect(row[col('gemmPeer')]).toBe('torch-matmul-float32-tf32off-512^3');
      expect(Number(row[col('gemmTflops')])).toBe(0.25);
      expect(Number(row[col('gemmShare')])).toBeCloseTo(tflops / 0.25, 6);
      // Only the forward has an attention peer here (f32 against memory-efficient f32, never FlashAttention-2's f16).
      if (row[col('pass')] === 'fwd') expect(Number(row[col('ratio')])).toBeCloseTo(tflops / 2e-4, 6);
      else expect(row[col('ratio')]).toBe('');
    }
  }, 120_000);
});
