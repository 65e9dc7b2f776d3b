/**
 * Per-GPU training memory, term by term: the activations a transformer layer stores (after
 * Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
 * arXiv 2205.05198), what is stored outside the layers (embedding, final LayerNorm, output layer,
 * the cross-entropy's logits), the largest transient buffer at the moment it is live, and the
 * weights, gradients and optimizer state. What differs between training stacks is data
 * (`STACKS`), not branches.
 *
 * Bytes per layer (s sequence, b micro batch, h hidden, a heads, t tensor-parallel size, 2 bytes
 * per bf16 element, 1 per dropout-mask element). With the paper's defaults (Megatron-LM stack, MLP
 * width 4h with GeLU, as many K/V heads as heads, dropout on, no FlashAttention) the terms add up
 * to the paper's formulas:
 *   attention 11sbh + 5as²b, MLP 19sbh, two LayerNorms 4sbh  →  sbh(34 + 5as/h)
 *   tensor parallel                         sbh(10 + 24/t + 5as/(ht))
 *   tensor + sequence parallel              sbh(34/t + 5as/(ht))
 *   tensor parallel + selective recompute   sbh(10 + 24/t)
 *   tensor + sequence parallel + selective  sbh·34/t
 *   full recompute                          2sbh (the layer input; /t with sequence parallel)
 * Generalisations (each reduces to the paper at its defaults): grouped-query K/V width h·g/a; MLP
 * width f (SwiGLU stores both gate and up projections); no dropout stores no masks.
 *
 * FlashAttention (on by default, Megatron-LM's --use-flash-attn): the O(s²) softmax, mask and
 * dropout-output terms are not stored; the softmax statistic is (f32 LSE, 4·a·s·b).
 *
 * Recomputation as Megatron-LM does it (megatron/core/transformer/transformer_config.py,
 * transformer_layer.py, transformer_block.py): selective with --recompute-modules (core_attn drops
 * the attention core's internals and keeps Q, K, V; mlp drops the MLP's inner activations and keeps
 * its input; layernorm drops the LayerNorm outputs), full with --recompute-method uniform (each chunk
 * of N layers keeps only its input) or block (the first N layers of a stage keep only their inputs,
 * the rest everything); recomputing a chunk in backward is a transient.
 *
 * Outside the layers, as Megatron-LM's own accounting (megatron/training/theoretical_memory_usage.py:
 * "Input to embedding", "Dropout in embedding layer", "Inputs to output layer and CE loss") and its
 * vocab-parallel cross-entropy (megatron/core/tensor_parallel/cross_entropy.py: the fp32 softmax over
 * the local vocabulary is kept for backward, 4·s·b·V/t, and the bf16 gradient of the logits is
 * written beside it, 2·s·b·V/t). PyTorch's F.cross_entropy(logits.float()) keeps the fp32
 * log-softmax (4·s·b·V) and writes two fp32 gradients (8·s·b·V) at the start of backward.
 * Stored terms of one stack only: torch-amp's autocast bf16 weight copies (2 B per weight-matrix
 * parameter not recomputed, held until backward) and, with CP, its second copy of the attention
 * output (2·s·b·h/t per layer); Megatron-LM's persistent QKᵀ buffer without FlashAttention
 * (2·a·s²·b/t, its GlobalMemoryBuffer).
 *
 * Peak = static (weights, gradients, optimizer, gradient buckets) + stored activations + the
 * largest transient, each transient counted net of the stored activations already released at its
 * moment (e.g. the last layer's attention backward runs after the loss and the last MLP are freed).
 *
 * Context parallelism (cp ranks): every sequence-proportional term uses the local s/cp; without
 * FlashAttention the stored scores of the local queries cover all keys, (s/cp)·s per head. Ring
 * buffers per implementation (Megatron/TE p2p, all_gather, a2a; PyTorch's ring) are transients.
 *
 * Pipeline parallelism (p stages, 1F1B): the first stage holds L/p layers × p micro batches in
 * flight; interleaved × (1 + (p−1)/(p·v)); it holds the embedding, not the output layer.
 */
import { InputError } from '../errors.js';

export type Recompute = 'none' | 'selective' | 'full';
export type RecomputeModule = 'core_attn' | 'mlp' | 'layernorm';
export type RecomputeMethod = 'uniform' | 'block';
export type Stack = 'megatron' | 'torch-amp';
export type CpCommType = 'p2p' | 'all_gather' | 'a2a';
export const RECOMPUTE_MODULES: readonly RecomputeModule[] = ['core_attn', 'mlp', 'layernorm'];

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
  /** Linear layers with biases (Megatron-LM's --add-bias-linear, the default) and LayerNorm (2h) or RMSNorm (h). */
  biasLinear?: boolean;
  rmsNorm?: boolean;
  /** Parameter precision: 'megatron' (bf16 params, fp32 grads + master + Adam: 18 B/param) or 'amp' (fp32 params, grads, Adam: 16 B/param). Default: the stack's. */
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
  /** Selective recompute: the modules recomputed (Megatron-LM's --recompute-modules; default core_attn). */
  recomputeModules?: RecomputeModule[];
  /** Full recompute: uniform chunks or a block of the first N layers of each stage. */
  recomputeMethod?: RecomputeMethod;
  recomputeNumLayers?: number;
  /** The training stack (default megatron). */
  stack?: Stack;
  /** Megatron-LM's --cp-comm-type (default p2p). */
  cpCommType?: CpCommType;
  /** Megatron-LM's --fp32-residual-connection: the residual stream in fp32. */
  fp32Residual?: boolean;
}

