/**
 * `flashring bench` / `npm run bench`: the headless benchmark. Kernel sweep, then ring sweep;
 * progress on stderr, a summary table at the end, and results (adapter, date, command, shapes)
 * as JSON and CSV under --out. `--peer FILE` (JSON from bench/peers/torch_sdpa.py, run in the
 * same session on the same GPU) adds flashring/PyTorch ratios. The GEMM ceiling probe is a bench
 * of its own (bench/ceiling/run.ts: `node bench/ceiling/run.mjs`), not part of the product.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireDevices, adapterName, FlashDevice, withTuning } from '../gpu/device.js';
import { nodeGPU, robustShaders } from '../gpu/node.js';
import { InputError } from '../errors.js';
import { validateShape } from '../shape.js';
import { Precision } from '../kernels/precision.js';
import { LAYOUTS } from '../cp/plan/schedule.js';
import { MAX_RANKS } from '../cli/ringArgs.js';
import { KernelRow, MAX_REPS, SPOT_CHECK_N, spotCheck, tensorFits, timeKernels } from './kernels.js';
import { gemmPeers } from './peerGemm.js';
import { entryPins, storedEntry, type TuneStore } from './tune.js';
import { fileTuneStore } from './tuneStore.js';
import { RingRow, ringPoint } from './ring.js';
import { checkMemorySweep, MEMORY_SWEEP_FILES, memoryParallel, memorySweep } from './memory.js';
import { CsvRow, measuredRows, parseCsv } from '../memory/csv.js';
import { choices, distinct, numberArg, nums, one, parseCommand } from '../cli/args.js';
import { checkInputFile, checkNamed, MAX_TEXT_BYTES, MEMORY_SWEEP_KINDS, OutputPlan } from '../cli/files.js';
import { progressOnTerminal } from '../cli/progress.js';
import { counted } from '../plural.js';
import { atExit } from '../exit.js';
import { aligned } from '../table.js';

const HELP = `usage: flashring bench [options]   (npm run bench -- [options])
  --quick               small sizes, about 20 s on a 2-core CPU (lavapipe)
  --N LIST              sequence lengths for the kernel sweep (default 1024,4096,16384; quick 128,256)
  --D LIST              head dims (default 64,128; quick 64)
  --heads H --batch B   (default 16 and 1; quick 2 and 1; heads at most 65535)
  --precision LIST      f32,f16 (default: every path the adapter has)
  --causal LIST         false,true (default both)
  --reps K              timed repeats, median reported (default 10; quick 3; at most ${MAX_REPS})
  --ring-R LIST         ring sizes (default 1,2,4,8; quick 1,2,4)
  --ring-N LIST         ring sequence lengths (default 4096,16384; quick 256)
  --layouts LIST        ring layouts (default contiguous,zigzag,striped)
  --no-ring             skip the ring sweep (no -ring.csv)
  --no-kernels          skip the kernel sweep (no -kernels.csv)
  --no-memory           skip the memory sweep (activation_memory.csv/.json/.png); not all three at once
  --force               write the memory sweep's files over files of those names in --out that are not a bench's own
  --memory-preset P     model of the memory sweep (default seed-32L-4096h)
  --memory-tp T         tensor-parallel size of the memory sweep (default 8, with sequence parallelism)
  --hbm-gib G           HBM line of the memory plot (default 80)
  --measured FILE       activation_memory.csv of measured points drawn over the model's lines
  --peer FILE           PyTorch peer results (bench/peers/torch_sdpa.py) for ratios; with its --gemm, each row's
                        share of cuBLAS's GEMM on the same units too (gemmShare)
  --tuned STORE         kernels with the pins \`flashring tune\` stored in STORE (its JSON store) where it has
                        an entry for the point's D, precision and mask on this adapter with these kernels; the
                        defaults elsewhere, named in a note on stderr
  --out DIR             results folder (default bench/out), relative to the working folder (not the repository:
                        npm run bench runs in the repository's root, so its results land in its bench/out)
The -kernels.csv's checkErr (and the table's) is the float64 spot check of each (D, precision, causal), made once at
N = ${SPOT_CHECK_N} before it is timed (the largest relative error of O, LSE, dQ, dK, dV): the same on each of its rows.`;

/**
 * Point i of n (`label`: the next one, or at i = n the phase's end): a bar rewritten in place on a terminal; in a log or
 * pipe a line each time another tenth of the phase is done (as timedPhase), naming the next point, and one at its end.
 */
