/**
 * The ring's per-rank peak from the buffer tracker equals the dry run's (the same rank programs
 * on ranks with no device, src/cp/launch/dry.ts: what cp-plan and the page plan with), rank by rank, for every scheme (p2p, all_gather, a2a, a2a+p2p), f32 and f16, forward and
 * forward + backward, zigzag and contiguous, with and without GQA (check() says which runs).
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { testDevice } from './gpu.js';
import { FlashDevice } from '../src/gpu/device.js';
import { ringAttention } from '../src/cp/launch/ringAttention.js';
import { dryRun } from '../src/cp/launch/dry.js';
import { Precision } from '../src/kernels/precision.js';
import { AttentionShape } from '../src/shape.js';
import { InputError } from '../src/errors.js';
import { Layout } from '../src/cp/plan/schedule.js';
import { Scheme } from '../src/cp/schemes/registry.js';
import { randn } from '../src/reference/compare.js';
import { toHalfArray } from '../src/f16.js';

/** Each rank's peak as the dry run counts it (causal, as the runs below). */
async function dryPeaks(scheme: Scheme, R: number, s: AttentionShape, precision: Precision, backward: boolean, layout: Layout, hierarchy?: [number, number]): Promise<number[]> {
  const dry = await dryRun({ shape: s, R, layout, scheme, sizes: hierarchy, precision, backward, mask: { causal: true } });
  return dry.ranks.map((r) => r.peakBytes);
}

