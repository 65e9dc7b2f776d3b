import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PARALLEL, GIB, NoLengthError, defaultLines, ModelConfig, PRESETS, ParallelConfig, layerTerms, memoryBreakdown, oomPoints,
  parameterCount, parseLines, stageMemory, sweep, sweepGaps,
} from '../src/memory/model.js';

/** The paper's model configurations (Korthikanti et al. 2022, Table 3), s = 2048, t = 8. */
const PAPER: [string, ModelConfig][] = [
  ['22B', { numLayers: 48, hiddenSize: 6144, numAttentionHeads: 64 }],
  ['175B (GPT-3)', { numLayers: 96, hiddenSize: 12288, numAttentionHeads: 96 }],
  ['530B', { numLayers: 105, hiddenSize: 20480, numAttentionHeads: 128 }],
  ['1T', { numLayers: 128, hiddenSize: 25600, numAttentionHeads: 160 }],
];
const paperPar = (o: Partial<ParallelConfig> = {}): ParallelConfig => ({
  ...DEFAULT_PARALLEL, seqLength: 2048, microBatchSize: 1, tensorParallel: 8, flashAttention: false, ...o,
});
const perLayer = (m: ModelConfig, p: ParallelConfig) => layerTerms(m, p).reduce((a, t) => a + t.bytes, 0);

describe('activation memory per layer: the paper formulas, term by term', () => {
  for (const [name, m] of PAPER) {
    const s = 2048, b = 1, h = m.hiddenSize, a = m.numAttentionHeads, t = 8;
    const sbh = s * b * h;
    it(`${name}: no parallelism, TP, TP+SP, selective, full`, () => {
      expect(perLayer(m, paperPar({ tensorParallel: 1 }))).toBeCloseTo(sbh * (34 + (5 * a * s) / h), 0);
      expect(perLayer(m, paperPar())).toBeCloseTo(sbh * (10 + 24 / t + (5 * a * s) / (h * t)), 0);
      expect(perLayer(m, paperPar({ sequenceParallel: true }))).toBeCloseTo(sbh * (34 / t + (5 * a * s) / (h * t)), 0);
      expect(perLayer(m, paperPar({ recompute: 'selective' }))).toBeCloseTo(sbh * (10 + 24 / t), 0);
      expect(perLayer(m, paperPar({ recompute: 'selective', sequenceParallel: true }))).toBeCloseTo((sbh * 34) / t, 0);
      expect(perLayer(m, paperPar({ recompute: 'full', tensorParallel: 1 }))).toBe(2 * sbh);
    });
  }

  it('attention 11sbh + 5as²b, MLP 19sbh, LayerNorms 4sbh', () => {
    const m = PAPER[1][1];
    const terms = layerTerms(m, paperPar({ tensorParallel: 1 }));
    const by = (part: string) => terms.filter((t) => t.part === part).reduce((a, t) => a + t.bytes, 0);
    const s = 2048, h = m.hiddenSize, a = m.numAttentionHeads;
    expect(by('attention')).toBe(11 * s * h + 5 * a * s * s);
    expect(by('mlp')).toBe(19 * s * h);
    expect(by('layernorm')).toBe(4 * s * h);
  });

  it('FlashAttention drops the s² terms and stores the f32 LSE instead', () => {
    const m = PAPER[0][1];
    const fa = layerTerms(m, paperPar({ tensorParallel: 1, flashAttention: true }));
    expect(fa.map((t) => t.name)).toContain('softmax LSE (FlashAttention, f32)');
    expect(fa.map((t) => t.name)).not.toContain('softmax output');
    const s = 2048, h = m.hiddenSize, a = m.numAttentionHeads;
    expect(fa.reduce((x, t) => x + t.bytes, 0)).toBe(34 * s * h + 4 * a * s);
  });

  it('no dropout stores no masks; GQA and SwiGLU change exactly their terms', () => {
    const base: ModelConfig = { numLayers: 1, hiddenSize: 1024, numAttentionHeads: 16 };
    const s = 4096, h = 1024;
    const noDrop = perLayer({ ...base, attentionDropout: 0, hiddenDropout: 0 }, { ...DEFAULT_PARALLEL, seqLength: s });
    expect(noDrop).toBe(32 * s * h + 4 * 16 * s);
    const gqa = perLayer({ ...base, numQueryGroups: 4 }, { ...DEFAULT_PARALLEL, seqLength: s });
    expect(perLayer(base, { ...DEFAULT_PARALLEL, seqLength: s }) - gqa).toBe(4 * s * (h - h / 4)); // K and V at 1/4 width
    const swiglu = perLayer({ ...base, swiglu: true, ffnHiddenSize: 2048 }, { ...DEFAULT_PARALLEL, seqLength: s });
    expect(swiglu).toBe(18 * s * h + 6 * s * 2048 + 4 * 16 * s); // gate+up 4sf, second input 2sf
  });
});