export type Part = 'attention' | 'mlp' | 'layernorm' | 'embedding' | 'output' | 'loss' | 'weights' | 'ring';

export interface MemoryTerm {
  name: string;
  part: Part;
  bytes: number;
  /** How the bytes are computed, in the symbols of the header comment. */
  formula: string;
}

export interface Transient extends MemoryTerm {
  /** Stored activation bytes already released when this transient is live. */
  freedBytes: number;
  /** bytes − freedBytes (what it adds to the stored activations at its moment). */
  netBytes: number;
}

export interface LayerGroup {
  label: string;
  /** Layers of this kind on the most loaded stage (times micro batches in flight). */
  layers: number;
  terms: MemoryTerm[];
  bytesPerLayer: number;
}

export interface MemoryBreakdown {
  stack: Stack;
  /** Bytes of one fully stored layer's activations, by term (what recompute does not touch). */
  perLayer: MemoryTerm[];
  perLayerBytes: number;
  /** Layers' worth of activations on the most loaded (first) pipeline stage, counting micro batches in flight. */
  layersHeld: number;
  /** Stored layers grouped by what they keep (all one group without full recompute). */
  layerGroups: LayerGroup[];
  /** Terms outside the transformer layers (embedding, final LayerNorm, output layer, loss, autocast copies). */
  outside: MemoryTerm[];
  /** Every transient considered, with its net contribution at its moment; the peak counts the largest. */
  transients: Transient[];
  peakTransient: Transient | null;
  /** Stored activations (layers and outside terms), without transients. */
  activationBytes: number;
  /** Net bytes of the largest transient (the ring buffers when that is the largest). */
  transientBytes: number;
  /** Ring buffers of context parallelism (part of the transients; 0 without CP). */
  ringBufferBytes: number;
  parameters: number;
  parametersPerGpu: number;
  weightBytes: number;
  gradientBytes: number;
  optimizerBytes: number;
  /** Gradient buckets of PyTorch DDP (torch-amp with dp·cp > 1). */
  gradientBucketBytes: number;
  /** Bytes per parameter of the weights as stored (2 bf16, 4 fp32). */
  weightBytesPerParam: number;
  totalBytes: number;
}

/** What differs between training stacks, as data. */
export interface StackSpec {
  label: string;
  note: string;
  /** Bytes per parameter: weights, fp32 gradient, optimizer (master weights and Adam moments). */
  perParam: { weight: number; gradient: number; optimizer: number };
  /** The residual stream (LayerNorm inputs): 2 bf16, 4 fp32. */
  residualBytes: number;
  /** autocast's bf16 copies of the matmul weights, held from forward until their backward (not for recomputed matmuls). */
  autocastWeightCopies: boolean;
  /** A LayerNorm output as a checkpoint keeps it: 2 bf16; 4 where LayerNorm runs in fp32 (autocast). */
  normOutputBytes: number;
  /** PyTorch DDP's gradient buckets (4 B/param) when gradients are reduced (dp·cp > 1). */
  ddpGradientBuckets: boolean;
  /** Bytes per token of ids/labels kept on the GPU for backward and the loss. */
  idsBytes: number;
  /**
   * Cross-entropy: bytes per logit stored for backward, written at its backward, and alive beside
   * the stored ones while the loss is computed at the end of forward.
   */
  ce: { stored: number; transient: number; forward: number; storedName: string; transientName: string; forwardName: string };
  /** Vocabulary padded to a multiple of this × t (Megatron-LM's --make-vocab-size-divisible-by 128). */
  vocabDivisor: number;
  /** Unfused attention writes QKᵀ into a persistent global buffer (Megatron-LM's GlobalMemoryBuffer, 'mpu'). */
  unfusedScoresBuffer: boolean;
  /** Context parallelism: the ring's buffers, and whether the attention output is stored twice. */
  cpRing: 'megatron' | 'torch';
  cpStoresOutputTwice: boolean;
}

export const STACKS: Record<Stack, StackSpec> = {
  megatron: {
    label: 'Megatron-LM', note: 'bf16 parameters with fp32 main gradients, master weights and Adam (18 B/param); vocab-parallel cross-entropy',
    perParam: { weight: 2, gradient: 4, optimizer: 12 }, residualBytes: 2, autocastWeightCopies: false, normOutputBytes: 2, ddpGradientBuckets: false,
    idsBytes: 8, ce: { stored: 4, transient: 2, forward: 2, storedName: 'cross-entropy fp32 softmax (vocab-parallel)', transientName: 'cross-entropy backward: bf16 logits gradient', forwardName: 'end of forward: bf16 logits beside the fp32 softmax' },
    vocabDivisor: 128, unfusedScoresBuffer: true, cpRing: 'megatron', cpStoresOutputTwice: false,
  },
  'torch-amp': {
    label: 'PyTorch AMP', note: 'bf16 autocast over fp32 parameters and AdamW (16 B/param), DDP, F.cross_entropy(logits.float()) (bench/torchcp)',
    perParam: { weight: 4, gradient: 4, optimizer: 8 }, residualBytes: 4, autocastWeightCopies: true, normOutputBytes: 4, ddpGradientBuckets: true,
    idsBytes: 16, ce: { stored: 4, transient: 8, forward: 6, storedName: 'cross-entropy fp32 log-softmax', transientName: 'cross-entropy backward: two fp32 gradients', forwardName: "end of forward: bf16 logits and their fp32 copy, and autocast's cached copies of recomputed weights" },
    vocabDivisor: 1, unfusedScoresBuffer: false, cpRing: 'torch', cpStoresOutputTwice: true,
  },
};

