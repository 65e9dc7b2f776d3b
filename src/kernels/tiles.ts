/**
 * Tile plans, and the planning of the portable (register-tiled) kernels against the device's
 * workgroup-memory and invocation limits, and the pins of a KernelTuning (tuning.ts). The
 * tensor-core kernels' planning is in sgmmTiles.ts.
 */
import { InputError, LimitError, type TileMiss, type TileNeed } from '../errors.js';
import { FlashDevice, maxWorkgroupInvocations } from '../gpu/device.js';
import { Precision } from './precision.js';
import type { KernelTuning, PortableProducts } from './tuning.js';
import { SpecValues } from './specialize.js';
import { staleValue } from './stale.js';

export interface TilePlan {
  BR: number;
  BC: number;
  WG: number;
  workgroupBytes: number;
  /** Backward on subgroup matrices: rows (keys for dK/dV, queries for dQ) each workgroup owns. */
  rowsPerGroup?: number;
  /** Forward on subgroup matrices: 16-row blocks each subgroup owns (RB; Br = 16·RB·subgroups / DS). */
  rowBlocks?: number;
  /** Forward on subgroup matrices: subgroups sharing each row block, each with D/DS of O and Bc/DS of S's columns (DS: 1 or 2). */
  dSplit?: number;
  /** Forward on subgroup matrices: built for a ring, which merges its steps into O and LSE (each row's weights in workgroup memory). */
  merge?: boolean;
  /** Portable forward: row max/sum through subgroup shuffles or workgroup memory. */
  reduce?: RowReduce;
  /** Portable backward: rows of the streamed tile (CT; the resident tile has BR = BC rows). */
  streamRows?: number;
  /** Portable kernels: head-dim columns staged per chunk (DC·4; D when whole rows are staged). */
  chunk?: number;
  /** Tensor-core kernels: halves of padding per workgroup-memory row (PAD; 0 or 8). */
  pad?: number;
  /** Tensor-core forward: the order of a K/V tile's steps (PIPE: 0 or 2; flash_fwd_sgmm.wgsl). */
  pipe?: number;
  /** Tensor-core forward: a group's row blocks take turns through one 16-row S and P block (SBR = 16; sgmmFwdTurns). */
  turns?: boolean;
  /** Portable forward: the next staging point's words loaded into registers during this one (PF; Prefetch). */
  prefetch?: Prefetch;
  /** Portable forward with f16 storage: products in f16 where a chunk's inputs allow it (PK; flash_fwd.wgsl), or f32 products throughout. */
  products?: PortableProducts;
  /** Portable forward: P~ shares Q's workgroup array (QP; flash_fwd.wgsl), where Q is staged again every tile. */
  sharedP?: boolean;
  /** Portable forward with f16 storage and f32 products: Q, K and V widened to f32 as they are staged (WT; flash_fwd.wgsl), not at each read (wideRule). */
  wideStage?: boolean;
}

/**
 * A plan in one line for benchmark records ("Br128 Bc32 WG256 RB1 pad8 pipe2"): the tiles and
 * every variant that is set, so a timing can be traced to the kernel that made it.
 */
/** The rows a backward workgroup owns: queries (dQ) and keys (dK/dV); rowsPerGroup where the plan has it, else Br and Bc. */
export const backwardRows = (p: TilePlan) => ({ q: p.rowsPerGroup ?? p.BR, kv: p.rowsPerGroup ?? p.BC });

export function describePlan(p: TilePlan): string {
  const extra: [string, unknown][] = [['RB', p.rowBlocks], ['DS', p.dSplit && p.dSplit > 1 ? p.dSplit : undefined], ['rows', p.rowsPerGroup], ['CT', p.streamRows], ['chunk', p.chunk],
    ['pad', p.pad], ['pipe', p.pipe], ['turns', p.turns ? '' : undefined], ['', p.reduce], ['prefetch', p.prefetch], ['', p.products && `${p.products}-products`], ['', p.sharedP && 'shared-P'], ['', p.wideStage && 'f32-staged']];
  return [`Br${p.BR} Bc${p.BC} WG${p.WG}`, ...extra.filter(([, v]) => v !== undefined).map(([k, v]) => `${k}${v}`)].join(' ');
}

