/**
 * The memory model (src/memory/model.ts) and the settings comparison (src/memory/compare.ts) by hand where
 * no measured run reaches (TP, SP, pipelines, interleaving, fp32 residual, MoE with TP, the PyTorch stack's
 * smaller terms): each test pins a path that a mutation review (a helper, 2026-12-05: 59 mutations, 36 passed
 * every test before) could change without any test failing; the mutation each kills is named beside it
 * (M…, C…). These follow the model's reading of Megatron-LM's and PyTorch's code, not a run.
 * s = 8192, h = 1024, a = 16, V = 32000, L = 8, b = 1.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { configFromLog, parseMegatronLog, parseMegatronLogs } from '../src/memory/megatron.js';
import { predictFromLog } from '../src/memory/compare.js';
import { DEFAULT_PARALLEL, EXPERTS_UNSCALED, ModelConfig, ParallelConfig, ROUTER_INPUT, layerTerms, memoryBreakdown, parameterCount, stageMemory } from '../src/memory/model.js';
import { memoryDiff, setupDiff } from '../src/memory/compare.js';
import { termGroup } from '../src/memory/trace.js';

const gpt: ModelConfig = { numLayers: 8, hiddenSize: 1024, numAttentionHeads: 16, vocabSize: 32000, untieEmbeddings: true };
/** The torch-amp harness's model shape (no dropout, no position embedding). */
const torch: ModelConfig = { ...gpt, attentionDropout: 0, hiddenDropout: 0, positionEmbedding: 'none' };
const par = (o: Partial<ParallelConfig> = {}): ParallelConfig => ({ ...DEFAULT_PARALLEL, seqLength: 8192, ...o });
const term = <T extends { name: string; bytes: number }>(ts: T[], name: string): T => {
  const t = ts.find((x) => x.name === name);
  if (!t) throw new Error(`no term '${name}' in ${ts.map((x) => x.name).join(', ')}`);
  return t;
};
const s = 8192, h = 1024, a = 16, V = 32000, L = 8, sh = s * h;
/** Final LayerNorm input 2sh + output layer input 2sh + fp32 softmax 4sV (Megatron-LM, t = 1, untied). */
const LOSS_AND_OUTPUT = 2 * sh + 2 * sh + 4 * s * V + 9 * s; // the cross-entropy's saved masked target and mask: 9·s·b

describe('torch-amp stack terms', () => {
  it('CP = 1 stores the attention output once (M4: copy without CP)', () => {
    const r = memoryBreakdown(torch, par({ stack: 'torch-amp' }));
    expect(r.perLayer.map((x) => x.name)).not.toContain('attention output copy (ring merge, reshaped for the projection)');
    // LN1 4 + QKV in 2 + QKV out 6 + proj 2 + LN2 4 + MLP in 2 + GeLU in 8 + fc2 in 8 = 36·s·h, + LSE 4·a·s
    expect(r.perLayerBytes).toBe(36 * sh + 4 * a * s);
  });
  it('a recomputed MLP keeps its checkpoint input as fp32 LayerNorm output (M5)', () => {
    const r = memoryBreakdown(torch, par({ stack: 'torch-amp', recompute: 'selective', recomputeModules: ['core_attn', 'mlp'] }));
    expect(term(r.perLayer, 'MLP input').bytes).toBe(4 * sh);
  });
  it("DDP's gradient buckets with DP > 1 at CP = 1 (M16)", () => {
    const r = memoryBreakdown(torch, par({ stack: 'torch-amp', dataParallel: 2 }));
    expect(r.gradientBucketBytes).toBe(4 * r.parametersPerGpu);
  });
  it('autocast copies: none of the MLP when mlp is recomputed (M32), none of block-recomputed layers (M33)', () => {
    const copies = (o: Partial<ParallelConfig>) => term(memoryBreakdown(torch, par({ stack: 'torch-amp', ...o })).outside, 'autocast bf16 weight copies (held until backward)').bytes;
    // attention 4h² a layer, the output layer V·h: 2·(8·4·1048576 + 32000·1024) = 132644864
    expect(copies({ recompute: 'selective', recomputeModules: ['mlp'] })).toBe(2 * (L * 4 * h * h + V * h));
    // block/3: 5 stored layers of 12h²: 2·(5·12·1048576 + 32768000) = 191365120
    expect(copies({ recompute: 'full', recomputeMethod: 'block', recomputeNumLayers: 3 })).toBe(2 * (5 * 12 * h * h + V * h));
  });
  it('full recompute keeps the layer input in the fp32 residual width (M13)', () => {
    expect(layerTerms(torch, par({ stack: 'torch-amp', recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1 }))[0].bytes).toBe(4 * sh);
  });
});

