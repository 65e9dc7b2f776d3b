/**
 * Tile planning of the tensor-core (subgroup-matrix) kernels: workgroup memory, the measured
 * candidates, the pins of a KernelTuning (sgmm*), and whether the adapter can run them at all.
 */
import type { TileMiss, TileNeed } from '../errors.js';
import { FlashDevice, maxWorkgroupInvocations } from '../gpu/device.js';
import { Precision } from './precision.js';
import { TilePlan, limitWords, missWords } from './tiles.js';

/**
 * Halves of padding per row of the tensor-core kernels' workgroup tiles (f32 score rows get
 * half as many elements, the same 16 bytes): rows of 128 bytes (D = 64 halves, 32 scores) would
 * all start on bank 0. A tuning's sgmmPad = 0 (FLASHRING_SGMM_PAD=0) turns it off (the ablation).
 */
export const SGMM_PAD = 8;

/**
 * Workgroup memory of the subgroup-matrix forward (flash_fwd_sgmm.wgsl) with SG subgroups, groups of
 * DS of them owning RB row blocks each (Br = 16·RB·SG/DS), and Bc-row K/V tiles, rows padded by `pad` halves:
 * Ks (also stages Q) Vs P | S ℓ | a ring's merge weights (vec2 a row; none in a plain forward) | vote.
 * P and S hold every row of a group, or 16 where its row blocks take turns (`turns`: sgmmFwdTurns).
 */
export function sgmmWorkgroupBytes(SG: number, BC: number, D: number, RB = 1, pad = SGMM_PAD, DS = 1, merge = false, turns = false): number {
  const BR = (16 * RB * SG) / DS;
  const SR = turns ? BR / RB : BR;   // rows of the S and P blocks
  return (2 * BC * (D + pad) + SR * (BC + pad)) * 2 + SR * (BC + pad / 2) * 4 + BR * 4 + (merge ? BR * 8 : 0) + 32; // … vote, vote_u (16 B each)
}

/**
 * Whether the forward's row blocks take turns through one 16-row S and P block a group (SBR = 16 in
 * flash_fwd_sgmm.wgsl: two phases a tile, two barriers more, two lanes a row; the second row block's S and the
 * first's P wait in registers): 13344 workgroup bytes at D = 64 4×16×2 where both at once take 21536. Possible
 * with two row blocks a subgroup, no D split and 16-key tiles. Measured on the H200 (D = 64 4×16×2, N = 16384,
 * f16):
 * - the timing-only alias that prompted it (bench/results/2026-12-04-fwd-bytes-h200): 5.44 → 4.34 ms;
 * - with half the lanes idle in each phase (a lane a row): 7.41 against 5.41 ms (…-fwd-turns-h200; withdrawn);
 * - every lane in each phase (…-fwd-turns2-h200): p2p's steps 4.71 against 5.08 ms, the same call 114.0 against
 *   102.2 TFLOP/s (causal 117.0 against 102.5); with Dawn's robustness on, **slower**: 6.10 against 5.42 ms.
 * The code without turns is generated as before taking turns existed (TURN / NOTURN template sections): with the
 * turns' code merely present in it (dead branches, held matrices) the forward ran 3.4–7.3% slower with robustness
 * on (…-robust-fwd-h200; as before again: …-robust-fwd2-h200).
 * So the default takes turns only on shaders without the robustness transform (`robust` false); a tuning's
 * sgmmForwardTurns (FLASHRING_SGMM_FWD_TURN = 0 | 1) pins either where possible. The two ways sum a row's ℓ in
 * another order (two lanes a row against one), so their outputs differ in the last bits.
 */
export const SGMM_FWD_TURNS = [0, 1] as const;
export const sgmmFwdCanTurn = (RB: number, DS: number, T: number) => RB === 2 && DS === 1 && T === 16;
export const sgmmFwdTurns = (RB: number, DS: number, T: number, pin?: 0 | 1, robust = false) =>
  sgmmFwdCanTurn(RB, DS, T) && (pin === undefined ? !robust : pin === 1);

