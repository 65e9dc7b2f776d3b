/**
 * Kernel tuning: the pins that override the kernels' own choices (path, tiles, variants, launch
 * order) for sweeps and tests, as one typed options object. Each pin picks a value of a choice
 * the kernels make by default (a tile, the row reduction, the prefetch, the order of the
 * tensor-core forward's steps, the row padding) and passes the same numeric tests; the ablations
 * that gave wrong results by design, and variants no default took, were removed (a variable of theirs still set is named: PIN_PREFIXES).
 * Each pin is documented in docs/numerics.md (precision paths) and below. A device carries one
 * (AcquireOptions.tuning, validated once by resolveTuning at acquisition) and the kernels read it
 * from there only: nothing below the command line reads the environment. The entry points
 * (src/cli/main.ts, bench/cp-run.mjs, bin/rank-process.mjs) resolve the variables users set
 * (FLASHRING_PATH, FLASHRING_PORTABLE_FWD, …: TUNING_PINS) once with tuningFromEnv and make it
 * their process's tuning (setProcessTuning), which devices acquired without one take.
 */
import { InputError } from '../errors.js';
import type { PathRequest } from './pipeline.js';
import type { Prefetch, RowReduce } from './tiles.js';
import { SGMM_FWD_PIPES, SGMM_FWD_TURNS, SGMM_SPILLS, type SgmmForwardPipe, type SgmmSpill } from './sgmmTiles.js';

/**
 * The portable forward's products with f16 storage (FLASHRING_PORTABLE_FWD_PRODUCTS): f32 (the default), or
 * f16 where a per-chunk range check allows: faster, but an f16 sum's rounding can exceed the f16 contract on
 * inputs whose products cancel (docs/numerics.md), so only where the user asks.
 */
export type PortableProducts = 'f16' | 'f32';
export const PORTABLE_PRODUCTS: PortableProducts[] = ['f16', 'f32'];

/** head_group for FLASHRING_HEAD_GROUP=all: one group of every (head, batch) pair in any grid of up to 65535 of them. */
export const HEAD_GROUP_ALL = 0xffff;

/** A pinned portable tile: rows × rows (forward Br×Bc, backward RT×CT), the head-dim chunk (widest that fits when left out). */
export interface PortableTilePin {
  rows: number;
  cols: number;
  chunk?: number;
}

/** A pinned tensor-core tile: subgroups per workgroup, inner tile rows T, the forward's 16-row blocks per subgroup and D split (1 when left out). */
export interface SgmmTilePin {
  subgroups: number;
  rows: number;
  rowBlocks?: 1 | 2;
  /** The forward's subgroups per row block, each holding D/DS of O (FLASHRING_SGMM_FWD = SGxTxRBxDS). */
  dSplit?: 1 | 2;
}