/**
 * Query rows per invocation of the portable forward (shaders/flash_fwd.wgsl RR): each invocation
 * owns a 4×4 block of S and its 4 rows of O. (RR = 8, half the invocations of a tile for twice
 * the registers, gave bitwise the same results and was no faster on the H200:
 * bench/results/portable-h200-2026-12-01-rr8; it was removed.)
 */
export const PORTABLE_FWD_RR = 4;

/**
 * The portable (register-tiled) kernels, shaders/flash_fwd.wgsl and flash_bwd.wgsl: each
 * invocation owns a 4×4 block of S, and both stage the head dim `chunk` columns at a time.
 * Forward: Br = 4·TY, Bc = 4·TX, WG = TX·TY; workgroup memory a chunk of Q and of K/V (shared)
 * in the storage type (vec4<f32> words of 16 bytes, vec4<f16> of 8), P~ (f32) and, with the
 * workgroup row reduction (`reduce`), one f32 per row and invocation (flash_rows_wg.wgsl: one
 * vec4 word per invocation, 16·WG = Br·Bc bytes; none through subgroups):
 *   (Br + Bc)·(chunk/4 + 1)·w + 16·Br·(Bc/4 + 1) [+ Br·Bc],   w = 16 (f32) or 8 (f16).
 * With f16 products (`products` 'f16', f16 storage) P~ is kept in f16, 8·Br·(Bc/4 + 1) bytes, and
 * two u32 words per chunk hold the staged K and V maxima: 8·D/chunk bytes more.
 * Backward: RT resident rows (BR = BC = RT), CT streamed rows, WG = RT·CT/16; two resident and
 * two streamed chunks of `chunk` head-dim columns in the storage type (w bytes a word, as the
 * forward), Pᵀ and dS (RT × CT, f32), and four per-row statistics (4 bytes) of the streamed rows:
 *   2·(RT + CT)·(chunk/4 + 1)·w + 2·16·RT·(CT/4 + 1) + 16·CT.
 * Rows are padded by one word (bank conflicts).
 */
export function workgroupBytes(
  kind: 'fwd' | 'bwd', BR: number, BC: number, D: number, chunk = D, precision: Precision = 'f32', reduce: RowReduce = 'workgroup',
  products?: PortableProducts, sharedP = false,
): number {
  const CS = chunk / 4 + 1;
  const w = precision === 'f16' ? 8 : 16;
  const pk = kind === 'fwd' && precision === 'f16' && products === 'f16';
  if (kind === 'fwd') {
    const q = w * BR * CS, p = (pk ? 8 : 16) * BR * (BC / 4 + 1);
    return w * BC * CS + (sharedP ? Math.max(q, p) : q + p) + (reduce === 'workgroup' ? (BR * BC) : 0) + (pk ? (8 * D) / chunk : 0);
  }
  return w * 2 * (BR + BC) * CS + 16 * 2 * BR * (BC / 4 + 1) + 16 * BC;
}