/**
 * Workgroup memory of the subgroup-matrix backward (flash_bwd_sgmm.wgsl), SG subgroups and
 * T-row inner tiles (Br = Bc = T), rows padded by `pad` halves, the larger of its two kernels (a pipeline
 * allocates what its own code reaches: test/sgmm-workgroup.test.ts): Qs dOs (T×D f16) | LSE Δ | per subgroup
 * dkdv: Sᵀ dPᵀ (16×T f32) Pᵀ dSᵀ (16×T f16), or one f32 and one f16 block with one spill block (`kvOne`);
 * dq: S dP and dS, or S and dS with one (`dqOne`).
 */
export function sgmmBwdWorkgroupBytes(SG: number, T: number, D: number, pad = SGMM_PAD, dqOne = false, kvOne = false): number {
  const f32 = (T + pad / 2) * 4, f16 = (T + pad) * 2;   // bytes of a block row
  const kv = kvOne ? f32 + f16 : 2 * (f32 + f16);
  const q = (dqOne ? f32 : 2 * f32) + f16;
  // + 32: the non-finite vote nf (4 × u32) and its uniform copy nf_u (vec4<u32>).
  return 2 * T * (D + pad) * 2 + SG * 16 * Math.max(kv, q) + 2 * T * 4 + 32;
}

/**
 * Tensor-core tile candidates, fastest first as measured on the H200 at N=16384 with padded
 * rows (bench/results/sgmm-h200-2026-12-01, non-causal, TFLOP/s); the first that fits workgroup
 * memory and the invocation limit is taken.
 * Forward (subgroups per workgroup, K/V tile rows Bc, 16-row blocks per subgroup RB):
 * D=64 4×16×2 66.0, 8×16×2 59.6, 8×32×1 54.8, 4×32×2 36.0; D=128 8×32×1 87.4, 8×16×1 68.3,
 * 4×16×1 62.7, 4×32×1 57.7. RB = 2 doubles the Q and O registers: at D=128 the driver spills
 * them (23.0 TFLOP/s for 2×32×2 before padding), so it is offered only up to D = 64.
 * Backward (subgroups, inner tile rows T), forward+backward: D=64 8×16 45.5, 4×16 44.3, 2×32
 * 30.2, 4×32 28.6; D=128 8×16 71.2, 4×16 48.7, 4×32 41.8, 2×32 18.8. Measured again on
 * 2026-12-03, 4×16 is the faster backward at D = 64: dkdv 4–8% and dq 0.5–8.5% faster at every
 * call length of p2p's steps, R = 1 to 8 (bench/results/2026-12-03-short-tiles-h200), while at
 * D = 128 it takes nearly twice 8×16's time. So the order depends on D (sgmmCandidates): 4×16
 * first up to SGMM_BWD_SG4_MAX_D. At D = 32 and 48 it is as fast or faster too (0.2–3.6%,
 * bench/results/2026-12-03-small-d-h200); D = 16 is not measured.
 */
export const SGMM_FWD_CANDIDATES: SgmmTile[] = [[4, 16, 2], [8, 16, 2], [8, 32, 1], [8, 16, 1], [4, 32, 1], [4, 16, 1], [2, 16, 1], [1, 16, 1]];
/**
 * A tensor-core tile: subgroups per workgroup, inner tile rows T, the forward's 16-row blocks per group
 * RB and its D split DS (subgroups a row block; 1 when left out).
 */
