import { describe, expect, it } from 'vitest';
import { LINKS, StepLike, predict, resolveLink, transferMs } from '../src/cp/plan/linkModel.js';
import { schemeNames } from '../src/cp/schemes/registry.js';
import { LAYOUTS } from '../src/cp/plan/schedule.js';
import { attentionFlops } from '../src/shape.js';
import { InputError } from '../src/errors.js';
import { plannedSteps } from './cases.js';

const st = (o: Partial<StepLike>): StepLike => ({
  phase: 'forward', step: 0, rank: 0, flops: 0, computeMs: 0, gpuComputeMs: null, transferBytes: 0, messages: 0, overlapped: true, ...o,
});

describe('link model', () => {
  it('transfer = bytes / bandwidth + messages x latency', () => {
    // 1 GB at 8 Gbit/s is 1 s; two messages at 5 µs add 0.01 ms.
    expect(transferMs({ name: 'x', gbps: 8, latencyUs: 5 }, 1e9, 2)).toBeCloseTo(1000.01, 9);
    expect(transferMs(LINKS['ib-ndr'], 0, 0)).toBe(0);
  });

  it('overlapped steps take max(compute, transfer), exposed ones the sum; a step lasts as long as its slowest rank', () => {
    const link = { name: 'x', gbps: 8e-6, latencyUs: 0 }; // 1 byte per ms
    const steps = [
      st({ rank: 0, step: 0, computeMs: 10, transferBytes: 4 }), st({ rank: 1, step: 0, computeMs: 6, transferBytes: 8 }),
      st({ rank: 0, step: 1, computeMs: 3, transferBytes: 5, overlapped: false }), st({ rank: 1, step: 1, computeMs: 2, gpuComputeMs: 1 }),
    ];
    const p = predict(steps, 2, link);
    expect(p.stepMs).toEqual([10, 8]);
    // Step 0: nothing beyond the slowest compute (10); step 1: 8 − 3 exposed.
    expect(p.exposedCommMs).toBe(5);
    expect(p.commFraction).toBeCloseTo(5 / 18, 12);
    // The modelled transfer, each step's longest: 8 + 5 ms; 5 of its 13 ms exposed.
    expect(p.transferMs).toBe(13);
    expect(p.overlapEfficiency).toBeCloseTo(1 - 5 / 13, 12);
    expect(predict([st({ computeMs: 1 })], 1, link).overlapEfficiency).toBe(1);   // nothing to move
  });

  it('--compute-tflops replaces measured compute by FLOPs at that rate; per-GPU TFLOP/s follows', () => {
    const link = LINKS['nvlink-h200'];
    const steps = [st({ rank: 0, flops: 1e12, computeMs: 99 }), st({ rank: 1, flops: 1e12, computeMs: 99 })];
    const p = predict(steps, 2, link, 100);
    expect(p.stepMs[0]).toBeCloseTo(10, 9);
    expect(p.tflopsPerGpu).toBeCloseTo(100, 6);
    const split = predict([...steps, st({ phase: 'backward', flops: 2e12 })], 2, link, { forward: 100, backward: 50 });
    expect(split.phases.map((x) => x.stepMs[0])).toEqual([10, 40]);
  });

  it('bad links and rates are InputErrors naming them', () => {
    expect(() => resolveLink('carrier-pigeon')).toThrow(/unknown link 'carrier-pigeon'/);
    expect(() => resolveLink('custom', -3, 1)).toThrow(/^--link-gbps must be from 0\.000001 to 1000000 .*, got '-3'$/);
    expect(() => resolveLink('custom', 100)).toThrow(/--link-latency-us/);
    expect(() => predict([], 1, LINKS.pcie5, -1)).toThrow(InputError);
    expect(resolveLink('custom', 100, 2)).toEqual({ name: 'custom', gbps: 100, latencyUs: 2 });
  });

  it('--link-gbps within 1 kbit/s to 1 Pbit/s: 1e-300 and 1e300 are refused, the bounds taken', () => {
    for (const g of [1e-300, 9e-7, 1.1e6, 1e300]) expect(() => resolveLink('custom', g, 1), String(g)).toThrow(/^--link-gbps must be from 0\.000001 to 1000000 \(Gbit\/s per direction: 1 kbit\/s to 1 Pbit\/s\), got /);
    for (const g of [1e-6, 1e6]) expect(resolveLink('custom', g, 1).gbps).toBe(g);
  });
});