/**
 * Tile candidates, most preferred first; the first that fits the device's workgroup memory and
 * invocation limit is taken, each with the widest chunk of the head dim that fits (whole rows
 * first; the Bc/4 or CT/4 invocations across a row must divide the chunk's D/4 words).
 * Forward (Br, Bc); at D = 64 the first fits a 16 KiB / 256-invocation device in two chunks.
 * Backward (RT resident rows, CT streamed rows). The order is the H200's (bench/ablate-portable.sh,
 * docs/performance.md "Portable v3"): f32, N = 16384, forward 128×32 in 32-column chunks 19.3 / 17.6
 * TFLOP/s at D = 64 / 128 against 16.3 / 10.1 for whole-row 32×32; backward 64×32 in 32-column
 * chunks 13.3 / 12.6 against 8.3 / 7.5 for 32×32 and 2.6 / 1.2 for whole-row 16×16 (16
 * invocations: half of each 32-wide SIMD unit idle), the only whole-row f32 tile at D = 128.
 * The forward with f16 storage stages 8-byte words, so the same list gives it wider chunks
 * (49152 bytes, subgroup row reduction: 128×32 in whole rows at D = 64, 40192 bytes, and in
 * 64-column chunks at D = 128, against 32-column chunks for f32), and 64×64 fits it (34816
 * bytes: whole rows at D = 64, 64-column chunks above), which f32 does not; the order is not
 * measured for f16 yet (FLASHRING_PORTABLE_FWD pins any of these). The backward with f16
 * storage stages 8-byte words too: 64×32 in whole rows at D = 64 and in 64-column chunks at
 * D = 128 (45056 bytes), against 32-column chunks (46592) for f32 and for f16 before.
 * 64×64 follows 64×32, so no default takes it where 64×32 fits (it needs more bytes and invocations at any chunk,
 * its chunks being multiples of 64): it is there for autotune and pins, with f16 storage or with P~ in Q's array
 * (f32 at D = 128: 34,816 bytes in 64-column chunks; 52,224 with P~ apart).
 */
export const PORTABLE_FWD_CANDIDATES: [number, number][] = [
  [128, 32], [64, 32], [64, 64], [32, 32], [64, 16], [32, 16], [16, 16], [16, 8], [8, 8], [8, 4], [4, 4],
];
export const PORTABLE_BWD_CANDIDATES: [number, number][] = [[64, 32], [32, 32], [32, 16], [16, 16], [16, 8], [8, 8], [8, 4], [4, 4]];

/** How the forward reduces row max and sum across the invocations of a row block. */
export type RowReduce = 'subgroup' | 'workgroup';

/** A pinned or candidate tile: rows, rows (Bc or CT), the chunk (undefined: widest that fits). */
export type PortableTile = [number, number, number | undefined];

/** The tile a tuning pins for a portable kernel (portableForward / portableBackward), or null. */
function pinnedPortable(kind: 'fwd' | 'bwd', tuning: KernelTuning): PortableTile | null {
  const pin = kind === 'fwd' ? tuning.portableForward : tuning.portableBackward;
  return pin ? [pin.rows, pin.cols, pin.chunk] : null;
}

/** Head-dim chunks (columns) a tile may stage, widest first: 4w for w | D/4 with T/4 | w (T: Bc or CT). */
function chunks(D: number, T: number): number[] {
  const out: number[] = [];
  for (let w = D / 4; w >= 1; w--) if ((D / 4) % w === 0 && w % (T / 4) === 0) out.push(4 * w);
  return out;
}

/**
 * Tiles of a portable kernel: the first candidate (or the pinned tile) that fits `limit` bytes
 * of workgroup memory (maxComputeWorkgroupStorageSize) and `maxWG` invocations. The forward's
 * row reduction goes through subgroup shuffles where the adapter's smallest subgroup
 * (`subgroupMin`, 0 without the feature) holds the Bc/4 invocations of a row block, else
 * through workgroup memory. `tuning` (resolved: resolveTuning) may pin the tile and variants.
 */
