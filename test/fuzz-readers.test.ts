/**
 * Fuzzing the readers of `flashring replay` (issue 34, item 7): Megatron-LM logs and
 * activation_memory.csv files, the fixtures and the real runs, damaged at random (cut at a byte,
 * lines duplicated, dropped or swapped, a whole argument dump or the whole log repeated, two logs
 * concatenated, bytes and digits flipped, CR, CRLF, NUL and non-UTF-8 bytes inserted; for CSVs also
 * a header repeated, quotes unbalanced, cells emptied, columns added, booleans garbled) and run
 * through main() in-process as `replay FILE --json --csv OUT`, sometimes also `replay FILE` and
 * `replay FILE --compare --preset …`. What must hold, whatever the damage:
 *  - exit code 0 or 2, never an exception out of main() nor a stack trace;
 *  - exit 2: exactly one stderr line starting `flashring replay:`; a refusal is that one line alone,
 *    names the file and (where it gives one) a line number inside the file, and writes nothing;
 *  - exit 0: the JSON parses, every size, peak and time in it is finite and non-negative, a peak is a
 *    plausible positive number or unknown (null), the --csv file is written and reads back;
 *  - a log that became two runs (a dump or the log repeated, two logs concatenated) is two runs or refused;
 *  - the input file is byte-identical afterwards.
 * Seeded; the seed is printed, FLASHRING_FUZZ_SEED=<seed> repeats a run, FLASHRING_FUZZ_MS sets
 * the budget (15 s by default). A failing input is kept in the temp folder the message names.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../src/cli/main.js';
import { parseCsv } from '../src/memory/csv.js';
import { rng } from '../src/reference/compare.js';

const SEED = Number(process.env.FLASHRING_FUZZ_SEED ?? (Date.now() % 2 ** 31));
const BUDGET_MS = Number(process.env.FLASHRING_FUZZ_MS ?? 15_000);
const STACK = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;
const ROOT = join(__dirname, '..');
/** More memory than any GPU holds (1 PiB): a peak above it is not plausible. */
const MAX_GIB = 2 ** 20;

type Rnd = () => number;
/** The same generator as the kernels' tests (mulberry32): a seed repeats a run. */
const mulberry32 = rng;

const dir = mkdtempSync(join(tmpdir(), 'flashring-fuzz-readers-'));
let keep = false; // a failing run keeps its inputs
afterAll(() => { if (!keep) rmSync(dir, { recursive: true, force: true }); });

interface Source { name: string; bytes: Buffer }
const read = (d: string, ext: string): Source[] =>
  readdirSync(join(ROOT, d)).filter((f) => f.endsWith(ext)).sort().map((f) => ({ name: `${d}/${f}`, bytes: readFileSync(join(ROOT, d, f)) }));
const LOGS: Source[] = ['test/fixtures/megatron', 'bench/results/memory-h200-2026-12-01/megatron', 'bench/results/memory-h200-2026-12-01/megatron-failed',
  'bench/results/2026-12-02-megatron-campaign/runs'].flatMap((d) => read(d, '.log'));
const CSVS: Source[] = [
  ...['bench/results/torchcp-2xh200-2026-11-30/activation_memory_measured.csv', 'bench/results/torchcp-2xh200-2026-11-30/plot/activation_memory.csv',
    'bench/results/memory-h200-2026-12-01/activation_memory_measured.csv', 'bench/results/h200-2026-11-30T04-31-first/bench-2026-11-30T04-33-14-409Z-kernels.csv'].map((name) => ({ name, bytes: readFileSync(join(ROOT, name)) })),
  { name: 'hand-written.csv', bytes: Buffer.from('seq_len,total_gib,fits,iter_ms,source\n4096,1.5,true,,"measured: a, ""quoted"""\n8192,,false,,oom\n16384,,TRUE,12.5,timing\n') },
];

// ---- mutations (bytes in, bytes out; each says what it did, so a failure can be rebuilt) ----

const DUMP_START = /-{3,}\s*arguments\s*-{3,}/, DUMP_END = /-{3,}\s*end of arguments\s*-{3,}/;
/** The lines of a file, each with its '\n' (the last may lack it). */
function linesOf(b: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let from = 0;
  for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, from)) { out.push(b.subarray(from, i + 1)); from = i + 1; }
  if (from < b.length) out.push(b.subarray(from));
  return out;
}
const BYTES: [string, number[]][] = [['CR', [13]], ['CRLF', [13, 10]], ['NUL', [0]], ['0xFF', [0xff]], ['0xC3', [0xc3]], ['E2 82', [0xe2, 0x82]], ['BOM', [0xef, 0xbb, 0xbf]], ['LF', [10]]];

