/**
 * The ring under window and document masks: the schedule skips (Q segment, K/V segment) pairs
 * that share no document or lie outside the window, its work per rank is the mask's visible
 * count, and every scheme x layout matches the float64 reference with documents spanning chunk
 * boundaries and a window.
 */
import { describe, expect, it, beforeAll } from 'vitest';
import { testDevices } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape, plannedSteps, plannedTimeline } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { ringAttention } from '../src/cp/launch/ringAttention.js';
import { LAYOUTS, classifyPair, shardLayout } from '../src/cp/plan/schedule.js';
import { schemeNames } from '../src/cp/schemes/registry.js';
import { referenceBackward, referenceForward } from '../src/reference/attention.js';
import { Mask } from '../src/mask.js';
import { resolveOptions } from '../src/shape.js';

const cu = (...xs: number[]) => Int32Array.from(xs);

describe('ring schedule under window and document masks (pure)', () => {
  it('pairs of different documents are skipped; work per rank sums to the visible pairs', async () => {
    const N = 48;
    const docs = { cuQ: cu(0, 16, 32, 48), cuK: cu(0, 16, 32, 48) };
    const rules3 = { causal: false, window: [-1, -1] as [number, number], docs };
    // Contiguous: rank r holds document r exactly, so only its own chunk's pair computes.
    const shards = shardLayout(N, 3, 'contiguous');
    for (let r = 0; r < 3; r++) for (let k = 0; k < 3; k++) expect(classifyPair(shards[r][0], shards[k][0], rules3).kind).toBe(k === r ? 'full' : 'skip');
    expect((await plannedTimeline(N, 3, 'contiguous', rules3)).timeline.schedule.documents).toBe(3);
    for (const layout of LAYOUTS)
      for (const rules of [
        { causal: true, window: [5, 0] as [number, number], docs: { cuQ: cu(0, 7, 7, 8, 30, 48), cuK: cu(0, 7, 7, 8, 30, 48) } },
        { causal: false, window: [3, 2] as [number, number], docs: null },
        { causal: true, window: [-1, -1] as [number, number], docs: { cuQ: cu(0, 1, 20, 48), cuK: cu(0, 1, 20, 48) } },
      ]) {
        const { timeline } = await plannedTimeline(N, 4, layout, rules);
        const m = new Mask(resolveOptions({ B: 1, Hq: 1, Hkv: 1, Nq: N, Nk: N, D: 8 }, rules), N, N);
        expect(timeline.schedule.workPerRank.reduce((a, b) => a + b, 0), `${layout} ${JSON.stringify(rules.window)}`).toBe(m.visiblePairs());
      }
  });

  it('a window skips the pairs it cannot reach, and a pair inside it is full', () => {
    const rules = { causal: true, window: [4, 0] as [number, number], docs: null };
    expect(classifyPair({ offset: 40, stride: 1, count: 8 }, { offset: 0, stride: 1, count: 8 }, rules)).toEqual({ kind: 'skip', visible: 0 });
    expect(classifyPair({ offset: 8, stride: 1, count: 8 }, { offset: 0, stride: 1, count: 8 }, rules).kind).toBe('masked');
    expect(classifyPair({ offset: 0, stride: 1, count: 8 }, { offset: 0, stride: 1, count: 8 }, { causal: false, window: [100, 100], docs: null }).kind).toBe('full');
  });
});

let one: FlashDevice;
beforeAll(async () => {
  [one] = await testDevices(1);
});

describe('context parallelism with documents spanning chunks and a window, every scheme x layout', () => {
  // N = 31 over R = 3 (zigzag: 6 chunks of 5-6 tokens): documents of 0, 1, 9, 13 and 8 tokens cross the chunk boundaries.
  const N = 31, R = 3;
  const docs = { cuQ: cu(0, 0, 1, 10, 23, 31), cuK: cu(0, 0, 1, 10, 23, 31) };
  for (const mask of [
    { causal: true, window: [6, 0] as [number, number], docs },
    { causal: false, window: [-1, -1] as [number, number], docs },
    { causal: false, window: [2, 3] as [number, number] },
  ])
    it(`${JSON.stringify({ ...mask, docs: mask.docs ? [...mask.docs.cuQ] : null })}: forward + backward vs the float64 reference`, async () => {
      const s: AttentionShape = { B: 1, Hq: 2 * R, Hkv: R, Nq: N, Nk: N, D: 8 };
      const x = makeInputs(s, SEED + 31);
      const r = refInputs(x, 'f32');
      const rf = referenceForward(s, r.q, r.k, r.v, mask);
      const rb = referenceBackward(s, r.q, r.k, r.v, r.dout, mask);
      for (const scheme of schemeNames())
        for (const layout of LAYOUTS) {
          const tag = `${scheme} ${layout}`;
          const res = await ringAttention([one], s, x, { ...mask, precision: 'f32', layout, ranks: R, scheme, ...(scheme === 'a2a+p2p' ? { hierarchicalSizes: '1,3' } : {}) });
          expect(err(res.o, rf.o), `O ${tag}`).toBeLessThanOrEqual(TOL.f32.out);
          expect(err(res.lse, rf.lse), `LSE ${tag}`).toBeLessThanOrEqual(TOL.f32.out);
          for (const g of ['dq', 'dk', 'dv'] as const) expect(err(res[g]!, rb[g]), `${g} ${tag}`).toBeLessThanOrEqual(TOL.f32.grad);
          const tl = res.timeline;
          const flops = (xs: { phase: string; step: number; rank: number; flops: number }[]) => xs.map((z) => `${z.phase}:${z.step}:${z.rank}:${z.flops}`).sort();
          const planned = await plannedSteps({ shape: s, causal: mask.causal, window: mask.window, docs: mask.docs ?? null, layout, R, scheme: tl.scheme, hierarchy: tl.hierarchy, eb: 4 });
          expect(flops(tl.phases.flatMap((ph) => ph.steps)), `plan ${tag}`).toEqual(flops(planned));
        }
    });
});