export function planTiles(
  kind: 'fwd' | 'bwd', D: number, precision: Precision, limit: number, maxWG = 256, subgroupMin = 0, tuning: KernelTuning = {},
): TilePlan {
  const pinned = pinnedPortable(kind, tuning);
  const candidates: PortableTile[] = pinned ? [pinned] : (kind === 'fwd' ? PORTABLE_FWD_CANDIDATES : PORTABLE_BWD_CANDIDATES).map(([A, B]) => [A, B, undefined]);
  const misses: TileMiss[] = [];
  for (const tile of candidates) {
    const plan = portableTile(kind, tile, D, precision, limit, maxWG, subgroupMin, tuning);
    if (!('why' in plan)) return plan;
    misses.push(plan);
  }
  const tried = missWords(misses);
  const what = kind === 'fwd' ? 'forward' : 'backward';
  const limits = limitWords(limit, maxWG);
  // A pinned tile that does not fit is the pin's doing, not the head dim's: say which pin and what to do.
  if (pinned) {
    const [env, option] = kind === 'fwd' ? ['FLASHRING_PORTABLE_FWD', 'portableForward'] : ['FLASHRING_PORTABLE_BWD', 'portableBackward'];
    const [A, B, C] = pinned, name = `${A}x${B}${C ? `x${C}` : ''}`, source = `(${env}, or the tuning's ${option})`;
    // A pinned chunk that cannot stage D with this tile is wrong on every device: say so, not that it does not fit.
    if (C !== undefined && !chunkFits(D, B, C))
      throw new LimitError(`the ${what}'s pinned tile ${name} ${source} cannot run at head dim ${D}: tried ${tried}. Pin a chunk that divides ${D} and is a multiple of ${B}, leave the chunk out (the widest that fits), or unset the pin.`);
    // P~ kept apart by a pin where sharing Q's array would let the pinned tile fit: say that pin is what refuses it.
    const fitsWith = (other: KernelTuning) => kind === 'fwd' && !('why' in portableTile(kind, pinned, D, precision, limit, maxWG, subgroupMin, { ...tuning, ...other }));
    const apart = tuning.forwardSharedP === 0 && fitsWith({ forwardSharedP: 1 }) ? ' It fits with P~ in Q\'s workgroup array: unset FLASHRING_PORTABLE_FWD_SHARED_P=0 (or the tuning\'s forwardSharedP).' : '';
    // f16 words widened as staged by a pin where staged as f16 the pinned tile fits: say that pin is what refuses it.
    const narrow = tuning.forwardWideStage === 1 && fitsWith({ forwardWideStage: 0 }) ? ' It fits with f16 words staged as f16: unset FLASHRING_PORTABLE_FWD_WIDE=1 (or the tuning\'s forwardWideStage).' : '';
    throw new LimitError(
      `the ${what}'s pinned tile ${name} ${source} does not fit this device at head dim ${D} in ${precision}: ` +
        `${limits}; tried ${tried}. Pin a smaller tile or unset the pin (flashring info lists the tiles chosen without one).${apart}${narrow}`,
      misses,
    );
  }
  throw new LimitError(`the ${what} with head dim ${D} in ${precision} has no tile that fits this device: ${limits}; tried ${tried}. Use a smaller head dim.`, misses);
}

/** The device's limits a kernel tile is planned against, as the planners' refusals say them (portable and tensor-core alike). */
export const limitWords = (maxBytes: number, maxInvocations: number) =>
  `${maxBytes} bytes of workgroup memory (maxComputeWorkgroupStorageSize), ${maxInvocations} invocations (maxComputeInvocationsPerWorkgroup, maxComputeWorkgroupSizeX)`;

/** Tiles that cannot run, each with why ('128x32: 41472 bytes at chunk 32, 256 invocations; 64x32: …'). */
export const missWords = (misses: readonly TileMiss[]) => misses.map((m) => `${m.tile}: ${m.why}`).join('; ');

/**
 * One tile of a portable kernel (rows, rows, chunk or undefined for the widest that fits)
 * planned against the limits of planTiles, or why it does not fit (with what it needs where the
 * limits refuse it); the forward's variants as `tuning` pins them.
 */
