/**
 * The CP planning code without a GPU (the link model, the ring schedule, the scheme registry, the dry run
 * and plans) by hand where a mutation review (a helper, 2026-12-05: 27 mutations, 17 passed every unit
 * test before) could change it without a test failing. Every expected value is worked out in its comment.
 */
import { describe, expect, it } from 'vitest';
import { LINKS, StepLike, predict, stepParts, transferMs } from '../src/cp/plan/linkModel.js';
import { plannedTimeline } from './cases.js';
import { dryRun } from '../src/cp/launch/dry.js';
import { planScheme } from '../src/cp/launch/planSchemes.js';
import { resolveScheme, schemeSizes } from '../src/cp/schemes/registry.js';

const st = (o: Partial<StepLike>): StepLike => ({
  phase: 'forward', step: 0, rank: 0, flops: 0, computeMs: 0, gpuComputeMs: null, transferBytes: 0, messages: 0, overlapped: true, ...o,
});
const perMs = { name: 'x', gbps: 8e-6, latencyUs: 0 }; // 1 byte per ms

describe('link model', () => {
  it('a measured GPU time wins over the wall-clock compute', () => {
    // computeMs 10 (host wall clock), gpuComputeMs 4: the step is 4 ms.
    expect(predict([st({ computeMs: 10, gpuComputeMs: 4 })], 1, perMs).stepMs).toEqual([4]);
  });

  it('exposed communication is measured from the slowest compute, whichever rank has it', () => {
    // rank 0: 2 ms, no transfer; rank 1: 6 ms, 9 bytes overlapped (9 ms). Step = 9; exposed = 9 − 6 = 3 (not 9 − 2).
    const p = predict([st({ rank: 0, computeMs: 2 }), st({ rank: 1, computeMs: 6, transferBytes: 9 })], 2, perMs);
    expect(p.stepMs).toEqual([9]);
    expect(p.exposedCommMs).toBe(3);
  });

  it("a step's parts, which predict and the page's predicted lane both take: compute, transfer, and its own time", () => {
    // 6 bytes at 1 byte/ms = 6 ms of transfer; measured compute 4 (GPU) over 10 (host): overlapped 6, after it 10.
    expect(stepParts(st({ computeMs: 10, gpuComputeMs: 4, transferBytes: 6 }), perMs, { source: 'measured' })).toEqual({ compute: 4, transfer: 6, own: 6 });
    expect(stepParts(st({ computeMs: 10, gpuComputeMs: 4, transferBytes: 6, overlapped: false }), perMs, { source: 'measured' })).toEqual({ compute: 4, transfer: 6, own: 10 });
    // 3e12 FLOPs of a backward step at 1 TFLOP/s forward / 2 backward: 1500 ms.
    expect(stepParts(st({ phase: 'backward', flops: 3e12 }), perMs, { source: 'tflops', tflops: { forward: 1, backward: 2 } }).compute).toBe(1500);
  });

  it('the presets: NVLink 450 GB/s, PCIe 5 64 GB/s, NDR 50 GB/s a direction; 2, 3 and 5 µs a message', () => {
    // 450e9 B · 8 / 3600e9 bit/s = 1 s; 64e9 · 8 / 512e9 = 1 s; 50e9 · 8 / 400e9 = 1 s.
    expect(transferMs(LINKS['nvlink-h200'], 450e9, 0)).toBeCloseTo(1000, 9);
    expect(transferMs(LINKS.pcie5, 64e9, 0)).toBeCloseTo(1000, 9);
    expect(transferMs(LINKS['ib-ndr'], 50e9, 0)).toBeCloseTo(1000, 9);
    // 1000 messages: 2, 3, 5 ms.
    expect([LINKS['nvlink-h200'], LINKS.pcie5, LINKS['ib-ndr']].map((l) => transferMs(l, 0, 1000))).toEqual([2, 3, 5]);
  });
});