export function progress(label: string, i: number, n: number): void {
  if (!progressOnTerminal()) {
    if (i === n) process.stderr.write(`${label} (${counted(n, 'point')})\n`);
    else if (i > 0 && Math.floor((10 * i) / n) > Math.floor((10 * (i - 1)) / n)) process.stderr.write(`  ${i} of ${n} points done; next: ${label}\n`);
    return;
  }
  const w = 24, f = n ? Math.round((w * i) / n) : w;
  process.stderr.write(`\r[${'#'.repeat(f)}${'.'.repeat(w - f)}] ${i}/${n} ${label.padEnd(60).slice(0, 60)}`);
  if (i === n) process.stderr.write('\n');
}

export interface PeerRow { pass: string; M?: number; N: number; D: number; H: number; B: number; causal: boolean; dtype: string; backend: string; ms: number; tflops: number }

const BENCH_OPTIONS = {
  quick: { type: 'boolean' }, N: { type: 'string' }, D: { type: 'string' }, heads: { type: 'string' }, batch: { type: 'string' },
  precision: { type: 'string' }, causal: { type: 'string' }, reps: { type: 'string' }, 'ring-R': { type: 'string' },
  'ring-N': { type: 'string' }, layouts: { type: 'string' }, 'no-ring': { type: 'boolean' }, 'no-kernels': { type: 'boolean' }, 'no-memory': { type: 'boolean' }, force: { type: 'boolean' }, 'memory-preset': { type: 'string' },
  'memory-tp': { type: 'string' }, 'hbm-gib': { type: 'string' }, measured: { type: 'string' }, peer: { type: 'string' }, tuned: { type: 'string' },
  out: { type: 'string' }, help: { type: 'boolean', short: 'h' },
} as const;
const parseBenchArgs = (argv: string[]) => parseCommand('bench', argv, BENCH_OPTIONS).values;

/** The GEMM ceiling's flags, which moved with it to bench/ceiling/: named, not "unknown option". */
const MOVED = ['--ceiling', '--ceiling-size'];

export async function benchCommand(argv: string[]): Promise<number> {
  const moved = argv.find((a) => MOVED.includes(a.split('=')[0]));
  if (moved) throw new InputError(`${moved.split('=')[0]}: the GEMM ceiling probe is a bench of its own now: node bench/ceiling/run.mjs --help`);
  const values = parseBenchArgs(argv);
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const cfg = benchConfig(values);
  // Results are written as they come (an interrupted run keeps what it measured), each file through
  // a temporary; the folder appears with the first of them, and a run that measured nothing leaves none.
  const inputs = ([['peer', values.peer], ['measured', values.measured], ['tuned', values.tuned]] as const).flatMap(([flag, path]) => (path === undefined ? [] : [{ flag, path }]));
  for (const i of inputs) await checkInputFile(i.flag, i.path, MAX_TEXT_BYTES);
  // The memory sweep's files have fixed names (the rest are stamped per run): named, so an input among them (--measured) is refused.
  const names = values['no-memory'] ? [] : MEMORY_SWEEP_FILES;
  // Each is overwritten only where it is a bench's own (a measured activation_memory.csv someone keeps there is refused).
  const plan = await OutputPlan.make(inputs, [{ flag: 'out', path: cfg.outDir, kind: 'dir', names, kinds: values['no-memory'] ? {} : MEMORY_SWEEP_KINDS }], { force: !!values.force });
  const peers = await readPeers(values.peer);
  const measured = await readMeasured(values.measured);
  const tuned = values.tuned === undefined ? undefined : await fileTuneStore(values.tuned, 'tuned', false);
  try {
    return await benchRun(values, argv, cfg, plan, peers, measured, tuned);
  } catch (e) {
    await plan.abandon();
    throw e;
  }
}

/** Flags that mean something only with another: refused, not ignored, when it is absent. */
const NEEDS: [flag: string, needs: (v: BenchValues) => boolean, why: string][] = [
  ['measured', (v) => !v['no-memory'], 'draws measured points on the memory sweep, which --no-memory skips'],
  ['force', (v) => !v['no-memory'], 'overwrites the memory sweep\'s files, which --no-memory skips'],
  ['memory-preset', (v) => !v['no-memory'], 'chooses the memory sweep\'s model, which --no-memory skips'],
  ['memory-tp', (v) => !v['no-memory'], 'sets the memory sweep\'s TP, which --no-memory skips'],
  ['hbm-gib', (v) => !v['no-memory'], 'draws the HBM line of the memory sweep, which --no-memory skips'],
  ['ring-R', (v) => !v['no-ring'], 'sets the ring sweep, which --no-ring skips'],
  ['ring-N', (v) => !v['no-ring'], 'sets the ring sweep, which --no-ring skips'],
  ['layouts', (v) => !v['no-ring'], 'sets the ring sweep, which --no-ring skips'],
  ['N', (v) => !v['no-kernels'], 'sets the kernel sweep, which --no-kernels skips (the ring has --ring-N)'],
  ['causal', (v) => !v['no-kernels'], 'sets the kernel sweep, which --no-kernels skips (the ring runs causal)'],
  ['peer', (v) => !v['no-kernels'], 'gives ratios for the kernel sweep, which --no-kernels skips'],
  ['tuned', (v) => !v['no-kernels'], 'tunes the kernel sweep, which --no-kernels skips'],
];