export function portableTile(
  kind: 'fwd' | 'bwd', [A, B, pinChunk]: PortableTile, D: number, precision: Precision, limit: number, maxWG = 256, subgroupMin = 0,
  tuning: KernelTuning = {},
): TilePlan | TileMiss {
  const WG = (A / PORTABLE_FWD_RR) * (B / 4);   // the backward's RT·CT/16 likewise
  const reduce = kind === 'fwd' ? rowReduce(subgroupMin, B / 4, tuning.rowReduce, false) : undefined;
  const products = kind === 'fwd' && precision === 'f16' ? tuning.portableProducts ?? 'f32' : undefined;
  const tried = pinChunk ? [pinChunk] : chunks(D, B);
  // The staged words' type: the storage's, or f32 for f16 storage with f32 products where widened as staged (wideRule).
  const stagedAs = (staged: Precision) => {
    const sharedAt = kind === 'fwd' ? shareRule([A, B, pinChunk], WG, D, staged, products, limit, reduce!, tuning) : () => false;
    const bytesAt = (c: number) => workgroupBytes(kind, A, B, D, c, staged, reduce, products, sharedAt(c));
    return { sharedAt, bytesAt, chunk: tried.find((c) => chunkFits(D, B, c) && bytesAt(c) <= limit) };
  };
  const own = stagedAs(precision), widened = kind === 'fwd' && products === 'f32' ? stagedAs('f32') : undefined;
  const wide = widened !== undefined && wideRule(tuning.forwardWideStage, D, own.chunk, widened.chunk);
  const { sharedAt, bytesAt, chunk } = wide ? widened : own;
  if (chunk === undefined || WG > maxWG) {
    const c = tried[tried.length - 1];
    const tile = `${A}x${B}${pinChunk ? `x${pinChunk}` : ''}`;
    if (c === undefined) return { tile, why: `${B / 4} invocations across a row divide no chunk of D/4 = ${D / 4}` };
    // A pinned chunk that cannot stage this head dim with this tile: what is wrong with it, not its bytes (which may fit).
    if (!chunkFits(D, B, c)) return { tile, why: `chunk ${c} ${(D / 4) % (c / 4) !== 0 ? `does not divide head dim ${D}` : `is not a multiple of ${B} (its ${B / 4} invocations across a row take 4 columns each)`}` };
    const need: TileNeed = { bytes: bytesAt(c), chunk: c, invocations: WG, maxBytes: limit, maxInvocations: maxWG };
    return { tile, why: `${need.bytes} bytes at chunk ${c}, ${WG} invocations`, need };
  }
  const bytes = bytesAt(chunk);
  if (kind === 'bwd') return { BR: A, BC: A, WG, workgroupBytes: bytes, streamRows: B, chunk };
  return {
    BR: A, BC: B, WG, workgroupBytes: bytes, chunk, reduce: rowReduce(subgroupMin, B / 4, tuning.rowReduce),
    ...(tuning.forwardPrefetch !== undefined ? { prefetch: tuning.forwardPrefetch } : {}),
    ...(products ? { products } : {}),
    ...(sharedAt(chunk) ? { sharedP: true } : {}),
    ...(wide ? { wideStage: true } : {}),
  };
}

/**
 * The version of the portable planner's default rules where a tuning leaves a variant unpinned (shareRule,
 * defaultPrefetch): autotune's store hash reads it (src/bench/tune.ts sourceHash), so a stored pin is searched again
 * when the plan it would give changes. 2: P~ shares Q's array where that widens the chunk (2026-12-07); 3: the default
 * prefetch is of K and V only where Q is staged per tile (2026-12-07); 4: but of Q's chunks too for f16 storage with f32
 * products where their words fit (2026-12-07); 5: f16 storage with f32 products widens its words as staged where the
 * chunk stays (wideRule, 2026-12-07); 6: widened so, its prefetch is of K and V only, as f32's (2026-12-08).
 */
export const PLAN_POLICY = 6;