describe('context parallelism, pipeline, weights', () => {
  const m = PRESETS['seed-32L-4096h'].model;
  it('with FlashAttention every stored activation scales as 1/CP', () => {
    const one = memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: 131072, tensorParallel: 4, sequenceParallel: true });
    for (const cp of [2, 4, 8]) {
      const r = memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: 131072, tensorParallel: 4, sequenceParallel: true, contextParallel: cp });
      expect(r.activationBytes).toBeCloseTo(one.activationBytes / cp, 3);
      expect(r.ringBufferBytes).toBe(((16 + 2) * (131072 / cp) * 4096) / 4); // p2p: K/V and dK/dV slots and the dQ buffer
    }
  });

  it('without FlashAttention the scores of local queries cover all keys: s²/CP', () => {
    const p = { ...DEFAULT_PARALLEL, seqLength: 8192, flashAttention: false };
    const a1 = layerTerms(m, p).find((t) => t.name === 'softmax output')!.bytes;
    const a4 = layerTerms(m, { ...p, contextParallel: 4 }).find((t) => t.name === 'softmax output')!.bytes;
    expect(a1).toBe(2 * 32 * 8192 * 8192);
    expect(a4).toBe(a1 / 4);
  });

  it('memory grows with sequence length and shrinks with recomputation', () => {
    let last = 0;
    for (const s of [4096, 8192, 16384, 32768]) {
      const r = memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: s, flashAttention: false });
      expect(r.activationBytes).toBeGreaterThan(last);
      last = r.activationBytes;
      for (const rc of [{ recompute: 'selective' }, { recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1 }] as const)
        expect(memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: s, flashAttention: false, ...rc }).activationBytes).toBeLessThan(r.activationBytes);
    }
  });

  it('pipeline: the first stage holds L layers (1F1B), × (1 + (p−1)/(p·v)) interleaved', () => {
    const base = { ...DEFAULT_PARALLEL, seqLength: 4096, pipelineParallel: 4 };
    expect(memoryBreakdown(m, base).layersHeld).toBe(32);
    expect(memoryBreakdown(m, { ...base, virtualStages: 2 }).layersHeld).toBeCloseTo(32 * (1 + 3 / 8), 10);
  });

  it('recomputation never raises the peak: at short sequences the backward holds the tied output weight\'s gradient without recompute too', () => {
    // s < h/2 with FlashAttention at CP = 1: the tied weight's 2·V·h/t gradient was counted only in recompute's transients.
    for (const s of [512, 1024, 2048, 8192])
      for (const tp of [1, 2]) {
        const base = { ...DEFAULT_PARALLEL, seqLength: s, tensorParallel: tp };
        const none = memoryBreakdown(m, base).totalBytes;
        expect(memoryBreakdown(m, { ...base, recompute: 'selective' }).totalBytes, `s=${s} TP=${tp}`).toBeLessThanOrEqual(none);
        expect(memoryBreakdown(m, { ...base, recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1 }).totalBytes, `s=${s} TP=${tp}`).toBeLessThanOrEqual(none);
      }
  });

  it('pipeline with fewer micro batches a step than stages: the first stage holds only those in flight (× m/p)', () => {
    const base = { ...DEFAULT_PARALLEL, seqLength: 4096, pipelineParallel: 4 };
    expect([1, 2, 4, 8].map((n) => stageMemory(m, { ...base, numMicrobatches: n }, 'first').layersHeld)).toEqual([8, 16, 32, 32]);
    expect(memoryBreakdown(m, { ...base, numMicrobatches: 1 }).totalBytes).toBeLessThan(memoryBreakdown(m, base).totalBytes);
    expect(memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: 4096, numMicrobatches: 1 }).layersHeld).toBe(32);   // PP = 1: every layer
    expect(() => memoryBreakdown(m, { ...base, numMicrobatches: 0 })).toThrow(/micro batches a step/);
    // The terms kept per micro batch outside the layers too (ids, the embedding dropout mask).
    const mask = (n?: number) => stageMemory(m, { ...base, numMicrobatches: n }, 'first').outside.find((o) => o.name === 'embedding dropout mask')!;
    expect(mask(1).bytes * 4).toBe(mask().bytes);
    expect(mask(1).formula).toMatch(/·m/);
    // Interleaved: micro batches in whole groups of PP (Megatron-LM refuses others); the in-flight count stays the full one.
    expect(() => memoryBreakdown(m, { ...base, virtualStages: 2, numMicrobatches: 2 })).toThrow(/interleaved schedule runs micro batches in groups of --pipeline-model-parallel-size: 2 micro batches/);
    expect(stageMemory(m, { ...base, virtualStages: 2, numMicrobatches: 8 }, 'first').layersHeld).toBeCloseTo(32 * (1 + 3 / 8), 10);
  });

  it('pipeline: the last stage, with the output layer, the logits and the loss, is worked out too, and the peak is the larger stage', () => {
    // Llama-3 8B at 128K on PP = 2 (an adversarial review: advise said it fit two H200s, given as --hbm-gib 141, their
    // data sheet's GB; PyTorch reports 139.8 GiB, fitting even less): the last
    // stage's fp32 cross-entropy logits alone are 4·s·V = 62.6 GiB.
    const l = PRESETS['llama3-8b'].model, V = 128256, h = 4096;
    const par = { ...DEFAULT_PARALLEL, seqLength: 131072, pipelineParallel: 2, virtualStages: 2, recompute: 'full' as const, recomputeMethod: 'uniform' as const, recomputeNumLayers: 1 };
    const first = stageMemory(l, par, 'first'), last = stageMemory(l, par, 'last'), r = memoryBreakdown(l, par);
    expect(first.stage).toBe('first');
    expect(last.stage).toBe('last');
    expect(r.stage).toBe('last');
    expect(r.totalBytes).toBe(last.totalBytes);
    expect(r.otherStage).toEqual({ stage: 'first', totalBytes: first.totalBytes });
    expect(last.totalBytes).toBeGreaterThan(first.totalBytes);
    expect(last.totalBytes / GIB).toBeGreaterThan(141); // past an H200 (139.8 GiB), and past the 141 the review gave
    // Its parameters: 16 layers, the output layer and the final norm; the first stage's: 16 layers and the embedding.
    const layer = (parameterCount(l, 131072) - 2 * V * h - h) / 32;
    expect(last.parametersPerGpu).toBeCloseTo(16 * layer + V * h + h, 0);
    expect(first.parametersPerGpu).toBeCloseTo(16 * layer + V * h, 0);
    // The loss's terms on the last stage only; the embedding's on the first only.
    expect(last.outside.map((o) => o.part)).toContain('loss');
    expect(first.outside.map((o) => o.part)).not.toContain('loss');
    expect(last.outside.find((o) => o.name === 'embedding dropout mask')).toBeUndefined();
    expect(last.transients.some((t) => t.part === 'loss')).toBe(true);
    expect(first.transients.some((t) => t.part === 'loss')).toBe(false);
    // Tied embeddings: the last stage holds a copy of the word embedding as its output layer.
    const tied = { ...l, untieEmbeddings: false };
    expect(stageMemory(tied, par, 'last').parametersPerGpu).toBeCloseTo(16 * layer + V * h + h, 0);
    // Layers in flight: 1F1B's last stage one micro batch (L/PP layers); interleaved p − (p−1)/v of them.
    const plain = { ...DEFAULT_PARALLEL, seqLength: 4096, pipelineParallel: 4 };
    expect(stageMemory(m, plain, 'last').layersHeld).toBe(8);
    expect(stageMemory(m, { ...plain, virtualStages: 2 }, 'last').layersHeld).toBeCloseTo(8 * (4 - 3 / 2), 10);
    // Without a pipeline there is one stage, all of it.
    expect(memoryBreakdown(m, { ...plain, pipelineParallel: 1 }).stage).toBe('all');
    expect(memoryBreakdown(m, { ...plain, pipelineParallel: 1 }).otherStage).toBeUndefined();
  });

  it('full recompute with an interleaved pipeline works within each model chunk (L/(PP·VP) layers), as Megatron-LM does', () => {
    // PP = 2, VP = 2 of 32 layers: chunks of 8. block/4 recomputes the first 4 of each of the stage's 2 chunks.
    const base = { ...DEFAULT_PARALLEL, seqLength: 8192, pipelineParallel: 2, virtualStages: 2, recompute: 'full' as const };
    const groups = (method: 'block' | 'uniform', n: number) => stageMemory(m, { ...base, recomputeMethod: method, recomputeNumLayers: n }, 'first').layerGroups;
    const inFlight = 2 * (1 + 1 / 4);
    expect(groups('block', 4).map((g) => [g.label, g.layers / inFlight])).toEqual([['recomputed layers (block, first 4 of each model chunk)', 8], ['stored layers', 8]]);
    expect(groups('uniform', 3).map((g) => g.layers / inFlight)).toEqual([2 * Math.ceil(8 / 3)]);
    // block/8 checkpoints every layer of a chunk one by one: each layer's input kept, as uniform/1.
    expect(stageMemory(m, { ...base, recomputeMethod: 'block', recomputeNumLayers: 8 }, 'first').activationBytes)
      .toBeCloseTo(stageMemory(m, { ...base, recomputeMethod: 'uniform', recomputeNumLayers: 1 }, 'first').activationBytes, 0);
    // N above a chunk's layers recomputes the whole chunk (Megatron-LM has no bound there); above a stage's, refused.
    expect(stageMemory(m, { ...base, recomputeMethod: 'block', recomputeNumLayers: 12 }, 'first').activationBytes)
      .toBe(stageMemory(m, { ...base, recomputeMethod: 'block', recomputeNumLayers: 8 }, 'first').activationBytes);
    expect(() => memoryBreakdown(m, { ...base, recomputeMethod: 'block', recomputeNumLayers: 17 })).toThrow(/--recompute-num-layers 17 is more than the 16 layers of a pipeline stage/);
    // As many micro batches a step as stages: the interleaved schedule runs every forward first, p layer-worths on each rank.
    const none = { ...base, recompute: 'none' as const };
    expect(stageMemory(m, { ...none, numMicrobatches: 2 }, 'first').layersHeld).toBe(32);
    expect(stageMemory(m, { ...none, numMicrobatches: 2 }, 'last').layersHeld).toBe(32);
    expect(stageMemory(m, { ...none, numMicrobatches: 4 }, 'first').layersHeld).toBeCloseTo(32 * (1 + 1 / 4), 10);
    expect(() => memoryBreakdown(m, { ...base, pipelineParallel: 4, virtualStages: 3 })).toThrow(/--num-layers 32 is not divisible by --pipeline-model-parallel-size 4 × 3 virtual stages/);
  });

  it('pipeline: the first stage holds its L/PP layers and the whole input embedding (not 1/PP of every parameter)', () => {
    // Llama-3 8B (untied, vocabulary 128256): 32 layers, 8.03 B parameters; PP = 8 puts 4 layers and the
    // 0.525 B embedding on the first stage, 1.398 B (an adversarial review, by hand and by Megatron-LM's estimate).
    const l = PRESETS['llama3-8b'].model, V = 128256, h = 4096;
    const total = parameterCount(l, 8192), norm = h;   // RMSNorm: one vector
    const layer = (total - 2 * V * h - norm) / 32;
    // Each TP rank holds a layer's two RMSNorms (h each) whole; no biases, no position table (RoPE).
    const whole = 2 * h;
    for (const [pp, tp] of [[8, 1], [4, 2]] as const) {
      const r = memoryBreakdown(l, { ...DEFAULT_PARALLEL, seqLength: 8192, pipelineParallel: pp, tensorParallel: tp });
      expect(r.parametersPerGpu, `PP=${pp} TP=${tp}`).toBeCloseTo(((32 / pp) * (layer - whole) + V * h) / tp + (32 / pp) * whole, 0);
    }
    expect(memoryBreakdown(l, { ...DEFAULT_PARALLEL, seqLength: 8192, pipelineParallel: 8 }).parametersPerGpu / 1e9).toBeCloseTo(1.398, 3);
    const allWhole = 32 * whole + norm;   // and the final norm, on the one stage
    expect(memoryBreakdown(l, { ...DEFAULT_PARALLEL, seqLength: 8192, tensorParallel: 2 }).parametersPerGpu).toBeCloseTo((total - allWhole) / 2 + allWhole, 0);
  });

  it('the learned position table is whole on every TP rank (Megatron-LM\'s serial torch.nn.Embedding), the word embedding split', () => {
    // The seed's GPT (learned positions) at 128K: the table is 131072·4096 = 0.537 B parameters on each of the 8 TP ranks,
    // not an eighth of them; with RoPE there is none.
    const gpt = PRESETS['seed-32L-4096h'].model, s = 131072, h = 4096;
    const at = (m: typeof gpt, tp: number) => memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: s, tensorParallel: tp, sequenceParallel: tp > 1 }).parametersPerGpu;
    const rope = { ...gpt, positionEmbedding: 'rope' as const };
    for (const tp of [1, 2, 8]) expect(at(gpt, tp) - at(rope, tp), `TP=${tp}`).toBe(s * h);
    expect(at({ ...gpt, maxPositionEmbeddings: 2 * s }, 8) - at(rope, 8)).toBe(2 * s * h);
  });

  it('MoE: the distributed optimizer shards the experts\' state over DP·CP/EP ranks only; EP must divide DP·CP', () => {
    const moe = { ...PRESETS['llama3-8b'].model, moe: { numExperts: 8, routerTopk: 2 } };
    const par = { ...DEFAULT_PARALLEL, seqLength: 4096, dataParallel: 8, expertParallel: 8, distributedOptimizer: true };
    const r = memoryBreakdown(moe, par);
    const experts = (32 * 8 * 3 * 4096 * 14336) / 8;   // routed experts per GPU: E/EP of each layer's 8, SwiGLU
    // Dense parameters' 12 bytes over the 8 DP ranks; the experts' over DP/EP = 1 rank: not sharded.
    expect(r.optimizerBytes).toBeCloseTo(12 * ((r.parametersPerGpu - experts) / 8 + experts), 0);
    expect(memoryBreakdown(moe, { ...par, expertParallel: 2 }).optimizerBytes).toBeCloseTo(12 * ((memoryBreakdown(moe, { ...par, expertParallel: 2 }).parametersPerGpu - experts * 4) / 8 + (experts * 4) / 4), 0);
    expect(() => memoryBreakdown(moe, { ...par, dataParallel: 1 })).toThrow(/--expert-model-parallel-size 8 must divide --data-parallel-size × --context-parallel-size, here 1$/);
    expect(memoryBreakdown(moe, { ...par, dataParallel: 4, contextParallel: 2, seqLength: 8192 }).totalBytes).toBeGreaterThan(0);
  });

  it('parameters: GPT-3 175B and Llama-3 8B; 18 bytes per parameter, distributed optimizer shards 12', () => {
    expect(parameterCount(PRESETS['gpt3-175b'].model, 2048) / 175e9).toBeCloseTo(1, 1);
    expect(parameterCount(PRESETS['llama3-8b'].model, 8192) / 8.03e9).toBeCloseTo(1, 1);
    const r = memoryBreakdown(m, { ...DEFAULT_PARALLEL, tensorParallel: 8 });
    expect(r.weightBytes + r.gradientBytes + r.optimizerBytes).toBeCloseTo(18 * r.parametersPerGpu, 0);
    const d = memoryBreakdown(m, { ...DEFAULT_PARALLEL, tensorParallel: 8, dataParallel: 2, contextParallel: 2, seqLength: 8192, distributedOptimizer: true });
    expect(d.optimizerBytes).toBeCloseTo((12 * d.parametersPerGpu) / 4, 0);
  });

  it('knobs for non-Megatron stacks: fp32 parameters (16 B/param), no learned positions', () => {
    const base = { ...DEFAULT_PARALLEL, seqLength: 8192 };
    const amp = memoryBreakdown({ ...m, paramPrecision: 'amp' }, base);
    expect(amp.weightBytes + amp.gradientBytes + amp.optimizerBytes).toBeCloseTo(16 * amp.parametersPerGpu, 0);
    expect(parameterCount({ ...m, positionEmbedding: 'learned_absolute' }, 8192) - parameterCount({ ...m, positionEmbedding: 'none' }, 8192)).toBe(8192 * 4096);
  });

  it('sweep: no-CP goes out of memory first, CP=4 lasts longest, recompute never costs memory', () => {
    const base = { ...DEFAULT_PARALLEL, tensorParallel: 8, sequenceParallel: true, flashAttention: true };
    const pts = sweep(m, base, [4096, 8192, 16384, 32768, 65536, 131072, 262144], defaultLines(m), 80);
    const oom = oomPoints(pts);
    expect(Object.keys(oom)).toEqual(defaultLines(m).map((l) => l.label));
    expect(oom['CP=4']!).toBeGreaterThan(oom['CP=1']!);
    expect(oom['CP=4 + recompute']!).toBeGreaterThanOrEqual(oom['CP=4']!);
    for (const p of pts) expect(p.fits).toBe(p.totalGib <= 80);
    for (const p of pts) expect(p.totalGib * GIB).toBeCloseTo(p.breakdown.totalBytes, 0);
  });

  it('--lines: a line given twice, by any spelling, is refused naming both (it drew one column twice, its CSV rows repeated under one label)', () => {
    expect(() => parseLines('1,1', m)).toThrow("--lines: '1' is the line '1' again (");
    expect(() => parseLines('2, 4:recompute,4:full:uniform/1', m)).toThrow(/--lines: '4:full:uniform\/1' is the line '4:recompute' again \(.*\): give each line once/);
    expect(() => parseLines('4:none,4', m)).toThrow(/'4' is the line '4:none' again/);
    expect(parseLines('1,1:recompute,2', m).map((l) => l.label)).toHaveLength(3);
  });

  it('--lines: spaces around an item\'s \':\' are read as around its commas; a bad item is quoted trimmed', () => {
    expect(parseLines(' 1 , 2 : selective , 4 :full: uniform/1', m)).toEqual(parseLines('1,2:selective,4:full:uniform/1', m));
    expect(() => parseLines('1, x : selective', m)).toThrow("--lines: 'x : selective' does not start with a context-parallel size");
  });

  it("CP with Megatron-LM's local (unfused) attention is refused, and a sweep leaves its CP lines out with the reason", () => {
    const local = { ...DEFAULT_PARALLEL, tensorParallel: 8, sequenceParallel: true, flashAttention: false };
    expect(() => memoryBreakdown(m, { ...local, contextParallel: 2 })).toThrow(/only in Transformer Engine's flash or fused attention: unfused attention \(--transformer-impl local, or --no-use-flash-attn\)/);
    expect(memoryBreakdown(m, { ...local, contextParallel: 2, stack: 'torch-amp', tensorParallel: 1, sequenceParallel: false }).totalBytes).toBeGreaterThan(0);
    const lens = [4096, 8192];
    const pts = sweep(m, local, lens, defaultLines(m), 80);
    expect([...new Set(pts.map((p) => p.line))]).toEqual(defaultLines(m).filter((l) => (l.overrides.contextParallel ?? 1) === 1).map((l) => l.label));
    const gaps = sweepGaps(local, lens, defaultLines(m));
    expect(gaps.map((g) => [g.line, g.reason, g.lengths])).toEqual(defaultLines(m).filter((l) => (l.overrides.contextParallel ?? 1) > 1).map((l) => [l.label, 'attention', lens]));
    expect(() => sweepGaps(local, lens, parseLines('2,4', m))).toThrow(/no line of the sweep can run: Megatron-LM runs context parallelism only/);
    // MoE with TP needs sequence parallelism (Megatron-LM's arguments.py).
    const moe = { ...m, moe: { numExperts: 4, routerTopk: 2 } };
    expect(() => memoryBreakdown(moe, { ...DEFAULT_PARALLEL, tensorParallel: 2, sequenceParallel: false })).toThrow(/MoE layers with tensor parallelism only with --sequence-parallel/);
    expect(memoryBreakdown(moe, { ...DEFAULT_PARALLEL, tensorParallel: 2, sequenceParallel: true }).totalBytes).toBeGreaterThan(0);
  });

  it('rejects impossible configurations with the flag name', () => {
    expect(() => memoryBreakdown(m, { ...DEFAULT_PARALLEL, tensorParallel: 3 })).toThrow(/--num-attention-heads 32 is not divisible by --tensor-model-parallel-size 3/);
    expect(() => memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: 1000, contextParallel: 3 })).toThrow(/--seq-length 1000 is not divisible by 2·--context-parallel-size = 6$/);
    // Megatron-LM's splits: 2·CP chunks (1002 = 2 · 501: CP 2 cannot take it), and s/CP over TP with SP.
    expect(() => memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: 1002, contextParallel: 2 })).toThrow(/^Megatron-LM splits the sequence into 2·CP chunks, two per CP rank: --seq-length 1002 is not divisible by 2·--context-parallel-size = 4$/);
    // The PyTorch stack's ring splits as its head-tail load balancer does, and is named (it was called Megatron-LM's).
    expect(() => memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: 1002, contextParallel: 2, stack: 'torch-amp' })).toThrow(/^PyTorch's context_parallel \(its head-tail load balancing\) splits the sequence into 2·CP chunks, two per CP rank: --seq-length 1002 is not divisible by 2·--context-parallel-size = 4$/);
    expect(() => memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: 1001, tensorParallel: 2, sequenceParallel: true })).toThrow(/^--sequence-parallel splits each CP rank's s\/CP tokens over the TP ranks: --seq-length 1001 \/ --context-parallel-size 1 is not divisible by --tensor-model-parallel-size 2$/);
    expect(() => memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: 65540, contextParallel: 4, tensorParallel: 2, sequenceParallel: true })).toThrow(/2·--context-parallel-size = 8/);
    expect(memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: 1001, tensorParallel: 2, sequenceParallel: false }).totalBytes).toBeGreaterThan(0);
    expect(() => memoryBreakdown(m, { ...DEFAULT_PARALLEL, seqLength: 0 })).toThrow(/--seq-length must be a positive integer/);
    expect(() => memoryBreakdown({ ...m, numQueryGroups: 5 }, DEFAULT_PARALLEL)).toThrow(/--num-query-groups 5/);
    // GQA: K/V groups split over TP, and over CP under a2a (Ulysses splits K/V heads too).
    expect(() => memoryBreakdown({ ...m, numQueryGroups: 4 }, { ...DEFAULT_PARALLEL, tensorParallel: 8 })).toThrow(/--num-query-groups 4 is not divisible by --tensor-model-parallel-size 8/);
    const a2a = { ...DEFAULT_PARALLEL, seqLength: 8192, contextParallel: 8, cpCommType: 'a2a' as const };
    expect(() => memoryBreakdown({ ...m, numQueryGroups: 4 }, a2a)).toThrow(/--cp-comm-type a2a needs the heads \(32\) and K\/V groups \(4\) per tensor-parallel rank divisible by --context-parallel-size 8/);
    expect(memoryBreakdown({ ...m, numQueryGroups: 8 }, a2a).totalBytes).toBeGreaterThan(0);
  });
});

