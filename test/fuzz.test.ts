/**
 * Fuzzing every command of `flashring` for a bounded time: random bytes as .npy files and logs,
 * random flag combinations (negative, huge, empty, hex and non-numbers, unknown flags, `--flag=value`,
 * stray arguments). Ordinary mistakes must end in one line and exit code 2 (or succeed, 0): never
 * an exception out of main() (a stack trace) and never another exit code. Seeded; the seed is
 * printed, and FLASHRING_FUZZ_SEED=<seed> repeats a run. Commands run in-process through main();
 * a few runs go through the real binary to check what a user sees. bench, start and selftest
 * always carry one invalid value, so they stop in validation (no sweep, no server).
 * FLASHRING_FUZZ_MS sets the budget; FLASHRING_FUZZ_TRACE=FILE logs each argv before it runs (to find a hang).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { execFile } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { main } from '../src/cli/main.js';
import { encodeNpy } from '../src/cli/npy.js';
import { rng } from '../src/reference/compare.js';

const SEED = Number(process.env.FLASHRING_FUZZ_SEED ?? (Date.now() % 2 ** 31));
const BUDGET_MS = Number(process.env.FLASHRING_FUZZ_MS ?? 20_000);
const BIN = join(__dirname, '..', 'bin', 'flashring.mjs');
const STACK = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;

/** The same generator as the kernels' tests (mulberry32): a seed repeats a run. */
const mulberry32 = rng;

const dir = mkdtempSync(join(tmpdir(), 'flashring-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Files the path flags draw from: good tensors, random bytes, damaged .npy, folders, nothing. */
function makeFiles(rnd: () => number): string[] {
  const f = (n: string) => join(dir, n);
  const r32 = (n: number) => Float32Array.from({ length: n }, () => rnd() * 2 - 1);
  writeFileSync(f('q.npy'), encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 16], data: r32(512) }));
  writeFileSync(f('kv1.npy'), encodeNpy({ dtype: 'f4', shape: [1, 1, 16, 16], data: r32(256) }));
  writeFileSync(f('h.npy'), encodeNpy({ dtype: 'f2', shape: [2, 16, 16], data: Uint16Array.from({ length: 512 }, () => 0x3c00 ^ Math.floor(rnd() * 0x3ff)) }));
  writeFileSync(f('d.npy'), encodeNpy({ dtype: 'f8', shape: [1, 2, 16, 16], data: Float64Array.from(r32(512)) }));
  writeFileSync(f('big.npy'), encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 16], data: r32(512).map((x) => x * 1e6) }));
  writeFileSync(f('bad8.npy'), encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 12], data: r32(384) }));
  const good = encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 16], data: r32(512) });
  writeFileSync(f('cut.npy'), good.subarray(0, 10 + Math.floor(rnd() * 200)));
  writeFileSync(f('v2cut.npy'), Uint8Array.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 2, 0, 0x40, 0]));
  writeFileSync(f('tail.npy'), Uint8Array.from([...good, 1, 2, 3]));
  for (let i = 0; i < 4; i++) writeFileSync(f(`rand${i}.npy`), Uint8Array.from({ length: Math.floor(rnd() * 300) }, () => Math.floor(rnd() * 256)));
  writeFileSync(f('log.txt'), Array.from({ length: 40 }, () => String.fromCharCode(...Array.from({ length: 60 }, () => 32 + Math.floor(rnd() * 95)))).join('\n'));
  mkdirSync(f('folder'), { recursive: true });
  if (!existsSync(f('qlink.npy'))) symlinkSync(f('q.npy'), f('qlink.npy'));
  return ['q.npy', 'kv1.npy', 'h.npy', 'd.npy', 'big.npy', 'bad8.npy', 'cut.npy', 'v2cut.npy', 'tail.npy', 'rand0.npy', 'rand1.npy', 'rand2.npy', 'rand3.npy', 'log.txt', 'folder', 'missing.npy'].map(f);
}

const NUMBERS = ['-1', '-0.125', '0', '1', '2', '3', '16', '1e300', '-1e300', '', ' ', '0x10', 'abc', 'NaN', 'Infinity', '1.5', '1e-3', '99999999999', '-', '1,2', '4096'];
const WORDS = ['f32', 'f16', 'auto', 'zigzag', 'striped', 'contiguous', 'true', 'false', 'yes', 'x', 'seed-32L-4096h', 'selective', 'full', '1,1:selective,2'];

interface Spec { strings: string[]; booleans: string[]; paths: string[]; outs: string[]; positionals?: boolean }

