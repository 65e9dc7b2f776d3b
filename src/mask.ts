/**
 * The attention mask, one concept for every kind (FlashAttention-3's block.h: one key-range
 * helper). shaders/common.wgsl mirrors it (pos_bounds, key_range, tile_class, query_span: the
 * same rules, written for the kernels: key counts without a division at stride 1, spans from two
 * binary searches, and forms taken once per block, shared_keys and rows_seeing_all, that
 * test/mask-helpers.test.ts checks entry by entry against this file); the reference, the ring
 * schedule and the kernels all ask it.
 *
 * Query i sits at position pq = qPos.offset + i·qPos.stride (+ qPos.jump once i >= qPos.split),
 * key j at pk likewise from kPos: a chunk is one run of positions at a stride, or two runs (a
 * zigzag shard: chunks r and 2R−1−r of the sequence in one buffer), positions increasing.
 * Kinds compose (a key is visible when every active rule allows it):
 *   documents  cu_seqlens_q / cu_seqlens_k (int32, docs + 1 entries, from 0): query position pq
 *              lies in document d (cuQ[d] <= pq < cuQ[d+1]) and sees only key positions of
 *              document d, [cuK[d], cuK[d+1]); inside it the query's position is moved to the
 *              document's bottom-right: pq' = pq + cuK[d+1] − cuQ[d+1] (flash_attn_varlen_func).
 *              Without documents pq' = pq (the default qPos offset Nk − Nq is the bottom-right).
 *   causal     pk <= pq'
 *   window     (left, right) as FlashAttention-2's window_size, −1 = unbounded:
 *              pq' − left <= pk <= pq' + right
 * Every rule bounds pk by an interval, so query i sees the keys of one index range
 * [lo(i), hi(i)) (empty: lo = hi), and lo, hi never decrease as i grows (positions increase):
 * a tile's rows are bounded by its first and last row.
 */
import { counted } from './plural.js';
import { InputError } from './errors.js';

export interface Positions {
  offset: number;
  stride: number;
  /** Two runs: rows from `split` on sit `jump` (>= 0) further on (absent: one run). */
  split?: number;
  jump?: number;
}

/** Position of row i: offset + i·stride (+ jump from row split on). */
export const positionAt = (p: Positions, i: number) => p.offset + i * p.stride + (p.jump && i >= p.split! ? p.jump : 0);

/** First row (of n) at position x or later: n if none. Positions increase, so one test per run. */
export function firstAtOrAfter(p: Positions, x: number, n: number): number {
  const first = (off: number) => (x - off > 0 ? Math.floor((x - off + p.stride - 1) / p.stride) : 0);
  let j = first(p.offset);
  if (p.jump && j >= p.split!) j = Math.max(p.split!, first(p.offset + p.jump));
  return Math.min(n, j);
}

/** Rows (of n) at position y or before: the first row after y, n if none. */
export function countAtOrBefore(p: Positions, y: number, n: number): number {
  const count = (off: number) => (y - off >= 0 ? Math.floor((y - off) / p.stride) + 1 : 0);
  let j = count(p.offset);
  if (p.jump && j >= p.split!) j = Math.max(p.split!, count(p.offset + p.jump));
  return Math.min(n, j);
}

/** Packed sequences: cumulative lengths of the documents in Q and in K/V. */
export interface Documents {
  cuQ: Int32Array;
  cuK: Int32Array;
}

/** The mask part of the resolved options. */
export interface MaskSpec {
  causal: boolean;
  /** [left, right], −1 = unbounded. */
  window: [number, number];
  docs: Documents | null;
  qPos: Positions;
  kPos: Positions;
}

/** The rules of a mask, without positions (each pair of token runs brings its own). */
export type MaskRules = Pick<MaskSpec, 'causal' | 'window' | 'docs'>;

/** The mask as options give it, before it is checked (resolveOptions checks and completes it). */
export interface MaskOptions {
  causal?: boolean;
  /** Sliding window (left, right) as FlashAttention-2's window_size; -1 = unbounded (default [-1, -1]). */
  window?: readonly [number, number] | readonly number[];
  /**
   * Packed sequences (cu_seqlens_q / cu_seqlens_k, int32, documents + 1 entries): a query sees
   * only keys of its own document. With default positions the last entries must be Nq and Nk.
   */
  docs?: Documents | null;
}

/** The rules of no mask: every key visible to every query. */
export const noMask = (): MaskRules => ({ causal: false, window: [-1, -1], docs: null });

/** Rules from a boolean (causal or not, nothing else) or as they are. */
export const maskRules = (m: boolean | MaskRules): MaskRules => (typeof m === 'boolean' ? { ...noMask(), causal: m } : m);

/**
 * The mask of any options object (attention options, a ring's, a form's): the one place that
 * names the fields, so a new rule reaches every caller that passes a mask along.
 */
export function maskOf(o: MaskOptions): MaskOptions {
  return { causal: o.causal, window: o.window, docs: o.docs };
}

export type TileClass = 'skip' | 'full' | 'partial';