function checkFlagsApply(v: BenchValues): void {
  if (v['no-kernels'] && v['no-ring'] && v['no-memory']) throw new InputError('--no-kernels, --no-ring and --no-memory skip every sweep: leave out at least one of them');
  for (const [flag, ok, why] of NEEDS)
    if (v[flag as keyof BenchValues] !== undefined && !ok(v)) throw new InputError(`--${flag} ${why}: leave it out or drop the flag that skips it`);
}

/** What the bench's one-value flags say of a list. */
const BENCH_SWEEPS = ' (the bench sweeps --N, --D, --precision, --causal, --ring-R, --ring-N and --layouts)';

/** Every flag's value, checked before anything is read, written or acquired. */
function benchConfig(values: BenchValues) {
  checkFlagsApply(values);
  // An empty name: one line saying so (as --out '' is refused), not 'no such file' or a lost run.
  for (const f of ['peer', 'measured', 'tuned'] as const) checkNamed(f, values[f]);
  const q = !!values.quick;
  const ringRs = distinct('ring-R', nums(values['ring-R'], q ? '1,2,4' : '1,2,4,8', 'ring-R', MAX_RANKS));
  const ringNs = distinct('ring-N', nums(values['ring-N'], q ? '256' : '4096,16384', 'ring-N'));
  if (!values['no-ring'] && Math.max(...ringRs) > Math.min(...ringNs))
    throw new InputError(`--ring-R ${Math.max(...ringRs)} is more ranks than the ${Math.min(...ringNs)} tokens of --ring-N ${Math.min(...ringNs)}`);
  const Ds = distinct('D', nums(values.D, q ? '64' : '64,128', 'D'));
  for (const D of Ds) {
    try {
      validateShape({ B: 1, Hq: 1, Hkv: 1, Nq: 1, Nk: 1, D });
    } catch (e) {
      throw new InputError(`--D ${D}: ${(e as Error).message}`);
    }
  }
  return {
    Ns: distinct('N', nums(values.N, q ? '128,256' : '1024,4096,16384', 'N')), Ds,
    // The kernels dispatch every head of a call at once (the grid's y): WebGPU's least maxComputeWorkgroupsPerDimension.
    H: one(values.heads, q ? '2' : '16', 'heads', 65535, BENCH_SWEEPS), B: one(values.batch, '1', 'batch', undefined, BENCH_SWEEPS),
    reps: one(values.reps, q ? '3' : '10', 'reps', MAX_REPS, BENCH_SWEEPS),
    causals: distinct('causal', choices(values.causal, 'false,true', 'causal', ['false', 'true'] as const)).map((x) => x === 'true'),
    ringRs, ringNs, layouts: distinct('layouts', choices(values.layouts, LAYOUTS.join(','), 'layouts', LAYOUTS)),
    wanted: values.precision === undefined ? null : distinct('precision', choices(values.precision, '', 'precision', ['f32', 'f16'] as const)),
    outDir: values.out ?? 'bench/out',
    sweeps: { kernels: !values['no-kernels'], ring: !values['no-ring'] } as Sweeps,
    hbm: numberArg('hbm-gib', values['hbm-gib'] ?? '80', { above: 0, max: 1e6, what: 'a positive number of GiB' }),
    ...memorySweepOf(values),
    /** Whether Dawn's robustness transform is on for the kernels (the `robust` column; src/gpu/node.ts). */
    robust: robustShaders(),
  };
}
type BenchConfig = ReturnType<typeof benchConfig>;

/**
 * The memory sweep's preset and TP, checked with the other flags (an unknown preset, a TP the model or the sweep's
 * lengths do not split: one line, before any device). Not checked where --no-memory skips the sweep.
 */
function memorySweepOf(values: BenchValues): { memoryPreset: string; memoryTp: number } {
  const memoryPreset = values['memory-preset'] ?? 'seed-32L-4096h';
  const memoryTp = one(values['memory-tp'], '8', 'memory-tp', undefined, BENCH_SWEEPS);
  if (!values['no-memory']) checkMemorySweep(memoryPreset, memoryTp);
  return { memoryPreset, memoryTp };
}

/** The fields of a peer row that withPeers reads, with their types. */
const PEER_FIELDS = { pass: 'string', N: 'number', D: 'number', H: 'number', B: 'number', causal: 'boolean', dtype: 'string', backend: 'string', tflops: 'number' } as const;