describe('sweep lines and the lengths their CP size cannot take', () => {
  it('a line keeps the lengths its CP divides; the gaps are named; a line with none is refused', () => {
    const m = PRESETS['seed-32L-4096h'].model, lens = [4096, 6144, 12288];
    const lines = parseLines('1,6', m);
    expect(sweepGaps(DEFAULT_PARALLEL, lens, lines)).toEqual([{ line: 'CP=6', cp: 6, lengths: [4096], reason: 'split',
      why: 'Megatron-LM splits the sequence into 2·CP chunks, two per CP rank: --seq-length 4096 is not divisible by 2·--context-parallel-size = 12' }]);
    expect(sweep(m, DEFAULT_PARALLEL, lens, lines, 80).filter((p) => p.line === 'CP=6').map((p) => p.config.seqLength)).toEqual([6144, 12288]);
    expect(() => sweepGaps(DEFAULT_PARALLEL, [4096, 8192], parseLines('1,3', m))).toThrow(/line 'CP=3': none of the sequence lengths \(4096, 8192\) splits over CP 3 .*choose lengths that are multiples of 6/);
    // Every such line is listed on the error (the page marks the lengths, naming them all); the message names the first.
    const e = (() => { try { sweepGaps(DEFAULT_PARALLEL, [4096, 8192], parseLines('1,3,2,5', m)); } catch (x) { return x; } })();
    expect(e).toBeInstanceOf(NoLengthError);
    expect((e as NoLengthError).lines).toEqual(['CP=3', 'CP=5']);
    expect((e as NoLengthError).message).toMatch(/^line 'CP=3': /);
  });
});

