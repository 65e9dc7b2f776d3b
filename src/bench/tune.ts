/**
 * Autotune: instead of the kernels' fixed candidate orders (tiles.ts, sgmmTiles.ts: measured on
 * one H200), a short timed search on the device at hand, per (adapter, kernel sources, path, D,
 * precision, causal), kept in a store (a JSON file under Node: src/cli/tune.ts; IndexedDB in the
 * page: web/tuneStore.ts) so that it runs once.
 *
 * The candidates are data: each is a KernelTuning pin of one kernel (the forward's tile and
 * variants, or the backward's tile) on the path the device takes by default. Each candidate that
 * builds is timed at the request's shape on one set of inputs (its own pass only: forward, or
 * backward after one forward, GPU timestamps); a candidate whose timer gave no time (0, negative or not finite) is
 * no candidate (its trial says why), and a kernel none of whose candidates gave one stops the search (MeasurementError).
 * The fastest forward and the fastest backward are
 * then timed together beside the defaults; each kernel's pins are kept only where that kernel ran
 * TUNE_MARGIN faster than its defaults (keptPins), and what is kept only if it passes the float64
 * check (bench/kernels.ts spotCheck); otherwise the defaults stay (the entry says why).
 */
import { FlashDevice, withTuning } from '../gpu/device.js';
import { InputError, LimitError, MeasurementError, type TileNeed } from '../errors.js';
import { counted } from '../plural.js';
import type { KernelPath } from '../kernels/pipeline.js';
import { elemBytes, type Precision } from '../kernels/precision.js';
import { SHADERS } from '../kernels/shaders.js';
import { PARAMS_WGSL } from '../kernels/params.js';
import { wgslBindings } from '../kernels/bindings.js';
import { BACKWARD_BINDINGS, PREPROCESS_BINDINGS } from '../kernels/flashBackward.js';
import { FORWARD_BINDINGS } from '../kernels/flashForward.js';
import { validateShape } from '../shape.js';
import { SGMM_FWD_PIPES, SGMM_FWD_TURNS, SGMM_SPILLS, sgmmCandidates, sgmmFwdCanTurn } from '../kernels/sgmmTiles.js';
import { PLAN_POLICY, PORTABLE_BWD_CANDIDATES, PORTABLE_FWD_CANDIDATES, missWords, planDeviceTiles } from '../kernels/tiles.js';
import { PORTABLE_PRODUCTS, TUNING_PINS, resolveTuning, type KernelTuning, type PortableProducts } from '../kernels/tuning.js';
import { FlashForward } from '../kernels/flashForward.js';
import { isTime, tuneEntryProblem } from './tuneEntry.js';
import { benchBuffers, spotCheck, tensorFits, timeForwardBackward, type BenchBuffers } from './kernels.js';

export interface TuneRequest {
  /** Whether Dawn's robustness transform is on for the kernels (Node: FLASHRING_ROBUST; the page: always): a key of its own. */
  robust: boolean;
  D: number;
  precision: Precision;
  causal: boolean;
  /** The shape timed: B = 1, `heads` heads, N query and key rows. */
  N: number;
  heads: number;
  /** Timed repeats per candidate (median). */
  reps: number;
}

/**
 * One candidate's timing: its pins as their variables spell them, or why it did not run; where its tile does not fit
 * the device, what it needs against the device's figures (`need`: absent in entries stored before it, and for any
 * other reason).
 */
export interface TuneTrial {
  kind: 'fwd' | 'bwd';
  pins: string;
  ms: number | null;
  error?: string;
  need?: TileNeed;
}

/** What a store keeps per key: the chosen pins, and how they compared with the defaults. */
export interface TuneEntry {
  key: string;
  path: KernelPath;
  /** The pins to use (empty: the defaults were kept). */
  tuning: KernelTuning;
  /** [forward, backward] ms at the shape tuned on, defaults and chosen. */
  defaultMs: [number, number];
  tunedMs: [number, number];
  N: number;
  heads: number;
  /** The kept pins' (or the defaults') largest relative error against float64 at a small shape (O, LSE, dQ, dK, dV). */
  checkErr: number;
  /** Why the defaults were kept (absent when the chosen pins were kept). */
  keptDefaults?: string;
  date: string;
  trials: TuneTrial[];
}