describe('--fp32-residual-connection (M14, M13)', () => {
  it('LayerNorm inputs, the final LayerNorm input and a checkpointed layer input in fp32', () => {
    const r = memoryBreakdown(gpt, par({ fp32Residual: true }));
    expect(term(r.perLayer, 'LayerNorm 1 input').bytes).toBe(4 * sh);
    expect(term(r.perLayer, 'LayerNorm 2 input').bytes).toBe(4 * sh);
    expect(term(r.outside, 'final LayerNorm input').bytes).toBe(4 * sh);
    expect(layerTerms(gpt, par({ fp32Residual: true, recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1 }))[0].bytes).toBe(4 * sh);
  });
});

describe('MoE terms and parameters with TP = 2 and sequence parallelism', () => {
  const moe: ModelConfig = { ...gpt, moe: { numExperts: 4, routerTopk: 2, ffnHiddenSize: 2048 } };
  const k = 2, E = 4, fe = 2048, t = 2;
  it('router over the SP shard, permuted tokens whole, experts over TP (M7, M9, M10, M44)', () => {
    const r = memoryBreakdown(moe, par({ tensorParallel: t, sequenceParallel: true }));
    expect(term(r.perLayer, ROUTER_INPUT).bytes).toBe((2 * sh) / t);                                    // 8388608
    expect(term(r.perLayer, 'router scores (fp32, top-k and auxiliary loss)').bytes).toBe((8 * s * E) / t); // 131072
    expect(term(r.perLayer, "permuted tokens (experts' fc1 input)").bytes).toBe(2 * s * k * h);          // 33554432
    expect(term(r.perLayer, 'experts: GeLU input').bytes).toBe((2 * s * k * fe) / t);                     // 33554432
    expect(term(r.perLayer, EXPERTS_UNSCALED).bytes).toBe((2 * s * k * fe) / t);                       // GeLU: never fused with a scale
  });
  it('routed experts split over TP too (M48); what every TP rank holds whole is not: norms, the row-parallel biases, the router, the learned position table', () => {
    const r = memoryBreakdown(moe, par({ tensorParallel: t, sequenceParallel: true }));
    // Per layer two LayerNorms (2h each), the attention output's bias (h), the router's weight and bias ((h + 1)·E),
    // each routed expert's fc2 bias (h: RowParallelLinear's, output-sized); the position table (s·h: learned, the
    // GPT default) and the final LayerNorm (2h) once.
    const whole = L * (4 * h + h + (h + 1) * E + E * h) + s * h + 2 * h;
    expect(r.parametersPerGpu).toBe((parameterCount(moe, s) - whole) / t + whole);
  });
  it("add_bias_linear gives the router a bias of E (router.py:67) and each routed expert fc1's and fc2's (mlp.py:225, :247)", () => {
    const biases = (x: ModelConfig) => parameterCount(x, s) - parameterCount({ ...x, biasLinear: false }, s);
    // a layer: attention's Q, K, V and output biases 4h, the router's E, each expert's fc1 f_e (2·f_e with SwiGLU) and fc2 h
    expect(biases(moe)).toBe(L * (4 * h + E + E * (fe + h)));
    expect(biases({ ...moe, swiglu: true })).toBe(L * (4 * h + E + E * (2 * fe + h)));
  });
  it("--moe-router-enable-expert-bias, read from a log's dump: each router's expert_bias (fp32) and tokens-per-expert counts (bf16 after Float16Module), each a 512-byte block at least, kept between steps (router.py TopKRouter)", () => {
    // r11 of the campaign: 16 experts, 3 MoE layers, no expert bias; its dump with the flag (and the sigmoid score function it needs) turned on
    const log = readFileSync('bench/results/2026-12-02-megatron-campaign/runs/r11.log', 'utf8');
    const on = log.replace(/^( {2}moe_router_enable_expert_bias \.+) False$/m, '$1 True').replace(/^( {2}moe_router_score_function \.+) softmax$/m, '$1 sigmoid');
    expect(on).not.toBe(log);
    const predict = (text: string) => predictFromLog(parseMegatronLog(text, 'r11'), null) as { totalBytes: number; model: ModelConfig };
    const [off, with_] = [predict(log), predict(on)];
    expect(off.model.moe!.expertBias).toBeUndefined();
    expect(with_.model.moe).toMatchObject({ expertBias: true, scoreFunction: 'sigmoid' });
    // a dump with the bias and the softmax score function is one Megatron-LM refuses (TransformerConfig): so is it here
    const softmax = predictFromLog(parseMegatronLog(log.replace(/^( {2}moe_router_enable_expert_bias \.+) False$/m, '$1 True'), 'r11'), null);
    expect(softmax).toEqual({ error: expect.stringContaining('Megatron-LM refuses --moe-router-enable-expert-bias with the softmax score function') });
    // 4·16 = 64 and 2·16 = 32 bytes, each in a 512-byte block, in each of 3 layers
    expect(with_.totalBytes - off.totalBytes).toBe(3 * (512 + 512));
    const many: ModelConfig = { ...moe, moe: { ...moe.moe!, numExperts: 256, scoreFunction: 'sigmoid', expertBias: true } };
    const r = memoryBreakdown(many, par({ pipelineParallel: 2 }));
    const t = term(r.outside, 'router expert bias (fp32) and tokens per expert (bf16), kept between steps');
    expect(t.bytes).toBe((L / 2) * (1024 + 512)); // 4·256 = 1024 and 2·256 = 512 bytes a layer, L/p layers on a stage
    expect(t.betweenSteps).toBe(true);
    expect(t.formula).toBe('(4·E + 2·E bytes, each at least a 512-byte block)·L/p');
  });
  it('a capacity factor below 1 bounds the routed tokens; above 1 changes nothing (M8)', () => {
    const permuted = (cf: number) => term(layerTerms({ ...moe, moe: { ...moe.moe!, capacityFactor: cf } }, par()), "permuted tokens (experts' fc1 input)").bytes;
    expect(permuted(0.5)).toBe(2 * s * k * 0.5 * h); // 16777216
    expect(permuted(2)).toBe(2 * s * k * h);
  });
  it("recomputing 'moe' drops the shared expert too (M11)", () => {
    const shared: ModelConfig = { ...gpt, moe: { numExperts: 4, routerTopk: 2, sharedExpertSize: 1024 } };
    const names = (mods: ('moe' | 'shared_experts')[]) => layerTerms(shared, par({ recompute: 'selective', recomputeModules: mods })).map((x) => x.name);
    expect(term(layerTerms(shared, par()), 'shared expert: GeLU input').bytes).toBe(2 * s * 1024);
    expect(names(['moe']).filter((n) => n.startsWith('shared expert: '))).toEqual([]);
    expect(names(['shared_experts']).filter((n) => n.startsWith('shared expert: '))).toEqual([]);
  });
  it("distributed optimizer: experts over DP·CP/EP (M18); without it nothing is sharded (M43)", () => {
    const X = (L * E * (2 * h * fe + fe + h)) / 2; // routed experts per GPU at EP = 2: 8 layers · 4 · (2h·f_e + f_e + h) / 2 = 67158016
    const d = memoryBreakdown(moe, par({ dataParallel: 4, contextParallel: 2, expertParallel: 2, distributedOptimizer: true }));
    expect(d.optimizerBytes).toBeCloseTo(12 * ((d.parametersPerGpu - X) / 8 + X / 4), 0);
    const n = memoryBreakdown(moe, par({ dataParallel: 2, expertParallel: 2 }));
    expect(n.optimizerBytes).toBe(12 * n.parametersPerGpu);
  });
});