describe('planned steps', () => {
  const shape = { B: 1, Hq: 8, Hkv: 4, Nq: 1000, Nk: 1000, D: 64 };
  const hierarchy = (scheme: string, R: number): [number, number] => (scheme === 'a2a' ? [R, 1] : scheme === 'a2a+p2p' ? [2, R / 2] : [1, R]);

  it('every scheme and layout does exactly the causal work: forward 4·B·H·N²·D/2 (visible), backward 2.5x', async () => {
    for (const scheme of schemeNames())
      for (const layout of LAYOUTS)
        for (const R of [2, 4]) {
          const steps = await plannedSteps({ shape, causal: true, layout, R, scheme, hierarchy: hierarchy(scheme, R), eb: 2 });
          const f = (ph: string) => steps.filter((s) => s.phase === ph).reduce((a, s) => a + s.flops, 0);
          // Visible entries N(N+1)/2, not N²/2: the diagonal counts.
          const exact = 4 * shape.Hq * shape.D * (shape.Nq * (shape.Nq + 1)) / 2;
          expect(f('forward'), `${scheme} ${layout} R=${R}`).toBe(exact);
          expect(f('backward')).toBe(2.5 * exact);
          expect(exact).toBeGreaterThan(attentionFlops(shape, true));
        }
  });

  it('bytes per rank: p2p moves K/V R−1 times, a2a moves 3/R of Q/K/V heads once each way', async () => {
    const N = 1024, R = 4, eb = 2;
    const even = { ...shape, Nq: N, Nk: N };
    const kvPerRank = 2 * even.Hkv * (N / R) * even.D * eb;
    const p2p = await plannedSteps({ shape: even, causal: true, layout: 'zigzag', R, scheme: 'p2p', hierarchy: [1, R], eb });
    expect(p2p.filter((s) => s.phase === 'forward' && s.rank === 0).reduce((a, s) => a + s.transferBytes, 0)).toBe((R - 1) * kvPerRank);
    const a2a = await plannedSteps({ shape: even, causal: true, layout: 'zigzag', R, scheme: 'a2a', hierarchy: [R, 1], eb });
    const in0 = a2a.find((s) => s.phase === 'forward' && s.step === 0 && s.rank === 0)!;
    expect(in0.transferBytes).toBe(((R - 1) / R) * (N / R) * even.D * eb * (even.Hq + 2 * even.Hkv));
    expect(in0.overlapped).toBe(false);
    expect(in0.messages).toBe(R - 1);
  });

  it('more bandwidth never predicts a slower step; R=1 p2p moves nothing', async () => {
    const steps = await plannedSteps({ shape, causal: true, layout: 'zigzag', R: 4, scheme: 'p2p', hierarchy: [1, 4], eb: 2 });
    const slow = predict(steps, 4, LINKS['ib-ndr'], 50), fast = predict(steps, 4, LINKS['nvlink-h200'], 50);
    expect(fast.totalMs).toBeLessThanOrEqual(slow.totalMs);
    expect(fast.commFraction).toBeLessThanOrEqual(slow.commFraction);
    const one = await plannedSteps({ shape, causal: true, layout: 'zigzag', R: 1, scheme: 'p2p', hierarchy: [1, 1], eb: 2 });
    expect(one.every((s) => s.transferBytes === 0 && s.messages === 0)).toBe(true);
  });
});
