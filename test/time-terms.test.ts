/**
 * Terms of the step-time model (src/memory/time) and of advise (src/memory/advise.ts) checked by hand,
 * each one a mutation of the code (a constant changed, a term dropped, a condition flipped) that passed
 * every other test before (a helper's review, 2026-12-05). Link L: 1 GB/s without latency, so ms = bytes / 1e6.
 */
import { describe, expect, it } from 'vitest';
import { iterationTime, layerOps } from '../src/memory/time/step.js';
import { allReduceMs, collectiveMs, cpCommMs, crossEntropyAllReducesMs, groupLinks, recomputed } from '../src/memory/time/iteration.js';
import { moeDispatchMs, moeOps } from '../src/memory/time/moe.js';
import { timeDims } from '../src/memory/time/ops.js';
import { fitGemm, flashTflops } from '../src/memory/time/rates.js';
import { H200 } from '../src/memory/time/devices.js';
import { LINKS } from '../src/cp/plan/linkModel.js';
import { DEFAULT_PARALLEL, PRESETS, GIB, memoryBreakdown, stageParameters, type ParallelConfig } from '../src/memory/model.js';
import { candidates, layoutConfig, reasons, recomputeChoices, RECOMPUTE_CHOICES, type AdviseRequest, type Candidate } from '../src/memory/advise.js';

const seed = PRESETS['seed-32L-4096h'].model;
const L = { name: 'test', gbps: 8, latencyUs: 0 };          // 1 GB/s, ms = bytes / 1e6
const F = { biasDropout: true, biasActivation: true };
const term = (t: { terms: { name: string; ms: number }[] }, n: string) => t.terms.find((x) => x.name === n)?.ms ?? 0;
const moeModel = { numLayers: 32, hiddenSize: 4096, numAttentionHeads: 32, numQueryGroups: 8, swiglu: true, biasLinear: false, ffnHiddenSize: 14336,
  moe: { numExperts: 8, routerTopk: 2, dispatcher: 'alltoall' as const } };
// The profile's fitted GEMM rate by hand: 2mnk FLOPs at its peak plus the three bf16 matrices at its bytes rate.
const fit = fitGemm(H200.gemmBf16);
const g = (m: number, n: number, k: number) => (2 * m * n * k * fit.secondsPerFlop + 2 * (m * k + k * n + m * n) * fit.secondsPerByte) * 1e3;
/**
 * The backward GEMMs (dX, dW) of a column-parallel linear of forward [m, n, k], which its own TP collectives run behind:
 * on L (1 GB/s) every collective outlasts them, so a column's backward hides exactly them.
 */
const hidden = ([m, n, k]: readonly number[]) => g(m, k, n) + g(k, n, m);
const moePar = (ep: number, extra: Partial<ParallelConfig> = {}): ParallelConfig => ({ ...DEFAULT_PARALLEL, seqLength: 32768, dataParallel: 8, expertParallel: ep, distributedOptimizer: true, ...extra });
/**
 * TP's small all-reduces at `bytesPerMs` bytes a ms without latency: the cross-entropy's three of T fp32 values a micro
 * batch, and with SP once a step the fp32 gradients of `replicated` parameters; an all-reduce is 2·(t−1)/t of its bytes.
 */
const tpSmall = (T: number, t: number, bytesPerMs: number, replicated = 0) => (2 * ((t - 1) / t) * (3 * 4 * T + 4 * replicated)) / bytesPerMs;
/** The seed's parameters every TP rank holds whole: a layer's two LayerNorms (4h) and row-parallel biases (2h), 32 layers, the final LayerNorm (2h). */
const SEED_REPLICATED = 32 * 6 * 4096 + 2 * 4096; // 794624