export const GIB = 1024 ** 3;

export const DEFAULT_PARALLEL: ParallelConfig = {
  seqLength: 4096, microBatchSize: 1, tensorParallel: 1, contextParallel: 1, pipelineParallel: 1, virtualStages: 1,
  dataParallel: 1, sequenceParallel: false, recompute: 'none', flashAttention: true, distributedOptimizer: false,
};

function positiveInt(name: string, x: number, max = 2 ** 40): void {
  if (!Number.isInteger(x) || x < 1) throw new InputError(`${name} must be a positive integer, got ${x}`);
  if (x > max) throw new InputError(`${name} ${x} is beyond what the model handles (at most ${max})`);
}

function fraction(name: string, x: number | undefined): void {
  if (x !== undefined && !(Number.isFinite(x) && x >= 0 && x < 1)) throw new InputError(`${name} must be a probability in [0, 1), got ${x}`);
}

/** Checks every input of the model; throws InputError naming the Megatron-LM flag. */
export function validate(m: ModelConfig, p: ParallelConfig): void {
  positiveInt('--num-layers', m.numLayers, 100_000);
  positiveInt('--hidden-size', m.hiddenSize, 1_000_000);
  positiveInt('--num-attention-heads', m.numAttentionHeads, 100_000);
  if (m.ffnHiddenSize !== undefined) positiveInt('--ffn-hidden-size', m.ffnHiddenSize, 10_000_000);
  if (m.vocabSize !== undefined) positiveInt('--vocab-size', m.vocabSize, 100_000_000);
  fraction('--attention-dropout', m.attentionDropout);
  fraction('--hidden-dropout', m.hiddenDropout);
  for (const [n, x] of [['--seq-length', p.seqLength], ['--micro-batch-size', p.microBatchSize], ['--tensor-model-parallel-size', p.tensorParallel],
    ['--context-parallel-size', p.contextParallel], ['--pipeline-model-parallel-size', p.pipelineParallel], ['--data-parallel-size', p.dataParallel],
    ['virtual pipeline stages', p.virtualStages]] as const) positiveInt(n, x, n === '--seq-length' ? 2 ** 31 : 1_000_000);
  const g = m.numQueryGroups ?? m.numAttentionHeads;
  positiveInt('--num-query-groups', g);
  if (m.hiddenSize % m.numAttentionHeads) throw new InputError(`--hidden-size ${m.hiddenSize} is not divisible by --num-attention-heads ${m.numAttentionHeads}`);
  if (m.numAttentionHeads % g) throw new InputError(`--num-attention-heads ${m.numAttentionHeads} is not a multiple of --num-query-groups ${g}`);
  if (m.numAttentionHeads % p.tensorParallel) throw new InputError(`--num-attention-heads ${m.numAttentionHeads} is not divisible by --tensor-model-parallel-size ${p.tensorParallel}`);
  if (g % p.tensorParallel) throw new InputError(`--num-query-groups ${g} is not divisible by --tensor-model-parallel-size ${p.tensorParallel} (Megatron-LM refuses it)`);
  if (m.numLayers % p.pipelineParallel) throw new InputError(`--num-layers ${m.numLayers} is not divisible by --pipeline-model-parallel-size ${p.pipelineParallel}`);
  if (p.seqLength % p.contextParallel) throw new InputError(`--seq-length ${p.seqLength} is not divisible by --context-parallel-size ${p.contextParallel}`);
  if (!['none', 'selective', 'full'].includes(p.recompute)) throw new InputError(`--recompute-granularity must be selective or full, got '${p.recompute}'`);
  if (p.stack !== undefined && !(p.stack in STACKS)) throw new InputError(`--stack must be ${Object.keys(STACKS).join(' or ')}, got '${p.stack}'`);
  if (p.cpCommType !== undefined && !['p2p', 'all_gather', 'a2a'].includes(p.cpCommType)) throw new InputError(`--cp-comm-type must be p2p, all_gather or a2a, got '${p.cpCommType}'`);
  if (p.cpCommType === 'a2a' && ((m.numAttentionHeads / p.tensorParallel) % p.contextParallel || (g / p.tensorParallel) % p.contextParallel))
    throw new InputError(`--cp-comm-type a2a needs the heads (${m.numAttentionHeads / p.tensorParallel}) and K/V groups (${g / p.tensorParallel}) per tensor-parallel rank divisible by --context-parallel-size ${p.contextParallel}`);
  for (const mod of p.recomputeModules ?? [])
    if (!RECOMPUTE_MODULES.includes(mod)) throw new InputError(`--recompute-modules: unknown module '${mod}' (this model has ${RECOMPUTE_MODULES.join(', ')}; moe_act needs MoE layers, which it does not model)`);
  if (p.recompute === 'full') {
    if (!p.recomputeMethod) throw new InputError('--recompute-granularity full needs --recompute-method uniform or block (Megatron-LM refuses it without one)');
    if (!['uniform', 'block'].includes(p.recomputeMethod)) throw new InputError(`--recompute-method must be uniform or block, got '${p.recomputeMethod}'`);
    const stage = m.numLayers / p.pipelineParallel;
    if (p.recomputeNumLayers === undefined) throw new InputError('--recompute-granularity full needs --recompute-num-layers N');
    positiveInt('--recompute-num-layers', p.recomputeNumLayers);
    if (p.recomputeNumLayers > stage) throw new InputError(`--recompute-num-layers ${p.recomputeNumLayers} is more than the ${stage} layers of a pipeline stage`);
  } else {
    if (p.recomputeMethod) throw new InputError(`--recompute-method ${p.recomputeMethod} needs --recompute-granularity full`);
    if (p.recomputeNumLayers !== undefined) throw new InputError('--recompute-num-layers needs --recompute-granularity full');
  }
  if (p.recompute !== 'selective' && p.recomputeModules?.length && p.recomputeModules.join() !== 'core_attn')
    throw new InputError(`--recompute-modules ${p.recomputeModules.join(' ')} needs --recompute-granularity selective`);
}