type Mutation = (b: Buffer, r: Rnd) => { b: Buffer; what: string };
const ri = (r: Rnd, n: number) => Math.floor(r() * n);
const pick = <T>(r: Rnd, xs: T[]): T => xs[ri(r, xs.length)];
/** A random range [a, b) of n items, short mostly. */
const range = (r: Rnd, n: number) => { const a = ri(r, n); return [a, Math.min(n, a + 1 + ri(r, r() < 0.8 ? 4 : n))] as const; };

const COMMON: Record<string, Mutation> = {
  cut: (b, r) => { const at = ri(r, b.length + 1); return { b: b.subarray(0, at), what: `cut at byte ${at}` }; },
  'dup-lines': (b, r) => {
    const ls = linesOf(b), [x, y] = range(r, ls.length), to = r() < 0.5 ? y : ri(r, ls.length + 1);
    return { b: Buffer.concat([...ls.slice(0, to), ...ls.slice(x, y), ...ls.slice(to)]), what: `lines ${x + 1}-${y} copied before line ${to + 1}` };
  },
  'drop-lines': (b, r) => { const ls = linesOf(b), [x, y] = range(r, ls.length); return { b: Buffer.concat([...ls.slice(0, x), ...ls.slice(y)]), what: `lines ${x + 1}-${y} dropped` }; },
  'swap-lines': (b, r) => {
    const ls = linesOf(b), x = ri(r, ls.length), y = ri(r, ls.length);
    if (!ls.length) return { b, what: 'no lines to swap' };
    [ls[x], ls[y]] = [ls[y], ls[x]];
    return { b: Buffer.concat(ls), what: `lines ${x + 1} and ${y + 1} swapped` };
  },
  'flip-bytes': (b, r) => {
    const c = Buffer.from(b), n = 1 + ri(r, 6), at: string[] = [];
    for (let k = 0; k < n && c.length; k++) { const i = ri(r, c.length), v = ri(r, 256); at.push(`${i}=0x${v.toString(16)}`); c[i] = v; }
    return { b: c, what: `bytes set: ${at.join(' ')}` };
  },
  'flip-digits': (b, r) => {
    const digits: number[] = [];
    for (let i = 0; i < b.length; i++) if (b[i] >= 48 && b[i] <= 57) digits.push(i);
    const c = Buffer.from(b), at: string[] = [];
    for (let k = 0, n = 1 + ri(r, 4); k < n && digits.length; k++) {
      const i = pick(r, digits), v = pick(r, [...'0123456789', '-', '.', 'e', 'x', ' ', '|', ',', '+']);
      at.push(`${i}='${v}'`); c[i] = v.charCodeAt(0);
    }
    return { b: c, what: `digits set: ${at.join(' ')}` };
  },
  insert: (b, r) => {
    const [name, bytes] = pick(r, BYTES), at = name === 'BOM' && r() < 0.7 ? 0 : ri(r, b.length + 1);
    return { b: Buffer.concat([b.subarray(0, at), Buffer.from(bytes), b.subarray(at)]), what: `${name} inserted at byte ${at}` };
  },
  crlf: (b) => ({ b: Buffer.from(b.toString('latin1').replace(/\n/g, '\r\n'), 'latin1'), what: 'every LF made CRLF' }),
  cr: (b) => ({ b: Buffer.from(b.toString('latin1').replace(/\n/g, '\r'), 'latin1'), what: 'every LF made CR' }),
  empty: () => ({ b: Buffer.alloc(0), what: 'emptied' }),
};

const LOG_MUTATIONS: Record<string, Mutation> = {
  ...COMMON,
  'dup-dump': (b, r) => {
    const ls = linesOf(b), s = ls.findIndex((l) => DUMP_START.test(l.toString('latin1'))), e = ls.findIndex((l) => DUMP_END.test(l.toString('latin1')));
    if (s < 0 || e < s) return { b, what: 'no dump to copy' };
    const to = r() < 0.5 ? e + 1 : ri(r, ls.length + 1);
    return { b: Buffer.concat([...ls.slice(0, to), ...ls.slice(s, e + 1), ...ls.slice(to)]), what: `the dump (lines ${s + 1}-${e + 1}) copied before line ${to + 1}` };
  },
  'dup-whole': (b) => ({ b: Buffer.concat([b, b]), what: 'the log twice' }),
  concat: (b, r) => { const o = pick(r, LOGS); return { b: Buffer.concat([b, o.bytes]), what: `${o.name} appended` }; },
};