describe('pipeline stages: micro batches in flight outside the layers', () => {
  const labels = "labels and loss mask (the last stage's batch)";
  it("1F1B's last stage holds one micro batch's labels (M22), interleaved PP of them (M19)", () => {
    expect(term(stageMemory(gpt, par({ pipelineParallel: 4 }), 'last').outside, labels).bytes).toBe(8 * s);
    expect(term(stageMemory(gpt, par({ pipelineParallel: 4, virtualStages: 2 }), 'last').outside, labels).bytes).toBe(8 * s * 4);
  });
});

describe('the input ids a TP rank keeps for the embedding backward', () => {
  const masked = 'masked input ids (int64) and out-of-range mask (bool) of the vocab-parallel embedding';
  const outside = (o: Partial<ParallelConfig>) => stageMemory(gpt, par(o), 'first').outside;
  it('TP > 1: the masked int64 ids and the bool mask (tensor_parallel/layers.py:344-347, :362, :365), 9 B a token per micro batch in flight, whole under SP', () => {
    expect(term(outside({ tensorParallel: 2 }), masked).bytes).toBe(9 * s);
    expect(termGroup(term(outside({ tensorParallel: 2 }), masked))).toBe('embedding'); // compared with a trace's embedding saves
    expect(term(outside({ tensorParallel: 4, sequenceParallel: true, contextParallel: 2 }), masked).bytes).toBe((9 * s) / 2);
    expect(term(outside({ tensorParallel: 2, pipelineParallel: 4 }), masked).bytes).toBe(9 * s * 4);
  });
  it('TP = 1: F.embedding saves the ids themselves, no copy', () => {
    expect(outside({}).map((x) => x.name)).not.toContain(masked);
  });
});