describe('terms by hand that a mutation review found unchecked (2026-12-05)', () => {
  it("a collective over n ranks pays n − 1 messages' latency: 6 ms of bytes + 3 × 1 ms", () => {
    const lat = { name: 'lat', gbps: 8, latencyUs: 1000 };
    expect(collectiveMs(lat, 8e6, 4)).toBeCloseTo(6 + 3, 9);
  });
  it("p2p's K/V around the ring: R − 1 steps each way, 2 × K/V backward (dK, dV), each step hidden behind its 1/R of the attention", () => {
    const x = timeDims(seed, { ...DEFAULT_PARALLEL, seqLength: 32768, contextParallel: 4 }, F);
    const p = { ...DEFAULT_PARALLEL, contextParallel: 4, cpCommType: 'p2p' as const };
    const kvMs = (2 * 2 * 8192 * 4096) / 1e6;   // 134.217728
    expect(cpCommMs(x, p, L, 0, 0).fwd).toBeCloseTo(3 * kvMs, 9);
    expect(cpCommMs(x, p, L, 0, 0).bwd).toBeCloseTo(3 * 2 * kvMs, 9);
    expect(cpCommMs(x, p, L, 200, 400).fwd).toBeCloseTo(3 * (kvMs - 200 / 4), 9);
    expect(cpCommMs(x, p, L, 200, 400).bwd).toBeCloseTo(3 * (2 * kvMs - 400 / 4), 9);
  });
  it("a layout of 6 GPUs lies in one node of 8: every group on the node's link", () => {
    const nv = LINKS['nvlink-h200'];
    expect(groupLinks({ tensorParallel: 2, contextParallel: 3, dataParallel: 1, pipelineParallel: 1 }, {})).toEqual({ tp: nv, cp: nv, ep: nv, dp: nv, pp: nv });
  });
  it("selective recompute without modules named re-runs the attention core only (Megatron-LM's default)", () => {
    const p: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 8192, recompute: 'selective' };
    const x = timeDims(seed, p, F);
    const r = recomputed(p, 32, layerOps(seed, x));
    expect(r.layers).toBe(32);
    expect(r.ops.map((o) => o.name)).toEqual(['FlashAttention (causal)']);
  });
  it("full recompute runs TP's forward collectives again: (32·10 + 32·4 + 5) a step at SP, less what the column-parallel linears' backward GEMMs hide", () => {
    const par: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 8192, tensorParallel: 4, sequenceParallel: true };
    const one = ((3 / 4) * 2 * 8192 * 4096) / 1e6;
    const tp = iterationTime(seed, { ...par, recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1 }, { link: L });
    const hide = 32 * (hidden([8192, 3072, 4096]) + hidden([8192, 4096, 4096])) + hidden([8192, 128512 / 4, 4096]);
    expect(term(tp, 'tp-comm')).toBeCloseTo((32 * 10 + 32 * 4 + 5) * one - hide + tpSmall(8192, 4, 1e6, SEED_REPLICATED), 6);
  });
  it("full recompute runs CP's forward gathers again: 32·4 instead of 32·3", () => {
    const par: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 32768, contextParallel: 4, cpCommType: 'all_gather' };
    const g = (3 * 2 * 2 * 8192 * 4096) / 1e6;   // 402.653184
    expect(term(iterationTime(seed, par, { link: L }), 'cp-comm')).toBeCloseTo(32 * 3 * g, 6);
    expect(term(iterationTime(seed, { ...par, recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1 }, { link: L }), 'cp-comm')).toBeCloseTo(32 * 4 * g, 6);
  });
  it("full recompute runs the MoE token exchange's forward again: 32·6 calls", () => {
    const one = ((7 / 8) * 32768 * 2 * 4096 * 2) / 1e6;
    expect(term(iterationTime(moeModel, moePar(8, { recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1 }), { link: L }), 'ep-comm')).toBeCloseTo(32 * 6 * one, 6);
  });
  it("gradients over DP: an all-reduce of fp32 (2 × (n−1)/n), or with the distributed optimizer a reduce-scatter of fp32 and an all-gather of bf16", () => {
    const par: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 4096, dataParallel: 2 };
    const P = stageParameters(seed, par).perGpu;
    expect(term(iterationTime(seed, par, { link: L }), 'dp-comm')).toBeCloseTo((2 * 0.5 * 4 * P) / 1e6, 6);
    expect(term(iterationTime(seed, { ...par, distributedOptimizer: true }, { link: L }), 'dp-comm')).toBeCloseTo((0.5 * 4 * P + 0.5 * 2 * P) / 1e6, 6);
  });
  it("the pipeline bubble is (p − 1)/v micro batches, part of the step, and the terms add up to the step", () => {
    const par = (vp: number): ParallelConfig => ({ ...DEFAULT_PARALLEL, seqLength: 8192, pipelineParallel: 4, virtualStages: vp });
    const t1 = iterationTime(seed, par(1), { microBatches: 4 }), t2 = iterationTime(seed, par(2), { microBatches: 4 });
    const five = iterationTime(seed, par(1), { microBatches: 5 });
    for (const t of [t1, t2]) expect(t.terms.reduce((s, x) => s + x.ms, 0)).toBeCloseTo(t.iterMs, 6);
    expect(term(t1, 'pipeline-bubble') / term(t2, 'pipeline-bubble')).toBeCloseTo(2, 9);
    // one micro batch's GPU time = gpu(mb=5) - gpu(mb=4) (pp-comm grows with mb too)
    const micro = five.gpuMs - t1.gpuMs - (term(five, 'pp-comm') - term(t1, 'pp-comm'));
    expect(term(t1, 'pipeline-bubble')).toBeCloseTo(3 * micro, 6);
  });
  it("with SP the pipeline sends T/t tokens a rank", () => {
    const par: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 8192, tensorParallel: 4, sequenceParallel: true, pipelineParallel: 4 };
    const m = { ...seed, untieEmbeddings: true };
    expect(term(iterationTime(m, par, { link: L, gpusPerNode: 16, microBatches: 4 }), 'pp-comm')).toBeCloseTo((2 * 4 * 0.5 * 2 * 2 * 2048 * 4096) / 1e6, 6);
  });
  it("full recompute runs each local expert module a third time", () => {
    const t = (ep: number) => iterationTime(moeModel, moePar(ep, { recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1 }), { link: L });
    expect(t(8).expertPasses).toBe(32 * 3);
    expect(t(1).expertPasses).toBe(32 * 3 * 8);
  });
  it("CP moves K/V at their own width (query groups), not the query's", () => {
    const m = { ...seed, numQueryGroups: 8 };
    const x = timeDims(m, { ...DEFAULT_PARALLEL, seqLength: 32768, contextParallel: 4 }, F);
    const ag = cpCommMs(x, { ...DEFAULT_PARALLEL, contextParallel: 4, cpCommType: 'all_gather' }, L, 0, 0);
    expect(ag.fwd).toBeCloseTo((3 * 2 * 2 * 8192 * 1024) / 1e6, 9);
  });
  it("a bottom-right causal call is priced by its work: 4096 queries against 16384 keys as 56 heads of a square 8192", () => {
    const a = flashTflops(H200, 128, 4096, true, 'fwd', 'flash', 32, 16384), b = flashTflops(H200, 128, 8192, true, 'fwd', 'flash', 56);
    expect(a).toBeCloseTo(b, 9);
  });
  it("TFLOP/s per GPU counts the GEMMs, FlashAttention (causal half) and the output layer: forward + backward by hand, as Megatron-LM logs it", () => {
    const t = iterationTime(seed, { ...DEFAULT_PARALLEL, seqLength: 8192 });
    const T = 8192, h = 4096, V = 128256;
    // Megatron-LM's num_floating_point_operations: every product 3× its forward (the attention core too:
    // FlashAttention's backward runs 2.5× its forward, but the model's count is 2×), the core over the causal half.
    const flops = 32 * (3 * 24 * T * h * h + 3 * 2 * T * T * h) + 3 * 2 * T * h * V;
    expect(t.tflopsPerGpu * t.iterMs * 1e9 / flops).toBeCloseTo(1, 9);
    // The unfused core (--transformer-impl local) multiplies every score, yet counts the same model FLOPs.
    const local = iterationTime(seed, { ...DEFAULT_PARALLEL, seqLength: 8192, flashAttention: false });
    expect(local.tflopsPerGpu * local.iterMs * 1e9 / flops).toBeCloseTo(1, 9);
  });
  it("a capacity factor caps the routed tokens below 1 and never raises them", () => {
    const x = timeDims(moeModel, moePar(1), F);
    const perm = (cf?: number) => moeOps(x, { ...moeModel.moe, capacityFactor: cf }, 1).find((o) => o.name === 'permute routed tokens')!.fwd;
    expect(perm()).toBe(4 * 32768 * 2 * 4096);
    expect(perm(1.5)).toBe(perm());
    expect(perm(0.5)).toBe(perm() / 2);
  });
  const req = (s: number, extra: Partial<AdviseRequest> = {}): AdviseRequest => ({
    model: seed, base: { ...DEFAULT_PARALLEL, seqLength: s }, gpus: 8, hbmGib: 1e6, margin: 0.1, gbs: 8, link: LINKS['nvlink-h200'], ...extra,
  });
  it("advise: SP where s/CP splits over TP (4100/2/4 does not), else TP without SP", () => {
    const r = candidates(req(4100));
    const c = r.fitting.filter((x) => x.tp === 4 && x.cp === 2);
    expect(c.length).toBeGreaterThan(0);
    for (const x of c) expect(x.sp).toBe(false);
    expect(r.fitting.filter((x) => x.tp === 4 && x.cp === 1).every((x) => x.sp)).toBe(true);
  });
  it("advise: a step carries the global batch whatever the micro batch size (16 sequences of 8192 at micro batch 2)", () => {
    const r = candidates({ ...req(8192, { gbs: 16 }), base: { ...DEFAULT_PARALLEL, seqLength: 8192, microBatchSize: 2 } });
    expect(r.fitting.length).toBeGreaterThan(0);
    for (const c of r.fitting) expect((c.tokensPerSecond * c.iterMs) / 1e3).toBeCloseTo(16 * 8192, 3);
  });
  it("advise: only communication above 3% of the step is named as not hidden", () => {
    const c = { tp: 1, sp: false, cp: 1, cpCommType: null, pp: 1, vp: 1, dp: 8, recompute: 'none', distributedOptimizer: false, iterMs: 100,
      totalBytes: 0, tokensPerSecond: 0, tflopsPerGpu: 0, commFraction: 0, time: { terms: [{ name: 'tp-comm', ms: 5, what: '' }, { name: 'dp-comm', ms: 2, what: '' }] } } as unknown as Candidate;
    expect(reasons(req(8192), c)).toEqual(['not hidden: tp-comm 5 ms (5%)']);
  });
  it("advise: communication each kind 3% or less is said so, each kind named (their sum, the line's comm %, may pass 3%); none exposed is hidden", () => {
    const at = (terms: { name: string; ms: number }[]) => ({ tp: 1, sp: false, cp: 1, cpCommType: null, pp: 1, vp: 1, dp: 8, recompute: 'none', distributedOptimizer: false, iterMs: 100,
      totalBytes: 0, tokensPerSecond: 0, tflopsPerGpu: 0, commFraction: 0, time: { terms: terms.map((x) => ({ ...x, what: '' })) } }) as unknown as Candidate;
    expect(reasons(req(8192), at([{ name: 'tp-comm', ms: 2.4 }, { name: 'cp-comm', ms: 1 }, { name: 'dp-comm', ms: 0.6 }, { name: 'pp-comm', ms: 0 }])))
      .toEqual(['each kind of communication 3% of the step or less: tp-comm 2%, cp-comm 1%, dp-comm 1%']);
    expect(reasons(req(8192), at([{ name: 'tp-comm', ms: 0 }, { name: 'attention', ms: 50 }]))).toEqual(['communication hidden']);
  });
  it("advise: the CP = 1 layout a CP row is compared with keeps the GPUs (DP × CP)", () => {
    const r = req(32768, { hbmGib: 80 });
    const c = { tp: 1, sp: false, cp: 2, cpCommType: 'p2p', pp: 1, vp: 1, dp: 1, recompute: 'none', distributedOptimizer: true, iterMs: 100, totalBytes: 0, tokensPerSecond: 0, tflopsPerGpu: 0, commFraction: 0, time: { terms: [] } } as unknown as Candidate;
    const one = layoutConfig(r, { tp: 1, cp: 1, pp: 1, vp: 1, dp: 2, cpCommType: undefined, recompute: 'none', distributedOptimizer: true });
    const want = (memoryBreakdown(seed, one).totalBytes / GIB).toFixed(1);
    expect(reasons({ ...r, gpus: 2 }, c)[0]).toContain(`needs ${want} GiB`);
  });
  it("advise: block recompute choices at two layers a chunk: the four base choices and block/1", () => {
    expect(recomputeChoices(2)).toEqual([...RECOMPUTE_CHOICES, 'full:block/1']);
  });
  it("EP × TP as Megatron-LM's dispatchers run it: alltoall sends T/t·k copies over EP, then gathers them over TP; allgather gathers over TP × EP; the layer's TP collectives are the attention half's", () => {
    // TP = 2 with SP, EP = 4, DP = 4: T = 32768 tokens a TP group, k = 2 routed copies, h = 4096, bf16.
    const par = moePar(4, { dataParallel: 4, tensorParallel: 2, sequenceParallel: true });
    const x = timeDims(moeModel, par, F), ep = { name: 'ep', gbps: 8, latencyUs: 0 }, tp = { name: 'tp', gbps: 16, latencyUs: 0 };
    const a2a = ((3 / 4) * 2 * 32768 * 2 * 4096) / 2 / 1e6;   // 3/4 of T/t·k·h·2 bytes over EP at 1 GB/s: 201.326592 ms
    const gather = ((1 / 2) * 2 * 32768 * 2 * 4096) / 2e6;   // 1/2 of T·k·h·2 bytes over TP at 2 GB/s: 134.217728 ms
    expect(moeDispatchMs(x, moeModel.moe, 4, { ep, tp }).fwd).toBeCloseTo(2 * (a2a + gather), 6);
    const all = ((7 / 8) * 4 * 32768 * 2 * 4096) / 1e6;   // 7/8 of EP·T·h·2 bytes over the 8 TP × EP ranks: 939.524096 ms
    expect(moeDispatchMs(x, { ...moeModel.moe, dispatcher: 'allgather' }, 4, { ep, tp })).toEqual({ fwd: 2 * all, bwd: 2 * all });
    // The step: 32 layers × (2 + 3) collectives of T·h over TP (attention only), 5 outside the layers, less the QKV's and
    // the output layer's backward GEMMs (GQA: QKV 4096 + 2·1024 wide over 2 ranks; the default vocabulary 50257 padded to 50432, over 2).
    const one = ((1 / 2) * 2 * 32768 * 4096) / 1e6, qkv = hidden([32768, 3072, 4096]), out = hidden([32768, 25216, 4096]);
    // With SP, the cross-entropy's all-reduces and the replicated gradients: a layer's two LayerNorms (4h) and router (h·E), the final LayerNorm.
    const small = tpSmall(32768, 2, 1e6, 32 * (4 * 4096 + 4096 * 8) + 2 * 4096);   // 0.393216 + 6.324224 ms
    expect(term(iterationTime(moeModel, par, { link: L }), 'tp-comm')).toBeCloseTo((32 * 5 + 5) * one - 32 * qkv - out + small, 6);
    // A shared expert brings its MLP half back (its fc1: 2·4096 wide, SwiGLU, over 2 ranks).
    const shared = { ...moeModel, moe: { ...moeModel.moe, sharedExpertSize: 4096 } };
    expect(term(iterationTime(shared, par, { link: L }), 'tp-comm')).toBeCloseTo((32 * 10 + 5) * one - 32 * (qkv + hidden([32768, 4096, 4096])) - out + small, 6);
  });
  it("the flex dispatcher: one exchange over the TP × EP group, as many bytes as alltoall's two steps; the router on this rank's T/t tokens", () => {
    const par = moePar(4, { dataParallel: 4, tensorParallel: 2, sequenceParallel: true });
    const x = timeDims(moeModel, par, F), ep = { name: 'ep', gbps: 8, latencyUs: 0 };
    const all = ((7 / 8) * 2 * 32768 * 2 * 4096) / 1e6;   // 7/8 of T·k·h·2 bytes over the 8 TP × EP ranks: 469.762048 ms
    expect(moeDispatchMs(x, { ...moeModel.moe, dispatcher: 'flex' }, 4, { ep, tp: ep })).toEqual({ fwd: 2 * all, bwd: 2 * all });
    expect(moeDispatchMs(x, moeModel.moe, 4, { ep, tp: ep }).fwd).toBeCloseTo(2 * all, 6);   // alltoall on one link: the same bytes
    const router = moeOps(x, moeModel.moe, 4).find((o) => o.name === 'router gating GEMM')!;
    expect(router.fwd).toBe(2 * (32768 / 2) * 4096 * 8);   // 2 · T/t · h · E
  });
  it("selective recompute of moe runs the shared expert again too (Megatron-LM's MoE checkpoint holds the whole layer): its TP collectives and its ops", () => {
    const shared = { ...moeModel, moe: { ...moeModel.moe, sharedExpertSize: 4096 } };
    const par = (mods?: ('moe' | 'shared_experts')[]) => moePar(4, { dataParallel: 4, tensorParallel: 2, sequenceParallel: true, ...(mods ? { recompute: 'selective' as const, recomputeModules: mods } : {}) });
    const one = ((1 / 2) * 2 * 32768 * 4096) / 1e6;
    const hide = 32 * (hidden([32768, 3072, 4096]) + hidden([32768, 4096, 4096])) + hidden([32768, 25216, 4096]) - tpSmall(32768, 2, 1e6, 32 * (4 * 4096 + 4096 * 8) + 2 * 4096);
    const t = (mods?: ('moe' | 'shared_experts')[]) => iterationTime(shared, par(mods), { link: L });
    expect(term(t(), 'tp-comm')).toBeCloseTo((32 * 10 + 5) * one - hide, 6);
    expect(term(t(['moe']), 'tp-comm')).toBeCloseTo((32 * 12 + 5) * one - hide, 6);   // the shared expert's all-gather and reduce-scatter again
    expect(term(t(['moe']), 'recompute')).toBeCloseTo(term(t(['moe', 'shared_experts']), 'recompute'), 9);
  });
});