const CSV_MUTATIONS: Record<string, Mutation> = {
  ...COMMON,
  'dup-header': (b, r) => {
    const ls = linesOf(b), to = ri(r, ls.length + 1);
    return { b: Buffer.concat([...ls.slice(0, to), ls[0] ?? Buffer.alloc(0), ...ls.slice(to)]), what: `the header copied before line ${to + 1}` };
  },
  'dup-column': (b, r) => editLine(b, r, 0, (l) => { const cols = l.split(','); return `${l},${pick(r, cols).toUpperCase()}`; }, 'a header name repeated'),
  quote: (b, r) => { const at = ri(r, b.length + 1); return { b: Buffer.concat([b.subarray(0, at), Buffer.from('"'), b.subarray(at)]), what: `a quote inserted at byte ${at}` }; },
  'empty-cell': (b, r) => editLine(b, r, -1, (l) => { const c = l.split(','); c[ri(r, c.length)] = ''; return c.join(','); }, 'a cell emptied'),
  'extra-column': (b, r) => editLine(b, r, r() < 0.3 ? 0 : -1, (l) => `${l},${pick(r, ['', 'x', '1', '"a,b"', 'total_gib', 'NaN'])}`, 'a cell added'),
  'garble-bool': (b, r) => {
    const s = b.toString('latin1'), hits = [...s.matchAll(/\b(true|false|TRUE)\b/g)];
    if (!hits.length) return { b, what: 'no boolean to garble' };
    const h = pick(r, hits), v = pick(r, ['trie', 'fals', 'True', 'no', '0', 'yes', 'maybe', '', 'nan', 'tru"e']);
    return { b: Buffer.from(s.slice(0, h.index) + v + s.slice(h.index! + h[0].length), 'latin1'), what: `'${h[0]}' at byte ${h.index} made '${v}'` };
  },
  concat: (b, r) => { const o = pick(r, CSVS); return { b: Buffer.concat([b, o.bytes]), what: `${o.name} appended` }; },
};

/** One line edited (line -1: a random one), as text; the line's end is kept. */
function editLine(b: Buffer, r: Rnd, n: number, f: (line: string) => string, what: string): { b: Buffer; what: string } {
  const ls = linesOf(b);
  if (!ls.length) return { b, what: `${what}: no line` };
  const k = n < 0 ? ri(r, ls.length) : n, s = ls[k].toString('latin1'), m = /\r?\n$/.exec(s)?.[0] ?? '';
  ls[k] = Buffer.from(f(s.slice(0, s.length - m.length)) + m, 'latin1');
  return { b: Buffer.concat(ls), what: `${what} on line ${k + 1}` };
}

// ---- running one input and checking what came out ----

interface Run { code: number | 'threw'; out: string; err: string; thrown?: unknown }
async function run(argv: string[]): Promise<Run> {
  let out = '', err = '';
  const spies = [
    vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => { out += a.join(' ') + '\n'; }),
    vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => { err += a.join(' ') + '\n'; }),
    vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => { out += String(s); return true; }),
    vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => { err += String(s); return true; }),
  ];
  try {
    return { code: await main(argv), out, err };
  } catch (e) {
    return { code: 'threw', out, err, thrown: e };
  } finally {
    for (const s of spies) s.mockRestore();
  }
}

/** What is wrong with a number that must be finite and non-negative (or null: unknown); null when nothing. */
function badNumber(where: string, x: unknown, opt: { positive?: boolean; integer?: boolean; max?: number } = {}): string | null {
  if (x === null || x === undefined) return null;
  if (typeof x !== 'number' || !Number.isFinite(x)) return `${where} is ${JSON.stringify(x)}, not a finite number`;
  if (x < 0 || (opt.positive && x === 0)) return `${where} is ${x}`;
  if (opt.integer && !Number.isSafeInteger(x)) return `${where} is ${x}, not an integer`;
  if (opt.max !== undefined && x > opt.max) return `${where} is ${x}: not plausible`;
  return null;
}

