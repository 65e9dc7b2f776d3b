/**
 * Activation memory of transformer training, term by term, after Korthikanti et al. 2022,
 * "Reducing Activation Recomputation in Large Transformer Models" (arXiv 2205.05198).
 *
 * Bytes per layer (s sequence, b micro batch, h hidden, a heads, t tensor-parallel size;
 * 2 bytes per activation element, 1 per dropout-mask element). With the paper's defaults (MLP
 * width 4h with GeLU, as many K/V heads as heads, dropout on, no FlashAttention) the terms add
 * up to the paper's formulas:
 *   attention 11sbh + 5as²b, MLP 19sbh, two LayerNorms 4sbh  →  sbh(34 + 5as/h)
 *   tensor parallel                         sbh(10 + 24/t + 5as/(ht))
 *   tensor + sequence parallel              sbh(34/t + 5as/(ht))
 *   tensor parallel + selective recompute   sbh(10 + 24/t)
 *   tensor + sequence parallel + selective  sbh·34/t
 *   full recompute                          2sbh (the layer input; /t with sequence parallel)
 * Generalisations (each reduces to the paper at its defaults): grouped-query K/V width
 * h·g/a; MLP width f (SwiGLU stores both gate and up projections); no dropout stores no masks
 * and no dropout outputs.
 *
 * FlashAttention (on by default, as Megatron-LM's --use-flash-attn): the O(s²) softmax,
 * mask and dropout-output terms are not stored; the softmax statistic is (f32 LSE, 4·a·s·b).
 *
 * Context parallelism (cp ranks), assumptions stated: every sequence-proportional term uses
 * the local sequence s/cp; without FlashAttention the stored scores of the local queries cover
 * all keys, (s/cp)·s per head; while the ring runs a rank also holds, for one layer at a
 * time, two slots of K/V chunks and (backward) their dK/dV accumulators: 2 slots × (K, V,
 * dK, dV) × 2 bytes × (s/cp)·b·h·g/a / t — transient, counted once, not per layer.
 *
 * Pipeline parallelism (p stages, 1F1B): the first stage holds L layers' worth of
 * activations (L/p layers × p micro batches in flight); interleaved with v model chunks per
 * stage × (1 + (p−1)/(p·v)).
 *
 * Weights, gradients and optimizer (mixed-precision Adam, as Megatron-LM's theoretical
 * memory): 2 bytes bf16 weight + 4 bytes fp32 gradient + 12 bytes fp32 master weight and two
 * moments = 18 bytes per parameter; with the distributed optimizer 6 + 12/(dp·cp).
 */
import { InputError } from '../errors.js';

export type Recompute = 'none' | 'selective' | 'full';

export interface ModelConfig {
  numLayers: number;
  hiddenSize: number;
  numAttentionHeads: number;
  /** K/V heads (grouped-query attention); default numAttentionHeads. */
  numQueryGroups?: number;
  /** MLP width; default 4·hidden. */
  ffnHiddenSize?: number;
  swiglu?: boolean;
  vocabSize?: number;
  untieEmbeddings?: boolean;
  attentionDropout?: number;
  hiddenDropout?: number;
  /** Megatron-LM's --position-embedding-type: learned_absolute adds seq·h parameters. Default: learned for GPT, rope for SwiGLU models. */
  positionEmbedding?: 'learned_absolute' | 'rope' | 'none';
  /** Parameter precision: 'megatron' (bf16 params, fp32 grads + master + Adam: 18 B/param) or 'amp' (fp32 params, grads, Adam: 16 B/param). */
  paramPrecision?: 'megatron' | 'amp';
}

export interface ParallelConfig {
  seqLength: number;
  microBatchSize: number;
  tensorParallel: number;
  contextParallel: number;
  pipelineParallel: number;
  /** Model chunks per pipeline stage (interleaved schedule); 1 = plain 1F1B. */
  virtualStages: number;
  dataParallel: number;
  sequenceParallel: boolean;
  recompute: Recompute;
  flashAttention: boolean;
  distributedOptimizer: boolean;
}

export interface MemoryTerm {
  name: string;
  part: 'attention' | 'mlp' | 'layernorm';
  bytes: number;
}