describe("the multi-GPU terms against Megatron-LM's code (time-audit, snapshot d98e8a64)", () => {
  const link = { name: '100GB/s', gbps: 800, latencyUs: 0 };   // ms = bytes / 1e8
  const T = 8192, h = 4096, Vt = 128512 / 4;   // the vocabulary padded to 128·t, a quarter a rank
  const one = ((3 / 4) * 2 * T * h) / 1e8;   // one all-gather or reduce-scatter of T·h bf16 over 4 ranks: 0.50331648 ms
  // [m, n, k] of each column-parallel linear's forward: QKV, fc1, the output layer; backward dX = g(m, k, n), dW = g(k, n, m).
  const columns = { qkv: [T, (3 * h) / 4, h], fc1: [T, (4 * h) / 4, h], out: [T, Vt, h] } as const;
  const behind = (comm: number, gemm: number) => Math.max(0, comm - gemm);
  it("TP with SP: the column-parallel linears' backward all-gather and reduce-scatter run behind their dX and dW GEMMs (layers.py 670-711, async_op=True)", () => {
    const region = ([m, n, k]: readonly number[]) => 2 * one + one + behind(one, g(m, k, n)) + behind(one, g(k, n, m));
    const want = 32 * (region(columns.qkv) + region(columns.fc1)) + region(columns.out) + tpSmall(T, 4, 1e8, SEED_REPLICATED);
    const t = iterationTime(seed, { ...DEFAULT_PARALLEL, seqLength: T, tensorParallel: 4, sequenceParallel: true }, { link });
    expect(term(t, 'tp-comm')).toBeCloseTo(want, 6);
    expect(want).toBeLessThan((32 * 10 + 4) * one * 0.9);   // the old model: every collective exposed
  });
  it("TP without SP: the column's all-reduce of its input gradient runs behind its dW GEMM; the row's all-reduce has an identity backward", () => {
    const region = ([m, n, k]: readonly number[]) => 2 * one + behind(2 * one, g(k, n, m));
    const want = 32 * (region(columns.qkv) + region(columns.fc1)) + region(columns.out) + tpSmall(T, 4, 1e8);   // no replicated gradients without SP
    const t = iterationTime(seed, { ...DEFAULT_PARALLEL, seqLength: T, tensorParallel: 4 }, { link });
    expect(term(t, 'tp-comm')).toBeCloseTo(want, 6);
  });
});

