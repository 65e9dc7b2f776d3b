/**
 * The ring's layout: pure, no GPU. Which tokens each rank holds (its shard, as segments of
 * global positions), and under the mask (src/mask.ts: causal, sliding window, documents) whether
 * a (Q segment, K/V segment) pair is full, masked or skipped: a pair skips when no query of it
 * sees a key of it (no document in common, outside the window, or after the queries under causal
 * masking). Which chunk a rank holds at which step is its scheme's rank program's (src/cp/schemes),
 * and what the steps did is the dry run's or the run's timeline.
 *
 * Layouts (R ranks, N tokens); every shard is one segment:
 *   contiguous  rank r holds one run of ~N/R tokens
 *   zigzag      the sequence cut into 2R chunks; rank r holds chunks r and 2R−1−r
 *               (Megatron-LM's load balancing for causal attention), as one segment of two
 *               runs, so a step of the ring is one kernel call, not one per pair of chunks
 *   striped     token i on rank i mod R (positions r, r+R, r+2R, ...)
 * Uneven N needs no padding: shards just differ in length by at most one token per segment.
 */
import { InputError } from '../../errors.js';
import { Mask, MaskRules, Positions, maskRules, positionAt, unmasked } from '../../mask.js';

export type { MaskRules };

export type Layout = 'contiguous' | 'zigzag' | 'striped';
export const LAYOUTS: Layout[] = ['contiguous', 'zigzag', 'striped'];

/**
 * Tokens at global positions offset + i·stride, i < count; a segment of two runs (a zigzag shard,
 * or an a2a+p2p group's tokens) has its rows from `split` on `jump` positions further: its
 * positions are mask.ts Positions, which the mask and the kernels take as they are.
 */
export interface Segment extends Positions {
  count: number;
}

/** A run of a segment: its rows row0 … row0 + count − 1, at positions offset + k·stride. */
export interface Piece {
  offset: number;
  stride: number;
  count: number;
  row0: number;
}

/** A segment's runs (one, or two when it jumps), in row order. Pure. */
export function pieces(s: Segment): Piece[] {
  if (!s.jump || s.split! >= s.count) return [{ offset: s.offset, stride: s.stride, count: s.count, row0: 0 }];
  if (s.split! <= 0) return [{ offset: s.offset + s.jump, stride: s.stride, count: s.count, row0: 0 }];
  return [
    { offset: s.offset, stride: s.stride, count: s.split!, row0: 0 },
    { offset: s.offset + s.split! * s.stride + s.jump, stride: s.stride, count: s.count - s.split!, row0: s.split! },
  ];
}

/** Two stride-1 runs as one segment (the second must lie after the first); one if the other is empty or they meet. */
export function twoRuns(a: { offset: number; count: number }, b: { offset: number; count: number }): Segment {
  if (b.count === 0) return { offset: a.offset, stride: 1, count: a.count };
  if (a.count === 0) return { offset: b.offset, stride: 1, count: b.count };
  const jump = b.offset - (a.offset + a.count);
  if (jump < 0) throw new Error(`twoRuns: the second run (at ${b.offset}) starts before the first ends (${a.offset + a.count})`);
  return jump === 0 ? { offset: a.offset, stride: 1, count: a.count + b.count } : { offset: a.offset, stride: 1, count: a.count + b.count, split: a.count, jump };
}

export type PairKind = 'full' | 'masked' | 'skip';

/** n split into k near-equal parts (the first n mod k parts one larger). */
function splitSizes(n: number, k: number): number[] {
  const base = Math.floor(n / k), rem = n % k;
  return Array.from({ length: k }, (_, i) => base + (i < rem ? 1 : 0));
}

export function validateRing(N: number, R: number, layout: string): asserts layout is Layout {
  if (!Number.isInteger(R) || R < 1) throw new InputError(`the ring size (CP ranks) must be an integer >= 1, got ${R}`);
  if (!Number.isInteger(N) || N < 1) throw new InputError(`the sequence length must be a positive integer, got ${N}`);
  if (R > N) throw new InputError(`the ring has ${R} ranks but the sequence only ${N} tokens: every rank needs at least one token`);
  if (!LAYOUTS.includes(layout as Layout)) throw new InputError(`unknown layout '${layout}': use ${LAYOUTS.join(', ')}`);
}