export interface MemoryBreakdown {
  /** Bytes of one layer's stored activations, by term. */
  perLayer: MemoryTerm[];
  perLayerBytes: number;
  /** Layers' worth of activations on the most loaded (first) pipeline stage. */
  layersHeld: number;
  activationBytes: number;
  ringBufferBytes: number;
  parameters: number;
  parametersPerGpu: number;
  weightBytes: number;
  gradientBytes: number;
  optimizerBytes: number;
  totalBytes: number;
}

export const GIB = 1024 ** 3;

export const DEFAULT_PARALLEL: ParallelConfig = {
  seqLength: 4096, microBatchSize: 1, tensorParallel: 1, contextParallel: 1, pipelineParallel: 1, virtualStages: 1,
  dataParallel: 1, sequenceParallel: false, recompute: 'none', flashAttention: true, distributedOptimizer: false,
};

function positiveInt(name: string, x: number): void {
  if (!Number.isInteger(x) || x < 1) throw new InputError(`${name} must be a positive integer, got ${x}`);
}

export function validate(m: ModelConfig, p: ParallelConfig): void {
  positiveInt('--num-layers', m.numLayers);
  positiveInt('--hidden-size', m.hiddenSize);
  positiveInt('--num-attention-heads', m.numAttentionHeads);
  for (const [n, x] of [['--seq-length', p.seqLength], ['--micro-batch-size', p.microBatchSize], ['--tensor-model-parallel-size', p.tensorParallel],
    ['--context-parallel-size', p.contextParallel], ['--pipeline-model-parallel-size', p.pipelineParallel], ['--data-parallel-size', p.dataParallel],
    ['virtual pipeline stages', p.virtualStages]] as const) positiveInt(n, x);
  const g = m.numQueryGroups ?? m.numAttentionHeads;
  positiveInt('--num-query-groups', g);
  if (m.hiddenSize % m.numAttentionHeads) throw new InputError(`--hidden-size ${m.hiddenSize} is not divisible by --num-attention-heads ${m.numAttentionHeads}`);
  if (m.numAttentionHeads % g) throw new InputError(`--num-attention-heads ${m.numAttentionHeads} is not a multiple of --num-query-groups ${g}`);
  if (m.numAttentionHeads % p.tensorParallel) throw new InputError(`--num-attention-heads ${m.numAttentionHeads} is not divisible by --tensor-model-parallel-size ${p.tensorParallel}`);
  if (m.numLayers % p.pipelineParallel) throw new InputError(`--num-layers ${m.numLayers} is not divisible by --pipeline-model-parallel-size ${p.pipelineParallel}`);
  if (p.seqLength % p.contextParallel) throw new InputError(`--seq-length ${p.seqLength} is not divisible by --context-parallel-size ${p.contextParallel}`);
  if (!['none', 'selective', 'full'].includes(p.recompute)) throw new InputError(`--recompute-granularity must be selective or full, got '${p.recompute}'`);
}

/** Stored activation bytes of one transformer layer, term by term. */
export function layerTerms(m: ModelConfig, p: ParallelConfig): MemoryTerm[] {
  const s = p.seqLength, sl = s / p.contextParallel, b = p.microBatchSize, h = m.hiddenSize, a = m.numAttentionHeads, t = p.tensorParallel;
  const g = m.numQueryGroups ?? a;
  const hk = (h * g) / a;
  const f = m.ffnHiddenSize ?? 4 * h;
  const attnDrop = (m.attentionDropout ?? 0.1) > 0, hidDrop = (m.hiddenDropout ?? 0.1) > 0;
  const rep = p.sequenceParallel ? 1 / t : 1; // not split by tensor parallelism unless sequence parallel
  const T = (name: string, part: MemoryTerm['part'], bytes: number): MemoryTerm => ({ name, part, bytes });
  if (p.recompute === 'full') return [T('layer input (full recompute)', 'layernorm', 2 * sl * b * h * rep)];
  const terms: MemoryTerm[] = [
    T('LayerNorm 1 input', 'layernorm', 2 * sl * b * h * rep),
    T('QKV input', 'attention', 2 * sl * b * h * rep),
    T('Q and K', 'attention', (2 * sl * b * h + 2 * sl * b * hk) / t),
    T('V', 'attention', (2 * sl * b * hk) / t),
  ];
  if (p.recompute !== 'selective') {
    if (p.flashAttention) terms.push(T('softmax LSE (FlashAttention, f32)', 'attention', (4 * a * sl * b) / t));
    else {
      terms.push(T('softmax output', 'attention', (2 * a * sl * s * b) / t));
      if (attnDrop) {
        terms.push(T('softmax dropout mask', 'attention', (a * sl * s * b) / t));
        terms.push(T('softmax dropout output', 'attention', (2 * a * sl * s * b) / t));
      }
    }
  }
  terms.push(T('projection input', 'attention', (2 * sl * b * h) / t));
  if (hidDrop) terms.push(T('attention dropout mask', 'attention', sl * b * h * rep));
  terms.push(T('LayerNorm 2 input', 'layernorm', 2 * sl * b * h * rep));
  terms.push(T('MLP input', 'mlp', 2 * sl * b * h * rep));
  terms.push(T(m.swiglu ? 'gate and up projections' : 'GeLU input', 'mlp', ((m.swiglu ? 4 : 2) * sl * b * f) / t));
  terms.push(T('second linear input', 'mlp', (2 * sl * b * f) / t));
  if (hidDrop) terms.push(T('MLP dropout mask', 'mlp', sl * b * h * rep));
  return terms;
}

