/**
 * Tile plans, and the planning of the portable (register-tiled) kernels against the device's
 * workgroup-memory and invocation limits (FLASHRING_PORTABLE_* pins). The tensor-core kernels'
 * planning is in sgmmTiles.ts.
 */
import { InputError, LimitError } from '../errors.js';
import { FlashDevice } from '../gpu/device.js';
import { Precision } from './precision.js';
import { SpecValues } from './specialize.js';

export interface TilePlan {
  BR: number;
  BC: number;
  WG: number;
  workgroupBytes: number;
  /** Backward on subgroup matrices: rows (keys for dK/dV, queries for dQ) each workgroup owns. */
  rowsPerGroup?: number;
  /** Forward on subgroup matrices: 16-row blocks each subgroup owns (RB; Br = 16·RB·subgroups). */
  rowBlocks?: number;
  /** Portable forward: row max/sum through subgroup shuffles or workgroup memory. */
  reduce?: RowReduce;
}

/**
 * The portable (register-tiled) kernels, shaders/flash_fwd.wgsl and flash_bwd.wgsl: each
 * invocation owns a 4×4 block of S, so Br = 4·TY, Bc = 4·TX and WG = TX·TY. Workgroup memory:
 * forward Qs, K/V (shared), P~ and the row-reduction words; backward four staged tiles, Pᵀ and
 * dS, and four per-row statistics (LSE, Δ, key range). Rows are padded by one 16-byte word (bank conflicts).
 */
export function workgroupBytes(kind: 'fwd' | 'bwd', BR: number, BC: number, D: number): number {
  const DS = D / 4 + 1;
  if (kind === 'fwd') return 16 * ((BR + BC) * DS + BR * (BC / 4 + 1) + (BR * BC) / 16);
  return 16 * (4 * BR * DS + 2 * BR * (BR / 4 + 1)) + 16 * BR;
}

/**
 * Tile candidates, most preferred first; the first that fits the device's workgroup memory and
 * invocation limit (and whose Bc/4 invocations divide the row's D/4 words) is taken. Defaults
 * fit a 16 KiB / 256-invocation device at D = 64 (forward 32×16, backward 8). Forward (Br, Bc);
 * backward square tiles T (Br = Bc = T). bench/portable-h200.sh sweeps them on the H200.
 */
export const PORTABLE_FWD_CANDIDATES: [number, number][] = [[64, 32], [32, 32], [64, 16], [32, 16], [16, 16], [16, 8], [8, 8], [8, 4], [4, 4]];
export const PORTABLE_BWD_CANDIDATES: number[] = [32, 16, 8, 4];

/** How the forward reduces row max and sum across the invocations of a row block. */
export type RowReduce = 'subgroup' | 'workgroup';

/** Reads a tuning pin from the environment (Node only; browsers have none). */
function envPin(name: string): string | undefined {
  return typeof process !== 'undefined' ? process.env?.[name] || undefined : undefined;
}

/**
 * FLASHRING_PORTABLE_FWD = "BRxBC" / FLASHRING_PORTABLE_BWD = "T" pin the portable tiles (for
 * sweeps); FLASHRING_PORTABLE_REDUCE = subgroup | workgroup pins the forward's row reduction.
 */
function pinnedPortable(kind: 'fwd' | 'bwd'): [number, number] | null {
  const name = `FLASHRING_PORTABLE_${kind.toUpperCase()}`;
  const v = envPin(name);
  if (!v) return null;
  const ok = (n: number) => [4, 8, 16, 32, 64, 128].includes(n);
  const m = kind === 'fwd' ? /^(\d+)x(\d+)$/.exec(v) : /^(\d+)$/.exec(v);
  if (!m || !ok(+m[1]) || (kind === 'fwd' && !ok(+m[2])))
    throw new InputError(`${name}='${v}': give ${kind === 'fwd' ? 'BRxBC (e.g. 64x32)' : 'T (e.g. 32)'} with sizes in 4, 8, 16, 32, 64, 128`);
  return kind === 'fwd' ? [+m[1], +m[2]] : [+m[1], +m[1]];
}

/**
 * Tiles of a portable kernel: the first candidate (or the pinned tile) that fits `limit` bytes
 * of workgroup memory (maxComputeWorkgroupStorageSize) and `maxWG` invocations. The forward's
 * row reduction goes through subgroup shuffles where the adapter's smallest subgroup
 * (`subgroupMin`, 0 without the feature) holds the Bc/4 invocations of a row block, else
 * through workgroup memory.
 */
export function planTiles(kind: 'fwd' | 'bwd', D: number, precision: Precision, limit: number, maxWG = 256, subgroupMin = 0): TilePlan {
  const pinned = pinnedPortable(kind);
  const candidates: [number, number][] = pinned ? [pinned] : kind === 'fwd' ? PORTABLE_FWD_CANDIDATES : PORTABLE_BWD_CANDIDATES.map((t) => [t, t]);
  const why: string[] = [];
  for (const [BR, BC] of candidates) {
    const TX = BC / 4, WG = (BR * BC) / 16;
    const bytes = workgroupBytes(kind, BR, BC, D);
    if ((D / 4) % TX !== 0) { why.push(`${BR}x${BC}: Bc/4 = ${TX} does not divide D/4 = ${D / 4}`); continue; }
    if (bytes > limit || WG > maxWG) { why.push(`${BR}x${BC}: ${bytes} bytes, ${WG} invocations`); continue; }
    const plan: TilePlan = { BR, BC, WG, workgroupBytes: bytes };
    if (kind === 'fwd') plan.reduce = rowReduce(subgroupMin, TX);
    return plan;
  }
  throw new LimitError(
    `the ${kind === 'fwd' ? 'forward' : 'backward'} with head dim ${D} in ${precision} has no tile that fits this device: ` +
      `${limit} bytes of workgroup memory (maxComputeWorkgroupStorageSize), ${maxWG} invocations; tried ${why.join('; ')}. Use a smaller head dim.`,
  );
}

/** planTiles with a device's limits and subgroups. */
export function planDeviceTiles(kind: 'fwd' | 'bwd', D: number, precision: Precision, dev: FlashDevice): TilePlan {
  const lim = dev.device.limits;
  return planTiles(kind, D, precision, lim.maxComputeWorkgroupStorageSize, lim.maxComputeInvocationsPerWorkgroup, dev.hasSubgroups ? dev.adapter.subgroupMinSize : 0);
}

function rowReduce(subgroupMin: number, TX: number): RowReduce {
  const pin = envPin('FLASHRING_PORTABLE_REDUCE');
  if (pin !== undefined && pin !== 'subgroup' && pin !== 'workgroup')
    throw new InputError(`FLASHRING_PORTABLE_REDUCE='${pin}': give subgroup or workgroup`);
  const sgOk = subgroupMin >= TX;
  if (pin === 'subgroup' && !sgOk)
    throw new InputError(`FLASHRING_PORTABLE_REDUCE=subgroup: the adapter's subgroups (${subgroupMin || 'none'}) are smaller than a row block (${TX})`);
  return pin === 'workgroup' || !sgOk ? 'workgroup' : 'subgroup';
}

/** Specialization values of a portable kernel: DV (vec4 columns per invocation), LOG2TX. */
export function portableValues(kind: 'fwd' | 'bwd', D: number, plan: TilePlan): SpecValues {
  const TX = plan.BC / 4;
  const v: SpecValues = { DV: D / 4 / (kind === 'fwd' ? TX : plan.BR / 4) };
  if (kind === 'fwd' && plan.reduce === 'subgroup') v.LOG2TX = Math.log2(TX);
  return v;
}
