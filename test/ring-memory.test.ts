/**
 * The ring's per-rank peak from the buffer tracker equals the inventory in src/ring/memory.ts, for
 * p2p and all_gather, f32 and f16, forward and forward + backward, with and without GQA.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { testDevice } from './gpu.js';
import { FlashDevice } from '../src/gpu/device.js';
import { ringAttention } from '../src/ring/ringAttention.js';
import { rankPeakBytes } from '../src/ring/memory.js';
import { randn } from '../src/reference/compare.js';
import { toHalfArray } from '../src/f16.js';

describe('memory per rank: the tracker against the inventory', () => {
  let dev: FlashDevice;
  beforeAll(async () => { dev = await testDevice(); });
  const cases: [number, number, number, number, number][] = [[4, 4, 64, 16, 4], [8, 2, 96, 32, 2], [4, 1, 120, 8, 4], [2, 2, 48, 24, 3]];
  it('p2p and all_gather, f32 and f16, forward and backward', async () => {
    for (const [Hq, Hkv, N, D, R] of cases) {
      const s = { B: 1, Hq, Hkv, Nq: N, Nk: N, D };
      for (const precision of dev.hasF16 ? (['f32', 'f16'] as const) : (['f32'] as const)) {
        const c = (a: Float32Array) => (precision === 'f16' ? toHalfArray(a) : a);
        const x = { q: c(randn(Hq * N * D, 1)), k: c(randn(Hkv * N * D, 2)), v: c(randn(Hkv * N * D, 3)), dout: c(randn(Hq * N * D, 4)) };
        for (const scheme of ['p2p', 'all_gather'] as const)
          for (const backward of [false, true]) {
            const r = await ringAttention([dev], s, backward ? x : { q: x.q, k: x.k, v: x.v }, { scheme, layout: 'contiguous', precision, ranks: R, causal: true });
            const want = rankPeakBytes(scheme, R, s, precision, backward)!;
            for (const rk of r.timeline.ranks) expect(rk.peakBytes, `${JSON.stringify(s)} R=${R} ${precision} ${scheme} backward=${backward} rank ${rk.rank}`).toBe(want);
          }
      }
    }
  });
  it('a2a is not in the inventory', () => {
    expect(rankPeakBytes('a2a', 2, { B: 1, Hq: 2, Hkv: 2, Nq: 8, Nk: 8, D: 8 }, 'f32', true)).toBeNull();
  });
});