export function shardLayout(N: number, R: number, layout: Layout): Segment[][] {
  validateRing(N, R, layout);
  if (layout === 'striped')
    return Array.from({ length: R }, (_, r) => [{ offset: r, stride: R, count: Math.ceil((N - r) / R) }]);
  const parts = layout === 'contiguous' ? R : 2 * R;
  const sizes = splitSizes(N, parts);
  const starts = sizes.map((_, i) => sizes.slice(0, i).reduce((a, b) => a + b, 0));
  const seg = (c: number): Segment => ({ offset: starts[c], stride: 1, count: sizes[c] });
  if (layout === 'contiguous') return Array.from({ length: R }, (_, r) => [seg(r)]);
  return Array.from({ length: R }, (_, r) => [twoRuns(seg(r), seg(2 * R - 1 - r))]);
}

/** The mask of one (Q segment, K/V segment) pair: the rules at the segments' global positions. */
export function pairMask(q: Segment, k: Segment, rules: MaskRules): Mask {
  return new Mask({ ...rules, qPos: q, kPos: k }, q.count, k.count);
}

/** Full (no rule hides a pair's key from its query), skip (nothing visible) or masked. */
export function classifyPair(q: Segment, k: Segment, mask: boolean | MaskRules): { kind: PairKind; visible: number } {
  const rules = maskRules(mask);
  if (unmasked(rules)) return { kind: 'full', visible: q.count * k.count };
  const m = pairMask(q, k, rules);
  const cls = m.tileClass(0, q.count, 0, k.count);
  const visible = cls === 'skip' ? 0 : m.visiblePairs();
  return { kind: visible === 0 ? 'skip' : cls === 'full' ? 'full' : 'masked', visible };
}

/** Where a run of an input segment lands: rows src0 … src0 + count − 1 of it at row row0 of output segment `run`. */
export interface Placement {
  run: number;
  row0: number;
  src0: number;
  count: number;
}

/**
 * Segments' runs (pieces) joined into maximal runs of consecutive positions (stride-1 runs that
 * meet, in position order), and where each input segment's runs land. Exactly two stride-1 runs
 * become one segment of two runs (an a2a+p2p group's tokens under zigzag), so whoever holds them
 * attends them in one kernel call. Runs of another stride stay segments of their own, in input
 * order. Pure.
 */
export function coalesce(segs: Segment[]): { runs: Segment[]; at: Placement[][] } {
  const ps = segs.flatMap((s, i) => pieces(s).filter((p) => p.count > 0).map((p) => ({ ...p, seg: i })));
  const at: Placement[][] = segs.map(() => []);
  if (ps.some((p) => p.stride !== 1 && p.count > 1)) {
    ps.forEach((p, k) => at[p.seg].push({ run: k, row0: 0, src0: p.row0, count: p.count }));
    return { runs: ps.map((p) => ({ offset: p.offset, stride: p.stride, count: p.count })), at };
  }
  const runs: { offset: number; count: number }[] = [];
  for (const p of [...ps].sort((a, b) => a.offset - b.offset)) {
    const last = runs[runs.length - 1];
    const run = last && last.offset + last.count === p.offset ? last : runs[runs.push({ offset: p.offset, count: 0 }) - 1];
    at[p.seg].push({ run: runs.indexOf(run), row0: run.count, src0: p.row0, count: p.count });
    run.count += p.count;
  }
  if (runs.length !== 2) return { runs: runs.map((r) => ({ ...r, stride: 1 })), at };
  // Two runs: one segment, the second run's rows after the first's.
  for (const list of at) for (const a of list) if (a.run === 1) Object.assign(a, { run: 0, row0: runs[0].count + a.row0 });
  return { runs: [twoRuns(runs[0], runs[1])], at };
}

/**
 * coalesce over several members' segments (each member's list in turn): the runs, and where
 * segment s of member i lands. Pure.
 */
export function coalesceMembers(parts: Segment[][]): { runs: Segment[]; at: (i: number, s: number) => Placement[] } {
  const { runs, at } = coalesce(parts.flat());
  const first = parts.map((_, i) => parts.slice(0, i).reduce((n, p) => n + p.length, 0));
  return { runs, at: (i, s) => at[first[i] + s] };
}

/** Global token indices of a shard, in local order. */
export function shardTokens(segs: Segment[]): number[] {
  const out: number[] = [];
  for (const s of segs) for (let i = 0; i < s.count; i++) out.push(positionAt(s, i));
  return out;
}
