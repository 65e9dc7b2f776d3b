/**
 * `flashring tune`: autotune (src/bench/tune.ts) for the head dims, precisions and masks asked,
 * on this machine's first adapter; the results are kept in a JSON store (src/bench/tuneStore.ts)
 * that `flashring bench --tuned STORE` reads, and printed as a table (or --json).
 */
import { InputError } from '../errors.js';
import { counted } from '../plural.js';
import { acquireDevices, adapterName, type FlashDevice } from '../gpu/device.js';
import type { Precision } from '../kernels/precision.js';
import { nodeGPU, robustShaders } from '../gpu/node.js';
import { UNUSABLE_ENTRIES, autotune, checkTuneRequest, showPins, type TuneEntry } from '../bench/tune.js';
import { checkStoreWritable, defaultStorePath, fileTuneStore } from '../bench/tuneStore.js';
import { MAX_REPS } from '../bench/kernels.js';
import { choices, distinct, nums, one, parseCommand } from './args.js';
import { progressLines } from './progress.js';

const HELP = `usage: flashring tune [options]
  Times each tile candidate of the path this adapter takes (forward and backward apart) at one
  shape (on a GPU one whose single run takes over 3x the fastest so far is not timed further), keeps each
  kernel's fastest pins where that kernel ran 2% faster than its defaults timed beside them and
  what is kept passes the float64 check, and stores them per (adapter, kernels'
  hash, robustness, pins, path, D, precision, mask); a stored entry is reused (and says so when
  tuned at another shape) unless --fresh. A search writing the store drops this adapter's entries
  this flashring can never use (${UNUSABLE_ENTRIES});
  other adapters' are kept. The portable forward's f16 products (faster, not within the f16
  contract on every input) are candidates only with FLASHRING_PORTABLE_FWD_PRODUCTS=f16.
  --D LIST          head dims (default 64,128)
  --precision LIST  f32,f16 (default: f16 where the adapter has it, else f32)
  --causal LIST     false,true (default both)
  --N N             sequence length timed (default 4096)
  --heads H         heads timed, batch 1 (default 16)
  --reps K          timed repeats per candidate timed whole, median (default 5)
  --fresh           search again even where the store has an entry
  --store FILE      the JSON store (default ${defaultStorePath()})
  --json            the entries as JSON on stdout instead of the table (progress stays on stderr)`;

const OPTIONS = {
  D: { type: 'string' }, precision: { type: 'string' }, causal: { type: 'string' }, N: { type: 'string' }, heads: { type: 'string' },
  reps: { type: 'string' }, fresh: { type: 'boolean' }, store: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
} as const;

const ms2 = (x: [number, number]) => `${x[0].toFixed(3)} / ${x[1].toFixed(3)}`;

export async function tuneCommand(argv: string[]): Promise<number> {
  const { values } = parseCommand('tune', argv, OPTIONS);
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const Ds = distinct('D', nums(values.D, '64,128', 'D', 256));
  const causals = distinct('causal', choices(values.causal, 'false,true', 'causal', ['false', 'true'] as const)).map((c) => c === 'true');
  const N = one(values.N, '4096', 'N', 1 << 20), heads = one(values.heads, '16', 'heads', 1024), reps = one(values.reps, '5', 'reps', MAX_REPS);
  // Every flag before the store is read, and before any device: one line naming what is wrong.
  // The default precision depends on the adapter; a list given is checked here.
  const wanted = values.precision === undefined ? null : distinct('precision', choices(values.precision, '', 'precision', ['f32', 'f16'] as const));
  const check = (precisions: readonly Precision[], dev?: FlashDevice) => {
    for (const D of Ds) for (const precision of precisions) checkTuneRequest({ robust: false, D, precision, causal: false, N, heads, reps }, dev);
  };
  check(wanted ?? ['f32']);
  const path = values.store ?? defaultStorePath();
  // Read and checked here; its folder is made only once the device has refused nothing (a refused run leaves nothing on disk).
  const store = await fileTuneStore(path, 'store', false);
  const [dev] = await acquireDevices(await nodeGPU(), 1);
  const shown = progressLines();
  try {
    const precisions = wanted ?? [dev.hasF16 ? ('f16' as const) : ('f32' as const)];
    if (precisions.includes('f16') && !dev.hasF16) throw new InputError(`--precision f16: ${adapterName(dev.adapter)} has no shader-f16; give --precision f32`);
    check(precisions, dev);
    await checkStoreWritable(path);
    const out: (TuneEntry & { fromStore: boolean })[] = [];
    // Progress and notes on stderr with --json too (the JSON alone on stdout): a search of minutes is not silent. On a
    // terminal the candidates' lines are one line drawn over, ended after each search (the store's notes write whole
    // lines of their own); elsewhere (a log) one line each.
    const progress = (line: string, trial?: unknown) => (trial ? shown.over(line) : shown.line(line));
    for (const D of Ds) for (const precision of precisions) for (const causal of causals) {
      out.push(await autotune(dev, { robust: robustShaders(), D, precision, causal, N, heads, reps }, store, { fresh: values.fresh, progress }));
      shown.end();
    }
    const reused = out.filter((e) => e.fromStore && (e.N !== N || e.heads !== heads));
    if (reused.length) shown.line(`${counted(reused.length, 'entry', 'entries')} from the store, tuned at another N or heads (the table says which): --fresh searches again at N=${N}, ${counted(heads, 'head')}`);
    if (values.json) {
      console.log(JSON.stringify(out, null, 1));
      return 0;
    }
    printTable(out, `${adapterName(dev.adapter)}, store ${path}`);
    return 0;
  } finally {
    shown.end();
    dev.destroy();
  }
}

/** The entries as a table on stdout, under `title` (the adapter and the store). */
function printTable(out: (TuneEntry & { fromStore: boolean })[], title: string): void {
  console.log(`\n${title}`);
  console.log('| D | precision | causal | path | N | default fwd / bwd ms | tuned fwd / bwd ms | speed-up | pins | checkErr | from |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const e of out) {
    const [D, precision, mask] = e.key.split('|').slice(-3);
    const up = (e.defaultMs[0] + e.defaultMs[1]) / (e.tunedMs[0] + e.tunedMs[1]);
    const pins = e.keptDefaults ? `(defaults: ${e.keptDefaults})` : showPins(e.tuning);
    console.log(`| ${D.slice(1)} | ${precision} | ${mask === 'causal'} | ${e.path} | ${e.N} | ${ms2(e.defaultMs)} | ${ms2(e.tunedMs)} | ${up.toFixed(3)}× | ${pins} | ${e.checkErr.toExponential(1)} | ${e.fromStore ? `store (${e.date.slice(0, 10)})` : 'search'} |`);
  }
}