/** Parameters of the whole model (GPT/Llama-style decoder). */
export function parameterCount(m: ModelConfig, seqLength: number): number {
  const h = m.hiddenSize, a = m.numAttentionHeads, g = m.numQueryGroups ?? a, f = m.ffnHiddenSize ?? 4 * h;
  const hk = (h * g) / a;
  const attn = h * h + 2 * h * hk + h * h + (h + 2 * hk) + h; // Q, K, V, output (+ biases)
  const mlp = (m.swiglu ? 3 : 2) * h * f + f + h;
  const perLayer = attn + mlp + 4 * h; // two LayerNorms
  const vocab = m.vocabSize ?? 50257;
  const pos = m.positionEmbedding ?? (m.swiglu ? 'rope' : 'learned_absolute');
  const embed = vocab * h * (m.untieEmbeddings ? 2 : 1) + (pos === 'learned_absolute' ? seqLength * h : 0);
  return m.numLayers * perLayer + embed + 2 * h;
}

export function memoryBreakdown(m: ModelConfig, p: ParallelConfig): MemoryBreakdown {
  validate(m, p);
  const perLayer = layerTerms(m, p);
  const perLayerBytes = perLayer.reduce((x, y) => x + y.bytes, 0);
  const L = m.numLayers, pp = p.pipelineParallel, v = p.virtualStages;
  // 1F1B first stage: L/p layers × p micro batches in flight; interleaved: × (1 + (p−1)/(p·v)).
  const layersHeld = pp === 1 ? L : L * (v > 1 ? 1 + (pp - 1) / (pp * v) : 1);
  const activationBytes = perLayerBytes * layersHeld;
  const sl = p.seqLength / p.contextParallel, g = m.numQueryGroups ?? m.numAttentionHeads;
  const hk = (m.hiddenSize * g) / m.numAttentionHeads;
  const ringBufferBytes = p.contextParallel > 1 ? (2 * 4 * 2 * sl * p.microBatchSize * hk) / p.tensorParallel : 0;
  const parameters = parameterCount(m, p.seqLength);
  const parametersPerGpu = parameters / (p.tensorParallel * pp);
  const shards = p.distributedOptimizer ? p.dataParallel * p.contextParallel : 1;
  // megatron: bf16 weight 2 + fp32 grad 4 + (fp32 master, m, v) 12; amp: fp32 weight 4 + grad 4 + (m, v) 8.
  const amp = m.paramPrecision === 'amp';
  const weightBytes = (amp ? 4 : 2) * parametersPerGpu, gradientBytes = 4 * parametersPerGpu;
  const optimizerBytes = ((amp ? 8 : 12) * parametersPerGpu) / shards;
  return {
    perLayer, perLayerBytes, layersHeld, activationBytes, ringBufferBytes, parameters, parametersPerGpu,
    weightBytes, gradientBytes, optimizerBytes,
    totalBytes: activationBytes + ringBufferBytes + weightBytes + gradientBytes + optimizerBytes,
  };
}

/** A line of the memory plot: a parallel configuration whose sequence length is swept. */
export interface SweepLine {
  label: string;
  overrides: Partial<ParallelConfig>;
}

