/**
 * Bytes each rank's own buffers peak at, per scheme: the inventory the rank programs allocate
 * (p2p.ts, allGather.ts, ulysses.ts) plus the shard buffers ringAttention.ts gives every rank, so
 * the timeline's per-rank peak (the buffer tracker's ledger, one-device mode) can be checked
 * against it and `cp-plan` can say what a rank needs before anything runs. The code counts buffer
 * by buffer, sized as the programs size them (segments and runs from schedule.ts, rounded up to 4
 * bytes as storage() does), so it is exact for any N, layout and GQA; the closed forms below are
 * for N divisible by 2R (by R outside zigzag) and, for a2a, heads divisible by A.
 *
 * Per rank, with q = B·Hq·n·D and kv = B·Hkv·n·D elements for its n = N/R tokens, ℓ = B·Hq·n LSE
 * rows, e = 2 (f16) or 4 (f32) bytes. An a2a head shard (Hq/A or Hkv/A heads over the A·n tokens
 * of the group) holds as many elements as a sequence shard: q, kv and ℓ again.
 *
 *   shard    (ringAttention.ts: allocated before the program runs, live to its end) Q, K, V
 *            e·(q + 2kv), O f32 4q, LSE 4ℓ; with a backward also dO e·q and dQ, dK, dV f32 4·(q + 2kv).
 *   partial  (chunks.ts withPart) the (O, LSE) partial the forward merges from, sized by the
 *            largest Q segment or run, π·(4q + 4ℓ): π = 1 (a shard is one segment, of two runs
 *            under zigzag, and so are an a2a group's tokens), but 1/A for striped a2a (its runs do
 *            not meet). Forward only, and only where the Q segments meet more than one K/V
 *            segment in all (a merge may happen): p2p at R > 1, a2a+p2p with a ring (P > 1),
 *            striped a2a; not R = 1, all_gather (its keys arrive as one run) or a2a (and a2a+p2p
 *            at P = 1) over contiguous or zigzag groups, whose one pair writes O and LSE directly.
 *   ring     (p2p.ts, P positions; a chunk is kv)
 *            forward: two K/V slots e·4kv (none at P = 1).
 *            backward: the two K/V slots, two dK/dV sums and one incoming sum f32 4·6kv (at P = 1
 *            no slots and one sum, 4·2kv), and Δ 4ℓ.
 *
 *   p2p         forward   e·(q + 6kv) + 8q + 8ℓ: shard, partial, slots (R = 1: e·(q + 2kv) + 4q + 4ℓ).
 *               backward  e·(2q + 6kv) + 8q + 4ℓ + 8kv + max(4q + 4ℓ, 24kv + 4ℓ): the shard and
 *                         slots, then the larger of the forward's partial and the backward's sums
 *                         and Δ (the backward's unless Hq/Hkv exceeds 6).
 *   all_gather  forward   e·(q + (2R + 2)·kv) + 4q + 4ℓ: shard and all K/V as one run (its own
 *                         shard copied in) e·2R·kv.
 *               backward  shard, then the largest of three moments (which one depends on e, R and
 *                         Hq/Hkv): the forward (runs e·2R·kv, partial), the attention (runs, Δ 4ℓ,
 *                         the dK/dV partial over them f32 4·2R·kv) or the reduce-scatter (runs
 *                         freed: Δ, the dK/dV partial and R − 1 incoming pieces f32 4·2(R − 1)·kv).
 *   a2a         (ulysses.ts: A = R, P = 1; zigzag and contiguous join the group's N tokens in one run)
 *               forward   e·(2q + 4kv) + 8q + 8ℓ: shard; the head shards of Q, K, V e·(q + 2kv)
 *                         and their O 4q and LSE 4ℓ (kept for the backward); striped, whose
 *                         group's runs are A, also the partial (4q + 4ℓ)/A.
 *               backward  e·(4q + 4kv) + 16q + 12ℓ + 24kv, the backward's moment (what it adds
 *                         outweighs the forward's partial): shard; the head shards kept,
 *                         e·(q + 2kv) + 4q + 4ℓ; their dO e·q, dQ 4q, Δ 4ℓ, dK and dV 4·2kv; one
 *                         dK/dV sum 4·2kv.
 *   a2a+p2p     (A·P = R, P > 1) a2a's buffers, plus the ring's slots, sums and incoming:
 *               forward   e·(2q + 8kv) + 12q + 12ℓ.
 *               backward  e·(4q + 8kv) + 16q + 12ℓ + 40kv.
 * Not counted: transfer staging (multi-adapter mode charges the one in flight to the sending
 * rank) and the kernels' own temporaries and timers (outside the ledger).
 */
import { Precision } from '../kernels/precision.js';
import { AttentionShape } from '../shape.js';
import { maxSegs } from './chunks.js';
import { Layout, Segment, coalesce, shardLayout } from './schedule.js';
import { Scheme } from './timeline.js';