describe('memory per rank: the tracker against the dry run', () => {
  let dev: FlashDevice;
  beforeAll(async () => { dev = await testDevice(); });

  /**
   * [Hq, Hkv, N, D, R] runs under each scheme, forward and backward; the first case under both
   * layouts and precisions, the others zigzag in f32 (the suite's time on a CPU adapter); the
   * peaks per rank.
   */
  async function check(schemes: Scheme[], cases: [number, number, number, number, number][], hierarchy?: [number, number]): Promise<number[][]> {
    const peaks: number[][] = [];
    for (const [ci, [Hq, Hkv, N, D, R]] of cases.entries()) {
      const s = { B: 1, Hq, Hkv, Nq: N, Nk: N, D };
      for (const precision of dev.hasF16 && ci === 0 ? (['f32', 'f16'] as const) : (['f32'] as const)) {
        const c = (a: Float32Array) => (precision === 'f16' ? toHalfArray(a) : a);
        const x = { q: c(randn(Hq * N * D, 1)), k: c(randn(Hkv * N * D, 2)), v: c(randn(Hkv * N * D, 3)), dout: c(randn(Hq * N * D, 4)) };
        for (const scheme of schemes)
          for (const layout of (ci === 0 ? ['zigzag', 'contiguous'] : ['zigzag']) as Layout[])
            for (const backward of [false, true]) {
              const r = await ringAttention([dev], s, backward ? x : { q: x.q, k: x.k, v: x.v },
                { scheme, layout, precision, ranks: R, causal: true, ...(hierarchy ? { hierarchicalSizes: hierarchy } : {}) });
              const tag = `${JSON.stringify(s)} R=${R} ${precision} ${scheme} ${layout} backward=${backward}`;
              const got = r.timeline.ranks.map((rk) => rk.peakBytes);
              expect(got, tag).toEqual(await dryPeaks(scheme, R, s, precision, backward, layout, hierarchy));
              peaks.push(got);
            }
      }
    }
    return peaks;
  }

  it('p2p and all_gather, f32 and f16, forward and backward', async () => {
    await check(['p2p', 'all_gather'], [[4, 4, 64, 16, 4], [8, 2, 96, 32, 2], [4, 1, 120, 8, 4], [2, 2, 48, 24, 3]]);
  });

  it('a2a: head shards over the whole sequence, R = 2 and 4, with GQA', async () => {
    await check(['a2a'], [[4, 4, 64, 16, 4], [2, 2, 48, 16, 2], [8, 4, 96, 8, 4]]);
  });

  it('a2a+p2p: a ring of head-sharded groups; under zigzag every group holds one segment of the same size', async () => {
    const peaks = await check(['a2a+p2p'], [[8, 4, 96, 8, 4]], [2, 2]);
    // zigzag forward (the first run of each precision): groups but the last attend one segment of
    // two runs, the last one run; each of A·n tokens, so every rank's peak is the same.
    expect(new Set(peaks[0]).size).toBe(1);
  });

  it('the forward holds no partial (O, LSE): later pairs merge into O and LSE in the forward\'s epilogue', async () => {
    const [Hq, N, D] = [4, 64, 16];
    const s = { B: 1, Hq, Hkv: Hq, Nq: N, Nk: N, D };
    const x = { q: randn(Hq * N * D, 1), k: randn(Hq * N * D, 2), v: randn(Hq * N * D, 3) };
    const peak = async (scheme: Scheme, R: number, layout: Layout) => {
      const r = await ringAttention([dev], s, x, { scheme, layout, precision: 'f32', ranks: R, causal: true });
      const got = Math.max(...r.timeline.ranks.map((rk) => rk.peakBytes));
      expect(got, `${scheme} R=${R} ${layout}`).toBe(Math.max(...(await dryPeaks(scheme, R, s, 'f32', false, layout))));
      return got;
    };
    // f32 [Hq, n, D] and [Hq, n] rows of n tokens.
    const q = (n: number) => Hq * n * D * 4, rows = (n: number) => Hq * n * 4;
    const shard = (n: number) => 3 * q(n) + q(n) + rows(n); // Q, K, V, O, LSE
    // R = 1: one pair, written directly; nothing but the shard.
    expect(await peak('p2p', 1, 'zigzag')).toBe(shard(N));
    // all_gather: the keys arrive as one run; the shard and every K/V.
    expect(await peak('all_gather', 2, 'zigzag')).toBe(shard(N / 2) + 2 * q(N));
    // The ring merges every step after the first, with no more than the shard and its two K/V slots.
    expect(await peak('p2p', 2, 'zigzag')).toBe(shard(N / 2) + 4 * q(N / 2));
    // a2a over striped groups (runs that do not meet, so a second pair merges) holds what zigzag does.
    expect(await peak('a2a', 2, 'striped')).toBe(await peak('a2a', 2, 'zigzag'));
  });

  it('the backward ring holds two dK/dV sums, which the dK/dV pass adds onto in place; none at R = 1 (docs/ring.md closed forms)', async () => {
    const [Hq, N, D] = [4, 64, 16];
    const s = { B: 1, Hq, Hkv: Hq, Nq: N, Nk: N, D };
    const x = { q: randn(Hq * N * D, 1), k: randn(Hq * N * D, 2), v: randn(Hq * N * D, 3), dout: randn(Hq * N * D, 4) };
    const peak = async (R: number) => {
      const r = await ringAttention([dev], s, x, { scheme: 'p2p', layout: 'zigzag', precision: 'f32', ranks: R, causal: true });
      return Math.max(...r.timeline.ranks.map((rk) => rk.peakBytes));
    };
    // f32 (e = 4), Hq = Hkv: q = kv elements, ℓ rows, for a shard of n tokens.
    const q = (n: number) => Hq * n * D, l = (n: number) => Hq * n;
    const n2 = N / 2;
    // e·(2q + 6kv) + 8q + 8ℓ + 24kv: shard, slots, the two sums and Δ.
    expect(await peak(2)).toBe(4 * (2 * q(n2) + 6 * q(n2)) + 8 * q(n2) + 8 * l(n2) + 24 * q(n2));
    // R = 1: the shard with dO, dQ, dK, dV, and Δ: the one step sums into dK and dV.
    expect(await peak(1)).toBe(4 * (2 * q(N) + 2 * q(N)) + 4 * q(N) + 4 * l(N) + 4 * (q(N) + 2 * q(N)) + 4 * l(N));
  });

  it('the dry run refuses what the scheme cannot take, in the run\'s words', async () => {
    const s = { B: 1, Hq: 4, Hkv: 2, Nq: 16, Nk: 16, D: 8 };
    const dry = (scheme: Scheme, R: number, sizes?: [number, number]) => dryRun({ shape: s, R, scheme, sizes, precision: 'f32' });
    await expect(dry('a2a+p2p', 4)).rejects.toThrow(/needs hierarchical sizes/);
    await expect(dry('a2a+p2p', 4, [2, 3])).rejects.toThrow(/multiply to 6/);
    await expect(dry('a2a', 4)).rejects.toThrow(InputError); // Hkv = 2 does not split over 4 ranks
    expect(Math.min(...(await dryPeaks('a2a', 2, s, 'f32', true, 'zigzag')))).toBeGreaterThan(0);
  });
});