export type SgmmTile = [number, number, number, number?];
/**
 * The forward's D split, first at D = SGMM_DSPLIT_D (the one head dim measured), on shaders without
 * the robustness transform only: 16 subgroups, two a 16-row block, each with half of O's columns and
 * of S's (flash_fwd_sgmm.wgsl DS). Half the accumulators a lane lets 16 subgroups fit at Bc = 32
 * (46624 bytes at D = 128; 47648 for a ring's forward, with its merge's row weights). Measured on the H200 (forward TFLOP/s against 8×32×1):
 * - D = 128, robustness off, same call (bench/results/2026-12-04-dsplit-h200, 2026-12-04-final-h200):
 *   114.8 / 114.7 against 113.3 / 113.5 (+1%), causal **112.0 / 111.1 against 104.5 / 103.3 (+7%)**;
 * - D = 128, robustness on (browsers): **53.6** (2026-12-04-final-h200), where 8×32×1 runs at 95.3
 *   (2026-12-03-final-check-h200) and 95.0 (2026-12-04-post-h200, after this rule); inferred: the
 *   clamps' registers on 512 invocations. With the constant offsets (fifteenth step) it runs at 103.5 against
 *   8×32×1's 119.4 (bench/results/2026-12-04-ds-branch-h200; its own offsets made constants by a branch per
 *   subgroup part ran at 92.8). So robust devices keep 8×32×1 (sgmmCandidates' `robust`);
 * - D = 64: 26% slower (73.0 against 98.8), and 8×32×1×2 slower at both. Other head dims are not
 *   measured (at 48 KiB none above 128 fits; at 64 KiB D = 160–256 would, with twice the Q blocks).
 * Its ℓ sums four lanes' partial sums where 8×32×1 sums two, so D = 128 outputs differ in the last
 * bits between the modes (docs/numerics.md).
 */
export const SGMM_FWD_DSPLIT: SgmmTile = [16, 32, 1, 2];
export const SGMM_DSPLIT_D = 128;
/** Whether head dim D and T-row tiles split DS ways into whole 16-column blocks of O and of S (always, at DS = 1). */
export const dSplitWhole = (D: number, T: number, DS = 1) => D % (16 * DS) === 0 && T % (16 * DS) === 0;
export const SGMM_BWD_CANDIDATES: [number, number][] = [[8, 16], [4, 32], [4, 16], [2, 32], [2, 16], [1, 16]];
/** The backward's first candidate up to SGMM_BWD_SG4_MAX_D (the rest in SGMM_BWD_CANDIDATES' order). */
export const SGMM_BWD_SMALL_D_FIRST: [number, number] = [4, 16];
export const SGMM_BWD_SG4_MAX_D = 64;
/** Largest head dim at which the forward keeps two row blocks (RB = 2) per subgroup in registers. */
export const SGMM_RB2_MAX_D = 64;

/** The (SG, T, RB[, DS]) candidates of a kernel at head dim D, fastest first; `robust`: for shaders with the robustness transform. */
export function sgmmCandidates(kind: 'fwd' | 'bwd', D: number, robust = false): SgmmTile[] {
  if (kind === 'bwd') {
    const [SG1, T1] = SGMM_BWD_SMALL_D_FIRST;
    const order = D <= SGMM_BWD_SG4_MAX_D ? [SGMM_BWD_SMALL_D_FIRST, ...SGMM_BWD_CANDIDATES.filter(([SG, T]) => SG !== SG1 || T !== T1)] : SGMM_BWD_CANDIDATES;
    return order.map(([SG, T]) => [SG, T, 1]);
  }
  const split = D === SGMM_DSPLIT_D && !robust ? [SGMM_FWD_DSPLIT] : [];
  return [...split, ...SGMM_FWD_CANDIDATES.filter(([, , RB]) => RB === 1 || D <= SGMM_RB2_MAX_D)];
}

/** The variants of a tensor-core tile plan beside its tile, as a tuning pins them or the device implies. */
export interface SgmmPlanOptions {
  /** Halves of row padding (SGMM_PAD unless pinned). */
  pad?: number;
  /** The forward's step order (sgmmFwdPipeForSplit(DS) unless given). */
  pipe?: SgmmForwardPipe;
  /** The forward's D split (1: none). */
  DS?: number;
  /** A ring's forward (its merge weights counted). */
  merge?: boolean;
  /** The forward's row blocks taking turns, as pinned (sgmmFwdTurns). */
  turnPin?: 0 | 1;
  /** Shaders with the robustness transform (the device's mode). */
  robust?: boolean;
  /** The backward's spills, as pinned (oneSpill). */
  dqSpill?: SgmmSpill;
  kvSpill?: SgmmSpill;
}