describe('memory chart', () => {
  it('each line ends at its first point that does not fit, drawn as a cross; the HBM line spans the x range', async () => {
    const { memoryChartConfig, formatTokens } = await import('../src/memory/chart.js');
    const { sweepRows } = await import('../src/memory/csv.js');
    const m = PRESETS['seed-32L-4096h'].model;
    const pts = sweep(m, { ...DEFAULT_PARALLEL, tensorParallel: 8, sequenceParallel: true }, [4096, 16384, 65536, 262144, 1048576], defaultLines(m), 80);
    const measured = [{ seq_len: 32768, tp: 8, cp: 1, pp: 1, sp: false, recompute: 'none', micro_batch: 1, activation_gib: null, total_gib: 61.2, fits: true, source: 'measured: x.log' }];
    const cfg = memoryChartConfig(sweepRows(pts, 80), measured, 80, 't');
    const byLabel = Object.fromEntries(cfg.data.datasets.map((d) => [d.label, d]));
    for (const l of defaultLines(m)) {
      const d = byLabel[l.label];
      const linePts = pts.filter((p) => p.line === l.label);
      const firstOom = linePts.findIndex((p) => !p.fits);
      expect(d.data.length).toBe(firstOom < 0 ? linePts.length : firstOom + 1);
      if (firstOom >= 0) expect((d.pointStyle as string[]).at(-1)).toBe('crossRot');
    }
    expect(byLabel['HBM 80 GiB'].data.map((p) => p.x)).toEqual([4096, 1048576]);
    expect(byLabel['measured: x.log'].data).toHaveLength(1);
    expect(formatTokens(1048576)).toBe('1M');
    expect(formatTokens(131072)).toBe('128K');
  });
  it('a legend item is a line sample in its line\'s dash with its mark, or a measured series\' mark (never its out-of-memory cross)', async () => {
    const { legendSwatch } = await import('../src/memory/chart.js');
    expect(legendSwatch({ showLine: true, pointStyle: ['crossRot', 'rect'], pointRadius: [9, 4] })).toEqual({ pointStyle: 'line', lineDash: [], mark: 'rect', markRadius: 4 });
    expect(legendSwatch({ showLine: true, borderDash: [6, 3], pointStyle: ['circle'], pointRadius: 4 })).toEqual({ pointStyle: 'line', lineDash: [6, 3], mark: 'circle', markRadius: 4 });
    expect(legendSwatch({ showLine: true, borderDash: [2, 4], pointStyle: 'line', pointRadius: 0 })).toEqual({ pointStyle: 'line', lineDash: [2, 4] }); // the HBM limit: no mark
    // Marks alone: no line sample (Chart.js would stretch the mark to the sample's width), the mark at most 5 px.
    expect(legendSwatch({ showLine: false, pointStyle: ['crossRot', 'triangle'], pointRadius: [10, 7] })).toEqual({ pointStyle: false, lineDash: [], mark: 'triangle', markRadius: 5 });
    expect(legendSwatch({ showLine: false, pointStyle: ['crossRot'], pointRadius: [10] })).toEqual({ pointStyle: false, lineDash: [], mark: 'crossRot', markRadius: 5 });
  });
  it('the model lines tell apart without colour: a mark per CP size (circle, square, diamond, triangle), a dash where they recompute', async () => {
    const { memoryChartConfig, LINE_MARKS } = await import('../src/memory/chart.js');
    const row = (cp: number, recompute: string, seq: number, fits = true): import('../src/memory/csv.js').CsvRow => ({
      seq_len: seq, tp: 8, cp, pp: 1, sp: true, recompute, micro_batch: 1, activation_gib: 10, total_gib: fits ? 20 : 90, fits, source: 'model',
    });
    const model = [8, 4, 2, 1].flatMap((cp) => ['none', 'selective'].flatMap((rc) => [row(cp, rc, 4096), row(cp, rc, 8192, cp > 1)]));
    const lines = memoryChartConfig(model, [], 80, 't').data.datasets.filter((d) => d.label.startsWith('CP='));
    const style = (label: string) => { const d = lines.find((x) => x.label === label)!; return [d.pointStyle, d.borderDash ?? []]; };
    expect(style('CP=1')).toEqual([['circle', 'crossRot'], []]);
    expect(style('CP=1 + selective')).toEqual([['circle', 'crossRot'], [6, 3]]);
    expect(style('CP=2')).toEqual([['rect', 'rect'], []]);
    expect(style('CP=4 + selective')).toEqual([['rectRot', 'rectRot'], [6, 3]]);
    expect(style('CP=8')).toEqual([['triangle', 'triangle'], []]);
    expect(LINE_MARKS.slice(0, 4)).toEqual(['circle', 'rect', 'rectRot', 'triangle']);
  });
  it('a long title and subtitle are drawn as lines of at most 140 / 160 characters, every word kept (one long line was squeezed over the axis)', async () => {
    const { memoryChartConfig, wrapText } = await import('../src/memory/chart.js');
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    const plugins = memoryChartConfig([], [], 80, long, long).options.plugins as { title: { text: string[] }; subtitle: { text: string[] } };
    expect(plugins.title.text.length).toBeGreaterThan(1);
    for (const [lines, w] of [[plugins.title.text, 140], [plugins.subtitle.text, 160]] as const) {
      expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(w);
      expect(lines.join(' ')).toBe(long);
    }
    expect(wrapText('')).toEqual([]);
    // Measured another way (the page: pixels in a font), the same breaks at that measure.
    expect(wrapText('aa bb cc dd', 10, (l) => 2 * l.length)).toEqual(['aa bb', 'cc dd']);
    expect(wrapText('a '.repeat(3) + 'x'.repeat(200))).toEqual(['a a a', 'x'.repeat(200)]); // a word longer than the width keeps a line of its own
  });
});