export const DEFAULT_LINES: SweepLine[] = [
  { label: 'CP=1', overrides: { contextParallel: 1, recompute: 'none' } },
  { label: 'CP=1 + recompute', overrides: { contextParallel: 1, recompute: 'selective' } },
  { label: 'CP=2', overrides: { contextParallel: 2, recompute: 'none' } },
  { label: 'CP=4', overrides: { contextParallel: 4, recompute: 'none' } },
  { label: 'CP=4 + recompute', overrides: { contextParallel: 4, recompute: 'selective' } },
];

export const DEFAULT_SEQ_LENGTHS = [4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576];

export interface SweepPoint {
  line: string;
  config: ParallelConfig;
  breakdown: MemoryBreakdown;
  totalGib: number;
  activationGib: number;
  fits: boolean;
}

/** Every line at every sequence length (lengths the line's CP does not divide are skipped). */
export function sweep(m: ModelConfig, base: ParallelConfig, seqLengths: number[], lines: SweepLine[], hbmGib: number): SweepPoint[] {
  const out: SweepPoint[] = [];
  for (const line of lines)
    for (const s of seqLengths) {
      const config = { ...base, ...line.overrides, seqLength: s };
      if (s % config.contextParallel) continue;
      const breakdown = memoryBreakdown(m, config);
      const totalGib = breakdown.totalBytes / GIB;
      out.push({ line: line.label, config, breakdown, totalGib, activationGib: (breakdown.activationBytes + breakdown.ringBufferBytes) / GIB, fits: totalGib <= hbmGib });
    }
  return out;
}

/** The longest sequence at which each line still fits (null: not even the shortest). */
export function oomPoints(points: SweepPoint[]): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const p of points) {
    if (!(p.line in out)) out[p.line] = null;
    if (p.fits) out[p.line] = Math.max(out[p.line] ?? 0, p.config.seqLength);
  }
  return out;
}

/** Sweep lines from a spec like `1,1:selective,2,4,4:selective` (cp[:recompute] items). */
export function parseLines(spec: string | undefined): SweepLine[] {
  if (!spec) return DEFAULT_LINES;
  return spec.split(',').map((item) => {
    const [cp, rc = 'none'] = item.trim().split(':');
    const c = Number(cp);
    if (!Number.isInteger(c) || c < 1 || !['none', 'selective', 'full'].includes(rc)) throw new InputError(`--lines: '${item}' is not cp[:selective|full]`);
    return { label: `CP=${c}${rc === 'none' ? '' : rc === 'selective' ? ' + recompute' : ' + full recompute'}`, overrides: { contextParallel: c, recompute: rc as Recompute } };
  });
}

/** Model presets for the planner and the CLI. */
export const PRESETS: Record<string, { model: ModelConfig; note: string }> = {
  'seed-32L-4096h': { model: { numLayers: 32, hiddenSize: 4096, numAttentionHeads: 32, vocabSize: 128256 }, note: 'the Megatron-LM commands of the seed module (GPT-style, 4h GeLU MLP)' },
  'llama3-8b': { model: { numLayers: 32, hiddenSize: 4096, numAttentionHeads: 32, numQueryGroups: 8, ffnHiddenSize: 14336, swiglu: true, vocabSize: 128256, untieEmbeddings: true, attentionDropout: 0, hiddenDropout: 0 }, note: 'Llama-3 8B' },
  'llama3-70b': { model: { numLayers: 80, hiddenSize: 8192, numAttentionHeads: 64, numQueryGroups: 8, ffnHiddenSize: 28672, swiglu: true, vocabSize: 128256, untieEmbeddings: true, attentionDropout: 0, hiddenDropout: 0 }, note: 'Llama-3 70B' },
  'torchcp-8L-4096h': { model: { numLayers: 8, hiddenSize: 4096, numAttentionHeads: 32, vocabSize: 8192, untieEmbeddings: true, attentionDropout: 0, hiddenDropout: 0, positionEmbedding: 'none', paramPrecision: 'amp' }, note: 'the measured companion run (bench/torchcp, PyTorch AMP, 8 layers)' },
  'gpt3-175b': { model: { numLayers: 96, hiddenSize: 12288, numAttentionHeads: 96, vocabSize: 50257 }, note: 'GPT-3 175B' },
};