/**
 * A peer file's rows, checked before any device is acquired: JSON with a `results` array of
 * objects, each with the fields withPeers reads (a file that is not one would fail every save of
 * the sweep, and the sweep with it).
 */
function peerRows(text: string, path: string): PeerRow[] {
  const bad = (what: string): never => {
    throw new InputError(`--peer ${path}: ${what}; give the JSON bench/peers/torch_sdpa.py writes`);
  };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return bad(`not JSON (${(e as Error).message})`);
  }
  const results = (data as { results?: unknown } | null)?.results;
  if (typeof data !== 'object' || data === null || !Array.isArray(results)) return bad('no "results" array of PyTorch peer rows');
  results.forEach((r, i) => {
    if (typeof r !== 'object' || r === null || Array.isArray(r)) bad(`results[${i}] is not an object`);
    for (const [k, type] of Object.entries(PEER_FIELDS)) {
      const v = (r as Record<string, unknown>)[k];
      if (typeof v !== type || (type === 'number' && Number.isNaN(v))) bad(`results[${i}].${k} is ${v === undefined ? 'missing' : (JSON.stringify(v) ?? String(v)).slice(0, 40)}, not a ${type}`);
    }
  });
  return results as PeerRow[];
}

async function readPeers(path: string | undefined): Promise<PeerRow[]> {
  if (path === undefined) return [];
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new InputError(`--peer ${path}: cannot read PyTorch peer results (${(e as Error).message}); run bench/peers/torch_sdpa.py first`);
  }
  return peerRows(text, path);
}

async function readMeasured(path: string | undefined): Promise<CsvRow[]> {
  if (path === undefined) return [];
  try {
    return measuredRows(parseCsv(await readFile(path, 'utf8'), path), path).rows;
  } catch (e) {
    throw new InputError(`--measured ${path}: ${(e as Error).message}`);
  }
}

/**
 * Bytes of one attention call's tensors (Q, K, V, O, dO, dQ, dK, dV, LSE and Δ), checked against
 * the device before any sweep starts: a shape the device cannot bind is refused by name.
 */
export function checkSizes(dev: FlashDevice, cfg: Pick<BenchConfig, 'B' | 'H' | 'Ns' | 'Ds' | 'ringNs' | 'sweeps'>, precisions: Precision[]): void {
  const eb = precisions.includes('f32') ? 4 : 2;
  const lim = dev.device.limits;
  // Only the sweeps that run (a skipped one's defaults refused the other), the ring at its one head dim (ringSweep).
  const shapes = [...(cfg.sweeps.kernels ? cfg.Ns.map((N) => ({ N, flag: '--N', Ds: cfg.Ds })) : []), ...(cfg.sweeps.ring ? cfg.ringNs.map((N) => ({ N, flag: '--ring-N', Ds: cfg.Ds.slice(0, 1) })) : [])];
  for (const { N, flag, Ds } of shapes) for (const D of Ds) {
    const tensor = cfg.B * cfg.H * N * D * eb;
    if (!tensorFits(dev, tensor))
      throw new InputError(`--batch ${cfg.B} --heads ${cfg.H} ${flag} ${N} --D ${D} needs ${(tensor / 2 ** 20).toFixed(0)} MiB per tensor (8 tensors); ${adapterName(dev.adapter)} binds at most ${(lim.maxStorageBufferBindingSize / 2 ** 20).toFixed(0)} MiB (maxStorageBufferBindingSize): choose smaller sizes`);
  }
}

type BenchValues = ReturnType<typeof parseBenchArgs>;

/** What a run has measured so far, and what failed. */
export interface BenchState {
  kernelRows: KernelRow[];
  ringRows: RingRow[];
  failures: string[];
}

/** The devices of a run (as many as the largest ring) and its precisions, checked against the first device. */
async function benchDevices(values: BenchValues, cfg: BenchConfig): Promise<{ devs: FlashDevice[]; precisions: Precision[] }> {
  const devs: FlashDevice[] = await acquireDevices(await nodeGPU(), Math.max(1, values['no-ring'] ? 1 : Math.max(...cfg.ringRs)));
  const dev = devs[0];
  const precisions: Precision[] = cfg.wanted ?? (dev.hasF16 ? ['f32', 'f16'] : ['f32']);
  try {
    if (precisions.includes('f16') && !dev.hasF16) throw new InputError(`--precision f16 needs shader-f16, which ${adapterName(dev.adapter)} does not offer`);
    checkSizes(dev, cfg, precisions);
  } catch (e) {
    for (const d of devs) d.destroy();
    throw e;
  }
  return { devs, precisions };
}