describe('MLP widths that tensor parallelism cannot split', () => {
  // Megatron-LM's ColumnParallelLinear/RowParallelLinear divide the MLP width over the TP ranks (divide() asserts it):
  // a width TP does not divide is refused there, not a fractional 125.125 columns a rank.
  const m: ModelConfig = { numLayers: 4, hiddenSize: 4096, numAttentionHeads: 32 };
  const par = { ...DEFAULT_PARALLEL, seqLength: 4096, tensorParallel: 8, sequenceParallel: true };
  it('the dense MLP width (--ffn-hidden-size) must be divisible by TP', () => {
    expect(() => memoryBreakdown({ ...m, ffnHiddenSize: 1001 }, par)).toThrow(/^--ffn-hidden-size 1001 is not divisible by --tensor-model-parallel-size 8/);
    expect(memoryBreakdown({ ...m, ffnHiddenSize: 1000 }, par).totalBytes).toBeGreaterThan(0);
    expect(memoryBreakdown({ ...m, ffnHiddenSize: 1001 }, { ...par, tensorParallel: 1, sequenceParallel: false }).totalBytes).toBeGreaterThan(0);
  });
  it("an expert's and the shared expert's widths (expert tensor parallelism = TP) too", () => {
    const moe = (o: object) => ({ ...m, moe: { numExperts: 8, routerTopk: 2, ...o } });
    expect(() => memoryBreakdown(moe({ ffnHiddenSize: 1001 }), par)).toThrow(/^--moe-ffn-hidden-size 1001 is not divisible by --tensor-model-parallel-size 8/);
    expect(() => memoryBreakdown({ ...moe({ sharedExpertSize: 1001 }), biasLinear: false }, par)).toThrow(/^--moe-shared-expert-intermediate-size 1001 is not divisible by --tensor-model-parallel-size 8/);
  });
  it('a shared expert with linear biases (the default) is refused, as Megatron-LM\'s shared_experts.py asserts; without them it runs', () => {
    const shared = { ...m, moe: { numExperts: 8, routerTopk: 2, sharedExpertSize: 1024 } };
    expect(() => memoryBreakdown(shared, par)).toThrow(/^Megatron-LM refuses a shared expert with linear biases .*: add --disable-bias-linear/);
    expect(memoryBreakdown({ ...shared, biasLinear: false }, par).totalBytes).toBeGreaterThan(0);
  });
  it('with every layer\'s MLP made of experts of their own width, the dense width is never built', () => {
    const moe = { ...m, moe: { numExperts: 8, routerTopk: 2, ffnHiddenSize: 1024 } };
    expect(memoryBreakdown({ ...moe, ffnHiddenSize: 1001 }, par).totalBytes).toBeGreaterThan(0);
  });
});