describe("a run's timeline: work and balance", () => {
  it('imbalance is max / mean of the work per rank', async () => {
    // Causal contiguous N=16, R=4: rank r's queries 4r..4r+3 see i+1 keys each: 16r + 10 → [10, 26, 42, 58], mean 34.
    const { timeline } = await plannedTimeline(16, 4, 'contiguous', { causal: true, window: [-1, -1], docs: null });
    expect(timeline.schedule.workPerRank).toEqual([10, 26, 42, 58]);
    expect(timeline.schedule.imbalance).toBeCloseTo(58 / 34, 12);
  });

  it('counts the documents and names the mask', async () => {
    const cu = (...x: number[]) => Int32Array.from(x);
    const { timeline } = await plannedTimeline(16, 2, 'zigzag', { causal: true, window: [3, 0], docs: { cuQ: cu(0, 5, 16), cuK: cu(0, 5, 16) } });
    expect([timeline.schedule.documents, timeline.schedule.window, timeline.causal]).toEqual([2, [3, 0], true]);
  });
});

describe('plans scale the micro batch', () => {
  it('a plan at B = 3 is the dry run at B = 3: FLOPs, bytes, messages, peak (planScheme runs B = 1 and scales)', async () => {
    const cu = (...x: number[]) => Int32Array.from(x);
    for (const [scheme, sizes] of [['p2p'], ['all_gather'], ['a2a'], ['a2a+p2p', '2,2']] as [string, string?][])
      for (const mask of [{ causal: true }, { docs: { cuQ: cu(0, 300, 1000), cuK: cu(0, 300, 1000) }, window: [100, 0] }]) {
        const shape = { B: 3, Hq: 8, Hkv: 4, Nq: 1000, Nk: 1000, D: 64 };
        const req = { shape, R: 4, layout: 'zigzag' as const, mask, precision: 'f16' as const, link: LINKS['nvlink-h200'], rate: 100 };
        const plan = await planScheme(req, scheme, sizes);
        const dry = await dryRun({ shape, R: 4, scheme, sizes, mask, precision: 'f16' });
        expect(plan.predicted, scheme).toEqual(predict(dry.steps, 4, req.link, req.rate));
        expect(plan.rankPeakBytes, scheme).toBe(Math.max(...dry.ranks.map((r) => r.peakBytes)));
      }
  });
});

describe('registry', () => {
  const h8 = { Hq: 8, Hkv: 8 };
  it("a2a+p2p's default: the largest A with 1 < A < R dividing R and both head counts", () => {
    // R=8, 8 heads: A ∈ {4, 2}, the largest is 4 → '4,2'.
    expect(schemeSizes('a2a+p2p', 8, h8, undefined)).toEqual({ sizes: '4,2', chosen: true });
    // 2 K/V heads: 4 does not divide them → '2,4'.
    expect(schemeSizes('a2a+p2p', 8, { Hq: 8, Hkv: 2 }, undefined)).toEqual({ sizes: '2,4', chosen: true });
    // R=3: no A with 1 < A < 3 divides 3 (A=1 is p2p, not a default).
    expect(() => schemeSizes('a2a+p2p', 3, h8, undefined)).toThrow(/at R = 3 there is none/);
    // Given sizes pass as they are; p2p takes none.
    expect(schemeSizes('a2a+p2p', 8, h8, '2,4')).toEqual({ sizes: '2,4', chosen: false });
    expect(schemeSizes('p2p', 4, h8, undefined)).toEqual({ sizes: undefined, chosen: false });
    expect(() => schemeSizes('p2p', 4, h8, '2,2')).toThrow(/applies only to --cp-comm-type a2a\+p2p/);
  });

  it('checks the sizes multiply to R and that both head counts split', () => {
    const shape = { B: 1, Hq: 8, Hkv: 2, Nq: 64, Nk: 64, D: 16 };
    expect(() => resolveScheme('a2a+p2p', 8, { ...shape, Hkv: 8 }, '2,2')).toThrow(/multiply to 4, not the context-parallel size 8/);
    // Hq = 8 divides by 4 but Hkv = 2 does not.
    expect(() => resolveScheme('a2a', 4, shape, undefined)).toThrow(/must both be divisible by 4/);
    expect(() => resolveScheme('a2a+p2p', 8, shape, '4,2')).toThrow(/must both be divisible by 4/);
  });

  it('says what runs where the heads do not split: a count dividing both heads, or a scheme that splits the sequence', () => {
    // Hq 8, Hkv 2: gcd 2, so 2 ranks (or an a2a group of 2) split them; p2p and all_gather take any heads.
    const shape = { B: 1, Hq: 8, Hkv: 2, Nq: 64, Nk: 64, D: 16 };
    expect(() => resolveScheme('a2a', 4, shape, undefined)).toThrow(/divisible by 4: a context-parallel size that divides both \(2\) runs a2a; p2p and all_gather split the sequence, not the heads, and take any$/);
    expect(() => resolveScheme('a2a+p2p', 8, shape, '4,2')).toThrow(/divisible by 4: sizes 2,4 run a2a\+p2p; p2p and all_gather .* take any$/);
    // Hq 12, Hkv 6 at R = 8: 2 divides both and 8 (3 and 6 do not divide 8).
    expect(() => resolveScheme('a2a+p2p', 8, { ...shape, Hq: 12, Hkv: 6 }, '4,2')).toThrow(/divisible by 4: sizes 2,4 run a2a\+p2p;/);
    // Hq 6, Hkv 3 at R = 4: 3 divides both heads but not 4.
    expect(() => resolveScheme('a2a+p2p', 4, { ...shape, Hq: 6, Hkv: 3 }, '2,2')).toThrow(/divisible by 2: no a2a group between 1 and 4 divides both and 4, so a2a\+p2p cannot run here; p2p and all_gather/);
    // Hq 6, Hkv 3 at R = 2: only 3 divides both, so no power-of-two count does.
    expect(() => resolveScheme('a2a', 2, { ...shape, Hq: 6, Hkv: 3 }, undefined)).toThrow(/that divides both \(3\) runs a2a/);
    // Hq 128, Hkv 128 at R = 3 over 16 tokens: 32, 64 and 128 ranks would leave ranks without a token, so only 2 to 16 run.
    expect(() => resolveScheme('a2a', 3, { ...shape, Hq: 128, Hkv: 128, Nq: 16, Nk: 16 }, undefined)).toThrow(/that divides both \(2, 4, 8, 16\) runs a2a;/);
    // Hq 5, Hkv 1: no count above 1 divides both.
    expect(() => resolveScheme('a2a', 2, { ...shape, Hq: 5, Hkv: 1 }, undefined)).toThrow(/divisible by 2: no count above 1 divides both, so a2a cannot run here; p2p and all_gather split the sequence, not the heads, and take any$/);
  });
});