/** The memory sweep's files and its one-line note ('' when --no-memory skips it). */
async function memoryNoteOf(values: BenchValues, cfg: BenchConfig, plan: OutputPlan, measured: CsvRow[]): Promise<string> {
  if (values['no-memory']) return '';
  const m = await memorySweep(cfg.outDir, (f) => plan.write(f), cfg.memoryPreset, memoryParallel(cfg.memoryTp), cfg.hbm, measured);
  const note = `memory sweep: ${m.csv}, ${m.json}, ${m.png ?? `no PNG (${m.pngSkipped})`}\n  longest fitting sequence: ${Object.entries(m.oom).map(([k, v]) => `${k} ${v ?? 'none'}`).join('; ')}`;
  console.error('memory sweep done (its files and longest fitting sequences: in the summary)');
  return note;
}

/**
 * The kernel rows with their PyTorch peer (same pass, shape, mask; f16 against FlashAttention-2, f32 against
 * memory-efficient) and the ratio; and, where the peer file holds torch_sdpa.py --gemm's matmuls, the row's share of
 * the vendor's GEMM on the units the row's path runs on: tensor cores (subgroup matrices) against cuBLAS's f16
 * matmul, the portable (scalar) path, FMA units only, against cuBLAS's f32 matmul with TF32 off (docs/performance.md,
 * twenty-eighth step: the memory-efficient f32 peer itself runs on tensor cores).
 */
export function withPeers(rows: KernelRow[], peers: PeerRow[]) {
  const peerOf = (r: KernelRow) =>
    peers.find((p) => p.pass === r.pass && p.N === r.N && p.D === r.D && p.H === r.H && p.B === r.B && p.causal === r.causal &&
      (r.precision === 'f16' ? p.dtype === 'float16' && p.backend === 'flash' : p.dtype === 'float32' && p.backend === 'efficient'));
  // A fwd+bwd row whose passes ran on different units ("subgroup-matrix+scalar") has no one GEMM to be set against.
  const gemms = gemmPeers(peers);
  const gemmOf = (r: KernelRow) => (r.path.includes('+') ? undefined : gemms[r.path === 'subgroup-matrix' ? 'f16' : 'f32']);
  return rows.map((r) => {
    const p = peerOf(r), g = gemmOf(r);
    return {
      ...r, peerBackend: p ? `torch-${p.backend}-${p.dtype}` : '', peerTflops: p?.tflops ?? null, ratio: p ? r.tflops / p.tflops : null,
      gemmPeer: g ? `torch-matmul-${g.dtype ?? 'float16'}${g.dtype === 'float32' ? '-tf32off' : ''}-${g.N}^3` : '', gemmTflops: g?.tflops ?? null, gemmShare: g ? r.tflops / g.tflops : null,
    };
  });
}

/** The sweeps a run makes: a skipped one writes no CSV (and the summary names none). */
interface Sweeps { kernels: boolean; ring: boolean }

/** The CSV files of the sweeps that run, as the summary names them. */
const csvSuffixes = (sweeps: Sweeps) => [...(sweeps.kernels ? ['-kernels.csv'] : []), ...(sweeps.ring ? ['-ring.csv'] : [])];

/**
 * Writes JSON and the CSVs of the sweeps that run, of what `state` holds; called after every point so an interrupted
 * run keeps what it measured. A run of the memory sweep alone writes none of them (its files are its own).
 */
export function saver(meta: object, stamp: string, cfg: Pick<BenchConfig, 'outDir' | 'robust' | 'sweeps'>, peerFile: string | undefined, plan: OutputPlan, peers: PeerRow[], state: BenchState) {
  const { sweeps } = cfg;
  // `complete`: false in the saves during the sweeps (what a run stopped by a signal leaves), true in the last.
  return async (complete = false) => {
    const rows = withPeers(state.kernelRows, peers);
    if (!sweeps.kernels && !sweeps.ring) return rows;
    const json = { ...meta, complete, kernels: rows, ring: state.ringRows, failures: state.failures, peerFile: peerFile ?? null };
    // checkErr: CHECK_ERR_WHAT (the same on each row of a D, precision and mask).
    const cols = ['pass', 'B', 'H', 'N', 'D', 'causal', 'precision', 'path', 'tiles', 'robust', 'ms', 'tflops', 'timer', 'checkErr', 'peerBackend', 'peerTflops', 'ratio', 'gemmPeer', 'gemmTflops', 'gemmShare'] as const;
    const rcols = ['R', 'layout', 'N', 'B', 'H', 'D', 'causal', 'precision', 'fwdWallMs', 'bwdWallMs', 'gpuKernelMs', 'unhiddenFraction', 'overlapEfficiency', 'bytesMoved', 'imbalance'] as const;
    const file = (suffix: string) => join(cfg.outDir, `bench-${stamp}${suffix}`);
    await plan.write([
      { path: file('.json'), data: JSON.stringify(json, null, 1) },
      ...(sweeps.kernels ? [{ path: file('-kernels.csv'), data: [cols.join(','), ...rows.map((r) => cols.map((c) => c === 'robust' ? String(cfg.robust) : String(r[c] ?? '')).join(','))].join('\n') + '\n' }] : []),
      ...(sweeps.ring ? [{ path: file('-ring.csv'), data: [rcols.join(','), ...state.ringRows.map((r) => rcols.map((c) => String(r[c] ?? '')).join(','))].join('\n') + '\n' }] : []),
    ]);
    return rows;
  };
}