describe("Megatron-LM's local attention at TP > 1 and with a pipeline", () => {
  const local = (o: Partial<ParallelConfig>) => par({ flashAttention: false, ...o });
  it('the boolean mask once per micro batch in flight (M23)', () => {
    expect(term(stageMemory(gpt, local({ pipelineParallel: 2 }), 'first').outside, 'attention mask (boolean, shared by the layers)').bytes).toBe(s * s * 2);
  });
  it('the QKᵀ buffer (M24) and the three scores gradients (M27) over TP', () => {
    const r = memoryBreakdown(gpt, local({ tensorParallel: 2 }));
    expect(term(r.outside, 'QKᵀ scores buffer (unfused attention, kept between steps)').bytes).toBe((2 * a * s * s) / 2); // 1073741824
    // 6·a·s²/t + (2 + 2)·s·h upstream = 3221225472 + 33554432
    expect(term(r.transients, "last layer's attention backward (unfused)").bytes).toBe((6 * a * s * s) / 2 + 4 * sh);
  });
  it("a tied output weight's gradient is held only without a pipeline (M26)", () => {
    const tied = { ...gpt, untieEmbeddings: false };
    for (const stage of ['first', 'last'] as const)
      expect(term(stageMemory(tied, local({ pipelineParallel: 2 }), stage).transients, "last layer's attention backward (unfused)").bytes, stage).toBe(6 * a * s * s + 4 * sh);
    expect(term(memoryBreakdown(tied, local({})).transients, "last layer's attention backward (unfused)").bytes).toBe(6 * a * s * s + 4 * sh + 2 * V * h);
  });
  it('full uniform recompute: the attention backward frees only the loss and output (M28)', () => {
    const r = memoryBreakdown(gpt, local({ recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1 }));
    expect(term(r.transients, "last layer's attention backward (unfused)").freedBytes).toBe(LOSS_AND_OUTPUT);
  });
});

describe('what each recompute transient has freed at its moment', () => {
  it("the MLP's recompute runs before the last layer's stored terms are freed (M51)", () => {
    const r = memoryBreakdown(gpt, par({ recompute: 'selective', recomputeModules: ['core_attn', 'mlp'] }));
    expect(term(r.transients, 'recomputing the MLP of one layer in backward').freedBytes).toBe(LOSS_AND_OUTPUT);
  });
  it("block recompute with a pipeline: the other stages' stored layers are not counted as freed (M29)", () => {
    const p = par({ pipelineParallel: 2, recompute: 'full', recomputeMethod: 'block', recomputeNumLayers: 3 });
    const name = 'recomputing one checkpointed chunk (1 layer) in backward';
    // the last stage's loss terms include its labels and loss mask, 8·s (part 'loss' there)
    expect(term(stageMemory(gpt, p, 'last').transients, name).freedBytes).toBe(LOSS_AND_OUTPUT + 8 * s);
    expect(term(stageMemory(gpt, p, 'first').transients, name).freedBytes).toBe(0);
  });
});