/** Sizes shared by the terms (one micro batch, one GPU). */
interface Dims {
  s: number; sl: number; b: number; h: number; a: number; hk: number; f: number; t: number; V: number;
  rep: number; sp: string; rb: number; spec: StackSpec;
}

function dims(m: ModelConfig, p: ParallelConfig): Dims {
  const spec = STACKS[p.stack ?? 'megatron'];
  const a = m.numAttentionHeads, h = m.hiddenSize, t = p.tensorParallel;
  const div = spec.vocabDivisor * t;
  const V = Math.ceil((m.vocabSize ?? 50257) / div) * div;
  return {
    s: p.seqLength, sl: p.seqLength / p.contextParallel, b: p.microBatchSize, h, a, hk: (h * (m.numQueryGroups ?? a)) / a,
    f: m.ffnHiddenSize ?? 4 * h, t, V, rep: p.sequenceParallel ? 1 / t : 1, sp: p.sequenceParallel ? '/t' : '',
    rb: p.fp32Residual ? 4 : spec.residualBytes, spec,
  };
}

/** A layer term with what drops it: a recomputed module, and whether it is stored after the attention core. */
interface LayerTerm extends MemoryTerm {
  drop?: RecomputeModule;
  afterCore: boolean;
}

/** Every activation a fully stored layer keeps, tagged by the recompute module that drops it. */
function allLayerTerms(m: ModelConfig, p: ParallelConfig, d: Dims): LayerTerm[] {
  const { s, sl, b, h, a, hk, f, t, rep, sp, rb } = d;
  const attnDrop = (m.attentionDropout ?? 0.1) > 0, hidDrop = (m.hiddenDropout ?? 0.1) > 0;
  const T = (name: string, part: Part, bytes: number, formula: string, afterCore: boolean, drop?: RecomputeModule): LayerTerm =>
    ({ name, part, bytes, formula, afterCore, drop });
  const kv = hk === h ? 'h' : 'h·g/a';
  const terms: LayerTerm[] = [
    T('LayerNorm 1 input', 'layernorm', rb * sl * b * h * rep, `${rb}·s·b·h${sp}`, false),
    T('QKV input', 'attention', 2 * sl * b * h * rep, `2·s·b·h${sp}`, false, 'layernorm'),
    T('Q and K', 'attention', (2 * sl * b * h + 2 * sl * b * hk) / t, `2·s·b·(h + ${kv})/t`, false),
    T('V', 'attention', (2 * sl * b * hk) / t, `2·s·b·${kv}/t`, false),
  ];
  if (p.flashAttention) terms.push(T('softmax LSE (FlashAttention, f32)', 'attention', (4 * a * sl * b) / t, '4·a·s·b/t', false, 'core_attn'));
  else {
    terms.push(T('softmax output', 'attention', (2 * a * sl * s * b) / t, '2·a·s²·b/t', false, 'core_attn'));
    if (attnDrop) {
      terms.push(T('softmax dropout mask', 'attention', (a * sl * s * b) / t, 'a·s²·b/t', false, 'core_attn'));
      terms.push(T('softmax dropout output', 'attention', (2 * a * sl * s * b) / t, '2·a·s²·b/t', false, 'core_attn'));
    }
  }
  terms.push(T('projection input', 'attention', (2 * sl * b * h) / t, '2·s·b·h/t', true));
  if (p.contextParallel > 1 && d.spec.cpStoresOutputTwice)
    terms.push(T('attention output copy (ring merge, reshaped for the projection)', 'attention', (2 * sl * b * h) / t, '2·s·b·h/t', true));
  if (hidDrop) terms.push(T('attention dropout mask', 'attention', sl * b * h * rep, `s·b·h${sp}`, true));
  terms.push(T('LayerNorm 2 input', 'layernorm', rb * sl * b * h * rep, `${rb}·s·b·h${sp}`, true));
  // A recomputed MLP keeps its checkpoint input as the LayerNorm wrote it; otherwise fc1 keeps its bf16 input.
  const nb = modules(p).includes('mlp') ? d.spec.normOutputBytes : 2;
  terms.push(T('MLP input', 'mlp', nb * sl * b * h * rep, `${nb}·s·b·h${sp}`, true, 'layernorm'));
  terms.push(T(m.swiglu ? 'gate and up projections' : 'GeLU input', 'mlp', ((m.swiglu ? 4 : 2) * sl * b * f) / t, `${m.swiglu ? 4 : 2}·s·b·f/t`, true, 'mlp'));
  terms.push(T('second linear input', 'mlp', (2 * sl * b * f) / t, '2·s·b·f/t', true, 'mlp'));
  if (hidDrop) terms.push(T('MLP dropout mask', 'mlp', sl * b * h * rep, `s·b·h${sp}`, true));
  return terms;
}

const strip = ({ name, part, bytes, formula }: MemoryTerm): MemoryTerm => ({ name, part, bytes, formula });
const sum = (ts: { bytes: number }[]) => ts.reduce((x, y) => x + y.bytes, 0);