/** Every pin, each optional (left out: the kernels choose); the environment variable that sets it from the command line in brackets. */
export interface KernelTuning {
  /** Kernel path where 'auto' is asked (FLASHRING_PATH). */
  path?: PathRequest;
  /** Causal grids' heads take turns in groups of this many, 1 … HEAD_GROUP_ALL (FLASHRING_HEAD_GROUP; params.ts headGroup). */
  headGroup?: number;
  /** The portable forward's tile (FLASHRING_PORTABLE_FWD = BRxBC[xCHUNK]). */
  portableForward?: PortableTilePin;
  /** The portable backward's tile (FLASHRING_PORTABLE_BWD = RTxCT[xCHUNK]). */
  portableBackward?: PortableTilePin;
  /** The portable forward's row reduction (FLASHRING_PORTABLE_REDUCE). */
  rowReduce?: RowReduce;
  /** The portable forward's prefetch (FLASHRING_PORTABLE_FWD_PREFETCH = 0 none | 1 Q's chunks and K, V | 2 K and V only; tiles.ts Prefetch). */
  forwardPrefetch?: Prefetch;
  /** Whether the portable forward's P~ shares Q's workgroup array (FLASHRING_PORTABLE_FWD_SHARED_P = 0 | 1; tiles.ts sharesP). */
  forwardSharedP?: 0 | 1;
  /** The portable forward with f16 storage and f32 products: Q, K and V widened to f32 as staged (FLASHRING_PORTABLE_FWD_WIDE = 0 | 1; unset: tiles.ts wideRule). */
  forwardWideStage?: 0 | 1;
  /** The portable forward's products with f16 storage (FLASHRING_PORTABLE_FWD_PRODUCTS = f32, the default, | f16: in f16 where a chunk's range allows; opt-in). */
  portableProducts?: PortableProducts;
  /** The tensor-core forward's tile (FLASHRING_SGMM_FWD = SGxT[xRB]). */
  sgmmForward?: SgmmTilePin;
  /** The tensor-core backward's tile (FLASHRING_SGMM_BWD = SGxT). */
  sgmmBackward?: SgmmTilePin;
  /** Halves of padding per row of the tensor-core kernels' tiles (FLASHRING_SGMM_PAD = 0 | 8). */
  sgmmPad?: 0 | 8;
  /** The order of the tensor-core forward's steps per K/V tile (FLASHRING_SGMM_FWD_PIPE = 0 | 2). */
  sgmmForwardPipe?: SgmmForwardPipe;
  /** Whether the tensor-core forward's row blocks take turns through one S and P block where they can (FLASHRING_SGMM_FWD_TURN = 0 | 1; sgmmTiles.ts sgmmFwdTurns). */
  sgmmForwardTurns?: 0 | 1;
  /** The tensor-core dq's f32 spill blocks a subgroup: one (S, then dP) or two (FLASHRING_SGMM_DQ_SPILL; default by head dim, sgmmTiles.ts oneSpill). */
  sgmmDqSpill?: SgmmSpill;
  /** The tensor-core dkdv's spill blocks a subgroup: one f32 and one f16 (Sᵀ then dPᵀ, Pᵀ then dSᵀ) or two of each (FLASHRING_SGMM_KV_SPILL; default by head dim, oneSpill). */
  sgmmKvSpill?: SgmmSpill;
  /** The tensor-core backward's epilogue with f32 gradients (FLASHRING_SGMM_EPILOGUE = direct, the default, | staged). */
  sgmmEpilogue?: 'direct' | 'staged';
}

/** How one pin is spelled in the environment and checked. */
interface Pin<T> {
  /** The environment variable that sets it. */
  env: string;
  /** What to give (the end of the error a bad value gets). */
  help: string;
  /** The value of an environment string, or undefined where it is malformed. */
  parse(v: string): T | undefined;
  /** The value as its variable spells it. */
  show(v: T): string;
  /** Why a value is refused (null: accepted); a value that parses is still checked. */
  check(v: T): string | null;
}

/** Sizes a portable tile's rows may take (the forward's Br also 256). */
const PORTABLE_SIZES = [4, 8, 16, 32, 64, 128];
const SGMM_SUBGROUPS = [1, 2, 4, 8, 16];

/** "AxBxC…" as numbers, `min` to `max` of them; undefined where malformed. */
function dims(v: string, min: number, max: number): number[] | undefined {
  const parts = v.split('x');
  return parts.length >= min && parts.length <= max && parts.every((p) => /^\d+$/.test(p)) ? parts.map(Number) : undefined;
}

/** One of a list of words (or of numbers spelled as words). */
function choice<T extends string | number>(env: string, values: readonly T[], help: string): Pin<T> {
  return {
    env, help,
    parse: (v) => values.find((x) => String(x) === v),
    show: String,
    check: (v) => (values.includes(v) ? null : `give ${help}`),
  };
}

function portableTilePin(kind: 'fwd' | 'bwd'): Pin<PortableTilePin> {
  const rowSizes = kind === 'fwd' ? [...PORTABLE_SIZES, 256] : PORTABLE_SIZES;
  const help = kind === 'fwd'
    ? 'BRxBC or BRxBCxCHUNK (e.g. 64x32 or 64x32x64) with BR in 4, 8, …, 256, BC in 4, 8, …, 128 and CHUNK a multiple of 4'
    : 'RTxCT or RTxCTxCHUNK (e.g. 64x32 or 64x32x32) with sizes in 4, 8, 16, 32, 64, 128 and CHUNK a multiple of 4';
  return {
    env: `FLASHRING_PORTABLE_${kind.toUpperCase()}`, help,
    parse: (v) => {
      const d = dims(v, 2, 3);
      return d && { rows: d[0], cols: d[1], chunk: d[2] };
    },
    show: (t) => [t.rows, t.cols, t.chunk].filter((x) => x !== undefined).join('x'),
    check: ({ rows, cols, chunk }) =>
      rowSizes.includes(rows) && PORTABLE_SIZES.includes(cols) && (chunk === undefined || (chunk > 0 && chunk % 4 === 0)) ? null : `give ${help}`,
  };
}

