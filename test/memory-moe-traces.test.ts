/**
 * The memory model's stored terms against the saved-tensor traces of the MoE-extras draw
 * (bench/results/2026-12-07-moe-extras, one H100): what a checkpointed attention core keeps (r04),
 * term by term, as src/memory/trace.ts groups them.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { configFromLog, parseMegatronLog } from '../src/memory/megatron.js';
import { DEFAULT_PARALLEL, DISPATCHER_KEEPS, EXPERTS_UNSCALED, ModelConfig, ParallelConfig, ROPE_TABLE, ROUTER_INPUT, layerTerms, memoryBreakdown, positionEmbedding } from '../src/memory/model.js';
import { MegatronTrace, PartComparison, comparePeakParts, compareTrace } from '../src/memory/trace.js';
import { campaignRows } from '../bench/megatron/campaignTable.js';

const DIR = 'bench/results/2026-12-07-moe-extras/runs';

/** A traced run: its breakdown from its own log's argument dump, its trace and its measured peak (bytes). */
function traced(id: string) {
  const res = parseMegatronLog(readFileSync(`${DIR}/${id}.log`, 'utf8'), id);
  const c = configFromLog(res);
  if ('error' in c) throw new Error(`${id}: ${c.error}`);
  const trace = JSON.parse(readFileSync(`${DIR}/${id}.trace.json`, 'utf8')) as MegatronTrace;
  return { b: memoryBreakdown(c.model, c.par), trace, peak: res.point.peakMaxAllocatedGiB! * 2 ** 30 };
}

const COPY = 'Q reshaped from the grouped QKV output (a copy)';

describe("a recomputed attention core's Q copy (grouped-query attention, no RoPE: attention.py get_query_key_value_tensors)", () => {
  it("r04 (a16 g4, learned positions, core_attn recomputed): the attention core's saved bytes are the trace's, the copy 2·s·b·h a layer", () => {
    const { b, trace, peak } = traced('r04');
    const core = compareTrace(b, trace, peak).find((g) => g.group === 'attention core')!;
    // the checkpoint's three inputs a layer: Q [4096,1,16,64] (the copy) and K, V [4096,1,4,64] (views of the QKV output)
    expect(core.traced).toBe(6 * (2 * 4096 * 1024 + 2 * 4096 * (1024 + 2 * 256)));
    expect(core.model).toBe(core.traced);
    // live at the peak, one copy a layer, allocated where Q is reshaped
    const live = (trace.history as { live_at_peak: { site: string; bytes: number; count: number }[] }).live_at_peak
      .find((x) => x.site === 'megatron/core/transformer/attention.py:1918 get_query_key_value_tensors')!;
    expect(live).toMatchObject({ bytes: 6 * 2 * 4096 * 1024, count: 6 });
    expect(b.perLayer.find((t) => t.name === COPY)?.bytes).toBe(2 * 4096 * 1024);
  });

  it('only where the reshape copies and the checkpoint keeps it: not with RoPE, all heads their own K/V, one group a TP rank, or the core stored', () => {
    const m: ModelConfig = { numLayers: 2, hiddenSize: 1024, numAttentionHeads: 16, numQueryGroups: 4, vocabSize: 32000, positionEmbedding: 'learned_absolute' };
    const p: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 4096, flashAttention: false, recompute: 'selective', recomputeModules: ['core_attn'] }; // Megatron-LM's local core
    const has = (mm: ModelConfig, pp: ParallelConfig) => layerTerms(mm, pp).some((t) => t.name === COPY);
    expect(has(m, p)).toBe(true);
    expect(has(m, { ...p, tensorParallel: 2, sequenceParallel: true })).toBe(true); // 2 groups a rank
    expect(has(m, { ...p, tensorParallel: 4, sequenceParallel: true })).toBe(false); // 1 group a rank: a view
    expect(has({ ...m, positionEmbedding: 'rope' }, p)).toBe(false);
    expect(has({ ...m, numQueryGroups: 16 }, p)).toBe(false);
    expect(has({ ...m, numQueryGroups: 1 }, p)).toBe(false);
    expect(has(m, { ...p, recompute: 'none' })).toBe(false);
  });
});

/** A traced run of any stored folder: its breakdown and its trace's saved entries of the routed experts (their modules). */
function experts(path: string) {
  const res = parseMegatronLog(readFileSync(`${path}.log`, 'utf8'), path);
  const c = configFromLog(res);
  if ('error' in c) throw new Error(`${path}: ${c.error}`);
  const trace = JSON.parse(readFileSync(`${path}.trace.json`, 'utf8')) as MegatronTrace;
  const saved = trace.saved.filter((x) => /\.mlp\.experts\./.test(x.module));
  const terms = layerTerms(c.model, c.par).filter((t) => t.name.startsWith('experts: ') || t.name === "permuted tokens (experts' fc1 input)");
  return { model: c.model, saved, traced: saved.reduce((s, x) => s + x.bytes, 0), counted: c.model.numLayers * terms.reduce((s, t) => s + t.bytes, 0), names: terms.map((t) => t.name) };
}