export interface InventoryOptions {
  /** The shards' layout (default zigzag, as ringAttention). */
  layout?: Layout;
  /** a2a+p2p's [a2a group size A, ring size P] (required for it; a2a is [R, 1], the others [1, R]). */
  hierarchy?: [number, number];
  /** One rank's peak; by default the largest over the ranks (they differ where N does not split evenly). */
  rank?: number;
}

/** A rank's peak bytes under `scheme`; null where the scheme cannot take the request (a2a+p2p without sizes A·P = R, heads not divisible by A). */
export function rankPeakBytes(scheme: Scheme, R: number, s: AttentionShape, precision: Precision, backward: boolean, opts: InventoryOptions = {}): number | null {
  const [A, P] = scheme === 'a2a' ? [R, 1] : scheme === 'a2a+p2p' ? (opts.hierarchy ?? [0, 0]) : [1, R];
  if (A * P !== R || (scheme.startsWith('a2a') && (s.Hq % A !== 0 || s.Hkv % A !== 0))) return null;
  const shards = shardLayout(s.Nq, R, opts.layout ?? 'zigzag');
  const peak = (r: number) => rankPeak(scheme, A, P, shards, r, s, precision === 'f16' ? 2 : 4, backward);
  return opts.rank !== undefined ? peak(opts.rank) : Math.max(...shards.map((_, r) => peak(r)));
}

function rankPeak(scheme: Scheme, A: number, P: number, shards: Segment[][], r: number, s: AttentionShape, e: number, backward: boolean): number {
  const { B, Hq, Hkv, D } = s;
  const buf = (bytes: number) => Math.max(4, Math.ceil(bytes / 4) * 4); // storage()/upload()
  const sum = (counts: number[], f: (t: number) => number) => counts.reduce((a, t) => a + f(t), 0);
  const counts = (segs: Segment[]) => segs.map((sg) => sg.count);
  // One buffer of t tokens: [B, H, t, D] of e bytes or f32, [B, H, t] f32 rows.
  const x = (H: number, t: number, eb: number) => buf(B * H * t * D * eb), rows = (H: number, t: number) => buf(B * H * t * 4);
  const kvSlot = (hkv: number, sizes: number[]) => sum(sizes, (t) => 2 * x(hkv, t, e)); // allocKV
  const grads = (hkv: number, sizes: number[]) => sum(sizes, (t) => 2 * x(hkv, t, 4)); // allocGrad
  // withPart: none unless the Q segments meet more than one K/V segment in all.
  const partial = (hq: number, sizes: number[], keySegs: number) => (keySegs < 2 ? 0 : x(hq, Math.max(...sizes), 4) + rows(hq, Math.max(...sizes)));
  /** ringForward / ringBackward over chunks of these per-index sizes. */
  const ring = (hkv: number, sizes: number[]) => {
    const slots = P > 1 ? 2 * kvSlot(hkv, sizes) : 0;
    return { forward: slots, backward: slots + (P > 1 ? 3 : 1) * grads(hkv, sizes) };
  };

  const own = counts(shards[r]);
  const shard = sum(own, (t) => x(Hq, t, e) + 2 * x(Hkv, t, e) + x(Hq, t, 4) + rows(Hq, t))
    + (backward ? sum(own, (t) => x(Hq, t, e) + x(Hq, t, 4) + 2 * x(Hkv, t, 4)) : 0);
  const delta = (hq: number, sizes: number[]) => sum(sizes, (t) => rows(hq, t));
  let fwd: number, bwd: number; // the program's own buffers at its forward and backward peaks
  if (scheme === 'p2p') {
    const rg = ring(Hkv, maxSegs(shards));
    fwd = partial(Hq, own, shards.flat().length) + rg.forward;
    bwd = delta(Hq, own) + rg.backward;
  } else if (scheme === 'all_gather') {
    const runs = counts(coalesce(shards.flat()).runs);
    fwd = kvSlot(Hkv, runs) + partial(Hq, own, runs.length);
    bwd = delta(Hq, own) + grads(Hkv, runs) + Math.max(kvSlot(Hkv, runs), (shards.length - 1) * grads(Hkv, own));
  } else {
    const hq = Hq / A, hkv = Hkv / A;
    const groupRuns = (g: number) => coalesce(shards.slice(g * A, g * A + A).flat()).runs;
    const mine = counts(groupRuns(Math.floor(r / A)));
    const chunks = Array.from({ length: P }, (_, g) => groupRuns(g));
    const rg = ring(hkv, maxSegs(chunks));
    const kept = sum(mine, (t) => x(hq, t, e) + 2 * x(hkv, t, e) + x(hq, t, 4) + rows(hq, t)); // Q, K, V, O, LSE head shards
    fwd = kept + partial(hq, mine, chunks.flat().length) + rg.forward;
    bwd = kept + sum(mine, (t) => x(hq, t, e) + x(hq, t, 4) + rows(hq, t) + 2 * x(hkv, t, 4)) + rg.backward; // dO, dQ, Δ, dK/dV home
  }
  return shard + (backward ? Math.max(fwd, bwd) : fwd);
}