/** The recompute modules in force (selective only). */
function modules(p: ParallelConfig): RecomputeModule[] {
  return p.recompute === 'selective' ? (p.recomputeModules?.length ? p.recomputeModules : ['core_attn']) : [];
}

/**
 * Stored activation bytes of one layer that is not fully recomputed, term by term (selective
 * modules applied). With full recompute: the layer input alone (what a checkpointed layer keeps).
 */
export function layerTerms(m: ModelConfig, p: ParallelConfig): MemoryTerm[] {
  const d = dims(m, p);
  if (p.recompute === 'full') return [inputTerm(d)];
  return keptTerms(m, p, d).map(strip);
}

function keptTerms(m: ModelConfig, p: ParallelConfig, d: Dims): LayerTerm[] {
  const mods = modules(p);
  const all = allLayerTerms(m, p, d);
  // With both mlp and layernorm recomputed, the MLP checkpoint's input is the discarded LayerNorm output.
  return all.filter((x) => !(x.drop && mods.includes(x.drop)));
}

function inputTerm(d: Dims): MemoryTerm {
  return { name: 'layer input (full recompute)', part: 'layernorm', bytes: d.rb * d.sl * d.b * d.h * d.rep, formula: `${d.rb}·s·b·h${d.sp}` };
}

/** Parameters of the whole model (GPT/Llama-style decoder). */
export function parameterCount(m: ModelConfig, seqLength: number): number {
  const h = m.hiddenSize, a = m.numAttentionHeads, g = m.numQueryGroups ?? a, f = m.ffnHiddenSize ?? 4 * h;
  const hk = (h * g) / a;
  const bias = m.biasLinear === false ? 0 : 1, norm = m.rmsNorm ? 1 : 2;
  const attn = h * h + 2 * h * hk + h * h + bias * (h + 2 * hk + h); // Q, K, V, output (+ biases)
  const mlp = (m.swiglu ? 3 : 2) * h * f + bias * ((m.swiglu ? 2 : 1) * f + h);
  const perLayer = attn + mlp + 2 * norm * h; // two norms
  const vocab = m.vocabSize ?? 50257;
  const pos = m.positionEmbedding ?? (m.swiglu ? 'rope' : 'learned_absolute');
  const embed = vocab * h * (m.untieEmbeddings ? 2 : 1) + (pos === 'learned_absolute' ? seqLength * h : 0);
  return m.numLayers * perLayer + embed + norm * h;
}

/**
 * Weight-matrix parameters per GPU whose bf16 autocast copies are held until backward: layers of the
 * first stage that are not fully recomputed (without the MLP's when it is recomputed), and the
 * output layer with pp = 1. Inside a checkpoint the copies are made again in backward, not kept.
 */
function heldMatmulParamsPerGpu(m: ModelConfig, p: ParallelConfig, d: Dims, heldOnly = true): number {
  const mlp = heldOnly && modules(p).includes('mlp') ? 0 : (m.swiglu ? 3 : 2) * d.h * d.f;
  const perLayer = d.h * (d.h + 2 * d.hk) + d.h * d.h + mlp;
  const stage = m.numLayers / p.pipelineParallel;
  const stored = !heldOnly || p.recompute !== 'full' ? stage : p.recomputeMethod === 'block' ? stage - p.recomputeNumLayers! : 0;
  const out = p.pipelineParallel === 1 ? d.V * d.h : 0;
  return (stored * perLayer + out) / d.t;
}

/** Stored layers of the first stage, grouped by what each keeps (full recompute splits them). */
function layerGroups(m: ModelConfig, p: ParallelConfig, d: Dims, inflight: number, full: MemoryTerm[]): LayerGroup[] {
  const stage = m.numLayers / p.pipelineParallel;
  const G = (label: string, layers: number, terms: MemoryTerm[]): LayerGroup => ({ label, layers: layers * inflight, terms, bytesPerLayer: sum(terms) });
  if (p.recompute !== 'full') return [G('stored layers', stage, full)];
  const n = p.recomputeNumLayers!;
  if (p.recomputeMethod === 'uniform') return [G(`chunk inputs (uniform, ${n} layer${n > 1 ? 's' : ''} per chunk)`, Math.ceil(stage / n), [inputTerm(d)])];
  const groups = [G(`recomputed layers (block, first ${n})`, n, [inputTerm(d)])];
  if (stage > n) groups.push(G('stored layers', stage - n, full));
  return groups;
}

/** Terms outside the transformer layers, as theoretical_memory_usage.py names them. */
function outsideTerms(m: ModelConfig, p: ParallelConfig, d: Dims): MemoryTerm[] {
  const { sl, b, h, V, t, rep, sp, rb, spec } = d, pp = p.pipelineParallel;
  const out: MemoryTerm[] = [{ name: 'input ids (and labels)', part: 'embedding', bytes: spec.idsBytes * sl * b * pp, formula: `${spec.idsBytes}·s·b·p` }];
  if ((m.hiddenDropout ?? 0.1) > 0) out.push({ name: 'embedding dropout mask', part: 'embedding', bytes: sl * b * h * rep * pp, formula: `s·b·h·p${sp}` });
  if (spec.autocastWeightCopies)
    out.push({ name: 'autocast bf16 weight copies (held until backward)', part: 'weights', bytes: 2 * heldMatmulParamsPerGpu(m, p, d), formula: '2·(weight-matrix parameters per GPU not recomputed)' });
  if (!p.flashAttention && spec.unfusedScoresBuffer)
    out.push({ name: 'QKᵀ scores buffer (unfused attention, kept between steps)', part: 'attention', bytes: (2 * d.a * sl * d.s * b) / t, formula: '2·a·s²·b/t' });
  if (pp > 1) return out; // the first stage has no output layer
  out.push({ name: 'final LayerNorm input', part: 'output', bytes: rb * sl * b * h * rep, formula: `${rb}·s·b·h${sp}` });
  out.push({ name: 'output layer input', part: 'output', bytes: (2 * sl * b * h) / (p.sequenceParallel ? t : 1), formula: `2·s·b·h${sp}` });
  out.push({ name: spec.ce.storedName, part: 'loss', bytes: (spec.ce.stored * sl * b * V) / t, formula: `${spec.ce.stored}·s·b·V/t` });
  return out;
}