/**
 * The device for a sweep point: with the pins the --tuned store holds for it (an entry whose pins are not pins: one line naming
 * the file), else `dev`; a point the store has no entry for is added to `missing` (said once the checks are done).
 */
async function tunedDevice(dev: FlashDevice, tuned: { store: TuneStore; file: string } | undefined, r: Parameters<typeof storedEntry>[2], missing: string[]): Promise<FlashDevice> {
  if (!tuned) return dev;
  const entry = await storedEntry(dev, tuned.store, r), pins = entryPins(entry);
  if (!entry) missing.push(`D=${r.D} ${r.precision}${r.causal ? ' causal' : ''}`);
  if (!pins) return dev;
  try {
    return withTuning(dev, { ...dev.tuning, ...pins });
  } catch (e) {
    throw new InputError(`--tuned ${tuned!.file}: the entry for D=${r.D} ${r.precision}${r.causal ? ' causal' : ''} holds pins the kernels do not take (${(e as Error).message}); run flashring tune --fresh --store ${tuned!.file}`);
  }
}

/**
 * What --tuned did not tune: the points its store has no entry for on this adapter and these kernels (a store from
 * another machine, or from a flashring whose kernels have changed since, holds none), which ran the defaults.
 */
const untunedNote = (file: string, missing: string[]): string =>
  `--tuned ${file} has no entry for ${missing.join(', ')} on this adapter with these kernels (entries are per adapter and kernels' hash: ` +
  `one tuned on another machine or by another flashring is not used): those points ran the default tiles; flashring tune --store ${file} tunes them`;

/** The kernel sweep: each (D, precision, causal) checked against float64 first (correctness first), then timed at every N. */
async function kernelSweep(
  dev0: FlashDevice, cfg: BenchConfig, precisions: Precision[], state: BenchState, save: () => Promise<unknown>, tuned?: { store: TuneStore; file: string },
): Promise<void> {
  const { Ns, Ds, H, B, reps, causals } = cfg;
  const checks = new Map<string, number>(), devs = new Map<string, FlashDevice>(), missing: string[] = [];
  const configs = Ds.flatMap((D) => precisions.flatMap((p) => causals.map((c) => ({ D, p, c }))));
  for (const [i, { D, p, c }] of configs.entries()) {
    progress(`float64 check D=${D} ${p} causal=${c}`, i, configs.length);
    const dev = await tunedDevice(dev0, tuned, { D, precision: p, causal: c, robust: cfg.robust }, missing);
    devs.set(`${D}:${p}:${c}`, dev);
    let r: { err: number; ok: boolean };
    try {
      r = await spotCheck(dev, D, p, c);
    } catch (e) {
      state.failures.push(`D=${D} ${p} causal=${c}: ${(e as Error).message.split('\n')[0]} — no speed reported`);
      continue;
    }
    if (!r.ok) state.failures.push(`D=${D} ${p} causal=${c}: error ${r.err.toExponential(2)} over tolerance — no speed reported`);
    else checks.set(`${D}:${p}:${c}`, r.err);
  }
  progress('float64 checks done', configs.length, configs.length);
  if (missing.length) process.stderr.write(`${untunedNote(tuned!.file, missing)}\n`);
  const jobs = Ns.flatMap((N) => Ds.flatMap((D) => precisions.flatMap((p) => causals.map((c) => ({ N, D, p, c })))))
    .filter((j) => checks.has(`${j.D}:${j.p}:${j.c}`));
  for (const [i, j] of jobs.entries()) {
    progress(`kernels N=${j.N} D=${j.D} ${j.p} causal=${j.c}`, i, jobs.length);
    try {
      const dev = devs.get(`${j.D}:${j.p}:${j.c}`)!;
      state.kernelRows.push(...(await timeKernels(dev, { B, Hq: H, Hkv: H, Nq: j.N, Nk: j.N, D: j.D }, j.c, j.p, reps, checks.get(`${j.D}:${j.p}:${j.c}`)!)));
      await save();
    } catch (e) {
      state.failures.push(`kernels N=${j.N} D=${j.D} ${j.p} causal=${j.c}: ${(e as Error).message}`);
    }
  }
  progress('kernels done', jobs.length, jobs.length);
}