type Row = Record<string, unknown>;
/** The numbers of a row replay wrote (JSON or CSV): sizes and peaks and times. */
function rowProblems(r: Row, where: string): string[] {
  const p = [
    badNumber(`${where}.seq_len`, r.seq_len ?? NaN, { positive: true, integer: true }),
    ...['tp', 'cp', 'pp', 'micro_batch'].map((k) => badNumber(`${where}.${k}`, r[k], { positive: true, integer: true })),
    badNumber(`${where}.total_gib`, r.total_gib, { positive: true, max: MAX_GIB }),
    badNumber(`${where}.activation_gib`, r.activation_gib, { max: MAX_GIB }),
    ...['hbm_gib', 'iter_ms', 'tflops_per_gpu'].map((k) => badNumber(`${where}.${k}`, r[k])),
  ];
  if (r.fits !== null && r.fits !== undefined && typeof r.fits !== 'boolean') p.push(`${where}.fits is ${JSON.stringify(r.fits)}`);
  return p.filter((x): x is string => x !== null);
}

/** The report of one run of a log: its point's peaks, times and theoretical sizes, and the model's prediction. */
function reportProblems(rep: Row, where: string): string[] {
  const pt = rep.point as Row | undefined;
  if (!pt) return [];
  const th = (pt.theoretical ?? {}) as Row;
  const p = [
    badNumber(`${where}.peakMaxAllocatedGiB`, pt.peakMaxAllocatedGiB, { positive: true, max: MAX_GIB }),
    badNumber(`${where}.peakMaxReservedGiB`, pt.peakMaxReservedGiB, { positive: true, max: MAX_GIB }),
    badNumber(`${where}.iterMs`, pt.iterMs), badNumber(`${where}.tflopsPerGpu`, pt.tflopsPerGpu),
    ...['weightAndOptimizerMiB', 'activationMiB', 'totalMiB'].map((k) => badNumber(`${where}.theoretical.${k}`, th[k])),
    ...['seqLength', 'tp', 'cp', 'pp', 'microBatch', 'numLayers', 'hiddenSize', 'numHeads', 'worldSize'].map((k) => badNumber(`${where}.${k}`, pt[k], { positive: true, integer: true })),
  ];
  const pred = rep.prediction as Row | undefined;
  if (pred && !('error' in pred)) p.push(badNumber(`${where}.prediction.totalBytes`, pred.totalBytes ?? NaN, { positive: true }), badNumber(`${where}.prediction.activationBytes`, pred.activationBytes ?? NaN));
  return p.filter((x): x is string => x !== null);
}

/** Cells of a CSV that say false (false, 0, no), counted naively (split at commas). */
const falseCells = (b: Buffer) => b.toString('utf8').split(/\r\n|\r|\n|,/).filter((c) => /^\s*"?(false|0|no)"?\s*$/i.test(c)).length;
type Mode = 'json' | 'plain' | 'compare';
/** The problems of one `replay` run on `file` (its bytes `input`), empty when every property holds. */
function problems(r: Run, file: string, input: Buffer, out: string | null, mode: Mode): string[] {
  if (r.code === 'threw') return [`threw ${(r.thrown as Error)?.stack?.split('\n').slice(0, 3).join(' | ')}`];
  if (r.code !== 0 && r.code !== 2) return [`exit ${r.code}`];
  const p: string[] = [];
  if (STACK.test(r.err)) p.push('a stack trace on stderr');
  if (!readFileSync(file).equals(input)) p.push('the input file changed');
  const errLines = r.err.replace(/\n$/, '').split('\n');
  const own = errLines.filter((l) => l.startsWith('flashring replay:'));
  if (r.code === 2) {
    if (own.length !== 1) p.push(`exit 2 with ${own.length} 'flashring replay:' lines`);
    const refused = errLines.length === 1;
    if (refused) {
      if (!own[0]?.startsWith(`flashring replay: ${file}`)) p.push(`the refusal does not name the file: ${own[0]}`);
      const line = / line (\d+)/.exec(own[0] ?? '');
      const total = input.toString('utf8').split(/\r\n|\r|\n/).length;
      if (line && (+line[1] < 1 || +line[1] > total)) p.push(`the refusal names line ${line[1]} of a file of ${total} lines`);
      if (out && existsSync(out)) p.push('a refused input wrote --csv');
      if (r.out !== '') p.push('a refused input printed on stdout');
    } else if (!/^flashring replay: \d+ of \d+ files? gave no point$/.test(errLines.at(-1)!)) p.push(`exit 2, several lines, the last is not the summary: ${errLines.at(-1)}`);
    return p;
  }
  if (own.length) p.push(`exit 0 with a 'flashring replay:' line: ${own[0]}`);
  if (mode === 'compare' && /NaN|Infinity/.test(r.out)) p.push(`the --compare table holds NaN or Infinity`);
  if (mode === 'json') {
    let j: { points: Row[]; reports: Row[] };
    try { j = JSON.parse(r.out); } catch (e) { return [...p, `stdout is not JSON: ${(e as Error).message}`]; }
    j.points.forEach((row, k) => p.push(...rowProblems(row, `points[${k}]`)));
    j.reports.forEach((rep, k) => p.push(...reportProblems(rep, `reports[${k}]`)));
    // An out-of-memory only where the file says one: a CSV cell false/0/no (never an empty or damaged cell), a log's own words.
    const ooms = j.points.filter((x) => x.fits === false).length;
    if (file.endsWith('.csv') && ooms > falseCells(input)) p.push(`${ooms} point(s) out of memory from ${falseCells(input)} false cell(s)`);
    if (file.endsWith('.log') && ooms && !/CUDA out of memory|OutOfMemoryError/.test(input.toString('latin1'))) p.push('an out-of-memory from a log that says none');
  }
  const csv = out ? (existsSync(out) ? readFileSync(out, 'utf8') : null) : mode === 'plain' ? r.out : null;
  if (out && csv === null) p.push('exit 0 and no --csv written');
  if (csv) {
    try {
      parseCsv(csv, 'written.csv').forEach((row, k) => p.push(...rowProblems(row as unknown as Row, `written row ${k + 1}`)));
    } catch (e) { p.push(`what replay wrote does not read back: ${(e as Error).message}`); }
  }
  return p;
}