describe('dry run and plans', () => {
  const shape = { B: 1, Hq: 8, Hkv: 4, Nq: 1024, Nk: 1024, D: 64 };
  it("p2p's backward moves K/V R − 1 times and the dK/dV sums (fp32) R times", async () => {
    // R=4, 256 tokens a rank: K+V f16 = 2·4·256·64·2 = 262144 B; dK+dV f32 = 2·4·256·64·4 = 524288 B.
    // Rank 0: 3 · 262144 + 4 · 524288 = 2883584.
    const dry = await dryRun({ shape, R: 4, scheme: 'p2p', precision: 'f16', mask: { causal: true } });
    const bwd0 = dry.steps.filter((s) => s.phase === 'backward' && s.rank === 0).reduce((a, s) => a + s.transferBytes, 0);
    expect(bwd0).toBe(3 * 262144 + 4 * 524288);
  });

  it('the default layout is zigzag', async () => {
    const dry = await dryRun({ shape, R: 4, precision: 'f16', mask: { causal: true }, backward: false });
    expect(dry.layout).toBe('zigzag');
  });

  it("a plan's peak is the fullest rank's, and its TFLOP/s are per GPU", async () => {
    // N = 1001 over 4 contiguous ranks: rank 0 holds 251 tokens, the others 250: peaks differ.
    const req = { shape: { ...shape, Nq: 1001, Nk: 1001 }, R: 4, mask: { causal: true }, layout: 'contiguous' as const, precision: 'f16' as const, link: LINKS['nvlink-h200'], rate: 100 };
    const dry = await dryRun({ shape: req.shape, R: 4, layout: 'contiguous', scheme: 'p2p', precision: 'f16', mask: { causal: true } });
    const peaks = dry.ranks.map((r) => r.peakBytes);
    expect(Math.max(...peaks)).toBeGreaterThan(Math.min(...peaks));
    const plan = await planScheme(req, 'p2p');
    expect(plan.rankPeakBytes).toBe(Math.max(...peaks));
    // Over 4 GPUs, none faster than the kernel's 100 TFLOP/s.
    expect(plan.predicted.R).toBe(4);
    expect(plan.predicted.tflopsPerGpu).toBeGreaterThan(0);
    expect(plan.predicted.tflopsPerGpu).toBeLessThanOrEqual(100);
  });
});