describe("TP's small all-reduces (cross_entropy.py:130, :146, :150; finalize_model_grads.py:416-476, called at :661)", () => {
  const lat = { name: 'lat', gbps: 8, latencyUs: 1000 };   // 1 GB/s and 1 ms a message
  it('the cross-entropy: three all-reduces of T fp32 values over t ranks, each 2(t − 1) messages: latency plus bytes', () => {
    const x = timeDims(seed, { ...DEFAULT_PARALLEL, seqLength: 8192, tensorParallel: 4, sequenceParallel: true }, F);
    expect(crossEntropyAllReducesMs(x, lat)).toBeCloseTo(3 * (2 * (3 / 4) * 4 * 8192 / 1e6 + 2 * 3), 9);   // 0.147456 ms of bytes + 18 ms of latency
    expect(allReduceMs(lat, 4e6, 4)).toBeCloseTo(2 * (3 + 3), 9);
    expect(crossEntropyAllReducesMs(timeDims(seed, { ...DEFAULT_PARALLEL, seqLength: 8192 }, F), lat)).toBe(0);   // TP = 1: no collective
  });
  it("sequence parallelism's replicated parameters: the norms, row-parallel biases and router whole on each TP rank, the routed experts' fc2 biases over EP, the final norm on the last stage, not the position table", () => {
    const tp4 = { ...DEFAULT_PARALLEL, seqLength: 8192, tensorParallel: 4, sequenceParallel: true };
    expect(stageParameters(seed, tp4).replicated).toBe(SEED_REPLICATED);
    expect(stageParameters(seed, { ...tp4, pipelineParallel: 2 }, 'first').replicated).toBe(16 * 6 * 4096);
    expect(stageParameters(seed, { ...tp4, pipelineParallel: 2 }, 'last').replicated).toBe(16 * 6 * 4096 + 2 * 4096);
    // with linear biases and 8 experts at EP = 2: the router's (h + 1)·E, each of the 4 local experts' fc2 bias h
    const moe = { ...seed, moe: { numExperts: 8, routerTopk: 2 } };
    expect(stageParameters(moe, { ...tp4, dataParallel: 2, expertParallel: 2 }).replicated).toBe(32 * (4 * 4096 + 4096 + 4097 * 8 + 4 * 4096) + 2 * 4096);
  });
  it("the step's tp-comm says so (its amounts: the SP and no-SP tests below)", () => {
    const what = (sp: boolean) => iterationTime(seed, { ...DEFAULT_PARALLEL, seqLength: 8192, tensorParallel: 4, sequenceParallel: sp }, { link: lat }).terms.find((t) => t.name === 'tp-comm')!.what;
    expect(what(true)).toContain("the cross-entropy's all-reduces; with sequence parallelism, once a step, the replicated parameters' gradients (lat)");
    expect(what(false)).toContain("the cross-entropy's all-reduces (lat)");
  });
});