/** A log that now holds two runs must be read as two (or refused), never as one. */
function twoRunsProblem(r: Run, file: string, c: Case): string | null {
  if (r.code !== 0 || c.kind !== 'log' || !file.endsWith('.log') || c.what.length !== 1 || !/^(the log twice|.* appended|the dump .* copied .*)$/.test(c.what[0])) return null;
  const j = JSON.parse(r.out) as { reports: { run?: number }[] };
  return j.reports.length >= 2 && j.reports.every((x) => x.run !== undefined) ? null : `${file} now holds two runs and was read as ${j.reports.length}`;
}

interface Case { kind: 'log' | 'csv'; src: Source; bytes: Buffer; what: string[] }
function draw(r: Rnd): Case {
  const kind = r() < 0.6 ? 'log' : 'csv';
  const src = pick(r, kind === 'log' ? LOGS : CSVS), muts = kind === 'log' ? LOG_MUTATIONS : CSV_MUTATIONS;
  let bytes = src.bytes;
  const what: string[] = [];
  for (let k = 0, n = 1 + ri(r, r() < 0.7 ? 1 : 3); k < n; k++) {
    const name = pick(r, Object.keys(muts));
    if (name === 'empty' && r() < 0.8) continue; // rare
    const m = muts[name](bytes, r);
    bytes = m.b; what.push(m.what);
  }
  return { kind, src, bytes, what };
}