describe("the routed experts' scaling by the router probability (mlp.py per_token_scale)", () => {
  const CAMPAIGN = 'bench/results/2026-12-02-megatron-campaign/runs';
  it('fused SwiGLU (r05 of the MoE-extras draw): weighted_bias_swiglu_impl scales inside its kernel, no scaled copy is kept, and the model counts none', () => {
    const r = experts(`${DIR}/r05`);
    expect(r.model.swiglu && r.model.biasActivationFusion).toBe(true);
    expect(r.saved.some((x) => x.site.startsWith('megatron/core/fusions/fused_bias_swiglu.py:335 weighted_bias_swiglu_impl'))).toBe(true);
    expect(r.saved.some((x) => x.site.startsWith('megatron/core/transformer/mlp.py'))).toBe(false);
    expect(r.names).not.toContain(EXPERTS_UNSCALED);
    // fc1's input, the fused kernel's input (gate and up) and fc2's input, 3 layers of 8192 tokens; the trace's one more
    // is the kernel's saved probabilities ([T, 1] bf16, 16 KiB a layer), which the model leaves out
    expect(r.traced - r.counted).toBe(3 * 2 * 8192);
  });
  it('unfused (SwiGLU with --no-bias-swiglu-fusion, GeLU): the product keeps the activation output (mlp.py:340) beside fc2 input, and the model counts it', () => {
    for (const id of ['r27', 'r44', 'r11', 'r16']) {
      const r = experts(`${CAMPAIGN}/${id}`);
      expect(r.model.swiglu ? r.model.biasActivationFusion : false, id).toBe(false);
      expect(r.saved.some((x) => x.site.startsWith('megatron/core/transformer/mlp.py:340')), id).toBe(true);
      expect(r.names, id).toContain(EXPERTS_UNSCALED);
      // within the probabilities the trace keeps beside ([T·k, 1]) and the routed tokens' rounding
      expect(Math.abs(r.traced - r.counted) / r.counted, id).toBeLessThan(0.003);
    }
  });
});

describe("a MoE layer's input is one tensor: the router's, a shared expert's and a moe checkpoint's (moe_utils.py:1382)", () => {
  it('counted once, as the router input: a MoE layer keeps its input, the router scores, the permuted tokens and the experts (by hand)', () => {
    const s = 4096, h = 1024, E = 4, k = 2, fe = 2048;
    const m: ModelConfig = { numLayers: 2, hiddenSize: h, numAttentionHeads: 16, vocabSize: 32000, hiddenDropout: 0, biasLinear: false, moe: { numExperts: E, routerTopk: k, ffnHiddenSize: fe } };
    const p: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: s, flashAttention: false };
    const mlp = layerTerms(m, p).filter((t) => t.part === 'mlp');
    expect(mlp.map((t) => t.name)).toEqual([ROUTER_INPUT, 'router scores (fp32, top-k and auxiliary loss)', "permuted tokens (experts' fc1 input)",
      'experts: GeLU input', 'experts: second linear input', EXPERTS_UNSCALED]);
    // the layer's bf16 input 2·s·h, the fp32 scores 8·s·E, the k copies of each token 2·s·k·h, and the GeLU experts'
    // fc1 output, fc2 input and the unscaled activation output, 2·s·k·f_e each
    expect(mlp.reduce((x, t) => x + t.bytes, 0)).toBe(2 * s * h + 8 * s * E + 2 * s * k * h + 3 * 2 * s * k * fe);
    // recomputing the MoE layer keeps that one tensor as the checkpoint's input
    const moe = layerTerms(m, { ...p, recompute: 'selective', recomputeModules: ['moe'] }).filter((t) => t.part === 'mlp');
    expect(moe.map((t) => [t.name, t.bytes])).toEqual([[ROUTER_INPUT, 2 * s * h]]);
  });
  it("the traced MoE runs that store their MoE layers and drop no token: the model's MoE group is the trace's within 0.05% of the peak", () => {
    const CAMPAIGN = 'bench/results/2026-12-02-megatron-campaign/runs';
    for (const path of [`${CAMPAIGN}/r11`, `${CAMPAIGN}/r16`, `${CAMPAIGN}/r27`, `${CAMPAIGN}/r44`, `${DIR}/r05`]) {
      const res = parseMegatronLog(readFileSync(`${path}.log`, 'utf8'), path);
      const c = configFromLog(res);
      if ('error' in c) throw new Error(`${path}: ${c.error}`);
      expect(c.model.moe?.capacityFactor, path).toBeUndefined();
      const trace = JSON.parse(readFileSync(`${path}.trace.json`, 'utf8')) as MegatronTrace;
      // the router saves the layer input (moe_utils.py:1460 router_gating_linear, or shared with the shared expert's checkpoint)
      expect(trace.saved.some((x) => x.module.endsWith('.mlp.router') && x.site.includes('router_gating_linear')), path).toBe(true);
      const g = compareTrace(memoryBreakdown(c.model, c.par), trace, res.point.peakMaxAllocatedGiB! * 2 ** 30).find((x) => x.group === 'mlp')!;
      // what is left: the router's top-k indices and the dispatcher's permutation indices (int64; the model counts the
      // latter once, among what the dispatcher keeps between steps, a static term: test/memory-traces-kept.test.ts)
      expect(Math.abs(g.ofPeak), `${path}: model ${g.model}, traced ${g.traced}`).toBeLessThan(0.0005);
    }
  });
});