/** Buffers of context parallelism live during one layer's attention (bytes for one micro batch). */
function ringBuffers(p: ParallelConfig, d: Dims): MemoryTerm | null {
  const R = p.contextParallel;
  if (R === 1) return null;
  const { sl, b, h, hk, t } = d, n = sl * b / t;
  if (d.spec.cpRing === 'torch')
    return { name: 'ring attention backward (PyTorch: fp32 dQ/dK/dV, contiguous and all-gathered K/V, dK/dV in flight, step grads)', part: 'ring',
      bytes: n * (4 * (h + 2 * hk) + 4 * hk + R * 4 * hk + 16 * hk + 2 * (h + 2 * hk)), formula: '(4(h+2hk) + 4hk + 4R·hk + 16hk + 2(h+2hk))·s·b/t' };
  if (p.cpCommType === 'all_gather')
    return { name: 'all-gathered K/V and their gradients (all_gather)', part: 'ring', bytes: 8 * hk * R * n, formula: '8·hk·s_full·b/t' };
  if (p.cpCommType === 'a2a')
    return { name: 'head-sharded Q/K/V/O copies and gradients (a2a)', part: 'ring', bytes: 2 * (2 * (h + 2 * hk) + 2 * h) * n, formula: '2·(2(h+2hk) + 2h)·s·b/t' };
  return { name: 'ring K/V buffers (two slots of K, V, dK, dV)', part: 'ring', bytes: 16 * hk * n, formula: '16·hk·s·b/t' };
}

/** Transients, each with the stored bytes already released at its moment. */
function transients(m: ModelConfig, p: ParallelConfig, d: Dims, groups: LayerGroup[], outside: MemoryTerm[]): Transient[] {
  const { sl, b, h, a, s, V, t, rep, rb, spec } = d;
  const X = (term: MemoryTerm, freedBytes: number): Transient => ({ ...term, freedBytes, netBytes: Math.max(0, term.bytes - freedBytes) });
  const lossAndOutput = sum(outside.filter((o) => o.part === 'output' || o.part === 'loss'));
  const list: Transient[] = [];
  if (p.pipelineParallel === 1) {
    list.push(X({ name: spec.ce.transientName, part: 'loss', bytes: (spec.ce.transient * sl * b * V) / t, formula: `${spec.ce.transient}·s·b·V/t` }, 0));
    // autocast caches every weight copy until the forward ends, recomputed matmuls' too.
    const cached = spec.autocastWeightCopies ? 2 * (heldMatmulParamsPerGpu(m, p, d, false) - heldMatmulParamsPerGpu(m, p, d)) : 0;
    list.push(X({ name: spec.ce.forwardName, part: 'loss', bytes: (spec.ce.forward * sl * b * V) / t + cached,
      formula: `${spec.ce.forward}·s·b·V/t${cached ? ' + 2·(recomputed weight-matrix parameters per GPU)' : ''}` }, 0));
  }
  // The last layer's attention backward: its MLP and projection are freed by then (when stored).
  const last = groups[groups.length - 1];
  const lastStored = last.label === 'stored layers' ? keptTerms(m, p, d).filter((x) => x.afterCore) : [];
  const freedAtAttn = lossAndOutput + sum(lastStored);
  const upstream = (rb + 2) * sl * b * h * rep;
  const ring = ringBuffers(p, d);
  // Unfused attention's backward holds one bf16 gradient of the s² scores at a time.
  const scoresGrad = p.flashAttention ? 0 : (2 * a * sl * s * b) / t;
  const up = `${rb + 2}·s·b·h${d.sp} (upstream gradients)${scoresGrad ? ' + 2·a·s²·b/t (scores gradient)' : ''}`;
  if (ring || scoresGrad)
    list.push(X({ name: `last layer's attention backward${ring ? `: ${ring.name}` : ' (unfused)'}`, part: ring ? 'ring' : 'attention',
      bytes: (ring?.bytes ?? 0) + scoresGrad + upstream, formula: `${ring ? ring.formula + ' + ' : ''}${up}` }, freedAtAttn));
  const mods = modules(p);
  if (mods.length) {
    const re = allLayerTerms(m, p, d).filter((x) => x.drop && mods.includes(x.drop));
    const grad = mods.includes('core_attn') ? scoresGrad + upstream : upstream;
    list.push(X({ name: `recomputing ${mods.join(' and ')} of one layer in backward`, part: 'attention', bytes: sum(re) + grad,
      formula: `${re.map((x) => x.formula).join(' + ')} + ${up}` }, lossAndOutput));
  }
  if (p.recompute === 'full') {
    const layer = sum(keptTerms(m, { ...p, recompute: 'none' }, d));
    const n = p.recomputeMethod === 'uniform' ? p.recomputeNumLayers! : 1;
    // block: its recomputed layers come last in backward, after every stored layer was released.
    const freed = lossAndOutput + (p.recomputeMethod === 'block' && p.pipelineParallel === 1 ? sum(groups.filter((g) => g.label === 'stored layers').map((g) => ({ bytes: g.bytesPerLayer * g.layers }))) : 0);
    list.push(X({ name: `recomputing one checkpointed chunk (${n} layer${n > 1 ? 's' : ''}) in backward`, part: 'attention', bytes: n * layer + scoresGrad + upstream,
      formula: `${n}·(one stored layer) + ${up}` }, freed));
  }
  return list;
}

