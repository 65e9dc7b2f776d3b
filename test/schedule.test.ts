import { describe, expect, it } from 'vitest';
import { shardLayout, shardTokens, LAYOUTS, classifyPair, coalesce, pieces } from '../src/cp/plan/schedule.js';
import { plannedTimeline } from './cases.js';
import { countAtOrBefore, firstAtOrAfter } from '../src/mask.js';

describe('ring schedule', () => {
  it('every layout covers each token exactly once, for even and uneven N', () => {
    for (const layout of LAYOUTS)
      for (const [N, R] of [[16, 4], [17, 4], [5, 4], [8, 8], [100, 3], [9, 1]]) {
        const toks = shardLayout(N, R, layout).flatMap(shardTokens).sort((a, b) => a - b);
        expect(toks, `${layout} N=${N} R=${R}`).toEqual(Array.from({ length: N }, (_, i) => i));
        for (const s of shardLayout(N, R, layout)) expect(shardTokens(s).length).toBeGreaterThan(0);
      }
  });

  it('zigzag gives rank r chunks r and 2R-1-r (Megatron-LM), as one segment of two runs', () => {
    expect(shardLayout(16, 4, 'zigzag')[0]).toEqual([{ offset: 0, stride: 1, count: 4, split: 2, jump: 12 }]);
    // The middle rank's two chunks meet: one run.
    expect(shardLayout(16, 4, 'zigzag')[3]).toEqual([{ offset: 6, stride: 1, count: 4 }]);
    expect(shardTokens(shardLayout(16, 4, 'zigzag')[1])).toEqual([2, 3, 12, 13]);
    expect(pieces(shardLayout(17, 4, 'zigzag')[0][0])).toEqual([{ offset: 0, stride: 1, count: 3, row0: 0 }, { offset: 15, stride: 1, count: 2, row0: 3 }]);
    // A jump from the first row: one run, all of it after the jump (as positionAt).
    expect(pieces({ offset: 0, stride: 2, count: 3, split: 0, jump: 5 })).toEqual([{ offset: 5, stride: 2, count: 3, row0: 0 }]);
    expect(shardTokens([{ offset: 0, stride: 2, count: 3, split: 0, jump: 5 }])).toEqual([5, 7, 9]);
    // Fewer tokens than chunks: the second chunk is empty, one run.
    expect(shardLayout(5, 3, 'zigzag')[0]).toEqual([{ offset: 0, stride: 1, count: 1 }]);
    expect(shardLayout(10, 2, 'striped')[1]).toEqual([{ offset: 1, stride: 2, count: 5 }]);
  });

  it('a segment of two runs maps rows to positions and back as the mask does', () => {
    const seg = shardLayout(23, 3, 'zigzag')[1][0];
    const toks = shardTokens([seg]);
    expect(toks).toEqual([4, 5, 6, 7, 16, 17, 18, 19]); // chunks 1 and 4 of 6 (4, 4, 4, 4, 4, 3 tokens)
    for (let x = -2; x < 26; x++) {
      expect(firstAtOrAfter(seg, x, seg.count), `x=${x}`).toBe(toks.filter((p) => p < x).length);
      expect(countAtOrBefore(seg, x, seg.count), `y=${x}`).toBe(toks.filter((p) => p <= x).length);
    }
  });

  it('coalesce joins segments that meet into runs and places every token once', () => {
    // All of zigzag's shards form one run of N; a2a+p2p groups of two ranks, one segment of two runs or one run.
    const z = shardLayout(16, 4, 'zigzag');
    const all = coalesce(z.flat());
    expect(all.runs).toEqual([{ offset: 0, stride: 1, count: 16 }]);
    z.flat().forEach((s, i) => expect(all.at[i]).toEqual(pieces(s).map((p) => ({ run: 0, row0: p.offset, src0: p.row0, count: p.count }))));
    const g01 = coalesce([...z[0], ...z[1]]);
    expect(g01.runs).toEqual([{ offset: 0, stride: 1, count: 8, split: 4, jump: 8 }]);
    expect(shardTokens(g01.runs)).toEqual([0, 1, 2, 3, 12, 13, 14, 15]);
    expect(g01.at[1]).toEqual([{ run: 0, row0: 2, src0: 0, count: 2 }, { run: 0, row0: 4, src0: 2, count: 2 }]);
    expect(coalesce([...z[2], ...z[3]]).runs).toEqual([{ offset: 4, stride: 1, count: 8 }]);
    // Uneven N: every token lands at its position within its run.
    for (const layout of ['contiguous', 'zigzag'] as const)
      for (const [N, R] of [[29, 4], [17, 8], [5, 3]]) {
        const segs = shardLayout(N, R, layout).flat();
        const { runs, at } = coalesce(segs);
        expect(runs, `${layout} N=${N} R=${R}`).toEqual([{ offset: 0, stride: 1, count: N }]);
        segs.forEach((s, i) => pieces(s).forEach((p, k) => {
          expect(runs[at[i][k].run].offset + at[i][k].row0).toBe(p.offset);
          expect([at[i][k].src0, at[i][k].count]).toEqual([p.row0, p.count]);
        }));
      }
    // Striped segments (stride R) stay as they are.
    const st = shardLayout(10, 2, 'striped').flat();
    expect(coalesce(st)).toEqual({ runs: st, at: [[{ run: 0, row0: 0, src0: 0, count: 5 }], [{ run: 1, row0: 0, src0: 0, count: 5 }]] });
  });

  it("p2p's step t gives rank r the chunk of rank (r - t) mod R (its rank program, dry-run)", async () => {
    const { steps } = await plannedTimeline(12, 3, 'contiguous', { causal: false, window: [-1, -1], docs: null });
    const kvFrom = [0, 1, 2].map((t) => [0, 1, 2].map((r) => steps.find((s) => s.step === t && s.rank === r)!.kvFrom));
    expect(kvFrom).toEqual([[0, 1, 2], [2, 0, 1], [1, 2, 0]]);
  });

  it('visible work adds up to the causal triangle and the full square', async () => {
    for (const layout of LAYOUTS) {
      const N = 37;
      for (const [causal, all] of [[true, (N * (N + 1)) / 2], [false, N * N]] as const) {
        const { timeline } = await plannedTimeline(N, 4, layout, { causal, window: [-1, -1], docs: null });
        expect(timeline.schedule.workPerRank.reduce((a, b) => a + b), `${layout} causal=${causal}`).toBe(all);
      }
    }
  });

  it('causal contiguous: only the diagonal pair is masked, chunks of later ranks are skipped', () => {
    const shards = shardLayout(16, 4, 'contiguous');
    for (let r = 0; r < 4; r++)
      for (let k = 0; k < 4; k++) expect(classifyPair(shards[r][0], shards[k][0], true).kind).toBe(k === r ? 'masked' : k < r ? 'full' : 'skip');
  });

  it('zigzag and striped balance causal work; contiguous does not', async () => {
    const rules = { causal: true, window: [-1, -1] as [number, number], docs: null };
    const [c, z, st] = await Promise.all((['contiguous', 'zigzag', 'striped'] as const).map(async (l) => (await plannedTimeline(1024, 4, l, rules)).timeline.schedule.imbalance));
    expect(c).toBeGreaterThan(1.5);
    expect(z).toBeLessThan(1.01);
    expect(st).toBeLessThan(1.01);
  });

  it('classifies pairs by positions', () => {
    expect(classifyPair({ offset: 10, stride: 1, count: 5 }, { offset: 0, stride: 1, count: 10 }, true)).toEqual({ kind: 'full', visible: 50 });
    expect(classifyPair({ offset: 0, stride: 1, count: 5 }, { offset: 10, stride: 1, count: 5 }, true)).toEqual({ kind: 'skip', visible: 0 });
    expect(classifyPair({ offset: 0, stride: 1, count: 3 }, { offset: 0, stride: 1, count: 3 }, true)).toEqual({ kind: 'masked', visible: 6 });
  });

  it('rejects bad rings clearly', () => {
    expect(() => shardLayout(3, 4, 'zigzag')).toThrow(/4 ranks but the sequence only 3 tokens/);
    expect(() => shardLayout(3, 0, 'zigzag')).toThrow(/integer >= 1/);
    expect(() => shardLayout(3, 1.5, 'zigzag')).toThrow(/integer >= 1/);
    expect(() => shardLayout(8, 2, 'spiral' as never)).toThrow(/unknown layout 'spiral'/);
  });
});