describe("what a checkpoint that recomputes a MoE layer holds from its backward to the layer's next forward (random.py:657-669, token_dispatcher.py:331, :642)", () => {
  // r03's configuration of the campaign, by hand: 6 layers, h 512, s 16384, b 2, 4 experts top-1, allgather, core_attn and moe recomputed
  const s = 16384, b = 2, h = 512;
  const m: ModelConfig = { numLayers: 6, hiddenSize: h, numAttentionHeads: 4, numQueryGroups: 2, ffnHiddenSize: 1280, vocabSize: 18715, swiglu: true, biasLinear: false,
    biasActivationFusion: false, hiddenDropout: 0, attentionDropout: 0, positionEmbedding: 'rope', moe: { numExperts: 4, routerTopk: 1, ffnHiddenSize: 640, dispatcher: 'allgather' } };
  const p: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: s, microBatchSize: b, flashAttention: false, recompute: 'selective', recomputeModules: ['core_attn', 'moe'] };
  const transient = (x: ReturnType<typeof memoryBreakdown>, name: RegExp) => x.transients.find((t) => name.test(t.name))!;
  it("between steps each MoE checkpoint's input (the pre-MLP norm's bf16 output, s·b × h) and its gradient; in backward, those whose backward has run", () => {
    const input = 2 * s * b * h; // 32 MiB
    const r = memoryBreakdown(m, p);
    expect(r.heldAfterBackward?.bytes).toBe(6 * 2 * input); // 384 MiB
    // the last layer's attention core is recomputed after that layer's MoE checkpoint ran its backward
    expect(transient(r, /^recomputing the attention core/).heldBytes).toBe(2 * input);
    expect(transient(r, /^last layer's attention backward/).heldBytes).toBe(2 * input);
    // the MoE layer's own recomputation comes first, and the forward's end and the loss come after every next forward
    for (const name of [/^recomputing the MoE layer/, /^end of forward/, /^cross-entropy backward/]) expect(transient(r, name).heldBytes, String(name)).toBeUndefined();
    // in the optimizer step all of them (--torch-optimizer, as a Megatron-LM run without TE or Apex)
    expect(memoryBreakdown(m, { ...p, torchOptimizer: true }).optimizerStep?.heldBytes).toBe(6 * 2 * input);
    // no checkpoint of a MoE layer, no leftover: the layer's input is no leaf (nor in a shared expert's checkpoint)
    expect(memoryBreakdown(m, { ...p, recomputeModules: ['core_attn'] }).heldAfterBackward).toBeNull();
    expect(memoryBreakdown({ ...m, moe: { ...m.moe!, sharedExpertSize: 512 } }, { ...p, recomputeModules: ['shared_experts'] }).heldAfterBackward).toBeNull();
    expect(memoryBreakdown({ ...m, moe: undefined }, { ...p, recomputeModules: ['core_attn'] }).heldAfterBackward).toBeNull();
  });
  it('full recompute: one checkpoint a chunk, its input the chunk input; the last chunk recomputed in backward has the gradients of those before beside it', () => {
    const input = 2 * s * b * h;
    const full = (method: 'uniform' | 'block', n: number) => memoryBreakdown(m, { ...p, recompute: 'full', recomputeModules: undefined, recomputeMethod: method, recomputeNumLayers: n });
    const uniform = full('uniform', 2);
    expect(uniform.heldAfterBackward?.bytes).toBe(3 * 2 * input); // ⌈6/2⌉ chunks
    expect(transient(uniform, /^recomputing one checkpointed chunk/).heldBytes).toBe(2 * input);
    const block = full('block', 4);
    expect(block.heldAfterBackward?.bytes).toBe(4 * 2 * input);
    expect(transient(block, /^recomputing one checkpointed chunk/).heldBytes).toBe(3 * input);
    // one chunk: nothing recomputed before it
    expect(transient(full('uniform', 6), /^recomputing one checkpointed chunk/).heldBytes).toBeUndefined();
  });
  it('the traced runs that recompute their MoE layers hold between steps what the dense runs do besides it: the static part as close as theirs, and the transient within 0.2% of the peak', () => {
    const rows = campaignRows();
    const shortBy = (parts: PartComparison[]) => Math.abs(parts[0].model - parts[0].measured);
    const dense = Math.max(...rows.filter((r) => !r.moe && r.parts).map((r) => shortBy(r.parts!))); // 22.1 MiB (r20)
    const CAMPAIGN = 'bench/results/2026-12-02-megatron-campaign/runs';
    for (const path of [`${CAMPAIGN}/r03`, `${CAMPAIGN}/r07`, `${CAMPAIGN}/r40`, `${DIR}/r01`, `${DIR}/r04`]) {
      const res = parseMegatronLog(readFileSync(`${path}.log`, 'utf8'), path);
      const c = configFromLog(res);
      if ('error' in c) throw new Error(`${path}: ${c.error}`);
      const trace = JSON.parse(readFileSync(`${path}.trace.json`, 'utf8')) as MegatronTrace, peak = res.point.peakMaxAllocatedGiB! * 2 ** 30;
      const b = memoryBreakdown(c.model, c.par);
      expect(b.heldAfterBackward, path).not.toBeNull();
      const parts = comparePeakParts(b, trace, peak);
      const why = `${path}: ${parts.map((x) => `${x.part} ${((x.model - x.measured) / 2 ** 20).toFixed(1)} MiB`).join(', ')}`;
      expect(shortBy(parts), why).toBeLessThanOrEqual(dense);
      expect(Math.abs(parts[2].ofPeak), why).toBeLessThan(0.002);
    }
  });
});

describe('the MoE held-out draw (bench/results/2026-12-07-moe-held, seed 3640: predicted before it ran)', () => {
  const rows = campaignRows('bench/results/2026-12-07-moe-held');
  const predicted = new Map(readFileSync('bench/results/2026-12-07-moe-held/predicted.csv', 'utf8').trim().split('\n').slice(1)
    .map((l) => [l.split(',')[0], Number(l.split('",')[1].split(',')[0])] as const));

  it('the model predicts today what the folder recorded before the runs but for the terms counted since (the frozen figures are the judged ones)', () => {
    // since: RoPE's cached table and what the token dispatcher keeps on itself (test/memory-traces-kept.test.ts)
    for (const r of rows) {
      const c = configFromLog(parseMegatronLog(readFileSync(`bench/results/2026-12-07-moe-held/runs/${r.id}.log`, 'utf8'), r.id));
      if ('error' in c) throw new Error(c.error);
      const since = memoryBreakdown(c.model, c.par).outside.filter((t) => t.name === ROPE_TABLE || t.name.startsWith(DISPATCHER_KEEPS));
      expect(since.length, r.id).toBe(positionEmbedding(c.model) === 'rope' ? 2 : 1);
      expect(Math.round(r.modelGib! * 2 ** 30) - since.reduce((x, t) => x + t.bytes, 0), r.id).toBe(predicted.get(r.id));
    }
  });

  it('totals within 2% of every peak; the static part (with the held bytes) within 0.5% of every peak', () => {
    expect(rows.map((r) => r.id)).toEqual(['r00', 'r01', 'r02', 'r03', 'r04', 'r05']);
    for (const r of rows) {
      expect(Math.abs(r.error!), r.id).toBeLessThan(0.02);
      expect(Math.abs(r.parts!.find((p) => p.part === 'static')!.ofPeak), r.id).toBeLessThan(0.005);
    }
  });

  it('stored and transient are measured only where the trace saved one micro batch (savedIsOneMicroBatch), there within 0.5%', () => {
    const one = rows.filter((r) => r.parts!.length === 3).map((r) => r.id);
    expect(one).toEqual(['r02', 'r05']);   // the runs of one micro batch a step; the others' traces span two
    for (const r of rows.filter((x) => one.includes(x.id))) for (const p of r.parts!) expect(Math.abs(p.ofPeak), `${r.id} ${p.part}`).toBeLessThan(0.005);
  });

  it("without the held bytes, the static part of the three that hold them would be off by more than the criterion", () => {
    for (const r of rows.filter((x) => ['r00', 'r01', 'r05'].includes(x.id))) {
      const c = configFromLog(parseMegatronLog(readFileSync(`bench/results/2026-12-07-moe-held/runs/${r.id}.log`, 'utf8'), r.id));
      if ('error' in c) throw new Error(c.error);
      const held = memoryBreakdown(c.model, c.par).heldAfterBackward!.bytes, s = r.parts!.find((p) => p.part === 'static')!;
      expect(Math.abs(s.ofPeak - held / (r.measuredGib! * 2 ** 30)), r.id).toBeGreaterThan(0.015);
    }
  });
});