/**
 * Whether the portable forward with f16 storage and f32 products widens its words to f32 as they are staged
 * (portableTile; flash_fwd.wgsl WT). Pinned 1: always; 0: never. Unset: where Q is staged every tile as f16 words (a
 * chunk narrower than D) and f32 words stage the same chunk, so that nothing but the words' type changes: at D = 128 on
 * 48 KiB (64-column chunks either way) 3.3–4.6% faster on an H100; at D = 64 it would cost Q's whole rows (32-column
 * chunks against 64), measured 2.5–4.2% slower (docs/performance.md, forty-fourth step).
 */
function wideRule(pin: 0 | 1 | undefined, D: number, ownChunk: number | undefined, wideChunk: number | undefined): boolean {
  if (pin !== undefined) return pin === 1;
  return ownChunk !== undefined && ownChunk < D && wideChunk === ownChunk;
}

/**
 * At which chunks the portable forward's P~ shares Q's array (portableTile). Pinned 1: wherever it can (sharesP); 0:
 * nowhere. Unset: only where chunk c does not fit with P~ apart and sharing there keeps what was measured faster
 * (docs/performance.md, fortieth step: f32, D = 128, 48 KiB, 128×32, 64-column chunks against 32, the prefetch on):
 * - a tile of the candidate list only if it fits apart at some chunk (the list's order was measured apart), a tile the
 *   user pinned (FLASHRING_PORTABLE_FWD) also where it fits only shared;
 * - never where the wider chunk's prefetch would pass PREFETCH_MAX_WORDS while the chunk that fits apart keeps it
 *   (defaultPrefetch would turn off a prefetch measured +21% at D = 128), unless the prefetch is pinned.
 */
function shareRule(
  [A, B, pinChunk]: PortableTile, WG: number, D: number, precision: Precision, products: PortableProducts | undefined, limit: number,
  reduce: RowReduce, tuning: KernelTuning,
): (c: number) => boolean {
  const pin = tuning.forwardSharedP;
  if (pin === 0) return () => false;
  if (pin === 1) return (c) => sharesP(D, c, precision, products);
  const apartBytes = (c: number) => workgroupBytes('fwd', A, B, D, c, precision, reduce, products);
  const apart = (pinChunk ? [pinChunk] : chunks(D, B)).find((c) => chunkFits(D, B, c) && apartBytes(c) <= limit);
  const pinnedTile = tuning.portableForward !== undefined;
  const words = (c: number) => stagingWords({ BR: A, BC: B, WG, chunk: c, workgroupBytes: 0 }, D).LK;   // defaultPrefetch's registers
  const keepsPrefetch = (c: number) => tuning.forwardPrefetch !== undefined || apart === undefined
    || words(c) <= PREFETCH_MAX_WORDS || words(apart) > PREFETCH_MAX_WORDS;
  return (c) => sharesP(D, c, precision, products) && apartBytes(c) > limit && (apart !== undefined || pinnedTile) && keepsPrefetch(c);
}

/**
 * Whether the portable forward's P~ can share Q's workgroup array at this chunk (flash_fwd.wgsl QP): Q staged again
 * every tile (a chunk narrower than D) and P~ in Q's word type (f32 storage, or f16 storage with f16 products).
 * By default only where a chunk does not fit otherwise (shareRule): sharing buys a wider chunk (f32 at D = 128 on
 * 48 KiB: 64 columns against 32, 6.5–8.8% faster on an H100, docs/performance.md fortieth step), never the same chunk
 * at a barrier more a tile. FLASHRING_PORTABLE_FWD_SHARED_P=1 shares wherever it can, 0 nowhere.
 */
function sharesP(D: number, chunk: number, precision: Precision, products: PortableProducts | undefined): boolean {
  return chunk < D && (precision === 'f32' || products === 'f16');
}

/** Whether `c` columns of the head dim D can be a chunk of a tile `B` rows wide: whole chunks of D, each a multiple of the B/4 invocations across a row. */
const chunkFits = (D: number, B: number, c: number) => (D / 4) % (c / 4) === 0 && (c / 4) % (B / 4) === 0;