/** The ring sweep (causal, forward and backward, each point's timeline saved); a length that runs out of memory stops the longer ones, each said as skipped. */
export async function ringSweep(
  devs: FlashDevice[], cfg: BenchConfig, precisions: Precision[], state: BenchState, save: () => Promise<unknown>, plan: OutputPlan, stamp: string,
): Promise<void> {
  const { H, B, Ds, ringNs, ringRs, layouts, outDir } = cfg;
  const rp = precisions.includes('f16') ? 'f16' : 'f32';
  const rjobs = ringNs.flatMap((N) => ringRs.flatMap((R) => layouts.map((layout) => ({ N, R, layout }))));
  let stopAt = Infinity;
  for (const [i, j] of rjobs.entries()) {
    progress(`ring N=${j.N} R=${j.R} ${j.layout}`, i, rjobs.length);
    if (j.N >= stopAt) {
      state.failures.push(`ring N=${j.N} R=${j.R} ${j.layout}: skipped: N=${stopAt} ran out of memory, so no longer length was run`);
      continue;
    }
    try {
      const timeline = join(outDir, 'timelines', `ring-${stamp}-R${j.R}-${j.layout}-N${j.N}.timeline.json`);
      state.ringRows.push(await ringPoint(devs.slice(0, j.R), { B, Hq: H, Hkv: H, Nq: j.N, Nk: j.N, D: Ds[0] }, j.layout, true, rp, true,
        (data) => plan.write([{ path: timeline, data }])));
      await save();
    } catch (e) {
      state.failures.push(`ring N=${j.N} R=${j.R} ${j.layout}: ${(e as Error).message}`);
      if (/memory|OutOfMemory|exceeds|allocation/i.test((e as Error).message)) stopAt = j.N;
    }
  }
  progress('ring done', rjobs.length, rjobs.length);
}

/** What the results say of the adapter (adapterInfo: its vendor, architecture, device); `cpuAdapter`: its figures are no GPU's. */
export function benchMeta(dev: FlashDevice, argv: string[], cfg: Pick<BenchConfig, 'robust'>, now = new Date()) {
  return {
    kind: 'flashring.bench', createdAt: now.toISOString(), adapter: adapterName(dev.adapter), cpuAdapter: dev.isCPU,
    adapterInfo: { vendor: dev.adapter.vendor, architecture: dev.adapter.architecture, device: dev.adapter.device },
    // --robust is the command's (main.ts takes it off argv): said here, as the CSV's robust column says it.
    command: `flashring bench ${argv.join(' ')}`.trim(), robust: cfg.robust, node: process.version,
    flops: 'forward 4·B·H·N²·D, ×0.5 causal; backward ×2.5; forward+backward ×3.5',
  };
}

/** What the adapter's name is followed by in the progress and the summary's title: a CPU's timings are no GPU's. */
const CPU_NOTE = (dev: FlashDevice) => (dev.isCPU ? ' (CPU adapter: timings are not GPU figures)' : '');

/** The line of a run stopped before its end (a signal): what the files written so far hold, of what was planned. */
export function stoppedNote(state: BenchState, file: string, planned: { kernels: number; ring: number }): string {
  const k = state.kernelRows.length, r = state.ringRows.length;
  if (!k && !r) return 'bench stopped before its end: no point finished, no results written';
  const held = [...(planned.kernels ? [`${k} of ${planned.kernels} kernel rows`] : []), ...(planned.ring ? [`${r} of ${planned.ring} ring points`] : [])];
  return `bench stopped before its end: ${file} (and its CSVs) holds what it finished, ${held.join(' and ')}, with "complete": false`;
}

/** What a row's checkErr is (the CSV column keeps its name: the notes and stored results read it). */
const CHECK_ERR_WHAT = `the float64 spot check of the row's D, precision and mask, made once at N = ${SPOT_CHECK_N} (the same on each of its rows)`;

/** A time the run has ('-' where it has none: no backward, or no timestamp queries), at one decimal. */
const msCell = (x: number | null) => (x === null ? '-' : x.toFixed(1));
const pctCell = (x: number) => `${(100 * x).toFixed(1)}%`;

/**
 * The ring rows as the summary shows them, under a line naming them: each column as wide as its widest cell, numbers
 * right-aligned under their names (aligned); a time the run has not is '-', never NaN or 0.0.
 */