export function memoryBreakdown(m: ModelConfig, p: ParallelConfig): MemoryBreakdown {
  validate(m, p);
  const d = dims(m, p);
  const pp = p.pipelineParallel, v = p.virtualStages;
  // 1F1B first stage: L/p layers × p micro batches in flight; interleaved: × (1 + (p−1)/(p·v)).
  const inflight = pp === 1 ? 1 : pp * (v > 1 ? 1 + (pp - 1) / (pp * v) : 1);
  // A fully stored layer's terms (selective modules applied; full recompute stores whole only the layers it leaves).
  const perLayer = keptTerms(m, { ...p, recompute: p.recompute === 'full' ? 'none' : p.recompute }, d).map(strip);
  const groups = layerGroups(m, p, d, inflight, perLayer);
  const outside = outsideTerms(m, p, d);
  const layerBytes = groups.reduce((x, g) => x + g.bytesPerLayer * g.layers, 0);
  const activationBytes = layerBytes + sum(outside);
  const ts = transients(m, p, d, groups, outside);
  const peak = ts.reduce<Transient | null>((x, y) => (!x || y.netBytes > x.netBytes ? y : x), null);
  const parameters = parameterCount(m, p.seqLength);
  const parametersPerGpu = parameters / (p.tensorParallel * pp);
  const pr = m.paramPrecision === 'amp' ? STACKS['torch-amp'].perParam : m.paramPrecision === 'megatron' ? STACKS.megatron.perParam : d.spec.perParam;
  const shards = p.distributedOptimizer ? p.dataParallel * p.contextParallel : 1;
  const weightBytes = pr.weight * parametersPerGpu, gradientBytes = pr.gradient * parametersPerGpu;
  const optimizerBytes = (pr.optimizer * parametersPerGpu) / shards;
  const gradientBucketBytes = d.spec.ddpGradientBuckets && p.dataParallel * p.contextParallel > 1 ? 4 * parametersPerGpu : 0;
  const transientBytes = peak?.netBytes ?? 0;
  return {
    stack: p.stack ?? 'megatron', perLayer, perLayerBytes: sum(perLayer), layersHeld: groups.reduce((x, g) => x + g.layers, 0), layerGroups: groups,
    outside, transients: ts, peakTransient: peak, activationBytes, transientBytes, ringBufferBytes: ringBuffers(p, d)?.bytes ?? 0,
    parameters, parametersPerGpu, weightBytes, gradientBytes, optimizerBytes, gradientBucketBytes, weightBytesPerParam: pr.weight,
    totalBytes: weightBytes + gradientBytes + optimizerBytes + gradientBucketBytes + activationBytes + transientBytes,
  };
}

/** Activation bytes as a measurement reports them: the peak minus weights, gradients, optimizer and buckets. */
export function peakActivationBytes(r: MemoryBreakdown): number {
  return r.activationBytes + r.transientBytes;
}

/** A line of the memory plot: a parallel configuration whose sequence length is swept. */
export interface SweepLine {
  label: string;
  overrides: Partial<ParallelConfig>;
}

/** Recompute settings as one string (lines syntax, CSV column): none | selective[:mod+mod] | full:uniform/N | full:block/N. */
export function recomputeSpec(p: Pick<ParallelConfig, 'recompute' | 'recomputeModules' | 'recomputeMethod' | 'recomputeNumLayers'>): string {
  if (p.recompute === 'full') return `full:${p.recomputeMethod}/${p.recomputeNumLayers}`;
  if (p.recompute === 'selective') {
    const mods = p.recomputeModules?.length ? p.recomputeModules : ['core_attn'];
    return mods.join() === 'core_attn' ? 'selective' : `selective:${mods.join('+')}`;
  }
  return 'none';
}

export function parseRecomputeSpec(spec: string, where = '--lines'): Pick<ParallelConfig, 'recompute' | 'recomputeModules' | 'recomputeMethod' | 'recomputeNumLayers'> {
  const [kind, arg] = [spec.split(':')[0], spec.split(':').slice(1).join(':')];
  const bad = () => new InputError(`${where}: '${spec}' is not a recompute setting (none, selective, selective:core_attn+mlp, full:uniform/N, full:block/N)`);
  if (kind === 'none' && !arg) return { recompute: 'none' };
  if (kind === 'selective') {
    if (!arg) return { recompute: 'selective', recomputeModules: ['core_attn'] };
    const mods = arg.split('+');
    for (const x of mods) if (!RECOMPUTE_MODULES.includes(x as RecomputeModule)) throw new InputError(`${where}: unknown recompute module '${x}' in '${spec}' (${RECOMPUTE_MODULES.join(', ')})`);
    return { recompute: 'selective', recomputeModules: mods as RecomputeModule[] };
  }
  if (kind === 'full') {
    const mm = /^(uniform|block)\/(\d+)$/.exec(arg);
    if (!mm) throw new InputError(`${where}: '${spec}': full recompute needs a method and a layer count, e.g. full:uniform/1 or full:block/8 (Megatron-LM refuses full recompute without a method)`);
    return { recompute: 'full', recomputeMethod: mm[1] as RecomputeMethod, recomputeNumLayers: Number(mm[2]) };
  }
  throw bad();
}