/**
 * The tile plan of a subgroup-matrix kernel with SG subgroups and T-row inner tiles: WG = 32·SG;
 * forward Br = 16·RB·SG/DS, Bc = T; backward Br = Bc = T and each workgroup owns 16·SG rows. The
 * forward's step order is `pipe`, or where none is given sgmmFwdPipeForSplit(DS); its row blocks take turns
 * by sgmmFwdTurns; the backward's workgroup bytes follow its spills (oneSpill).
 */
export function sgmmTilePlan(kind: 'fwd' | 'bwd', SG: number, T: number, D: number, RB = 1, o: SgmmPlanOptions = {}): TilePlan {
  const { pad = SGMM_PAD, DS = 1, merge = false } = o;
  if (kind === 'bwd') {
    const bytes = sgmmBwdWorkgroupBytes(SG, T, D, pad, oneSpill('dq', D, o.dqSpill), oneSpill('dkdv', D, o.kvSpill));
    return { BR: T, BC: T, WG: 32 * SG, workgroupBytes: bytes, rowsPerGroup: 16 * SG, pad };
  }
  const turns = sgmmFwdTurns(RB, DS, T, o.turnPin, o.robust);
  const workgroupBytes = sgmmWorkgroupBytes(SG, T, D, RB, pad, DS, merge, turns);
  return { BR: (16 * RB * SG) / DS, BC: T, WG: 32 * SG, workgroupBytes, rowBlocks: RB, pad, pipe: o.pipe ?? sgmmFwdPipeForSplit(DS), dSplit: DS, merge, turns };
}

/**
 * The orders of the tensor-core forward's steps per K/V tile (PIPE in flash_fwd_sgmm.wgsl): 2
 * stages the next tiles behind the softmax and reads the votes in place (3 barriers per tile,
 * counting the two of a uniform load); 0 stages each tile before its products (6). Measured on
 * the H200 (bench/results/sgmm-pipe-h200-2026-12-01, N = 16384, forward TFLOP/s, PIPE 0 / 1 / 2,
 * 1 being 2 with the votes copied, since removed): D = 128 89.2 / 88.1 / 96.5 (causal 83.7 / 79.2
 * / 90.1); D = 64 62.8 / 57.6 / 58.0 (causal 56.4 / 50.3 / 50.7). So it was 2 from D = 128 up.
 * Since the matrix offsets are constants and the key blocks unrolled (2026-12-04), 0 is the faster at
 * D = 128 too, except with the D split (`flashring tune`, N = 16384, not causal, forward ms 0 / 2,
 * bench/results/2026-12-04-tc-tune-h200): robustness on 8×32×1 18.43 / 19.99, 4×16×1 20.58 / 25.64;
 * off 8×32×1 18.64 / 19.62, 4×16×1 20.59 / 24.80, but 8×16×1 20.61 / 19.88 and the D split
 * 16×32×1×2 18.20 / **16.70**. So 2 with the D split, 0 otherwise (sgmmFwdPipeForSplit; head dims
 * above 128 are not measured); a tuning's sgmmForwardPipe (FLASHRING_SGMM_FWD_PIPE) pins either.
 */
export const SGMM_FWD_PIPES = [0, 2] as const;
export type SgmmForwardPipe = (typeof SGMM_FWD_PIPES)[number];
/** The forward's step order for a D split DS ways (1: none), where no tuning pins one. */
export const sgmmFwdPipeForSplit = (DS = 1): SgmmForwardPipe => (DS > 1 ? 2 : 0);

/**
 * The tensor-core backward's spill blocks a subgroup, as a tuning pins them for each kernel: one (S, then dP,
 * through one f32 block; dkdv's Pᵀ, then dSᵀ, through one f16 block) or two (at once). DQ_ONE / DQ_TWO and
 * KV_ONE / KV_TWO in shaders/flash_bwd_sgmm.wgsl.
 */
export const SGMM_SPILLS = ['one', 'two'] as const;
export type SgmmSpill = (typeof SGMM_SPILLS)[number];