function sgmmTilePin(kind: 'fwd' | 'bwd'): Pin<SgmmTilePin> {
  const help = `SGxT${kind === 'fwd' ? '[xRB[xDS]]' : ''} with SG in 1, 2, 4, 8, 16 and T a multiple of 16${kind === 'fwd' ? ', RB 1 or 2, DS 1 or 2 (2: RB 1, SG even, T a multiple of 32)' : ''} (e.g. 4x32${kind === 'fwd' ? 'x2' : ''})`;
  return {
    env: `FLASHRING_SGMM_${kind.toUpperCase()}`, help,
    parse: (v) => {
      const d = dims(v, 2, kind === 'fwd' ? 4 : 2);
      return d && { subgroups: d[0], rows: d[1], rowBlocks: d[2] as 1 | 2 | undefined, dSplit: d[3] as 1 | 2 | undefined };
    },
    // RB is spelled whenever DS is (16x32x2 would read as RB = 2).
    show: (t) => [t.subgroups, t.rows, t.rowBlocks ?? (t.dSplit !== undefined ? 1 : undefined), t.dSplit].filter((x) => x !== undefined).join('x'),
    check: ({ subgroups: SG, rows: T, rowBlocks: RB = 1, dSplit: DS = 1 }) => {
      if (!SGMM_SUBGROUPS.includes(SG) || T <= 0 || T % 16 !== 0 || (RB !== 1 && (kind === 'bwd' || RB !== 2))) return `give ${help}`;
      if (DS !== 1 && (DS !== 2 || RB !== 1 || SG % 2 !== 0 || T % 32 !== 0)) return `give ${help}`;
      return kind === 'bwd' && T > 32 * SG ? `the backward's tile rows T must be at most 32·SG (${32 * SG})` : null;
    },
  };
}

const HEAD_GROUP_HELP = `a number of heads from 1 (head by head) to ${HEAD_GROUP_ALL}, or 'all' (the default)`;

/** The pins: each field of KernelTuning, its variable, its spelling and its check. */
export const TUNING_PINS: { [K in keyof KernelTuning]-?: Pin<NonNullable<KernelTuning[K]>> } = {
  path: choice('FLASHRING_PATH', ['auto', 'scalar', 'subgroup-matrix'] as PathRequest[], 'auto, scalar or subgroup-matrix'),
  headGroup: {
    env: 'FLASHRING_HEAD_GROUP', help: HEAD_GROUP_HELP,
    parse: (v) => (v === 'all' ? HEAD_GROUP_ALL : /^[1-9]\d{0,4}$/.test(v) ? +v : undefined),
    show: (g) => (g === HEAD_GROUP_ALL ? 'all' : String(g)),
    check: (g) => (Number.isInteger(g) && g >= 1 && g <= HEAD_GROUP_ALL ? null : `give ${HEAD_GROUP_HELP}`),
  },
  portableForward: portableTilePin('fwd'),
  portableBackward: portableTilePin('bwd'),
  rowReduce: choice('FLASHRING_PORTABLE_REDUCE', ['subgroup', 'workgroup'] as RowReduce[], 'subgroup or workgroup'),
  forwardPrefetch: choice('FLASHRING_PORTABLE_FWD_PREFETCH', [0, 1, 2] as const, '0 (none), 1 (Q\'s chunks, K and V) or 2 (K and V only)'),
  forwardSharedP: choice('FLASHRING_PORTABLE_FWD_SHARED_P', [0, 1] as const, '0 (P~ in its own workgroup array) or 1 (P~ in Q\'s wherever Q is staged every tile and P~ has Q\'s word type); unset, P~ shares Q\'s array only where that lets a wider chunk fit'),
  forwardWideStage: choice('FLASHRING_PORTABLE_FWD_WIDE', [0, 1] as const, '0 (f16 words staged as f16 and widened at each read) or 1 (widened to f32 as staged: twice the workgroup bytes, no conversion in the products); only with f16 storage and f32 products; unset, widened where Q is staged every tile and the chunk stays'),
  portableProducts: choice('FLASHRING_PORTABLE_FWD_PRODUCTS', PORTABLE_PRODUCTS, 'f32 (the default) or f16 (with f16 storage, products in f16 where each chunk\'s range allows: faster, not within the f16 contract on inputs whose products cancel; docs/numerics.md)'),
  sgmmForward: sgmmTilePin('fwd'),
  sgmmBackward: sgmmTilePin('bwd'),
  sgmmPad: choice('FLASHRING_SGMM_PAD', [0, 8] as const, '0 (unpadded rows) or 8 (16-byte padding, the default)'),
  sgmmForwardPipe: choice('FLASHRING_SGMM_FWD_PIPE', SGMM_FWD_PIPES, '0 (stage each K/V tile before its products) or 2 (stage behind the softmax)'),
  sgmmForwardTurns: choice('FLASHRING_SGMM_FWD_TURN', SGMM_FWD_TURNS, '1 (two row blocks take turns through one 16-row S and P block; the default where possible without the robustness transform) or 0 (both at once)'),
  sgmmDqSpill: choice('FLASHRING_SGMM_DQ_SPILL', SGMM_SPILLS, 'one (S, then dP, through one f32 block a subgroup; the default up to D = 64) or two (S and dP at once)'),
  sgmmKvSpill: choice('FLASHRING_SGMM_KV_SPILL', SGMM_SPILLS, 'one (Sᵀ, then dPᵀ, through one f32 block a subgroup, Pᵀ then dSᵀ through one f16 block; the default up to D = 64) or two (at once)'),
  sgmmEpilogue: choice('FLASHRING_SGMM_EPILOGUE', ['direct', 'staged'] as ('direct' | 'staged')[], 'direct (f32 gradients stored straight from the matrices, the default) or staged (through workgroup memory)'),
};