export interface TuneStore {
  get(key: string): Promise<TuneEntry | undefined>;
  /**
   * Stores `entry` (in place of any under its key) and drops every other entry `unusable` names (autotune: unusableOn);
   * returns how many were dropped.
   */
  set(entry: TuneEntry, unusable?: (key: string, entry: unknown) => boolean): Promise<number>;
}

/**
 * FNV-1a of what the kernels are made of: the WGSL files, the generated uniform block and binding
 * tables, the candidate lists with the variants autotune expands them into (tuneCandidates), and the planners'
 * default rules (PLAN_POLICY: a stored pin may leave a variant to them); a change to any makes earlier entries stale.
 */
export function sourceHash(): string {
  return (hashOnce ??= fnv1a());
}
let hashOnce: string | undefined;

function fnv1a(): string {
  let h = 0x811c9dc5;
  const text = JSON.stringify([SHADERS, PARAMS_WGSL, [FORWARD_BINDINGS, BACKWARD_BINDINGS, PREPROCESS_BINDINGS].map(wgslBindings),
    PORTABLE_FWD_CANDIDATES, PORTABLE_BWD_CANDIDATES, [64, 128, 256].map((D) => [sgmmCandidates('fwd', D), sgmmCandidates('bwd', D)]),
    (['f32', 'f16'] as const).map((p) => tuneCandidates('scalar', 'fwd', 128, false, p, true)), PLAN_POLICY]);
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/**
 * The store key of a request on a device and path: the adapter, the kernels' hash, the robustness
 * transform, the pins the device already has (from the environment: the search starts from them),
 * the path, D, precision and mask (the shape tuned on is not in it: the tiles are chosen per D,
 * precision and mask).
 */
export function tuneKey(dev: FlashDevice, path: KernelPath, r: Pick<TuneRequest, 'D' | 'precision' | 'causal' | 'robust'>): string {
  const pins = Object.keys(dev.tuning).length ? showPins(dev.tuning) : 'no pins';
  return [adapterOf(dev), `shaders ${sourceHash()}`, r.robust ? 'robust' : 'unchecked', pins, path, `D${r.D}`, r.precision, r.causal ? 'causal' : 'full'].join('|');
}

/** A store key's first part: the adapter's vendor, architecture, device and description. */
const adapterOf = (dev: FlashDevice) => [dev.adapter.vendor, dev.adapter.architecture, dev.adapter.device, dev.adapter.description].join('|');

/** The entries unusableOn names, in the words `tune --help` and the search's note on the entries dropped use. */
export const UNUSABLE_ENTRIES = "another kernels' hash, damaged, or pins the kernels do not take";

/**
 * The entries a store holds that this flashring can never use on this device's adapter, which autotune drops when it
 * writes the store: those of this adapter (tuneKey's first part) under another kernels' hash (an older or newer
 * flashring's kernels: tuneKey never asks for them), or damaged (tuneEntryProblem), or holding pins the kernels do not
 * take (resolveTuning), which every reader treats as absent. Entries of other adapters are kept whatever they hold:
 * another GPU, and another flashring, may read the same store.
 */
export function unusableOn(dev: FlashDevice): (key: string, entry: unknown) => boolean {
  const adapter = `${adapterOf(dev)}|shaders `, current = `${adapter}${sourceHash()}|`;
  return (key, e) => key.startsWith(adapter) && (!key.startsWith(current) || tuneEntryProblem(key, e) !== null || !takesPins((e as TuneEntry).tuning));
}

function takesPins(t: KernelTuning): boolean {
  try {
    resolveTuning(t);
    return true;
  } catch {
    return false;
  }
}

/** The path a request's kernels take on this device by default, and its store key. */
async function defaultKey(dev: FlashDevice, r: Pick<TuneRequest, 'D' | 'precision' | 'causal' | 'robust'>): Promise<{ path: KernelPath; key: string }> {
  const path = (await FlashForward.create(dev, r.D, { precision: r.precision, out: r.precision, grad: r.precision })).path;
  return { path, key: tuneKey(dev, path, r) };
}

/** The pins of a tuning as its environment variables spell them ("FLASHRING_SGMM_FWD=8x32x1 …"). */
export function showPins(t: KernelTuning): string {
  const parts = (Object.keys(t) as (keyof KernelTuning)[]).map((k) => `${TUNING_PINS[k].env}=${(TUNING_PINS[k].show as (v: unknown) => string)(t[k])}`);
  return parts.join(' ') || '(defaults)';
}

/**
 * The candidates of one kernel on a path, as pins (data: the kernels' own candidate lists and variants): the
 * tensor-core forward's tiles in each step order, and taking turns or not where they can; its backward's tiles
 * with one spill block a subgroup or two (both kernels alike); the portable forward's tiles without the prefetch,
 * with it and with it for K and V only (not timed where Q is staged once: sameKernel), and with f16 storage and `f16Products` (the user's FLASHRING_PORTABLE_FWD_PRODUCTS=f16: they are never
 * chosen for a user who did not ask for them, docs/numerics.md) its f16 or f32 products, with f32 products its words
 * staged as f16 or widened to f32, each with P~ in Q's array pinned on and off where P~ has Q's word type (a pin on
 * that shares nothing on the device is not timed: sameKernel).
 */
export function tuneCandidates(path: KernelPath, kind: 'fwd' | 'bwd', D: number, robust = false, precision: Precision = 'f32', f16Products = false): KernelTuning[] {
  if (path === 'subgroup-matrix') {
    const tiles = sgmmCandidates(kind, D, robust);
    if (kind === 'bwd') return tiles.flatMap(([SG, T]) => SGMM_SPILLS.map((spill) => ({ sgmmBackward: { subgroups: SG, rows: T }, sgmmDqSpill: spill, sgmmKvSpill: spill })));
    return tiles.flatMap(([SG, T, RB, DS = 1]) => SGMM_FWD_PIPES.flatMap((pipe) => (sgmmFwdCanTurn(RB, DS, T) ? SGMM_FWD_TURNS : [undefined]).map((turns) =>
      ({ sgmmForward: { subgroups: SG, rows: T, rowBlocks: RB as 1 | 2, ...(DS > 1 ? { dSplit: DS as 2 } : {}) }, sgmmForwardPipe: pipe, ...(turns === undefined ? {} : { sgmmForwardTurns: turns }) }))));
  }
  if (kind === 'bwd') return PORTABLE_BWD_CANDIDATES.map(([rows, cols]) => ({ portableBackward: { rows, cols } }));
  const products = precision === 'f16' && f16Products ? PORTABLE_PRODUCTS : [undefined];
  // f16 storage with f32 products: its words staged as f16 or widened to f32 (forwardWideStage).
  const widths = (p: PortableProducts | undefined) => (precision === 'f16' && p !== 'f16' ? [0, 1] as const : [undefined]);
  // P~ in Q's array (forwardSharedP) where P~ can have Q's word type: f32 or widened words, or f16 storage with f16 products.
  const sharing = (p: PortableProducts | undefined, wide: 0 | 1 | undefined) => (precision === 'f32' || p === 'f16' || wide === 1 ? [0, 1] as const : [undefined]);
  return PORTABLE_FWD_CANDIDATES.flatMap(([rows, cols]) => ([0, 1, 2] as const).flatMap((forwardPrefetch) => products.flatMap((p) => widths(p).flatMap((wide) => sharing(p, wide).map((shared) =>
    ({ portableForward: { rows, cols }, forwardPrefetch, ...(p ? { portableProducts: p } : {}), ...(wide === undefined ? {} : { forwardWideStage: wide }), ...(shared === undefined ? {} : { forwardSharedP: shared }) }))))));
}

/**
 * Why a candidate is not timed where the device's plan makes it the same kernel as a twin timed beside it: P~ in Q's
 * array pinned where the plan shares nothing (Q staged once, in whole rows, or P~ of another word type), or the
 * prefetch of K and V only where Q is staged once (nothing of Q to leave out).
 */
function sameKernel(dev: FlashDevice, c: KernelTuning, r: TuneRequest): string | undefined {
  if (c.forwardSharedP !== 1 && c.forwardPrefetch !== 2) return undefined;
  const plan = planDeviceTiles('fwd', r.D, r.precision, withTuning(dev, { ...dev.tuning, ...c }));
  if (c.forwardSharedP === 1 && !plan.sharedP) return `P~ can share no array here (Q staged once, in whole rows of ${r.D}): the same kernel as with P~ apart`;
  if (c.forwardPrefetch === 2 && plan.chunk === r.D) return `Q staged once here (whole rows of ${r.D}): the prefetch of K and V only is the same kernel as prefetch 1`;
  return undefined;
}

const shapeOf = (r: Pick<TuneRequest, 'D' | 'N' | 'heads'>) => ({ B: 1, Hq: r.heads, Hkv: r.heads, Nq: r.N, Nk: r.N, D: r.D });

/**
 * A request the kernels can take, before any search: positive sizes, a head dim they support, and
 * tensors the device can bind (8 of them: Q, K, V, dO, O and the gradients); one line each.
 */
export function checkTuneRequest(r: TuneRequest, dev?: FlashDevice): void {
  if (!Number.isInteger(r.N) || r.N < 1) throw new InputError(`tune: N must be a positive integer, got ${r.N}`);
  if (!Number.isInteger(r.heads) || r.heads < 1) throw new InputError(`tune: heads must be a positive integer, got ${r.heads}`);
  if (!Number.isInteger(r.reps) || r.reps < 1) throw new InputError(`tune: reps must be a positive integer, got ${r.reps}`);
  try {
    validateShape(shapeOf(r));
  } catch (e) {
    throw new InputError(`tune: D=${r.D}, N=${r.N}, heads ${r.heads}: ${(e as Error).message}`);
  }
  if (!dev) return;
  const bytes = r.heads * r.N * r.D * elemBytes(r.precision), lim = dev.device.limits.maxStorageBufferBindingSize;
  if (!tensorFits(dev, bytes)) throw new InputError(`tune: N=${r.N} with ${counted(r.heads, 'head')} at D=${r.D} needs ${(bytes / 2 ** 20).toFixed(0)} MiB per tensor; this device binds at most ${(lim / 2 ** 20).toFixed(0)} MiB: choose a smaller N or fewer heads`);
}

/**
 * [forward, backward] GPU (or host) ms of a tuning at the request's shape (on the search's one set of inputs), the path
 * it ran on and its kernels' plans ([forward, backward], describePlan); `probe`: one run after one warm-up run (trials: is
 * it worth timing? The warm-up run takes whatever a driver compiles at a pipeline's first dispatch).
 */
async function timeWith(
  dev: FlashDevice, t: KernelTuning, r: TuneRequest, bufs: BenchBuffers, passes: 'both' | 'fwd' | 'bwd' = 'both', probe = false,
): Promise<{ ms: [number, number]; path: KernelPath; plans: [string, string] }> {
  const d = withTuning(dev, { ...dev.tuning, ...t });
  // Warm-up as the bench's (at least 2 runs, on GPUs until a second has passed): a short one let the clock ramp into the defaults' time.
  const [reps, warm]: [number, [number, number]] = probe ? [1, [1, 0]] : [r.reps, [2, 200]];
  const res = await timeForwardBackward(d, shapeOf(r), { causal: r.causal }, r.precision, reps, warm, undefined, bufs, passes);
  return { ms: res.gpu ?? res.host, path: res.path, plans: res.plans };
}

/**
 * A skipped candidate's trial from the error its build threw: for a tile that does not fit (a LimitError's `tried`,
 * never its text), only why (`41472 bytes at chunk 32, 256 invocations`; a tensor-core tile's `13344 bytes, 128
 * invocations`) and what it needs, not planTiles' or planSgmm's advice to the user (a smaller head dim, another pin),
 * which a search that tries every tile has no use for; any other error, its first line.
 */
export function skipped(kind: 'fwd' | 'bwd', pins: string, e: unknown): TuneTrial {
  const tried = e instanceof LimitError ? e.tried : [];
  if (tried.length === 1) return { kind, pins, ms: null, error: tried[0].why, ...(tried[0].need ? { need: tried[0].need } : {}) };
  const error = tried.length ? missWords(tried) : (e instanceof Error ? e.message : String(e)).split('\n')[0];
  return { kind, pins, ms: null, error };
}

/**
 * A candidate's trial and pins, and where its timer gave no time (0, negative or not finite: a timer that failed) what
 * it gave: checkTrials says it from this figure, never from the trial's text (a build error may read alike). Not stored
 * in the entry: JSON holds no NaN.
 */
interface Tried {
  trial: TuneTrial;
  tuning: KernelTuning;
  timerGave?: number;
  /** Whether it ran on the device (built and timed, or probed): its progress line then says the seconds it took. */
  ran?: boolean;
}

/** What a timer that gave no time gave, in the trial's error and checkTrials' line. */
const timerWords = (ms: number) => `time ${ms} ms`;

/** A candidate's trial from what its timing gave: a time, or (another path, no time) no time and why. */
function trialOf(kind: 'fwd' | 'bwd', pins: string, tuning: KernelTuning, path: KernelPath, t: { ms: [number, number]; path: KernelPath }): Tried {
  if (t.path !== path) return { trial: { kind, pins, ms: null, error: `ran on the ${t.path} path` }, tuning };
  const ms = t.ms[kind === 'fwd' ? 0 : 1];
  return isTime(ms) ? { trial: { kind, pins, ms }, tuning } : { trial: { kind, pins, ms: null, error: `${timerWords(ms)}: not timed` }, tuning, timerGave: ms };
}

/**
 * On a GPU, a candidate whose one probing run (timeWith's probe) took more than TUNE_PRUNE times the fastest candidate
 * timed before it is not timed further (its trial says so; not on CPU adapters, where one run reads 3–8× a warm
 * median on lavapipe, so pruning would drop candidates by noise): the small tiles at D = 128 took 0.03–5 s a run on an H100
 * where the fastest took 6 ms, and timing each whole (warm-up for a second, then the repeats) kept a search a minute
 * or more on what could never be chosen (bench/results/2026-12-07-sharedp-h100).
 */
export const TUNE_PRUNE = 3;

/** Why a candidate is not timed further after its probe (ms), or undefined: within TUNE_PRUNE of the fastest so far. */
export function pruned(ms: number, best: number): string | undefined {
  return isTime(ms) && ms > TUNE_PRUNE * best
    ? `${ms.toFixed(3)} ms in one run, over ${TUNE_PRUNE}× the fastest candidate so far (${best.toFixed(3)} ms): not timed further` : undefined;
}

/** One candidate's trial: not timed where it is a twin's kernel (sameKernel) or its probe is pruned, else timed. */
async function trial(
  dev: FlashDevice, path: KernelPath, kind: 'fwd' | 'bwd', c: KernelTuning, pins: string, r: TuneRequest, bufs: BenchBuffers, best: number,
): Promise<Tried> {
  const same = sameKernel(dev, c, r);
  if (same) return { trial: { kind, pins, ms: null, error: same }, tuning: c };
  if (Number.isFinite(best) && !dev.isCPU) {
    const p = await timeWith(dev, { ...c, path }, r, bufs, kind, true);
    if (p.path !== path) return { ...trialOf(kind, pins, c, path, p), ran: true };   // another path: no candidate, said so without timing it whole
    const why = pruned(p.ms[kind === 'fwd' ? 0 : 1], best);
    if (why) return { trial: { kind, pins, ms: null, error: why }, tuning: c, ran: true };
  }
  return { ...trialOf(kind, pins, c, path, await timeWith(dev, { ...c, path }, r, bufs, kind)), ran: true };
}

/**
 * Times the candidates of one kernel on `path` (trial: each pruned or timed); a candidate that does not build, falls back to another path, gives no
 * time (trialOf) or is pruned is a trial with an error, never ranked. Where some ran but none gave a time, a
 * MeasurementError.
 */
async function trials(
  dev: FlashDevice, path: KernelPath, kind: 'fwd' | 'bwd', r: TuneRequest, o: SearchOptions, bufs: BenchBuffers,
): Promise<Tried[]> {
  const out: Tried[] = [];
  const cs = o.candidates(path, kind, r.D, r.robust, r.precision, dev.tuning.portableProducts === 'f16');
  let best = Infinity;
  for (const [i, c] of cs.entries()) {
    o.signal?.throwIfAborted();
    const pins = showPins(c), t0 = performance.now();
    try {
      out.push(await trial(dev, path, kind, c, pins, r, bufs, best));
      const ms = out[out.length - 1].trial.ms;
      if (ms !== null) best = Math.min(best, ms);
    } catch (e) {
      out.push({ trial: skipped(kind, pins, e), tuning: c });
    }
    const { trial: last, ran } = out[out.length - 1];
    // Counted (`fwd 3/20`): a search of dozens of candidates says how far it is; one that ran, the seconds it took (its
    // pipelines' builds, its first dispatch's compile and its runs: where a long search's time goes, against its ms).
    const took = ran ? `, ${((performance.now() - t0) / 1000).toFixed(1)} s with its build and runs` : '';
    o.progress(`  ${kind} ${i + 1}/${cs.length} ${pins}: ${last.ms === null ? `skipped (${last.error}${took})` : `${last.ms.toFixed(3)} ms${took}`}`, { ...last, tuning: c });
  }
  checkTrials(r, kind, out, o.progress);
  return out;
}

/**
 * After a kernel's trials: the candidates whose timer gave no time said in a whole line (on a terminal the trials' lines
 * are drawn over); where none gave a time and some gave no time, a MeasurementError (nothing is ranked on a broken timer).
 */
function checkTrials(r: TuneRequest, kind: 'fwd' | 'bwd', ts: Tried[], progress: SearchOptions['progress']): void {
  const gave = ts.flatMap((t) => (t.timerGave === undefined ? [] : [timerWords(t.timerGave)]));
  if (!gave.length) return;
  const said = `${gave.length} of ${counted(ts.length, `${kind} candidate`)} gave no time (${[...new Set(gave)].join(', ')})`;
  if (ts.some((t) => t.trial.ms !== null)) return progress(`  ${said}: not ranked`);
  throw new MeasurementError(`tune: ${requestWords(r)}: ${said} and none gave one, so no ${KERNEL_NAMES[kind === 'fwd' ? 0 : 1]} candidate can be ranked: ` +
    `nothing stored; ${LONGER_RUNS}`);
}

/** A request in the search's messages. */
const requestWords = (r: TuneRequest) => `D=${r.D} ${r.precision} ${r.causal ? 'causal' : 'not causal'} at N=${r.N}, ${counted(r.heads, 'head')}`;
/** What to do about a timer that gives no time. */
const LONGER_RUNS = "time a larger N or more heads, so that each run lasts longer than the timer's resolution";

/** How much faster a kernel's chosen pins must be than its defaults, timed one after the other, to be kept (run-to-run noise on the H200: ~2%). */
export const TUNE_MARGIN = 0.02;

const KERNEL_NAMES = ['forward', 'backward'] as const;

/**
 * Which of the fastest candidates to keep: each kernel's (forward, backward) where, timed together
 * beside the defaults, that kernel ran TUNE_MARGIN faster than its defaults and is not the defaults' own
 * kernel (`same`: its plan is theirs, so any difference is noise); and for each one not kept, why. (Kept per
 * kernel: on the H200 a forward 7.8% faster was lost inside a pair 1.9% faster, bench/results/2026-12-04-tc-tune-h200.)
 */
export function keptPins(
  best: [KernelTuning | undefined, KernelTuning | undefined], defaultMs: [number, number], chosenMs: [number, number], same: [boolean, boolean] = [false, false],
): { tuning: KernelTuning; kept: [boolean, boolean]; notFaster: string[] } {
  const kept = [0, 1].map((k) => best[k] !== undefined && !same[k] && chosenMs[k] <= (1 - TUNE_MARGIN) * defaultMs[k]) as [boolean, boolean];
  const notFaster = [0, 1].filter((k) => best[k] !== undefined && !kept[k])
    .map((k) => `the ${KERNEL_NAMES[k]}'s ${showPins(best[k]!) || 'defaults'} ${chosenMs[k].toFixed(3)} ms against its defaults' ${defaultMs[k].toFixed(3)}, ` +
      (same[k] ? 'the defaults\' own kernel' : `not ${100 * TUNE_MARGIN}% faster`));
  return { tuning: { ...(kept[0] ? best[0] : {}), ...(kept[1] ? best[1] : {}) }, kept, notFaster };
}

/** Whether each kernel (forward, backward) of two timings' plans (timeWith's `plans`) is the same kernel. */
const samePlans = (a: [string, string], b: [string, string]): [boolean, boolean] => [a[0] === b[0], a[1] === b[1]];

const fastest = (xs: Tried[]) =>
  xs.filter((x) => isTime(x.trial.ms)).sort((a, b) => a.trial.ms! - b.trial.ms!)[0];

export interface TuneOptions {
  /** Search even where the store holds the key. */
  fresh?: boolean;
  /** A line per candidate timed (with the trial and its pins, for callers that say it in their own words). */
  progress?: (line: string, trial?: TuneTrial & { tuning: KernelTuning }) => void;
  /** The candidates searched (default tuneCandidates; tests search fewer). */
  candidates?: typeof tuneCandidates;
  /**
   * Stops the search between candidates (the page's Cancel): autotune then throws the signal's
   * reason and stores nothing (the candidate being timed finishes first: one timing, not the search).
   */
  signal?: AbortSignal;
}

type SearchOptions = Required<Omit<TuneOptions, 'signal'>> & Pick<TuneOptions, 'signal'>;

/**
 * The tuned pins of a request: from the store when it holds the key (unless `fresh`), else by a
 * search (progress lines through `progress`), then stored.
 */
export async function autotune(dev: FlashDevice, r: TuneRequest, store?: TuneStore, opts: TuneOptions = {}): Promise<TuneEntry & { fromStore: boolean }> {
  checkTuneRequest(r, dev);
  const o: SearchOptions = { fresh: false, progress: () => {}, candidates: tuneCandidates, ...opts };
  const { path, key } = await defaultKey(dev, r);
  const kept = o.fresh ? undefined : usableEntry(await store?.get(key), r, o.progress);
  if (kept) return { ...kept, fromStore: true };
  const bufs = benchBuffers(dev, shapeOf(r), r.precision);
  try {
    return await search(dev, r, path, key, store, o, bufs);
  } finally {
    for (const b of Object.values(bufs)) dev.tracker.destroy(b);
  }
}

/**
 * A stored entry whose pins the kernels still take (resolveTuning), else undefined with a line saying why: an
 * entry edited by hand or written by another flashring is searched again (and replaced), never shown as tuned.
 */
function usableEntry(e: TuneEntry | undefined, r: TuneRequest, progress: SearchOptions['progress']): TuneEntry | undefined {
  if (!e) return undefined;
  try {
    resolveTuning(e.tuning);
    return e;
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    progress(`the stored entry for D=${r.D} ${r.precision} ${r.causal ? 'causal' : 'not causal'} holds pins the kernels do not take (${err.message}): searching again`);
    return undefined;
  }
}

/** The search of autotune on one set of inputs: each candidate, then the defaults and the chosen pins; what is kept, stored. */
async function search(
  dev: FlashDevice, r: TuneRequest, path: KernelPath, key: string, store: TuneStore | undefined, o: SearchOptions, bufs: BenchBuffers,
): Promise<TuneEntry & { fromStore: boolean }> {
  // On a CPU adapter the first candidate's line can be minutes away (lavapipe compiles each kernel at its first
  // dispatch): the header says so, so that a quiet terminal is not read as a hang.
  const slow = dev.isCPU ? '; on this CPU adapter each kernel compiles as it first runs, seconds to minutes each' : '';
  o.progress(`tuning D=${r.D} ${r.precision} ${r.causal ? 'causal' : 'not causal'} on the ${path} path at N=${r.N}, ${counted(r.heads, 'head')}: defaults timed last, beside the chosen pins${slow}`);
  const fwd = await trials(dev, path, 'fwd', r, o, bufs);
  const bwd = await trials(dev, path, 'bwd', r, o, bufs);
  const best: [KernelTuning | undefined, KernelTuning | undefined] = [fastest(fwd)?.tuning, fastest(bwd)?.tuning];
  const pick = { ...best[0], ...best[1] };
  o.signal?.throwIfAborted();
  // The defaults and the chosen pins timed one after the other, so that both meet the same clock.
  const again = await timeWith(dev, {}, r, bufs), chosen = await timeWith(dev, pick, r, bufs);
  const k = keptPins(best, again.ms, chosen.ms, samePlans(again.plans, chosen.plans));
  // Why the defaults stay before any check; else the kept pins are checked (one float64 spot check either way,
  // of what the entry keeps, unless the kept pins fail it: then the defaults' too).
  const before = !Object.keys(pick).length ? 'no candidate ran'
    : chosen.path !== path ? `the chosen pins ran on the ${chosen.path} path`
      : !Object.keys(k.tuning).length ? k.notFaster.join('; ') : null;
  const check = await spotCheck(withTuning(dev, { ...dev.tuning, ...(before ? {} : k.tuning) }), r.D, r.precision, r.causal);
  const why = before ?? (!check.ok ? `the kept pins failed the float64 check (${check.err.toExponential(2)})` : null);
  if (why) o.progress(`  kept the defaults: ${why}`);
  else if (k.notFaster.length) o.progress(`  kept the ${KERNEL_NAMES[k.kept[0] ? 0 : 1]}'s pins only: ${k.notFaster.join('; ')}`);
  const tunedMs: [number, number] = why ? again.ms : [k.kept[0] ? chosen.ms[0] : again.ms[0], k.kept[1] ? chosen.ms[1] : again.ms[1]];
  checkTimes(r, again.ms, tunedMs);
  const entry: TuneEntry = {
    key, path, tuning: why ? {} : k.tuning, defaultMs: again.ms, tunedMs, N: r.N, heads: r.heads,
    checkErr: why && !before ? (await spotCheck(dev, r.D, r.precision, r.causal)).err : check.err, ...(why ? { keptDefaults: why } : {}),
    date: new Date().toISOString(), trials: [...fwd, ...bwd].map((x) => x.trial),
  };
  o.signal?.throwIfAborted(); // a search cancelled during its last timings stores nothing
  const dropped = (await store?.set(entry, unusableOn(dev))) ?? 0;
  if (dropped) o.progress(`dropped ${counted(dropped, 'entry', 'entries')} of this adapter from the store that this flashring can never use (${UNUSABLE_ENTRIES}); other adapters' entries kept`);
  return { ...entry, fromStore: false };
}

/**
 * Refuses a search whose defaults' or tuned times are no measurement (0, negative or not finite: a timer coarser than
 * the runs, or a broken one) before it is stored: every reader refuses such an entry (tuneEntryProblem), so it would be
 * read back as absent and searched again on every run.
 */
function checkTimes(r: TuneRequest, defaultMs: [number, number], tunedMs: [number, number]): void {
  if ([...defaultMs, ...tunedMs].every(isTime)) return;
  throw new MeasurementError(`tune: ${requestWords(r)}: the timer gave ` +
    `the defaults ${defaultMs.join(' / ')} ms and the tuned pins ${tunedMs.join(' / ')} ms (forward / backward), and only a finite time above 0 ` +
    `is a measurement: nothing stored; ${LONGER_RUNS}`);
}

/**
 * The stored pins for a request on this device (the path it takes by default), or undefined where the store
 * has none: no entry, or an entry that kept the defaults (no pins), so that a run never says it was tuned
 * when it ran the defaults.
 */
export async function storedTuning(dev: FlashDevice, store: TuneStore, r: Pick<TuneRequest, 'D' | 'precision' | 'causal' | 'robust'>): Promise<KernelTuning | undefined> {
  return entryPins(await storedEntry(dev, store, r));
}

/** The store's entry for a request on this device (its adapter, kernels and default path), or undefined where it has none. */
export async function storedEntry(dev: FlashDevice, store: TuneStore, r: Pick<TuneRequest, 'D' | 'precision' | 'causal' | 'robust'>): Promise<TuneEntry | undefined> {
  return store.get((await defaultKey(dev, r)).key);
}

/** An entry's pins, or undefined where it has none (it kept the defaults). */
export const entryPins = (e: TuneEntry | undefined): KernelTuning | undefined => (e && Object.keys(e.tuning).length ? e.tuning : undefined);