/**
 * Largest head dim at which each tensor-core backward kernel takes one spill block a subgroup (two barriers
 * more a tile; at 4×16, D = 64, 12960 bytes of workgroup memory where two blocks take 21152 for dkdv, 18080 for dq).
 * Measured on the H200 (p2p's steps, N = 16384, causal f16):
 * - dq (bench/results/2026-12-04-dq-one-spill-h200): 10.18 → 8.85 ms at D = 64, 12.43 → 14.74 ms at D = 128;
 * - dkdv (bench/results/2026-12-04-kv-one-spill-h200): 13.41 → 12.43 ms at D = 64, 17.75 → 20.34 ms at D = 128.
 * Head dims below 64 are not measured. A tuning's sgmmDqSpill / sgmmKvSpill (FLASHRING_SGMM_DQ_SPILL,
 * FLASHRING_SGMM_KV_SPILL = one | two) pins either at any head dim.
 */
export const SGMM_ONE_SPILL_MAX_D = { dq: 64, dkdv: 64 } as const;

/** Whether a tensor-core backward kernel takes one spill block a subgroup at head dim D: the pin, else by SGMM_ONE_SPILL_MAX_D. */
export const oneSpill = (kernel: keyof typeof SGMM_ONE_SPILL_MAX_D, D: number, pin?: SgmmSpill) =>
  (pin ? pin === 'one' : D <= SGMM_ONE_SPILL_MAX_D[kernel]);

/** Why the adapter cannot run the subgroup-matrix kernels at head dim D and this precision, or null. */
function sgmmUnsupported(dev: FlashDevice, D: number, precision: Precision): string | null {
  if (!dev.hasSubgroupMatrix) return 'the adapter has no chromium-experimental-subgroup-matrix';
  if (precision !== 'f16') return 'subgroup matrices are used for f16 only';
  if (D % 16 !== 0) return `head dim ${D} is not a multiple of 16`;
  const { subgroupMinSize: lo, subgroupMaxSize: hi } = dev.adapter;
  if ((lo && lo !== 32) || (hi && hi !== 32)) return `the kernels need subgroups of exactly 32 invocations; the adapter's are ${lo}..${hi}`;
  const cfgs = dev.adapter.subgroupMatrixConfigs as { componentType?: string; resultComponentType?: string; M?: number; N?: number; K?: number }[];
  if (cfgs.length && !cfgs.some((c) => c.componentType === 'f16' && c.resultComponentType === 'f32' && c.M === 16 && c.N === 16 && c.K === 16))
    return 'the adapter has no 16×16×16 f16→f32 subgroup-matrix config';
  return null;
}

/**
 * Why the tensor-core kernels do not take a head dim on a device: `why` in words (on the auto path, the portable
 * kernels' fallback reason), and where tiles were tried, each and why it cannot run (`tried`: with what it needs where
 * the device's limits refuse it, the shape of the portable planner's misses); empty where the adapter cannot run the
 * kernels at all (sgmmUnsupported).
 */
export interface SgmmRefusal {
  why: string;
  tried: readonly TileMiss[];
}

/** The device's limits a tensor-core tile is planned against: maxComputeWorkgroupStorageSize, and maxWorkgroupInvocations (src/gpu/device.ts). */
interface SgmmLimits {
  maxBytes: number;
  maxInvocations: number;
}

/** A tensor-core tile as its pin spells it (FLASHRING_SGMM_FWD / _BWD): SGxTxRB[xDS] for the forward, SGxT for the backward. */
const sgmmTileName = (kind: 'fwd' | 'bwd', [SG, T, RB = 1, DS = 1]: SgmmTile) => (kind === 'bwd' ? `${SG}x${T}` : `${SG}x${T}x${RB}${DS > 1 ? `x${DS}` : ''}`);

/**
 * A tensor-core tile's plan at head dim D if it can run, else why not: a D split that does not cut D and its T rows
 * into whole 16-column blocks (on no device), a backward with more rows a tile than invocations (no pin gives one),
 * or the device's workgroup memory or invocations, with what the tile needs (its rows staged whole: chunk D).
 */