/** The namespaces of kernel pins: a variable in them that is no pin (removed, misspelled) is named, not silently ignored. */
const PIN_PREFIXES = ['FLASHRING_PORTABLE_', 'FLASHRING_SGMM_'];

const pins = () => Object.entries(TUNING_PINS) as unknown as [keyof KernelTuning, Pin<unknown>][];

/**
 * Checks every pin of a tuning (an InputError naming the pin's variable and what to give for the
 * first bad one) and returns it frozen. The one place a tuning is validated: acquireDevices calls it.
 */
export function resolveTuning(t: KernelTuning): Readonly<KernelTuning> {
  for (const [key, pin] of pins()) {
    const v = t[key];
    if (v === undefined) continue;
    const why = pin.check(v);
    if (why !== null) throw new InputError(`${pin.env}='${pin.show(v)}': ${why}`);
  }
  return Object.freeze({ ...t });
}

/** The tuning the environment's variables pin (TUNING_PINS; an empty variable pins nothing), resolved. */
export function tuningFromEnv(env: Readonly<Record<string, string | undefined>>): Readonly<KernelTuning> {
  const t: Record<string, unknown> = {};
  for (const [key, pin] of pins()) {
    const raw = env[pin.env];
    if (!raw) continue;
    const v = pin.parse(raw);
    if (v === undefined) throw new InputError(`${pin.env}='${raw}': give ${pin.help}`);
    t[key] = v;
  }
  const known = new Set(pins().map(([, p]) => p.env));
  for (const name of Object.keys(env).filter((n) => env[n] && PIN_PREFIXES.some((x) => n.startsWith(x)) && !known.has(n)).sort())
    warnOnce(`${name} is not a kernel pin (a removed variant or ablation, or misspelled; the pins: ${[...known].join(', ')}); ignored`);
  return resolveTuning(t as KernelTuning);
}

let processTuning: Readonly<KernelTuning> = Object.freeze({});

/** The tuning of devices acquired without one: none, unless the process's entry point set it. */
export function currentProcessTuning(): Readonly<KernelTuning> {
  return processTuning;
}

/** Sets the process's tuning (entry points only: the command line resolves its environment once). */
export function setProcessTuning(t: KernelTuning): void {
  processTuning = resolveTuning(t);
}

const warned = new Set<string>();

/** Prints a warning once per process. */
export function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(message);
}