/** planTiles with a device's limits, subgroups and tuning. */
export function planDeviceTiles(kind: 'fwd' | 'bwd', D: number, precision: Precision, dev: FlashDevice): TilePlan {
  const lim = dev.device.limits;
  const plan = planTiles(kind, D, precision, lim.maxComputeWorkgroupStorageSize, maxWorkgroupInvocations(lim), dev.hasSubgroups ? dev.adapter.subgroupMinSize : 0, dev.tuning);
  return kind === 'fwd' && plan.prefetch === undefined ? { ...plan, prefetch: defaultPrefetch(plan, D, dev.isCPU) } : plan;
}

/**
 * The portable forward's prefetch (flash_fwd.wgsl PF): 0 loads each staging point's words between its barriers; 1 loads
 * the next staging point's words into registers during this one: Q's chunk (where Q is staged per tile) and K's or V's;
 * 2 only K's and V's, Q's chunks between their barriers (they are the same rows every tile, so L1 serves them), so
 * that Q's words are not held through the products: in f32 on an H100, 7.0–8.4% faster than 1 at D = 64 and 128 as
 * shipped, and 4.3–6.8% faster than 0 at D = 128 as an edit (docs/performance.md, forty-first step; the driver gives
 * both 255 registers an invocation, prefetch 2's code 10% smaller). Where Q is staged once (whole rows), 1 and 2 are
 * the same kernel.
 */
export type Prefetch = 0 | 1 | 2;

/**
 * The portable forward's staging words per invocation: LQ for a Q chunk, LK for a K or V chunk, and the registers
 * its prefetch holds with mode 1 (pk, and pq where Q is staged per tile: NCH > 1); mode 2 holds LK (pk only).
 */
export function stagingWords(plan: TilePlan, D: number): { LQ: number; LK: number; prefetchWords: number } {
  const DC = (plan.chunk ?? D) / 4;
  const LQ = Math.ceil((plan.BR * DC) / plan.WG), LK = Math.ceil((plan.BC * DC) / plan.WG);
  return { LQ, LK, prefetchWords: (D / 4 / DC > 1 ? LQ : 0) + LK };
}

/** Registers (vec4 words) the forward's prefetch may take per invocation by default. */
export const PREFETCH_MAX_WORDS = 16;

/**
 * The forward's prefetch where the tuning does not pin it (forwardPrefetch): on GPUs where it
 * needs at most PREFETCH_MAX_WORDS registers (the H200 measured it faster everywhere: f32 +5% /
 * +21% at D = 64 / 128, +13% / +34% with robustness on; bench/results/h200-2026-12-01-fwd-prefetch),
 * of K and V only (2) where Q is staged per tile (Q's chunks from L1 between their barriers: in f32 on an H100
 * +7.0–8.4% against 1 at D = 64 and 128; Prefetch), else 1 (Q staged once: the same kernel), so the registers it
 * takes are K's or V's words (LK) either way; but 1 for f16 storage with f32 products staged as f16 words (not
 * wideStage) where Q's words and K's together fit PREFETCH_MAX_WORDS: an f16 word takes half an f32 word's registers,
 * and at D = 128 (128×32, 64-column chunks: 8 + 2 words), staged so, 1 measured 3.3–3.5% faster than 2 on an H100
 * (docs/performance.md, forty-third step; the same kernel at D = 64, whole rows). Widened as staged (wideStage, the
 * default at D = 128 since the forty-fourth step) and read as u32 pairs, f16 storage takes 2 as f32 does: 7.2–8.8%
 * faster than 1 with robustness on, 4.0–4.2% off (the forty-sixth step, bench/results/2026-12-08-b32-pf2-h100; measured
 * there only: the rule gives 2 wherever the words are widened, by default at D = 256 too, or pinned).
 * f16 products (opt-in) keep 2, unmeasured;
 * not on CPU adapters (no latency to hide, and lavapipe compiles its register arrays slowly: a
 * small tile's forward took 41 s against 2.5 s), nor where it would take more registers than that.
 */