export function ringTable(rows: RingRow[]): string[] {
  const head = ['R', 'layout', 'N', 'fwd ms', 'bwd ms', 'gpu kernels ms', 'unhidden', 'overlap', 'imbalance'];
  const cells = rows.map((r) => [String(r.R), r.layout, String(r.N), msCell(r.fwdWallMs), msCell(r.bwdWallMs), msCell(r.gpuKernelMs), pctCell(r.unhiddenFraction), pctCell(r.overlapEfficiency), r.imbalance.toFixed(3)]);
  return ['ring (causal, fwd+bwd)', ...aligned([head, ...cells], [1])];
}

/** The kernel rows as the summary shows them (aligned: a path of any length keeps the columns after it in line). */
export function kernelTable(rows: ReturnType<typeof withPeers>): string[] {
  const head = ['pass', 'N', 'D', 'causal', 'prec', 'path', 'ms', 'TFLOP/s', 'peer TFLOP/s', 'ratio', 'GEMM share†', 'checkErr*'];
  const fixed = (x: number | null, d: number) => (x === null ? '-' : x.toFixed(d));
  const cells = rows.map((r) => [r.pass, String(r.N), String(r.D), String(r.causal), r.precision, r.path, r.ms.toFixed(3), r.tflops.toFixed(3),
    fixed(r.peerTflops, 1), fixed(r.ratio, 3), fixed(r.gemmShare, 3), r.checkErr.toExponential(1)]);
  return aligned([head, ...cells], [0, 3, 4, 5]);
}

/** The summary on stdout: kernel rows with their peers, ring rows, the memory note, failures, where the results are. */
function printSummary(title: string, rows: ReturnType<typeof withPeers>, state: BenchState, memoryNote: string, results: string | null, csvs: string[]): void {
  console.log(`\n${title}`);
  if (rows.length) console.log(kernelTable(rows).join('\n'));
  if (rows.length) console.log(`* checkErr: ${CHECK_ERR_WHAT}\n† GEMM share: TFLOP/s over the vendor's GEMM on the same units (--peer from torch_sdpa.py --gemm; tensor cores: f16 matmul, portable: f32 matmul, TF32 off)`);
  if (state.ringRows.length) console.log(`\n${ringTable(state.ringRows).join('\n')}`);
  if (memoryNote) console.log(`\n${memoryNote}`);
  if (state.failures.length) console.log(`\nfailures:\n  ${state.failures.join('\n  ')}`);
  if (results) console.log(`\nresults: ${results}${csvs.length ? ` (+ ${csvs.join(', ')})` : ''}`);
}

async function benchRun(
  values: BenchValues, argv: string[], cfg: BenchConfig, plan: OutputPlan, peers: PeerRow[], measured: CsvRow[], tuned?: TuneStore,
): Promise<number> {
  const { devs, precisions } = await benchDevices(values, cfg);
  const dev = devs[0];
  let memoryNote: string;
  try {
    memoryNote = await memoryNoteOf(values, cfg, plan, measured);
  } catch (e) {
    for (const d of devs) d.destroy();
    throw e;
  }
  const meta = benchMeta(dev, argv, cfg);
  const stamp = meta.createdAt.replace(/[:.]/g, '-');
  const state: BenchState = { kernelRows: [], ringRows: [], failures: [] };
  const { sweeps } = cfg;
  const save = saver(meta, stamp, cfg, values.peer, plan, peers, state);
  const results = sweeps.kernels || sweeps.ring ? join(cfg.outDir, `bench-${stamp}.json`) : null;
  console.error(`bench on ${meta.adapter}${CPU_NOTE(dev)}`);
  // A signal ends the process as an exit (bin/dawn-noise.mjs): said, with what the files written so far hold.
  const planned = { kernels: sweeps.kernels ? 3 * cfg.Ns.length * cfg.Ds.length * precisions.length * cfg.causals.length : 0, ring: sweeps.ring ? cfg.ringNs.length * cfg.ringRs.length * cfg.layouts.length : 0 };
  const stopped = atExit(() => process.stderr.write(`\n${stoppedNote(state, results ?? '', planned)}\n`));
  try {
    if (sweeps.kernels) await kernelSweep(dev, cfg, precisions, state, save, tuned && { store: tuned, file: values.tuned! });
    else progress('kernels done', 0, 0);
    if (sweeps.ring) await ringSweep(devs, cfg, precisions, state, save, plan, stamp);
  } finally {
    stopped();
    for (const d of devs) d.destroy();
  }
  const rows = await save(true);
  printSummary(`flashring bench — ${meta.adapter}${CPU_NOTE(dev)} — ${meta.createdAt}`, rows, state, memoryNote, results, csvSuffixes(sweeps));
  return state.failures.length ? 1 : 0;
}
