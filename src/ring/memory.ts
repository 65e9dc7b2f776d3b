/**
 * Bytes each rank's own buffers peak at, per scheme: the inventory the rank programs allocate
 * (p2p.ts, allGather.ts), so the timeline's per-rank peak (the buffer tracker's ledger) can be
 * checked against it and `cp-plan` can say what a rank needs before anything runs.
 *
 * Per rank, with q = Hq·n·D and kv = Hkv·n·D elements for its n = ⌈N/R⌉ tokens, ℓ = Hq·n LSE rows,
 * e = 2 (f16) or 4 (f32) bytes:
 *   forward   Q e·q; O and the partial O being merged, f32 8·q; LSE and its partial 8·ℓ;
 *             p2p: K, V and two ring slots of K, V, e·6kv; all_gather: K, V and the gathered runs
 *             of all R ranks' K, V (its own copied in), e·(2R + 2)·kv.
 *   backward  (the peak of a forward + backward run) Q and dO e·2q; dQ and its partial f32 8·q;
 *             LSE and Δ 8·ℓ; p2p: K, V and two ring slots e·6kv, dK, dV and three dK/dV slots in
 *             flight f32 4·8kv. all_gather peaks at one of three moments (which one depends on
 *             e, R and Hq/Hkv): the forward (O's partial f32 4·q, K, V and the runs e·(2R + 2)·kv,
 *             dK, dV f32 4·2kv), the attention (the runs, and the dK/dV partial over them beside
 *             dK, dV, f32 4·(2R + 2)·kv) or the reduce-scatter (the runs freed: K, V e·2kv; dK, dV,
 *             the partial and R − 1 incoming pieces f32 4·4R·kv).
 * Exact for N divisible by R (tested); a2a (Ulysses) re-shards heads per step and is not in this
 * inventory (null).
 */
import { Precision } from '../kernels/precision.js';
import { AttentionShape } from '../shape.js';
import { Scheme } from './timeline.js';

export function rankPeakBytes(scheme: Scheme, R: number, s: AttentionShape, precision: Precision, backward: boolean): number | null {
  if (scheme !== 'p2p' && scheme !== 'all_gather') return null;
  const n = Math.ceil(s.Nq / R), e = precision === 'f16' ? 2 : 4;
  const q = s.B * s.Hq * n * s.D, kv = s.B * s.Hkv * n * s.D, l = s.B * s.Hq * n;
  const kvCopies = scheme === 'p2p' ? 6 : 2 * R + 2; // local K, V and two ring slots | local K, V and the gathered runs
  if (!backward) return e * (q + kvCopies * kv) + 8 * q + 8 * l;
  if (scheme === 'p2p') return e * (2 * q + 6 * kv) + 4 * (2 * q + 8 * kv) + 8 * l; // dK, dV and three slots in flight
  return e * 2 * q + 8 * q + 8 * l + Math.max(
    4 * q + e * kvCopies * kv + 4 * 2 * kv, // forward
    (e + 4) * (2 * R + 2) * kv, // attention
    e * 2 * kv + 4 * 4 * R * kv, // reduce-scatter
  );
}