function sgmmTile(kind: 'fwd' | 'bwd', tile: SgmmTile, D: number, plan: TilePlan, lim: SgmmLimits): TilePlan | TileMiss {
  const [, T, , DS = 1] = tile, name = sgmmTileName(kind, tile);
  if (!dSplitWhole(D, T, DS)) {
    const what = D % (16 * DS) !== 0 ? `head dim ${D} is` : `tile rows ${T} are`;
    return { tile: name, why: `${what} not a multiple of ${16 * DS}, which the forward's D split ${DS} ways needs` };
  }
  // The backward loads a Q tile's LSE and Δ with one invocation per row (Br ≤ WG).
  if (kind === 'bwd' && plan.BR > plan.WG) return { tile: name, why: `its ${plan.BR} rows a tile take one invocation each to load LSE and Δ; it has ${plan.WG}` };
  if (plan.workgroupBytes <= lim.maxBytes && plan.WG <= lim.maxInvocations) return plan;
  const need: TileNeed = { bytes: plan.workgroupBytes, chunk: D, invocations: plan.WG, maxBytes: lim.maxBytes, maxInvocations: lim.maxInvocations };
  return { tile: name, why: `${need.bytes} bytes, ${need.invocations} invocations`, need };
}

/** Why no tensor-core tile runs, and what to do: each tile tried (`misses`) against the device's limits; a pinned one names its pin. */
function refusalWords(kind: 'fwd' | 'bwd', D: number, pinned: SgmmTile | null, lim: SgmmLimits, misses: readonly TileMiss[]): string {
  const what = kind === 'fwd' ? 'forward' : 'backward', tried = missWords(misses);
  const limits = limitWords(lim.maxBytes, lim.maxInvocations);
  if (!pinned) return `head dim ${D} has no tensor-core ${what} tile that fits this device: ${limits}; tried ${tried}. Use a smaller head dim`;
  const [env, option] = kind === 'fwd' ? ['FLASHRING_SGMM_FWD', 'sgmmForward'] : ['FLASHRING_SGMM_BWD', 'sgmmBackward'];
  const pin = `the pinned tile ${sgmmTileName(kind, pinned)} (${env}, or the tuning's ${option})`;
  // A tile that cannot run at this head dim on any device is the pin's shape, not the device's limits.
  if (!misses.some((m) => m.need)) return `${pin} cannot run at head dim ${D}: tried ${tried}. Pin another tile or unset the pin`;
  return `${pin} does not fit this device at head dim ${D}: ${limits}; tried ${tried}. Pin a smaller tile or unset the pin`;
}

/**
 * Tiles for a subgroup-matrix kernel (the first candidate that fits, or the device's tuning's pin), or why it cannot
 * run, with each tile tried (SgmmRefusal), before any pipeline is made; `merge`: a ring's forward, with its merge
 * weights counted.
 */
export function planSgmm(dev: FlashDevice, D: number, precision: Precision, kind: 'fwd' | 'bwd' = 'fwd', merge = false): TilePlan | SgmmRefusal {
  const unsupported = sgmmUnsupported(dev, D, precision);
  if (unsupported) return { why: unsupported, tried: [] };
  const maxBytes = dev.device.limits.maxComputeWorkgroupStorageSize, maxInvocations = maxWorkgroupInvocations(dev.device.limits);
  const t = dev.tuning;
  const pin = kind === 'fwd' ? t.sgmmForward : t.sgmmBackward;
  const pinned: SgmmTile | null = pin ? [pin.subgroups, pin.rows, pin.rowBlocks ?? 1, pin.dSplit ?? 1] : null;
  const o: SgmmPlanOptions = {
    pad: t.sgmmPad, pipe: t.sgmmForwardPipe, merge, turnPin: t.sgmmForwardTurns, robust: dev.robustShaders, dqSpill: t.sgmmDqSpill, kvSpill: t.sgmmKvSpill,
  };
  const misses: TileMiss[] = [];
  for (const tile of pinned ? [pinned] : sgmmCandidates(kind, D, dev.robustShaders)) {
    const [SG, T, RB, DS = 1] = tile;
    const got = sgmmTile(kind, tile, D, sgmmTilePlan(kind, SG, T, D, RB, { ...o, DS }), { maxBytes, maxInvocations });
    if (!('why' in got)) return got;
    misses.push(got);
  }
  return { why: refusalWords(kind, D, pinned, { maxBytes, maxInvocations }, misses), tried: misses };
}