describe("validate's refusals not pinned elsewhere", () => {
  it('names the flag', () => {
    expect(() => memoryBreakdown(gpt, par({ recomputeModules: ['mlp'] }))).toThrow(/--recompute-modules mlp needs --recompute-granularity selective/); // M37
    expect(() => memoryBreakdown(gpt, par({ recompute: 'selective', recomputeMethod: 'uniform' }))).toThrow(/--recompute-method uniform needs --recompute-granularity full/); // M39
    expect(() => memoryBreakdown(torch, par({ stack: 'torch-amp', distributedOptimizer: true }))).toThrow(/--use-distributed-optimizer is Megatron-LM's/); // M41
    expect(() => memoryBreakdown(gpt, par({ recompute: 'full', recomputeMethod: 'uniform' }))).toThrow(/--recompute-granularity full needs --recompute-num-layers N/); // M42
    expect(() => memoryBreakdown({ ...gpt, hiddenDropout: 1 }, par())).toThrow(/--hidden-dropout must be a probability in \[0, 1\), got 1/); // M49
    expect(() => memoryBreakdown({ ...gpt, moe: { numExperts: 8, routerTopk: 9 } }, par())).toThrow(/--moe-router-topk 9 is beyond/); // M50
  });
});

describe('memoryDiff and setupDiff', () => {
  const row = { seq_len: 8192, tp: 1, cp: 1, pp: 1, sp: false, recompute: 'none', micro_batch: 1, activation_gib: null, total_gib: 50, fits: true, source: 'measured: x' };
  const setup = (p: Partial<ParallelConfig> = {}, m: ModelConfig = gpt) => ({ model: m, parallel: { ...DEFAULT_PARALLEL, ...p } });
  it('the micro batches a step are said as their count, whatever the micro batch and DP of either setup (C3)', () => {
    expect(memoryDiff({ ...row, pp: 4 }, setup({ dataParallel: 2, numMicrobatches: 2 }), setup({ dataParallel: 2, numMicrobatches: 8 }), 'compared'))
      .toEqual(['--global-batch-size for 2 micro batches (compared: 8 micro batches)']);
    // The same global batch (4) over micro batches of 2 and of 1: 2 and 4 micro batches, different totals at PP = 4, named (a review's case).
    expect(memoryDiff({ ...row, pp: 4, micro_batch: 2 }, setup({ microBatchSize: 2, numMicrobatches: 2 }), setup({ numMicrobatches: 4 }), 'compared'))
      .toEqual(['--global-batch-size for 2 micro batches (compared: 4 micro batches)']);
    // As many micro batches with another micro batch size: no difference said.
    expect(setupDiff(setup({ microBatchSize: 2, numMicrobatches: 4 }), setup({ numMicrobatches: 4 }), 'compared')).toEqual([]);
  });
  it('names fp32 residual (C5)', () => {
    expect(memoryDiff(row, setup({ fp32Residual: true }), setup(), 'compared')).toEqual(['--fp32-residual-connection (compared: no --fp32-residual-connection)']);
  });
  it('settings that move the total only together are named, and a setting that moves nothing is not (C1)', () => {
    expect(memoryDiff(row, setup(), setup({ dataParallel: 4, distributedOptimizer: true, cpCommType: 'a2a' }), 'compared'))
      .toEqual(['no --use-distributed-optimizer (compared: --use-distributed-optimizer)', '--data-parallel-size 1 (compared: 4)']);
  });
  it('a default that follows another setting is named once that setting is taken from the log (the query groups follow the heads)', () => {
    // The log: 16 heads, 1 query group; compared: 1 head, groups by default (1). Taking the heads alone left the groups at 16.
    const log = setup({}, { ...gpt, numQueryGroups: 1 }), ref = setup({}, { ...gpt, numAttentionHeads: 1 });
    expect(memoryDiff(row, log, ref, 'compared'))
      .toEqual(['--num-attention-heads 16 (compared: 1)', '--num-query-groups 1 (compared: its default, 16 with the flags before)']);
  });
  it('a default made explicit is no difference (C4)', () => {
    expect(setupDiff(setup(), setup({}, { ...gpt, numQueryGroups: 16 }), 'compared')).toEqual([]);
  });
});

describe("the vocabulary's padding in the parameters (Megatron-LM's padded_vocab_size)", () => {
  it('the word embedding and the output layer have 128·TP-padded rows, as the logits do', () => {
    // vocab_utils.py calculate_padded_vocab_size pads to a multiple of make_vocab_size_divisible_by (128) × TP, and
    // gpt_builders.py:89 builds GPTModel (VocabParallelEmbedding, the output ColumnParallelLinear) with padded_vocab_size.
    // At TP = 8: 50257 → 51200 rows, 49152 stays; untied, two tables of h columns, each over the 8 TP ranks.
    const at = (vocabSize: number) => memoryBreakdown({ ...gpt, vocabSize }, par({ tensorParallel: 8, sequenceParallel: true }));
    const [odd, even] = [at(50257), at(49152)];
    expect(odd.parametersPerGpu - even.parametersPerGpu).toBe(((51200 - 49152) * h * 2) / 8); // 524288 (the model had 1105 rows: 282880)
    expect(odd.parameters - even.parameters).toBe((51200 - 49152) * h * 2);
    expect(odd.weightBytes + odd.gradientBytes + odd.optimizerBytes - (even.weightBytes + even.gradientBytes + even.optimizerBytes)).toBe(18 * 524288);
    // PyTorch's harness does not pad: its rows are the vocabulary's.
    expect(parameterCount({ ...torch, vocabSize: 50257 }, s, { tensorParallel: 1, stack: 'torch-amp' }) - parameterCount({ ...torch, vocabSize: 49152 }, s, { tensorParallel: 1, stack: 'torch-amp' })).toBe((50257 - 49152) * h * 2);
  });
});

describe("torch.optim.AdamW's optimizer step (torchOptimizer: Megatron-LM without Transformer Engine or Apex)", () => {
  const STEP = "optimizer step: torch.optim.AdamW's foreach temporary (Megatron-LM without Transformer Engine or Apex)";
  const step = (m: ModelConfig, o: Partial<ParallelConfig>, stage?: 'first' | 'last') => {
    const b = stage ? stageMemory(m, par({ torchOptimizer: true, ...o }), stage) : memoryBreakdown(m, par({ torchOptimizer: true, ...o }));
    return { b, t: term(b.transients, o.stack === 'torch-amp' ? STEP.replace('(Megatron-LM without Transformer Engine or Apex)', '(not fused)') : STEP) };
  };
  it('off by default (a fused Adam): no such transient', () => {
    expect(memoryBreakdown(gpt, par()).transients.map((x) => x.name)).not.toContain(STEP);
  });
  // Megatron-LM's undecayed group (optimizer/__init__.py:114-118: biases and 1-D parameters), gpt's a layer: two LayerNorms
  // (weight and bias, 2h each), QKV's and the output projection's biases (3h + h), fc1's and fc2's (4h + h); the final norm, 2h.
  const h = gpt.hiddenSize, layerUndecayed = 2 * 2 * h + (3 * h + h) + (4 * h + h), finalNorm = 2 * h;
  const UNDECAYED = gpt.numLayers * layerUndecayed + finalNorm;   // 108,544
  it('4 B a weight-decayed parameter the GPU steps (the larger of AdamW\'s two groups, stepped one after the other), with every stored activation released by then', () => {
    const { b, t } = step(gpt, { seqLength: 1024 });
    expect(UNDECAYED).toBe(108_544);
    expect(t.bytes).toBe(4 * (b.parametersPerGpu - UNDECAYED));
    expect(t.freedBytes).toBe(b.activationBytes);
    // at 1K the step is the peak: the state between steps and the temporary, not the activations
    expect(b.peakTransient?.name).toBe(STEP);
    expect(b.totalBytes).toBe(b.weightBytes + b.gradientBytes + b.optimizerBytes + b.workspaceBytes + 4 * (b.parametersPerGpu - UNDECAYED));
  });
  it("unfused attention's QKᵀ buffer outlives the step: it is not freed by then", () => {
    const { b, t } = step(gpt, { seqLength: 1024, flashAttention: false });
    expect(t.freedBytes).toBe(b.activationBytes - 2 * a * 1024 * 1024);
  });
  it("the distributed optimizer steps its shard only: dense over DP·CP, the experts over DP·CP/EP", () => {
    const { b, t } = step(gpt, { seqLength: 1024, dataParallel: 4, contextParallel: 2, distributedOptimizer: true });
    expect(t.bytes).toBeCloseTo((4 * (b.parametersPerGpu - UNDECAYED)) / 8, 3);
    expect(t.bytes).toBeCloseTo((b.optimizerBytes - 12 * (UNDECAYED / 8)) / 3, 3);   // 12 B of fp32 state a stepped parameter
  });
  it('each pipeline stage steps its own parameters (the last with the output layer), and the larger stage is the peak', () => {
    const first = step(gpt, { seqLength: 1024, pipelineParallel: 2 }, 'first'), last = step(gpt, { seqLength: 1024, pipelineParallel: 2 }, 'last');
    expect(first.t.bytes).toBe(4 * (first.b.parametersPerGpu - (gpt.numLayers / 2) * layerUndecayed));
    expect(last.t.bytes).toBe(4 * (last.b.parametersPerGpu - (gpt.numLayers / 2) * layerUndecayed - finalNorm));
    expect(memoryBreakdown(gpt, par({ seqLength: 1024, pipelineParallel: 2, torchOptimizer: true })).totalBytes).toBe(Math.max(first.b.totalBytes, last.b.totalBytes));
  });
  it('the PyTorch AMP stack takes it too where asked: its fp32 parameters, 4 B each, all in its one group (cp_memory.py:166)', () => {
    const { b, t } = step(torch, { seqLength: 1024, stack: 'torch-amp' });
    expect(t.bytes).toBe(4 * b.parametersPerGpu);
    expect(t.freedBytes).toBe(b.activationBytes);
  });
});

describe("where the eighth draw's r00 peaks, traced (bench/results/2026-12-06-heldout8-followup)", () => {
  it("in the optimizer step, with three micro batches and one: Adam's moments made there (8 B a parameter) and the foreach temporary (4 B a weight-decayed one)", () => {
    for (const id of ['r00', 'r00-mb1']) {
      const t = JSON.parse(readFileSync(`bench/results/2026-12-06-heldout8-followup/runs/${id}.trace.json`, 'utf8'));
      expect(t.history.peak_frames[0], id).toBe('megatron/core/optimizer/optimizer.py:786 step_with_ready_grads');
      const at = t.history.live_at_peak.find((x: { site: string }) => x.site === 'megatron/core/optimizer/optimizer.py:786 step_with_ready_grads');
      // its parameters (the log's count, the model's too), of them 3 layers × (QKV 3072 + 2·256, projection 3072, MLP
      // 12288 + 3072 biases; two RMSNorms of 3072) + the final norm = 87,552 biases and norm weights, stepped apart
      const res = parseMegatronLog(readFileSync(`bench/results/2026-12-06-heldout8-followup/runs/${id}.log`, 'utf8'), id), c = configFromLog(res);
      if ('error' in c) throw new Error(c.error);
      const P = parameterCount(c.model, c.par.seqLength, c.par), noDecay = 3 * (3072 + 2 * 256 + 3072 + 12288 + 3072 + 2 * 3072) + 3072;
      expect([P, noDecay, c.par.torchOptimizer]).toEqual([643388928, 87552, true]);
      expect(at.bytes, id).toBe(8 * P + 4 * (P - noDecay));
    }
  });
});

describe('the optimizer-step transient over every stored Megatron-LM run (docs/memory.md: of 314, five move)', () => {
  it('moves r00 of the eighth draw and its two traced runs, r05 of the fourth and the fifth\'s deep r00, each toward its peak', () => {
    const R = 'bench/results', moved: string[] = [];
    let runs = 0;
    for (const f of (readdirSync(R, { recursive: true }) as string[]).filter((x) => x.endsWith('.log')).sort()) {
      const text = readFileSync(`${R}/${f}`, 'utf8');
      if (!text.includes('---- arguments ----')) continue;
      for (const res of parseMegatronLogs(text, f)) {
        const a = predictFromLog(res, null), b = predictFromLog({ ...res, torchOptimizer: false }, null);
        if ('error' in a || 'error' in b) continue;
        runs++;
        if (a.totalBytes === b.totalBytes) continue;
        moved.push(f);
        expect(Math.abs(a.totalError!), f).toBeLessThan(Math.abs(b.totalError!));
      }
    }
    expect(runs).toBe(314);
    expect(moved).toEqual(['2026-12-03-time-heldout4/runs/r05.log', '2026-12-03-time-heldout5-deep/runs/r00.log', '2026-12-06-heldout8-followup/runs/r00-mb1.log',
      '2026-12-06-heldout8-followup/runs/r00.log', '2026-12-06-time-heldout8/runs/r00.log']);
  });
});