export function defaultPrefetch(plan: TilePlan, D: number, cpu: boolean): Prefetch {
  const { LK, prefetchWords } = stagingWords(plan, D);
  if (cpu || LK > PREFETCH_MAX_WORDS) return 0;
  const f16Staged = plan.products === 'f32' && !plan.wideStage && prefetchWords <= PREFETCH_MAX_WORDS;
  return (plan.chunk ?? D) < D && !f16Staged ? 2 : 1;
}

/**
 * The forward's row reduction for TX invocations across a row, or as `pin`ned (rowReduce);
 * `strict` false (counting the bytes of a candidate that may not be taken): a subgroup pin the
 * adapter cannot honour gives 'workgroup' instead of the error it gives for the tile taken.
 */
function rowReduce(subgroupMin: number, TX: number, pin: RowReduce | undefined, strict = true): RowReduce {
  const sgOk = subgroupMin >= TX;
  if (pin === 'subgroup' && !sgOk && strict)
    throw new InputError(`FLASHRING_PORTABLE_REDUCE=subgroup: the adapter's subgroups (${subgroupMin || 'none'}) are smaller than a row block (${TX})`);
  return pin === 'workgroup' || !sgOk ? 'workgroup' : 'subgroup';
}

/**
 * Specialization values of a portable kernel: DC (vec4 words per chunk), NCH (chunks) and DU
 * (vec4 columns of O / dQ / dK / dV per invocation and chunk); the forward's RR (query rows per
 * invocation), LOG2TX (subgroup row reduction), PF with LQ, LK (the prefetch and its staging
 * words per invocation), PK and NPK (f16 products or not: the shader's sections) with PT (P~'s
 * element type), QP, NQP, PV and QW (P~ in Qs, rows of QW words, or in Ps: sharesP), WT (the staged words' element type: ST,
 * or f32 where wideStage) and STALE (the stale row max's threshold; exactMax: 0, the exact max: stale.ts); the
 * backward's CT (streamed rows); and both kinds' IW (Q's, K's, V's and the backward's dO storage words: vec4<f32>, or
 * for f16 storage `precision` a pair of u32, bitcast as read: measured faster than vec4<f16> words, the forward
 * 3.2–6.7% and the backward 0.5–4.2% on an H100).
 */
export function portableValues(kind: 'fwd' | 'bwd', D: number, plan: TilePlan, precision: Precision, exactMax = false): SpecValues {
  const T = kind === 'bwd' ? plan.streamRows ?? plan.BC : plan.BC;   // rows across which a row's invocations sit
  const DC = (plan.chunk ?? D) / 4;
  const v: SpecValues = { DC, NCH: D / 4 / DC, DU: DC / (T / 4) };
  if (kind === 'bwd') v.CT = T;
  v.IW = precision === 'f16' ? 'vec2<u32>' : 'vec4<f32>';
  if (kind === 'fwd') {
    v.RR = PORTABLE_FWD_RR;
    if (plan.reduce === 'subgroup') v.LOG2TX = Math.log2(T / 4);
    v.PF = plan.prefetch ?? 0;
    const { LQ, LK } = stagingWords(plan, D);
    const PK = plan.products === 'f16' ? 1 : 0;
    const QP = plan.sharedP ? 1 : 0;
    Object.assign(v, { LQ, LK, PK, NPK: 1 - PK, PT: PK ? 'f16' : 'f32', STALE: staleValue(exactMax), QP, NQP: 1 - QP, PV: QP ? 'Qs' : 'Ps', WT: plan.wideStage ? 'f32' : 'ST' });
    if (QP) v.QW = Math.max(DC + 1, T / 4 + 1);   // the rows of Qs, which P~ shares
  }
  return v;
}