const MODEL = ['num-layers', 'hidden-size', 'num-attention-heads', 'num-query-groups', 'ffn-hidden-size', 'vocab-size', 'attention-dropout', 'hidden-dropout',
  'seq-length', 'micro-batch-size', 'tensor-model-parallel-size', 'context-parallel-size', 'pipeline-model-parallel-size', 'data-parallel-size',
  'recompute-granularity', 'hbm-gib', 'seq-lengths', 'lines', 'preset', 'position-embedding-type', 'num-layers-per-virtual-pipeline-stage'];
const MODEL_BOOL = ['swiglu', 'sequence-parallel', 'use-flash-attn', 'json', 'sweep', 'compare', 'fp32-params', 'use-distributed-optimizer'];

const SPECS: Record<string, Spec> = {
  info: { strings: [], booleans: ['json', 'help'], paths: [], outs: [] },
  selftest: { strings: ['seed'], booleans: ['help'], paths: [], outs: [] },
  attention: { strings: ['scale', 'precision', 'cp', 'layout'], booleans: ['causal', 'help'], paths: ['q', 'k', 'v', 'do'], outs: ['out', 'timeline'] },
  memory: { strings: MODEL, booleans: MODEL_BOOL, paths: [], outs: ['csv'] },
  advise: { strings: [...MODEL, 'gpus', 'margin', 'global-batch-size', 'link', 'link-gbps', 'link-latency-us', 'top'], booleans: ['json', 'help'], paths: [], outs: [] },
  replay: { strings: ['hbm-gib', 'seq-length', 'preset'], booleans: ['json', 'compare', 'help'], paths: [], outs: ['csv'], positionals: true },
  bench: { strings: ['N', 'D', 'heads', 'batch', 'precision', 'causal', 'reps', 'ring-R', 'ring-N', 'layouts'], booleans: ['quick', 'no-ring', 'no-kernels', 'no-memory'], paths: ['peer', 'measured'], outs: ['out'] },
  start: { strings: ['port'], booleans: ['no-serve'], paths: [], outs: [] },
};

/** One invalid token that stops a command in validation (bench, start and selftest always get one). */
const STOPPERS: Record<string, string[][]> = {
  selftest: [['--seed', '-1'], ['--seed=0x10'], ['--bogus'], ['stray'], ['--help=1']],
  bench: [['--reps', '0'], ['--N=0x10'], ['--D', ''], ['--causal', 'yes'], ['--ring-R', '1000'], ['--quick=1'], ['--bogus'], ['stray'], ['--precision', 'f8']],
  start: [['--port', '-1'], ['--port=99999'], ['--port', ''], ['--no-serve=1'], ['stray'], ['--bogus']],
};

function argvFor(cmd: string, rnd: () => number, files: string[]): string[] {
  const spec = SPECS[cmd];
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  // Outputs collide with inputs on purpose: an input itself, through a link, one of --out's files, a log.
  const outs = [join(dir, `out${Math.floor(rnd() * 4)}`), join(dir, 'q.npy'), join(dir, 'folder'), '/proc/flashring-fuzz', '', join(dir, 'missing', 'deeper', 'x.json'), join(dir, `t${Math.floor(rnd() * 3)}.json`),
    pick(files), join(dir, 'qlink.npy'), join(dir, 'out0', 'o.npy'), join(dir, 'out1', 'lse.npy'), join(dir, 'log.txt')];
  const args: string[] = [];
  const flag = (name: string, value: string) => (rnd() < 0.3 ? args.push(`--${name}=${value}`) : args.push(`--${name}`, value));
  if (cmd === 'attention' && rnd() < 0.6) for (const k of ['q', 'k', 'v']) flag(k, rnd() < 0.7 ? files[k === 'q' ? 0 : 1] : pick(files));
  if (cmd === 'attention' && rnd() < 0.6) flag('out', pick(outs));
  const n = Math.floor(rnd() * 6);
  for (let i = 0; i < n; i++) {
    const r = rnd();
    if (r < 0.35 && spec.strings.length) flag(pick(spec.strings), rnd() < 0.6 ? pick(NUMBERS) : pick(WORDS));
    else if (r < 0.5 && spec.booleans.length) {
      const b = pick(spec.booleans);
      if (b === 'help' && rnd() < 0.7) continue;
      args.push(rnd() < 0.15 ? `--${b}=${pick(['yes', '1', ''])}` : `--${b}`);
    } else if (r < 0.65 && spec.paths.length) flag(pick(spec.paths), pick(files));
    else if (r < 0.75 && spec.outs.length) flag(pick(spec.outs), pick(outs));
    else if (r < 0.85) args.push(spec.positionals ? pick(files) : pick(['stray', '-x', '--bogus', '--bogus=1', '-5']));
    else if (r < 0.9) args.push(pick(['--', '-', '--=']));
  }
  if (spec.positionals && rnd() < 0.7) args.unshift(pick(files));
  const stop = STOPPERS[cmd];
  if (stop) args.push(...pick(stop)); // last, since a repeated flag's last value wins
  return [cmd, ...args];
}