/** Bound on positions and window sizes (the kernels add and subtract them in i32). */
export const POS_MAX = 1 << 29;

/** Throws an InputError unless (left, right) is a FlashAttention-2 window_size (integers >= −1). */
export function checkWindow(w: readonly number[], name = 'window'): [number, number] {
  if (w.length !== 2) throw new InputError(`${name} must be two values (left, right), got ${w.length}`);
  for (const [side, x] of [['left', w[0]], ['right', w[1]]] as const)
    if (!Number.isInteger(x) || x < -1) throw new InputError(`${name} ${side} must be an integer >= -1 (-1 = unbounded), got ${x}`);
  return [w[0], w[1]];
}

/**
 * Throws an InputError unless cu is an int32 cumulative-length array: at least 2 entries,
 * starting at 0, never decreasing, ending at `total` (when given).
 */
export function checkCuSeqlens(cu: ArrayLike<number>, name: string, total?: number): void {
  if (!(cu instanceof Int32Array)) throw new InputError(`${name} must be int32 (Int32Array)`);
  if (cu.length < 2) throw new InputError(`${name} needs at least 2 entries (documents + 1), got ${cu.length}`);
  if (cu[0] !== 0) throw new InputError(`${name} must start at 0, got ${cu[0]}`);
  for (let d = 1; d < cu.length; d++)
    if (cu[d] < cu[d - 1]) throw new InputError(`${name} decreases at entry ${d} (${cu[d - 1]} then ${cu[d]})`);
  if (cu[cu.length - 1] >= POS_MAX) throw new InputError(`${name} ends at ${cu[cu.length - 1]}; at most ${POS_MAX - 1} tokens are supported`);
  if (total !== undefined && cu[cu.length - 1] !== total)
    throw new InputError(`${name} ends at ${cu[cu.length - 1]} but the sequence has ${total} tokens; the last entry must be the total length`);
}

/**
 * Checks a pair of cu_seqlens against the packed lengths (Nq, Nk when given), each named in an error as `names` says
 * (the CLI's one --cu-seqlens for both: 'cu_seqlens', not a `_q` the user did not give).
 */
export function checkDocuments(d: Documents, Nq?: number, Nk?: number, names = { q: 'cu_seqlens_q', k: 'cu_seqlens_k' }): void {
  checkCuSeqlens(d.cuQ, names.q, Nq);
  checkCuSeqlens(d.cuK, names.k, Nk);
  if (d.cuQ.length !== d.cuK.length)
    throw new InputError(`${names.q} has ${counted(d.cuQ.length - 1, 'document')} but ${names.k} ${d.cuK.length - 1}; they must match`);
}

/** The mask applies no rule at all (every key visible to every query). */
export const unmasked = (m: Pick<MaskSpec, 'causal' | 'window' | 'docs'>) => !m.causal && m.window[0] < 0 && m.window[1] < 0 && !m.docs;

export class Mask {
  constructor(readonly spec: MaskSpec, readonly Nq: number, readonly Nk: number) {}

  /** Largest document d (below the count) with cu[d] <= p. */
  private docOf(cu: Int32Array, p: number): number {
    let lo = 0, hi = cu.length - 2;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (cu[mid] <= p) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  /** Key positions query i may see: [x, y] inclusive (x > y: none). */
  posBounds(i: number): [number, number] {
    const m = this.spec;
    let pq = positionAt(m.qPos, i);
    let x = -POS_MAX, y = POS_MAX;
    if (m.docs) {
      const d = this.docOf(m.docs.cuQ, pq);
      pq += m.docs.cuK[d + 1] - m.docs.cuQ[d + 1]; // bottom-right inside the document
      x = m.docs.cuK[d];
      y = m.docs.cuK[d + 1] - 1;
    }
    if (m.causal) y = Math.min(y, pq);
    if (m.window[0] >= 0) x = Math.max(x, pq - Math.min(m.window[0], POS_MAX));
    if (m.window[1] >= 0) y = Math.min(y, pq + Math.min(m.window[1], POS_MAX));
    return [x, y];
  }

  /** Keys query i sees: indices [lo, hi) (lo = hi: none; rows at or past Nq see none). */
  keyRange(i: number): [number, number] {
    if (i >= this.Nq) return [this.Nk, this.Nk];
    const [x, y] = this.posBounds(i);
    const lo = firstAtOrAfter(this.spec.kPos, x, this.Nk), hi = countAtOrBefore(this.spec.kPos, y, this.Nk);
    return [lo, Math.max(lo, hi)];
  }

  isVisible(i: number, j: number): boolean {
    const [lo, hi] = this.keyRange(i);
    return j >= lo && j < hi;
  }

  /**
   * Rows [i0, i1) against keys [j0, j1): 'skip' when no row's range meets the keys (bounded by
   * the first and last row), 'full' when every row sees every key, else 'partial'. Rows past
   * Nq do not count; keys past Nk are never visible (a tile reaching past Nk is never full).
   */
  tileClass(i0: number, i1: number, j0: number, j1: number): TileClass {
    const last = Math.min(i1, this.Nq);
    if (last <= i0) return 'skip';
    const a = this.keyRange(i0), b = this.keyRange(last - 1);
    if (b[1] <= j0 || a[0] >= j1) return 'skip';
    return b[0] <= j0 && a[1] >= j1 ? 'full' : 'partial';
  }

  /** Rows that may see a key of [j0, j1): [first row with hi > j0, first row with lo >= j1). */
  querySpan(j0: number, j1: number): [number, number] {
    const first = (pred: (i: number) => boolean) => {
      let lo = 0, hi = this.Nq; // keyRange(Nq) = [Nk, Nk)
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (pred(mid)) hi = mid; else lo = mid + 1;
      }
      return lo;
    };
    const a = first((i) => this.keyRange(i)[1] > j0);
    const b = first((i) => this.keyRange(i)[0] >= j1);
    return [a, Math.max(a, b)];
  }