describe('fuzz: replay on damaged logs and CSVs', () => {
  it(`exit 0 or 2, one line when refused, nothing written, only finite sizes (seed ${SEED}, ${BUDGET_MS / 1000} s)`, async () => {
    console.log(`fuzz-readers seed ${SEED} (repeat with FLASHRING_FUZZ_SEED=${SEED})`);
    expect(LOGS.length).toBeGreaterThanOrEqual(60);
    const rnd = mulberry32(SEED);
    const failures: string[] = [];
    const t0 = Date.now();
    let cases = 0, runs = 0;
    const codes = { 0: 0, 2: 0, refused: 0 };
    while (Date.now() - t0 < BUDGET_MS) {
      const c = draw(rnd);
      const swap = rnd() < 0.05; // now and then a log named .csv, a CSV named .log
      const ext = (c.kind === 'csv') === !swap ? 'csv' : 'log';
      const file = join(dir, `in${cases}.${ext}`), out = join(dir, `out${cases}.csv`);
      cases++;
      writeFileSync(file, c.bytes);
      const argvs: [string[], string | null, Mode][] = [[['replay', file, '--json', '--csv', out], out, 'json']];
      if (rnd() < 0.2) argvs.push([['replay', file], null, 'plain']);
      if (rnd() < 0.15) argvs.push([['replay', file, '--compare', '--preset', 'seed-32L-4096h'], null, 'compare']);
      const found: string[] = [];
      for (const [argv, o, mode] of argvs) {
        const r = await run(argv);
        runs++;
        if (r.code === 0 || r.code === 2) codes[r.code]++;
        if (r.code === 2 && r.err.trim().split('\n').length === 1) codes.refused++;
        found.push(...problems(r, file, c.bytes, o, mode).map((x) => `${argv.slice(2).join(' ') || '(plain)'}: ${x}`));
        if (mode === 'json' && !found.length) { const t = twoRunsProblem(r, file, c); if (t) found.push(t); }
        if (r.code !== 0 && r.code !== 2) break;
      }
      rmSync(out, { force: true });
      if (found.length) {
        keep = true;
        if (failures.length < 8) failures.push(`${c.src.name} [${c.what.join('; ')}] → ${file} (kept): ${found.slice(0, 3).join(' / ')}`);
      } else rmSync(file);
    }
    console.log(`fuzz-readers: ${cases} inputs, ${runs} runs in ${((Date.now() - t0) / 1000).toFixed(1)} s; exit 0: ${codes[0]}, exit 2: ${codes[2]} (${codes.refused} refused)`);
    expect(failures, `seed ${SEED}`).toEqual([]);
    expect(cases).toBeGreaterThan(20);
    expect(codes[0]).toBeGreaterThan(0);
    expect(codes.refused).toBeGreaterThan(0);
  }, BUDGET_MS + 60_000);
});

describe('what the fuzz suggests, case by case', () => {
  const A = readFileSync(join(ROOT, 'test/fixtures/megatron/core_0.16_tp4_cp2_sp_selective.log'));
  const put = (name: string, b: Buffer | string) => { const f = join(dir, name); writeFileSync(f, b); return f; };
  it('a log repeated whole: two runs with the same point', async () => {
    const f = put('twice.log', Buffer.concat([A, A]));
    const r = await run(['replay', f, '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.points).toHaveLength(2);
    expect(j.points[0].total_gib).toBe(j.points[1].total_gib);
  });
  it('the argument dump repeated right after itself: two runs, the first measured nothing (exit 2, the run named)', async () => {
    const ls = linesOf(A), s = ls.findIndex((l) => DUMP_START.test(String(l))), e = ls.findIndex((l) => DUMP_END.test(String(l)));
    const f = put('dump-twice.log', Buffer.concat([...ls.slice(0, e + 1), ...ls.slice(s, e + 1), ...ls.slice(e + 1)]));
    const r = await run(['replay', f, '--json']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${f}#1: no point (nothing measured`);
    expect(r.err.trim().split('\n').at(-1)).toBe('flashring replay: 1 of 1 file gave no point');
    expect(JSON.parse(r.out).points).toHaveLength(1);
  });
  it('every LF made CR, or CRLF, and a byte-order mark: read as the plain log (CR ends a line, as in the CSV reader)', async () => {
    const plain = JSON.parse((await run(['replay', put('plain.log', A), '--json'])).out).points[0];
    for (const [name, eol] of [['cr.log', '\r'], ['crlf.log', '\r\n']]) {
      const f = put(name, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(A.toString('latin1').replace(/\n/g, eol), 'latin1')]));
      const r = await run(['replay', f, '--json']);
      expect(r.code, r.err).toBe(0);
      expect({ ...JSON.parse(r.out).points[0], source: '' }).toEqual({ ...plain, source: '' });
    }
  });
  it('a CSV whose header is repeated as a row, or with a column added to every row: refused / read', async () => {
    const csv = 'seq_len,total_gib,fits\n4096,1.5,true\n';
    const r = await run(['replay', put('hdr.csv', csv + 'seq_len,total_gib,fits\n'), '--json']);
    expect(r.code).toBe(2);
    expect(r.err.trim()).toMatch(/hdr\.csv line 3: seq_len 'seq_len' is not a number$/);
    const x = await run(['replay', put('extra.csv', 'seq_len,total_gib,fits,zzz\n4096,1.5,true,x\n'), '--json']);
    expect(x.code).toBe(0);
    expect(JSON.parse(x.out).points[0]).toMatchObject({ seq_len: 4096, total_gib: 1.5, fits: true });
  });
});