/** main(argv) in-process with stdout and stderr captured. */
async function runInProcess(argv: string[]): Promise<{ code: number | 'threw'; err: string; thrown?: unknown }> {
  let err = '';
  const spies = [
    vi.spyOn(console, 'log').mockImplementation(() => {}),
    vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => { err += a.join(' ') + '\n'; }),
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true),
    vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => { err += String(s); return true; }),
  ];
  try {
    return { code: await main(argv), err };
  } catch (e) {
    return { code: 'threw', err, thrown: e };
  } finally {
    for (const s of spies) s.mockRestore();
  }
}

describe('fuzz: every command, random bytes and flags', () => {
  it(`ends in 0 or 2 with no stack trace (seed ${SEED}, ${BUDGET_MS / 1000} s)`, async () => {
    console.log(`fuzz seed ${SEED} (repeat with FLASHRING_FUZZ_SEED=${SEED})`);
    const rnd = mulberry32(SEED);
    const files = makeFiles(rnd);
    const cmds = Object.keys(SPECS);
    const failures: string[] = [];
    const perCommand = new Map<string, number>();
    const t0 = Date.now();
    let runs = 0;
    while (Date.now() - t0 < BUDGET_MS) {
      const argv = argvFor(cmds[runs % cmds.length], rnd, files);
      runs++;
      if (process.env.FLASHRING_FUZZ_TRACE) appendFileSync(process.env.FLASHRING_FUZZ_TRACE, `${Date.now() - t0} ${JSON.stringify(argv)}\n`);
      // Every input the run names, byte for byte before and after (an output must never overwrite one).
      // (Files only: a run's --out may have made a folder of a name drawn from the inputs, missing.npy say.)
      const named = argv.filter((a, i) => i > 0 && files.includes(a) && existsSync(a) && statSync(a).isFile() && !argv[i - 1]?.match(/^--(out|timeline|csv)$/));
      const before = named.map((a) => readFileSync(a));
      const r = await runInProcess(argv);
      const changed = named.find((a, i) => !readFileSync(a).equals(before[i]));
      const bad = r.code === 'threw' ? `threw ${(r.thrown as Error)?.stack?.split('\n').slice(0, 2).join(' | ')}`
        : r.code !== 0 && r.code !== 2 ? `exit ${r.code}`
        : STACK.test(r.err) ? 'stack trace in stderr'
        : changed ? `input ${changed} changed` : null;
      // A few examples per command, so one failing command does not hide the others.
      const seen = perCommand.get(argv[0]) ?? 0;
      if (bad) perCommand.set(argv[0], seen + 1);
      if (bad && seen < 4) failures.push(`${bad}: flashring ${argv.map((a) => JSON.stringify(a)).join(' ')}`);
    }
    console.log(`fuzz: ${runs} runs in ${((Date.now() - t0) / 1000).toFixed(1)} s; failures per command: ${JSON.stringify(Object.fromEntries(perCommand))}`);
    expect(failures, `seed ${SEED}`).toEqual([]);
    expect(runs).toBeGreaterThan(cmds.length);
  }, BUDGET_MS + 90_000);

  it('through the real binary: one line on stderr, exit 2, no stack trace', async () => {
    const rnd = mulberry32(SEED + 1);
    const files = makeFiles(rnd);
    for (const cmd of ['attention', 'bench', 'memory']) {
      const argv = [...argvFor(cmd, rnd, files), '--bogus-flag'];
      const r = await promisify(execFile)(process.execPath, [BIN, ...argv], { timeout: 60_000 }).then(
        () => ({ code: 0, err: '' }), (e) => ({ code: e.code as number, err: String(e.stderr) }));
      expect(r.code, `flashring ${argv.join(' ')}`).toBe(2);
      expect(r.err.trim().split('\n'), r.err).toHaveLength(1);
      expect(r.err).not.toMatch(STACK);
    }
  }, 120_000);
});