describe("what Megatron-LM does once a step when there are gradient ranks (time-audit)", () => {
  it("DP·CP > 1: the gradient buffer is scaled by 1/(DP·CP) before its reduction (param_and_grad_buffer.py 666-667, average_in_collective off): 8 B a parameter held, once a step", () => {
    const par: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 4096 };
    const P = stageParameters(seed, par).perGpu, ms = (8 * P) / (H200.bandwidthGBs.copy * 1e6);
    const grads = (p: ParallelConfig, mb = 1) => term(iterationTime(seed, p, { link: L, microBatches: mb }), 'gradients');
    expect(grads({ ...par, dataParallel: 2 }) - grads(par)).toBeCloseTo(ms, 9);
    expect(grads({ ...par, contextParallel: 2 }) - grads(par)).toBeCloseTo(ms, 9);
    // once a step: four micro batches add four main-gradient accumulations, one scaling
    expect(grads({ ...par, dataParallel: 2 }, 4) - grads(par, 4)).toBeCloseTo(ms, 9);
  });
});

describe('MoE op names (time-audit)', () => {
  it("one local expert a rank (EP = the expert count) is named in the singular", () => {
    const names = moeOps(timeDims(moeModel, moePar(8), F), moeModel.moe, 8).map((o) => o.name);
    expect(names).toContain('experts fc1 (1 expert, 8 over EP = 8)');
    expect(moeOps(timeDims(moeModel, moePar(1), F), moeModel.moe, 1).map((o) => o.name)).toContain('experts fc1 (8 experts)');
  });
});