/**
 * The plot's default "+ recompute": selective recompute of the attention core and the MLP
 * (--recompute-granularity selective --recompute-modules core_attn mlp). The seed's commands ask
 * for selective recomputation; with FlashAttention Megatron-LM's default selective (core_attn)
 * stores almost the same (the core keeps its Q, K, V inputs; only the LSE goes), while adding mlp
 * drops the MLP's two 4h-wide activations, about half of a layer's, for one more MLP forward
 * (~10–15% of a step at long context, where attention dominates the FLOPs): the seed's
 * "another 20–30% memory for ~10–15% extra forward time" in spirit.
 */
export const DEFAULT_RECOMPUTE = 'selective:core_attn+mlp';
export const DEFAULT_LINES_SPEC = `1,1:${DEFAULT_RECOMPUTE},2,4,4:${DEFAULT_RECOMPUTE}`;

function lineLabel(cp: number, spec: string): string {
  if (spec === 'none') return `CP=${cp}`;
  if (spec === DEFAULT_RECOMPUTE) return `CP=${cp} + recompute`;
  return `CP=${cp} + ${spec.replace(':', ' ').replace(/\+/g, ', ')}`;
}

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
      out.push({ line: line.label, config, breakdown, totalGib, activationGib: peakActivationBytes(breakdown) / GIB, fits: totalGib <= hbmGib });
    }
  return out;
}

/**
 * The sequence lengths each line of a sweep leaves out: those its CP size does not divide (each
 * CP rank holds s/CP tokens), which sweep() skips. A line that would keep none is refused by
 * name; the others' gaps are for the caller to say.
 */
export function sweepGaps(base: ParallelConfig, seqLengths: number[], lines: SweepLine[]): { line: string; cp: number; lengths: number[] }[] {
  return lines.map((l) => {
    const cp = l.overrides.contextParallel ?? base.contextParallel;
    const lengths = seqLengths.filter((s) => s % cp !== 0);
    if (lengths.length === seqLengths.length)
      throw new InputError(`line '${l.label}': CP ${cp} divides none of the sequence lengths (${seqLengths.join(', ')}); each CP rank holds seq_len / CP tokens: choose a CP that divides them${seqLengths.every((x) => (x & (x - 1)) === 0) ? ' (a power of two here)' : ''}`);
    return { line: l.label, cp, lengths };
  }).filter((g) => g.lengths.length > 0);
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

/**
 * Sweep lines from a spec like `1,1:selective:core_attn+mlp,2,4,4:full:block/8`: items
 * cp[:recompute], recompute as `recomputeSpec` writes it. `cp:recompute` alone means the default.
 */
export function parseLines(spec: string | undefined): SweepLine[] {
  return (spec || DEFAULT_LINES_SPEC).split(',').map((item) => {
    const [cp, ...rest] = item.trim().split(':');
    const c = Number(cp);
    if (!/^\d+$/.test(cp) || !Number.isInteger(c) || c < 1 || c > 4096) throw new InputError(`--lines: '${item}' does not start with a context-parallel size (a positive integer)`);
    const rc = rest.length === 0 ? 'none' : rest.join(':') === 'recompute' ? DEFAULT_RECOMPUTE : rest.join(':');
    const r = parseRecomputeSpec(rc, '--lines');
    return { label: lineLabel(c, recomputeSpec(r)), overrides: { contextParallel: c, ...r } };
  });
}

export const DEFAULT_LINES: SweepLine[] = parseLines(DEFAULT_LINES_SPEC);

/** Model presets for the planner and the CLI; `stack` is the stack the preset was measured or published with. */
export const PRESETS: Record<string, { model: ModelConfig; note: string; stack?: Stack }> = {
  'seed-32L-4096h': { model: { numLayers: 32, hiddenSize: 4096, numAttentionHeads: 32, vocabSize: 128256 }, note: 'the Megatron-LM commands of the seed module (GPT-style, 4h GeLU MLP)' },
  'llama3-8b': { model: { numLayers: 32, hiddenSize: 4096, numAttentionHeads: 32, numQueryGroups: 8, ffnHiddenSize: 14336, swiglu: true, vocabSize: 128256, untieEmbeddings: true, attentionDropout: 0, hiddenDropout: 0 }, note: 'Llama-3 8B' },
  'llama3-70b': { model: { numLayers: 80, hiddenSize: 8192, numAttentionHeads: 64, numQueryGroups: 8, ffnHiddenSize: 28672, swiglu: true, vocabSize: 128256, untieEmbeddings: true, attentionDropout: 0, hiddenDropout: 0 }, note: 'Llama-3 70B' },
  'torchcp-8L-4096h': { model: { numLayers: 8, hiddenSize: 4096, numAttentionHeads: 32, vocabSize: 8192, untieEmbeddings: true, attentionDropout: 0, hiddenDropout: 0, positionEmbedding: 'none' }, stack: 'torch-amp', note: 'the measured companion run (bench/torchcp, PyTorch AMP, 8 layers)' },
  'gpt3-175b': { model: { numLayers: 96, hiddenSize: 12288, numAttentionHeads: 96, vocabSize: 50257 }, note: 'GPT-3 175B' },
};