  /**
   * Visible (query, key) pairs of rows [i0, i1): Σ (hi − lo). Without documents in closed form
   * (a ring step asks it for every pair: row by row it cost ~15 ms per 16384-row shard on a CI
   * core, more than the step's GPU time at N = 65536): hi and lo count the keys at or before a
   * position affine in i on each run of rows (sumCountAtOrBefore), and lo <= hi. With documents
   * row by row.
   */
  visiblePairs(i0 = 0, i1 = this.Nq): number {
    const m = this.spec;
    i1 = Math.min(i1, this.Nq);
    if (i0 >= i1) return 0;
    if (m.docs) {
      let n = 0;
      for (let i = i0; i < i1; i++) {
        const [lo, hi] = this.keyRange(i);
        n += hi - lo;
      }
      return n;
    }
    const q = m.qPos, [left, right] = m.window.map((w) => Math.min(w, POS_MAX));
    // Key positions query i sees: [pq − left, pq + right], causal pq + min(right, 0) = pq (posBounds).
    const ahead = m.causal ? 0 : right >= 0 ? right : null;
    const runs: [number, number, number][] = q.jump
      ? [[i0, Math.min(i1, q.split!), q.offset], [Math.max(i0, q.split!), i1, q.offset + q.jump]]
      : [[i0, i1, q.offset]];
    let n = 0;
    for (const [a, b, c] of runs) {
      if (a >= b) continue;
      n += ahead === null ? this.Nk * (b - a) : sumCountAtOrBefore(m.kPos, this.Nk, c + ahead, q.stride, a, b);
      // lo(i): the keys before pq − left, i.e. at or before pq − left − 1 (firstAtOrAfter).
      if (left >= 0) n -= sumCountAtOrBefore(m.kPos, this.Nk, c - left - 1, q.stride, a, b);
    }
    return n;
  }
}

/** Σ_{t<n} ⌊(a·t + b)/m⌋ for integers n, a, b >= 0 and m >= 1 (the floor sum; O(log m) rounds). */
export function floorSum(n: number, m: number, a: number, b: number): number {
  let sum = 0;
  for (;;) {
    if (a >= m) {
      sum += ((n * (n - 1)) / 2) * Math.floor(a / m);
      a %= m;
    }
    if (b >= m) {
      sum += n * Math.floor(b / m);
      b %= m;
    }
    const yMax = a * n + b;
    if (yMax < m) return sum;
    [n, b, m, a] = [Math.floor(yMax / m), yMax % m, a, m];
  }
}

/**
 * Σ over i in [i0, i1) of clamp(⌊(s·i + d)/k⌋ + 1 − base, 0, cap) (s, k >= 1): one run of keys
 * (stride k) counted at or before a position affine in i, less `base` keys, at most `cap`. The
 * term never decreases with i: 0 up to iLo, ⌊…⌋ + 1 − base up to iHi, cap from there.
 */
function clampedRunSum(s: number, d: number, k: number, base: number, cap: number, i0: number, i1: number): number {
  if (cap <= 0) return 0;
  // First i whose term reaches v (>= 1): s·i + d >= (v − 1 + base)·k.
  const from = (v: number) => Math.min(i1, Math.max(i0, Math.ceil(((v - 1 + base) * k - d) / s)));
  const lo = from(1), hi = from(cap);
  const ramp = hi > lo ? floorSum(hi - lo, k, s, s * lo + d) + (1 - base) * (hi - lo) : 0;
  return ramp + cap * (i1 - hi);
}

/**
 * Σ over rows i in [i0, i1) of countAtOrBefore(p, c + s·i, n): a run (or two: the first `split`
 * rows, then the rest `jump` further) of n keys counted at or before a position affine in i.
 */
export function sumCountAtOrBefore(p: Positions, n: number, c: number, s: number, i0: number, i1: number): number {
  if (!p.jump) return clampedRunSum(s, c - p.offset, p.stride, 0, n, i0, i1);
  const split = Math.min(p.split!, n);
  return clampedRunSum(s, c - p.offset, p.stride, 0, split, i0, i1) + clampedRunSum(s, c - p.offset - p.jump, p.stride, split, n - split, i0, i1);
}
