/**
 * Which row blocks of a call some visible (query, key) pair reaches (src/mask.ts), so that the
 * kernels' grids can skip the rest (q_blk0 / k_blk0 in the uniform block, params.ts).
 */
import { Mask } from '../mask.js';
import { AttentionShape, ResolvedOptions } from '../shape.js';

/**
 * The row blocks a kernel dispatches: queries [q0, q1) in blocks of qRows (the forward, dq) and
 * keys [k0, k1) in blocks of kvRows (dkdv). All of them when the kernels write every row (rows no
 * key reaches get O = 0, LSE = −inf, zero gradients); only those some visible pair reaches when
 * the rows no key reaches may keep what they hold (ring steps: the backward adds onto its
 * gradients, the forward's accumulators start at O = 0, LSE = −inf). A zigzag step often reaches
 * half of a shard, and a grid half of idle workgroups balanced worse on the H200.
 * The reached queries run from the first row that sees a key to the last; lo and hi never
 * decrease (src/mask.ts), so their keys run from the first's lo to the last's hi. querySpan
 * bounds the search (rows outside it see nothing); inside it a row may still see none (a window
 * past its keys), so the ends are found row by row: at once for a causal mask, up to a pass
 * over the rows with a window or documents (with documents classifyPair's count of visible pairs
 * makes such a pass per pair too; without, it is closed-form, src/mask.ts).
 */
export function activeBlocks(s: AttentionShape, o: ResolvedOptions, reachedOnly: boolean, qRows: number, kvRows: number): { q: [number, number]; k: [number, number] } {
  const all = { q: [0, Math.ceil(s.Nq / qRows)] as [number, number], k: [0, Math.ceil(s.Nk / kvRows)] as [number, number] };
  if (!reachedOnly) return all;
  const m = new Mask(o, s.Nq, s.Nk);
  const sees = (i: number) => { const [lo, hi] = m.keyRange(i); return lo < hi; };
  let [a, b] = m.querySpan(0, s.Nk);
  while (a < b && !sees(a)) a++;
  while (b > a && !sees(b - 1)) b--;
  if (a >= b) return { q: [0, 0], k: [0, 0] };
  const lo = m.keyRange(a)[0], hi = m.keyRange(b - 1)[1];
  return { q: [Math.floor(a / qRows), Math.ceil(b / qRows)], k: [Math.floor(lo / kvRows), Math.ceil(hi / kvRows)] };
}
