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
 * moment (e.g. the last layer's attention backward runs after the loss and the last MLP are freed),
 * with what is held then that no stored term counts: a recomputed MoE layer's checkpoint input and
 * its gradient, which the token dispatcher's graph keeps from that checkpoint's backward to the
 * layer's next forward (checkpointLeftover; between steps all of them, heldAfterBackward).
 *
 * Context parallelism (cp ranks): every sequence-proportional term uses the local s/cp; without
 * FlashAttention the stored scores of the local queries cover all keys, (s/cp)·s per head. Ring
 * buffers per implementation (Megatron/TE p2p, all_gather, a2a; PyTorch's ring) are transients.
 *
 * Pipeline parallelism (p stages, 1F1B): the first stage holds L/p layers × p micro batches in
 * flight; interleaved × (1 + (p−1)/(p·v)); it holds the embedding, not the output layer.
 */
import { InputError } from '../errors.js';
import { mlpRecomputeWithBias } from './untrainable.js';
import { counted } from '../plural.js';

export type Recompute = 'none' | 'selective' | 'full';
export type RecomputeModule = 'core_attn' | 'mlp' | 'layernorm' | 'moe' | 'shared_experts';
export type RecomputeMethod = 'uniform' | 'block';
export type Stack = 'megatron' | 'torch-amp';
/**
 * Megatron-LM's --cp-comm-type values that the memory and time models count (Transformer Engine's CP
 * implementations); the ring's own schemes (a2a+p2p among them) are src/cp/schemes/registry.ts.
 */
export const CP_COMM_TYPES = ['p2p', 'all_gather', 'a2a'] as const;
export type CpCommType = typeof CP_COMM_TYPES[number];
export const RECOMPUTE_MODULES: readonly RecomputeModule[] = ['core_attn', 'mlp', 'layernorm', 'moe', 'shared_experts'];
/** Modules that exist only in MoE layers. */
const MOE_MODULES: readonly RecomputeModule[] = ['moe', 'shared_experts'];
/**
 * Megatron-LM's --moe-token-dispatcher-type values, its default first: TransformerConfig.moe_token_dispatcher_type
 * (megatron/core/transformer/transformer_config.py:891, default "allgather"), the flag made from that field
 * (megatron/training/arguments.py:2373, ArgumentGroupFactory(TransformerConfig)). The memory is the same for each; the step time's
 * expert-parallel exchange is priced by it (time/moe.ts moeDispatchMs).
 */
export const MOE_DISPATCHERS = ['allgather', 'alltoall', 'flex'] as const;
export type MoeDispatcher = typeof MOE_DISPATCHERS[number];
/** Megatron-LM's --moe-router-score-function values (TransformerConfig.moe_router_score_function). */
export const MOE_SCORE_FUNCTIONS = ['softmax', 'sigmoid', 'sqrtsoftplus'] as const;
export type MoeScoreFunction = typeof MOE_SCORE_FUNCTIONS[number];

/**
 * Mixture of experts, as Megatron-LM's flags say it (every layer's MLP replaced: --moe-layer-freq 1):
 * --num-experts, --moe-router-topk, --moe-ffn-hidden-size, --moe-shared-expert-intermediate-size,
 * --moe-expert-capacity-factor, --moe-token-dispatcher-type, --moe-router-score-function, --moe-router-enable-expert-bias.
 */
export interface MoeConfig {
  numExperts: number;
  routerTopk: number;
  /** Width of each expert's MLP (default: the model's MLP width). */
  ffnHiddenSize?: number;
  /** Width of the shared expert (none when absent). */
  sharedExpertSize?: number;
  /** Tokens an expert takes at most, as a multiple of its even share (token dropping); none = no limit. */
  capacityFactor?: number;
  dispatcher?: MoeDispatcher;
  /**
   * Megatron-LM's --moe-router-score-function (default softmax). The router term is the same for each (sigmoid keeps
   * one fp32 s·b·E tensor as the pre-softmax path keeps the softmax's; sqrtsoftplus is counted as sigmoid: docs/memory.md);
   * held for expertBias's requirement.
   */
  scoreFunction?: MoeScoreFunction;
  /**
   * Megatron-LM's --moe-router-enable-expert-bias (aux-loss-free balancing; it requires --moe-router-score-function
   * sigmoid or sqrtsoftplus, as validate refuses otherwise): each router keeps two buffers of E between steps (routerExpertBiasTerm).
   */
  expertBias?: boolean;
}

export interface ModelConfig {
  numLayers: number;
  hiddenSize: number;
  numAttentionHeads: number;
  /** K/V heads (grouped-query attention); default numAttentionHeads. */
  numQueryGroups?: number;
  /** MLP width; default 4·hidden, with SwiGLU ⌊(4·hidden·2/3)/64⌋·64 (ffnWidth). */
  ffnHiddenSize?: number;
  swiglu?: boolean;
  vocabSize?: number;
  untieEmbeddings?: boolean;
  attentionDropout?: number;
  hiddenDropout?: number;
  /** Megatron-LM's --position-embedding-type: learned_absolute adds a table of positionRows(m, s)·h parameters. Default: learned for GPT, rope for SwiGLU models. */
  positionEmbedding?: 'learned_absolute' | 'rope' | 'none';
  /**
   * Megatron-LM's --max-position-embeddings: the learned position table's rows (GPTModel's max_sequence_length), at
   * least the sequence length (arguments.py asserts it). Default: the sequence length, the least Megatron-LM takes.
   */
  maxPositionEmbeddings?: number;
  /** Linear layers with biases (Megatron-LM's --add-bias-linear, the default) and LayerNorm (2h) or RMSNorm (h). */
  biasLinear?: boolean;
  rmsNorm?: boolean;
  /** Mixture-of-experts layers (none: dense). */
  moe?: MoeConfig;
  /**
   * Megatron-LM's bias_activation_fusion (default on), as argument_utils.py sets it: --no-bias-swiglu-fusion turns it
   * off with SwiGLU, --no-bias-gelu-fusion with GeLU (arguments.py turns that one off without linear biases). The fused
   * SwiGLU keeps only its input, unfused its SiLU output and offset linear half too, and routed experts keep their
   * activation output for the router probability's scaling only unfused (moeTerms); GeLU keeps the same either way,
   * but routed experts refuse it fused (untrainable.ts).
   */
  biasActivationFusion?: boolean;
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
  /**
   * The optimizer is PyTorch's torch.optim.AdamW, not a fused Adam: Megatron-LM falls back to it where neither
   * Transformer Engine nor Apex is installed (megatron/core/optimizer/__init__.py; its log says "Falling back to Torch
   * optimizers"). Its foreach step holds one fp32 temporary a parameter (optimizerStepTransient). Default false: TE's
   * or Apex's FusedAdam, as NVIDIA's containers have; PyTorch's harness (stack torch-amp) steps AdamW(fused=True).
   */
  torchOptimizer?: boolean;
  /** Megatron-LM's --expert-model-parallel-size: experts split over EP ranks (default 1). */
  expertParallel?: number;
  /**
   * Micro batches a step (global batch / (micro batch · DP)), where known: with fewer than PP, 1F1B's first
   * stage holds only that many in flight. Unset: at least PP (the stage full).
   */
  numMicrobatches?: number;
}

export type Part = 'attention' | 'mlp' | 'layernorm' | 'embedding' | 'output' | 'loss' | 'weights' | 'ring';

export interface MemoryTerm {
  name: string;
  part: Part;
  bytes: number;
  /** How the bytes are computed, in the symbols of the header comment. */
  formula: string;
  /** Kept from one step to the next (allocated between steps, as a persistent buffer), though counted with the activations. */
  betweenSteps?: boolean;
}

export interface Transient extends MemoryTerm {
  /** Stored activation bytes already released when this transient is live. */
  freedBytes: number;
  /** Bytes live at its moment that no stored term counts: MoE checkpoints' inputs and gradients held after their backward (checkpointLeftover). */
  heldBytes?: number;
  heldFormula?: string;
  /** bytes + heldBytes − freedBytes (what it adds to the stored activations at its moment). */
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
  /** The pipeline stage these figures are of: 'all' without a pipeline, else the one whose total is larger. */
  stage: PipelineStage | 'all';
  /** With a pipeline, the other stage's total (first or last). */
  otherStage?: { stage: PipelineStage; totalBytes: number };
  /** Bytes of one fully stored layer's activations, by term (what recompute does not touch). */
  perLayer: MemoryTerm[];
  perLayerBytes: number;
  /** Layers' worth of activations on the stage (`stage`), counting micro batches in flight. */
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
  /**
   * Held between steps beside the weights and what betweenSteps terms count, but live at a transient's moment only as its
   * heldBytes say: MoE checkpoints' inputs and their gradients (checkpointLeftover); null where none.
   */
  heldAfterBackward: MemoryTerm | null;
  /** Ring buffers of context parallelism (part of the transients; 0 without CP). */
  ringBufferBytes: number;
  /**
   * The optimizer step's temporary (--torch-optimizer: torch.optim.AdamW's foreach step), one of the transients, or null
   * (a fused Adam has none). Optimizer memory, no activation: it is live once every activation is released.
   */
  optimizerStep: Transient | null;
  parameters: number;
  parametersPerGpu: number;
  weightBytes: number;
  gradientBytes: number;
  optimizerBytes: number;
  /** Gradient buckets of PyTorch DDP (torch-amp with dp·cp > 1). */
  gradientBucketBytes: number;
  /** Library workspaces held by the allocator (cuBLAS), as the stack's traces show them. */
  workspaceBytes: number;
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
  ce: { stored: number; transient: number; forward: number; storedName: string; transientName: string; forwardName: string; savedTarget: number };
  /** Vocabulary padded to a multiple of this × t (Megatron-LM's --make-vocab-size-divisible-by 128). */
  vocabDivisor: number;
  /** Unfused attention writes QKᵀ into a persistent global buffer (Megatron-LM's GlobalMemoryBuffer, 'mpu'). */
  unfusedScoresBuffer: boolean;
  /** Context parallelism: the ring's buffers, and whether the attention output is stored twice. */
  cpRing: 'megatron' | 'torch';
  cpStoresOutputTwice: boolean;
  /**
   * Tied embeddings: the output layer's bf16 weight gradient is held until the embedding's backward
   * adds its own (tensor_parallel/layers.py backward; seen at every backward peak of a tied run).
   */
  tiedGradientHeld: boolean;
  /** Library workspaces the caching allocator holds (cuBLAS: 32 MiB per handle on Hopper, one for forward and one for the autograd thread). */
  workspaceBytes: number;
  /** RoPE's table cached from one step to the next (Megatron-LM's RotaryEmbedding.forward under lru_cache: ropeTableTerm); PyTorch's harness has no RoPE. */
  ropeTableCached: boolean;
}

export const STACKS: Record<Stack, StackSpec> = {
  megatron: {
    label: 'Megatron-LM', note: 'bf16 parameters with fp32 main gradients, master weights and Adam (18 B/param); vocab-parallel cross-entropy',
    perParam: { weight: 2, gradient: 4, optimizer: 12 }, residualBytes: 2, autocastWeightCopies: false, normOutputBytes: 2, ddpGradientBuckets: false,
    idsBytes: 8, ce: { stored: 4, transient: 2, forward: 2, storedName: 'cross-entropy fp32 softmax (vocab-parallel)', transientName: 'cross-entropy backward: bf16 logits gradient', forwardName: 'end of forward: bf16 logits beside the fp32 softmax', savedTarget: 9 },
    vocabDivisor: 128, unfusedScoresBuffer: true, cpRing: 'megatron', cpStoresOutputTwice: false, tiedGradientHeld: true, workspaceBytes: 2 * 32 * 2 ** 20,
    ropeTableCached: true,
  },
  'torch-amp': {
    label: 'PyTorch AMP', note: 'bf16 autocast over fp32 parameters and AdamW (16 B/param), DDP, F.cross_entropy(logits.float()) (bench/torchcp)',
    perParam: { weight: 4, gradient: 4, optimizer: 8 }, residualBytes: 4, autocastWeightCopies: true, normOutputBytes: 4, ddpGradientBuckets: true,
    idsBytes: 16, ce: { stored: 4, transient: 8, forward: 6, storedName: 'cross-entropy fp32 log-softmax', transientName: 'cross-entropy backward: two fp32 gradients', forwardName: "end of forward: bf16 logits and their fp32 copy, and autocast's cached copies of recomputed weights", savedTarget: 0 },
    vocabDivisor: 1, unfusedScoresBuffer: false, cpRing: 'torch', cpStoresOutputTwice: true, tiedGradientHeld: false, workspaceBytes: 0,
    ropeTableCached: false,
  },
};

export const GIB = 1024 ** 3;
/**
 * Sequence parallelism as Megatron-LM runs it: only with tensor parallelism (arguments.py, "Disabling
 * sequence parallelism because tensor model parallelism is disabled"). The CLI sets it aside with a note,
 * the page's planner silently.
 */
export const megatronSequenceParallel = (requested: boolean, tensorParallel: number): boolean => requested && tensorParallel > 1;

/**
 * Megatron-LM's virtual pipeline stages (model chunks a pipeline stage holds) for `perVirtual` layers a chunk
 * (--num-layers-per-virtual-pipeline-stage; undefined: none), and whether it refuses them: 'divide' when the chunks
 * do not divide a stage's layers, 'no-pipeline' for more than one virtual stage without a pipeline (PP = 1:
 * arguments.py, 'pipeline-model-parallel size should be greater than 1'; one virtual stage is no virtual stage).
 * The one check of the CLI (configFromFlags) and the page (readParallel), each saying it in its own words.
 */
export function virtualStagesOf(numLayers: number, pp: number, perVirtual?: number): { stages: number; refused?: 'divide' | 'no-pipeline' } {
  if (!perVirtual) return { stages: 1 };
  const stages = numLayers / (pp * perVirtual);
  if (!Number.isInteger(stages) || stages < 1) return { stages, refused: 'divide' };
  return stages > 1 && pp === 1 ? { stages, refused: 'no-pipeline' } : { stages };
}
/** The vocabulary assumed where a model gives none: GPT-2's 50257 tokens (Megatron-LM's GPT2BPETokenizer). */
export const DEFAULT_VOCAB_SIZE = 50257;

export const DEFAULT_PARALLEL: ParallelConfig = {
  seqLength: 4096, microBatchSize: 1, tensorParallel: 1, contextParallel: 1, pipelineParallel: 1, virtualStages: 1,
  dataParallel: 1, sequenceParallel: false, recompute: 'none', flashAttention: true, distributedOptimizer: false,
};

/** The model's refusal: an InputError whose message names `flags` (InputError.flags: what a form marks), each once, in its order. */
const refusal = (message: string, ...flags: string[]): InputError => new InputError(message, { flags });

/** `name`: the flag the message names, or words naming no flag (then `flags` is []). */
function positiveInt(name: string, x: number, max = 2 ** 40, flags: string[] = [name]): void {
  if (!Number.isInteger(x) || x < 1) throw refusal(`${name} must be a positive integer, got ${x}`, ...flags);
  if (x > max) throw refusal(`${name} ${x} is beyond what the model handles (at most ${max})`, ...flags);
}

function fraction(flag: string, x: number | undefined): void {
  if (x !== undefined && !(Number.isFinite(x) && x >= 0 && x < 1)) throw refusal(`${flag} must be a probability in [0, 1), got ${x}`, flag);
}

/** Checks every input of the model; throws InputError naming the Megatron-LM flag. */
export function validate(m: ModelConfig, p: ParallelConfig): void {
  positiveInt('--num-layers', m.numLayers, 100_000);
  positiveInt('--hidden-size', m.hiddenSize, 1_000_000);
  positiveInt('--num-attention-heads', m.numAttentionHeads, 100_000);
  if (m.ffnHiddenSize !== undefined) positiveInt('--ffn-hidden-size', m.ffnHiddenSize, 10_000_000);
  if (m.vocabSize !== undefined) positiveInt('--vocab-size', m.vocabSize, 100_000_000);
  if (m.maxPositionEmbeddings !== undefined) positiveInt('--max-position-embeddings', m.maxPositionEmbeddings, 2 ** 31);
  fraction('--attention-dropout', m.attentionDropout);
  fraction('--hidden-dropout', m.hiddenDropout);
  for (const [n, x] of [['--seq-length', p.seqLength], ['--micro-batch-size', p.microBatchSize], ['--tensor-model-parallel-size', p.tensorParallel],
    ['--context-parallel-size', p.contextParallel], ['--pipeline-model-parallel-size', p.pipelineParallel], ['--data-parallel-size', p.dataParallel]] as const)
    positiveInt(n, x, n === '--seq-length' ? 2 ** 31 : 1_000_000);
  positiveInt('virtual pipeline stages', p.virtualStages, 1_000_000, []);
  const g = m.numQueryGroups ?? m.numAttentionHeads;
  positiveInt('--num-query-groups', g);
  if (m.hiddenSize % m.numAttentionHeads) throw refusal(`--hidden-size ${m.hiddenSize} is not divisible by --num-attention-heads ${m.numAttentionHeads}`, '--hidden-size', '--num-attention-heads');
  if (m.numAttentionHeads % g) throw refusal(`--num-attention-heads ${m.numAttentionHeads} is not a multiple of --num-query-groups ${g}`, '--num-attention-heads', '--num-query-groups');
  if (m.numAttentionHeads % p.tensorParallel) throw refusal(`--num-attention-heads ${m.numAttentionHeads} is not divisible by --tensor-model-parallel-size ${p.tensorParallel}`, '--num-attention-heads', '--tensor-model-parallel-size');
  if (g % p.tensorParallel) throw refusal(`--num-query-groups ${g} is not divisible by --tensor-model-parallel-size ${p.tensorParallel} (Megatron-LM refuses it)`, '--num-query-groups', '--tensor-model-parallel-size');
  if (m.numLayers % p.pipelineParallel) throw refusal(`--num-layers ${m.numLayers} is not divisible by --pipeline-model-parallel-size ${p.pipelineParallel}`, '--num-layers', '--pipeline-model-parallel-size');
  if (m.numLayers % (p.pipelineParallel * p.virtualStages))
    throw refusal(`--num-layers ${m.numLayers} is not divisible by --pipeline-model-parallel-size ${p.pipelineParallel} × ${p.virtualStages} virtual stages`, '--num-layers', '--pipeline-model-parallel-size');
  if (p.numMicrobatches !== undefined) {
    positiveInt('micro batches a step (global batch / (micro batch · DP))', p.numMicrobatches, 1e9, []);
    // The interleaved schedule takes micro batches in groups of PP (schedules.py): a whole number of groups.
    if (p.virtualStages > 1 && p.numMicrobatches % p.pipelineParallel)
      throw refusal(`Megatron-LM's interleaved schedule runs micro batches in groups of --pipeline-model-parallel-size: ${counted(p.numMicrobatches, 'micro batch', 'micro batches')} a step (global batch / (micro batch · DP)) is not a multiple of ${p.pipelineParallel}`, '--pipeline-model-parallel-size');
  }
  const length = seqSplitRefusal(p.seqLength, p) ?? positionTableRefusal(m, p.seqLength);   // the sequence splits, and has a position each
  if (length) throw length;
  if (!['none', 'selective', 'full'].includes(p.recompute)) throw refusal(`--recompute-granularity must be selective or full, got '${p.recompute}'`, '--recompute-granularity');
  if (p.stack !== undefined && !(p.stack in STACKS)) throw refusal(`--stack must be ${Object.keys(STACKS).join(' or ')}, got '${p.stack}'`, '--stack');
  if (p.cpCommType !== undefined && !(CP_COMM_TYPES as readonly string[]).includes(p.cpCommType))
    throw refusal(`--cp-comm-type must be ${CP_COMM_TYPES.slice(0, -1).join(', ')} or ${CP_COMM_TYPES.at(-1)}, got '${p.cpCommType}'`, '--cp-comm-type');
  if (p.stack === 'torch-amp') torchAmpRefusal(m, p);
  const attention = cpAttentionRefusal(p) ?? a2aRefusal(m, p);
  if (attention) throw attention;
  for (const mod of p.recomputeModules ?? [])
    if (!RECOMPUTE_MODULES.includes(mod)) throw refusal(`--recompute-modules: unknown module '${mod}' (this model has ${RECOMPUTE_MODULES.join(', ')}; moe_act needs --moe-grouped-gemm, which it does not model)`, '--recompute-modules', '--moe-grouped-gemm');
    else if (MOE_MODULES.includes(mod) && !m.moe) throw refusal(`--recompute-modules ${mod} needs MoE layers (--num-experts)`, '--recompute-modules', '--num-experts');
    else if (mod === 'shared_experts' && !m.moe?.sharedExpertSize) throw refusal('--recompute-modules shared_experts needs a shared expert (--moe-shared-expert-intermediate-size)', '--recompute-modules', '--moe-shared-expert-intermediate-size');
  if (m.moe) validateMoe(m.moe, p, m.biasLinear !== false);
  for (const [w, words, flag] of tpSplitWidths(m))
    if (w % p.tensorParallel) throw refusal(`${words} is not divisible by --tensor-model-parallel-size ${p.tensorParallel} (Megatron-LM splits the MLP's width over the TP ranks and refuses it)`, flag, '--tensor-model-parallel-size');
  // megatron/training/arguments.py: "When using MoE and tensor parallelism, sequence parallelism must be used".
  if (m.moe && p.tensorParallel > 1 && !p.sequenceParallel && (p.stack ?? 'megatron') === 'megatron')
    throw refusal('Megatron-LM trains MoE layers with tensor parallelism only with --sequence-parallel: add it (s/CP must then divide over the TP ranks)', '--sequence-parallel');
  validateRecompute(m, p);
}

/** The PyTorch AMP stack's refusal of Megatron-LM's own settings (the measured harness, bench/torchcp: DDP with PyTorch's context-parallel ring). */
function torchAmpRefusal(m: ModelConfig, p: ParallelConfig): void {
  const megatronOnly = [p.tensorParallel > 1 && '--tensor-model-parallel-size', p.pipelineParallel > 1 && '--pipeline-model-parallel-size',
    p.cpCommType !== undefined && p.cpCommType !== 'p2p' && '--cp-comm-type', p.distributedOptimizer && '--use-distributed-optimizer', (p.expertParallel ?? 1) > 1 && '--expert-model-parallel-size', m.moe && '--num-experts'].filter((x): x is string => !!x);
  if (megatronOnly.length) throw refusal(`--stack torch-amp models PyTorch DDP with its context-parallel ring (the measured harness): ${megatronOnly.join(', ')} ${megatronOnly.length > 1 ? 'are' : 'is'} Megatron-LM's; leave ${megatronOnly.length > 1 ? 'them' : 'it'} out or use --stack megatron`, '--stack', ...megatronOnly);
}

/** The recompute settings' checks (validate's): full with a method and N within a stage, the others only where they mean something. */
function validateRecompute(m: ModelConfig, p: ParallelConfig): void {
  if (p.recompute === 'full') {
    if (!p.recomputeMethod) throw refusal('--recompute-granularity full needs --recompute-method uniform or block (Megatron-LM refuses it without one)', '--recompute-granularity', '--recompute-method');
    if (!['uniform', 'block'].includes(p.recomputeMethod)) throw refusal(`--recompute-method must be uniform or block, got '${p.recomputeMethod}'`, '--recompute-method');
    if (p.recomputeNumLayers === undefined) throw refusal('--recompute-granularity full needs --recompute-num-layers N', '--recompute-granularity', '--recompute-num-layers');
    positiveInt('--recompute-num-layers', p.recomputeNumLayers);
    // Megatron-LM applies N within each model chunk (TransformerBlock._checkpointed_forward; interleaved, L/(PP·VP) layers,
    // and an N above that recomputes the whole chunk: layerGroups takes the smaller); above a stage's layers it is refused here.
    const stage = m.numLayers / p.pipelineParallel;
    if (p.recomputeNumLayers > stage) throw refusal(`--recompute-num-layers ${p.recomputeNumLayers} is more than the ${counted(stage, 'layer')} of a pipeline stage`, '--recompute-num-layers');
  } else {
    if (p.recomputeMethod) throw refusal(`--recompute-method ${p.recomputeMethod} needs --recompute-granularity full`, '--recompute-method', '--recompute-granularity');
    if (p.recomputeNumLayers !== undefined) throw refusal('--recompute-num-layers needs --recompute-granularity full', '--recompute-num-layers', '--recompute-granularity');
  }
  if (p.recompute !== 'selective' && p.recomputeModules?.length && p.recomputeModules.join() !== 'core_attn')
    throw refusal(`--recompute-modules ${p.recomputeModules.join(' ')} needs --recompute-granularity selective`, '--recompute-modules', '--recompute-granularity');
}

/**
 * The MLP widths Megatron-LM splits over the TP ranks (its column- and row-parallel linears divide them), each with
 * the flag that gives it as a message says it, and that flag: the dense MLP's, or, where every layer's MLP is experts, the
 * experts' (expert tensor parallelism = TP) and the shared expert's.
 */
function tpSplitWidths(m: ModelConfig): [width: number, words: string, flag: string][] {
  const f = ffnWidth(m), dense: [number, string, string] = [f, `--ffn-hidden-size ${f}${m.ffnHiddenSize === undefined ? ' (its default)' : ''}`, '--ffn-hidden-size'];
  if (!m.moe) return [dense];
  const { ffnHiddenSize: e, sharedExpertSize: sh } = m.moe;
  const routed: [number, string, string] = e === undefined ? dense : [e, `--moe-ffn-hidden-size ${e}`, '--moe-ffn-hidden-size'];
  return sh ? [routed, [sh, `--moe-shared-expert-intermediate-size ${sh}`, '--moe-shared-expert-intermediate-size']] : [routed];
}

/**
 * Why a sequence length cannot be split as the stack splits it, or null: with CP > 1 every rank takes two of 2·CP
 * equal chunks (Megatron-LM's get_batch_on_this_cp_rank views the sequence as [2·CP, s/(2·CP)], every CP type;
 * PyTorch's context_parallel balances causal attention by its head-tail load balancer, which asserts the same
 * divisibility), and sequence parallelism splits each rank's s/CP tokens over the TP ranks.
 */
export const seqSplitProblem = (s: number, p: SplitParallel): string | null => seqSplitRefusal(s, p)?.message ?? null;
type SplitParallel = Pick<ParallelConfig, 'contextParallel' | 'tensorParallel' | 'sequenceParallel' | 'stack'>;

/** seqSplitProblem's refusal, its flags with it. */
function seqSplitRefusal(s: number, p: SplitParallel): InputError | null {
  const cp = p.contextParallel, tp = p.tensorParallel;
  const who = p.stack === 'torch-amp' ? "PyTorch's context_parallel (its head-tail load balancing)" : 'Megatron-LM';
  // (the number that varies last, so that advise's skipped reasons group: src/memory/advise.ts skippedLines)
  if (cp > 1 && s % (2 * cp)) return refusal(`${who} splits the sequence into 2·CP chunks, two per CP rank: --seq-length ${s} is not divisible by 2·--context-parallel-size = ${2 * cp}`, '--seq-length', '--context-parallel-size');
  if (p.sequenceParallel && tp > 1 && (s / cp) % tp)
    return refusal(`--sequence-parallel splits each CP rank's s/CP tokens over the TP ranks: --seq-length ${s} / --context-parallel-size ${cp} is not divisible by --tensor-model-parallel-size ${tp}`, '--sequence-parallel', '--seq-length', '--context-parallel-size', '--tensor-model-parallel-size');
  return null;
}

/**
 * What of a tensor-parallel rank's attention --cp-comm-type a2a cannot split over the CP ranks, counted (n) and said
 * (what: '4 heads', '1 K/V group'), or null: its all-to-all gives each CP rank 1/CP of the rank's heads and of its
 * K/V groups (Transformer Engine's AttnFuncWithCPAndQKVOA2A).
 */
export function a2aUnsplit(m: Pick<ModelConfig, 'numAttentionHeads' | 'numQueryGroups'>, p: Pick<ParallelConfig, 'tensorParallel' | 'contextParallel'>): { n: number; what: string } | null {
  const heads = m.numAttentionHeads / p.tensorParallel, groups = (m.numQueryGroups ?? m.numAttentionHeads) / p.tensorParallel;
  if (heads % p.contextParallel) return { n: heads, what: counted(heads, 'head') };
  return groups % p.contextParallel ? { n: groups, what: counted(groups, 'K/V group') } : null;
}

/** Why Megatron-LM refuses --cp-comm-type a2a with this layout (a2aUnsplit), or null (also for another CP type). */
export const a2aProblem = (m: A2aModel, p: A2aParallel): string | null => a2aRefusal(m, p)?.message ?? null;
type A2aModel = Pick<ModelConfig, 'numAttentionHeads' | 'numQueryGroups'>;
type A2aParallel = Pick<ParallelConfig, 'tensorParallel' | 'contextParallel' | 'cpCommType'>;

/** a2aProblem's refusal, its flags with it. */
function a2aRefusal(m: A2aModel, p: A2aParallel): InputError | null {
  if (p.cpCommType !== 'a2a' || !a2aUnsplit(m, p)) return null;
  const g = m.numQueryGroups ?? m.numAttentionHeads;
  return refusal(`--cp-comm-type a2a needs the heads (${m.numAttentionHeads / p.tensorParallel}) and K/V groups (${g / p.tensorParallel}) per tensor-parallel rank divisible by --context-parallel-size ${p.contextParallel}`,
    '--cp-comm-type', '--context-parallel-size');
}

/**
 * Why Megatron-LM cannot run this CP size with this attention, or null: its local (unfused) attention asserts
 * context_parallel_size == 1 (megatron/core/transformer/dot_product_attention.py); CP runs only in Transformer
 * Engine's attention.
 */
export const cpAttentionProblem = (p: AttentionParallel): string | null => cpAttentionRefusal(p)?.message ?? null;
type AttentionParallel = Pick<ParallelConfig, 'contextParallel' | 'flashAttention' | 'stack'>;

/** cpAttentionProblem's refusal, its flags with it. */
function cpAttentionRefusal(p: AttentionParallel): InputError | null {
  return p.contextParallel > 1 && !p.flashAttention && (p.stack ?? 'megatron') === 'megatron'
    ? refusal("Megatron-LM runs context parallelism only in Transformer Engine's flash or fused attention: unfused attention (--transformer-impl local, or --no-use-flash-attn) refuses --context-parallel-size > 1; use FlashAttention (--transformer-impl transformer_engine, without --no-use-flash-attn)",
      '--transformer-impl', '--no-use-flash-attn', '--context-parallel-size')
    : null;
}

/**
 * Layers of a stage of `stageLayers` that full recompute's block method recomputes: the first N of each of its
 * VP model chunks (an N above a chunk's layers, the whole chunk), as TransformerBlock._checkpointed_forward.
 */
export const blockRecomputedLayers = (stageLayers: number, p: Pick<ParallelConfig, 'recomputeNumLayers' | 'virtualStages'>): number =>
  Math.min(p.recomputeNumLayers ?? 1, stageLayers / p.virtualStages) * p.virtualStages;

/** Layers of one model chunk: a pipeline stage's L/PP, or L/(PP·VP) with an interleaved schedule. */
export const chunkLayers = (m: Pick<ModelConfig, 'numLayers'>, p: Pick<ParallelConfig, 'pipelineParallel' | 'virtualStages'>): number =>
  m.numLayers / p.pipelineParallel / p.virtualStages;

function validateMoe(e: MoeConfig, p: ParallelConfig, biases: boolean): void {
  positiveInt('--num-experts', e.numExperts, 100_000);
  positiveInt('--moe-router-topk', e.routerTopk, e.numExperts);
  if (e.ffnHiddenSize !== undefined) positiveInt('--moe-ffn-hidden-size', e.ffnHiddenSize, 10_000_000);
  if (e.sharedExpertSize !== undefined) positiveInt('--moe-shared-expert-intermediate-size', e.sharedExpertSize, 10_000_000);
  // megatron/core/transformer/moe/shared_experts.py: "bias is not supported in the shared experts" (asserted at build).
  if (e.sharedExpertSize && biases)
    throw refusal("Megatron-LM refuses a shared expert with linear biases (shared_experts.py asserts add_bias_linear False): add --disable-bias-linear, or leave out --moe-shared-expert-intermediate-size",
      '--disable-bias-linear', '--moe-shared-expert-intermediate-size');
  if (e.capacityFactor !== undefined && !(Number.isFinite(e.capacityFactor) && e.capacityFactor > 0)) throw refusal(`--moe-expert-capacity-factor must be a positive number, got ${e.capacityFactor}`, '--moe-expert-capacity-factor');
  if (e.dispatcher !== undefined && !MOE_DISPATCHERS.includes(e.dispatcher)) throw refusal(`--moe-token-dispatcher-type must be allgather, alltoall or flex, got '${e.dispatcher}'`, '--moe-token-dispatcher-type');
  const score = e.scoreFunction ?? 'softmax';
  if (!MOE_SCORE_FUNCTIONS.includes(score)) throw refusal(`--moe-router-score-function must be ${MOE_SCORE_FUNCTIONS.join(', ')}, got '${score}'`, '--moe-router-score-function');
  // transformer_config.py: "Expert bias for aux-loss-free routing only supports 'sigmoid' and 'sqrtsoftplus' score functions"
  if (e.expertBias && score === 'softmax')
    throw refusal('Megatron-LM refuses --moe-router-enable-expert-bias with the softmax score function (TransformerConfig): add --moe-router-score-function sigmoid (or sqrtsoftplus), or leave out --moe-router-enable-expert-bias',
      '--moe-router-enable-expert-bias', '--moe-router-score-function');
  const ep = p.expertParallel ?? 1;
  positiveInt('--expert-model-parallel-size', ep, 100_000);
  if (e.numExperts % ep) throw refusal(`--num-experts ${e.numExperts} is not divisible by --expert-model-parallel-size ${ep}`, '--num-experts', '--expert-model-parallel-size');
  const dpcp = gradientRanks(p).dense;
  if (dpcp % ep)
    throw refusal(`${EP_GROUPS}: --expert-model-parallel-size ${ep} must divide --data-parallel-size × --context-parallel-size, here ${dpcp}`, '--expert-model-parallel-size', '--data-parallel-size', '--context-parallel-size');
}

/** Where Megatron-LM's expert-parallel groups lie, as the model takes it (expert tensor parallelism = TP): the one wording of every refusal of an EP. */
export const EP_GROUPS = 'Megatron-LM forms the expert-parallel groups inside the DP × CP ranks (expert tensor parallelism being TP)';

/** Sizes shared by the terms (one micro batch, one GPU). */
interface Dims {
  s: number; sl: number; b: number; h: number; a: number; hk: number; f: number; t: number; V: number;
  rep: number; sp: string; rb: number; spec: StackSpec;
  /** The local sequence as formulas write it: 's' without CP, 's/CP' with it (the values use s/CP); ss the scores' s²-like size. */
  S: string; ss: string;
  /** Head dimension h/a; RoPE applied outside a fused kernel (Megatron-LM's local attention). */
  dh: number; rope: boolean;
  /** Megatron-LM's local (unfused) attention: the s² scores, a persistent QKᵀ buffer and the boolean mask. */
  local: boolean;
  /** The pipeline stage these terms are of holds the input embedding (first), the output layer and the loss (last); both without a pipeline. */
  first: boolean;
  last: boolean;
}

/** The pipeline stages whose peaks the model computes: the first (the most micro batches in flight) and the last (the output layer and the loss). */
export type PipelineStage = 'first' | 'last';

function dims(m: ModelConfig, p: ParallelConfig, stage: PipelineStage = 'first'): Dims {
  const spec = STACKS[p.stack ?? 'megatron'];
  const a = m.numAttentionHeads, h = m.hiddenSize, t = p.tensorParallel;
  const V = paddedVocab(m, p);
  return {
    s: p.seqLength, sl: p.seqLength / p.contextParallel, b: p.microBatchSize, h, a, hk: (h * (m.numQueryGroups ?? a)) / a,
    f: ffnWidth(m), t, V, rep: p.sequenceParallel ? 1 / t : 1, sp: p.sequenceParallel ? '/t' : '',
    rb: p.fp32Residual ? 4 : spec.residualBytes, spec,
    S: p.contextParallel > 1 ? 's/CP' : 's', ss: p.contextParallel > 1 ? 's/CP·s' : 's²', dh: h / a, rope: positionEmbedding(m) === 'rope', local: !p.flashAttention && spec.unfusedScoresBuffer,
    first: p.pipelineParallel === 1 || stage === 'first', last: p.pipelineParallel === 1 || stage === 'last',
  };
}

/**
 * The MLP width where --ffn-hidden-size is not given, as Megatron-LM's arguments.py sets it: 4h, or
 * with SwiGLU ⌊(4h·2/3)/64⌋·64 (two input projections at about the parameters of a 4h MLP).
 */
export const ffnWidth = (m: Pick<ModelConfig, 'ffnHiddenSize' | 'swiglu' | 'hiddenSize'>): number =>
  m.ffnHiddenSize ?? (m.swiglu ? Math.floor((4 * m.hiddenSize * 2) / 3 / 64) * 64 : 4 * m.hiddenSize);

/** The position embedding where --position-embedding-type is not given: RoPE with SwiGLU, learned otherwise. */
export const positionEmbedding = (m: ModelConfig) => m.positionEmbedding ?? (m.swiglu ? 'rope' : 'learned_absolute');

/** Rows of the learned position table at sequence length s: --max-position-embeddings, or s where it is not given; 0 without a learned table. */
export const positionRows = (m: ModelConfig, s: number) => (positionEmbedding(m) === 'learned_absolute' ? m.maxPositionEmbeddings ?? s : 0);

/**
 * Why the position table cannot embed a sequence of s tokens, or null: Megatron-LM refuses --max-position-embeddings
 * below --seq-length (arguments.py, whatever the position embedding), as the learned table has a row a position.
 * `length` says where s comes from (a sweep's longest length).
 */
export const positionTableProblem = (m: ModelConfig, s: number, length?: string): string | null =>
  positionTableRefusal(m, s, length === undefined ? undefined : { words: length, flags: [] })?.message ?? null;

/** positionTableProblem's refusal, its flags with it: `length`'s words and the flags they name (default: --seq-length s). */
export function positionTableRefusal(m: ModelConfig, s: number, length = { words: `--seq-length ${s}`, flags: ['--seq-length'] }): InputError | null {
  const max = m.maxPositionEmbeddings;
  return max !== undefined && max < s
    ? refusal(`--max-position-embeddings ${max} is less than ${length.words}: Megatron-LM refuses it (max_position_embeddings must be at least seq_length); give at least ${s}, or leave it out (the table then has a row a position of the sequence)`,
      '--max-position-embeddings', ...length.flags)
    : null;
}

/** The model's norm as Megatron-LM's --normalization names it: what the norm terms are called wherever a person reads them. */
export const normName = (m: Pick<ModelConfig, 'rmsNorm'>): 'RMSNorm' | 'LayerNorm' => (m.rmsNorm ? 'RMSNorm' : 'LayerNorm');

/**
 * A layer term with what drops it (recomputed modules), whether it is stored after the attention core,
 * and whether the attention core's own backward has released it by the time that backward's gradients
 * of the scores are live (the attention-dropout terms: bmm's backward runs first).
 */
interface LayerTerm extends MemoryTerm {
  drop?: RecomputeModule[];
  /** Kept only when this module is recomputed (what its checkpoint saves in place of what the module would). */
  keptIf?: RecomputeModule;
  afterCore: boolean;
  beforeScoresGrad?: boolean;
}

/**
 * Every activation a fully stored layer keeps, tagged by the recompute modules that drop it. Each
 * term names the Megatron-LM line that holds the tensor (snapshot d98e8a64, megatron/core/...), as
 * the saved-tensor traces of bench/results/2026-12-02-megatron-campaign show it; a storage several
 * ops save (Q, K and V are views of one QKV output) counts once.
 */
function allLayerTerms(m: ModelConfig, p: ParallelConfig, d: Dims): LayerTerm[] {
  const { sl, b, h, t, rep, sp, rb, S } = d;
  const hidDrop = (m.hiddenDropout ?? 0.1) > 0;
  const T = (name: string, part: Part, bytes: number, formula: string, afterCore: boolean, drop?: RecomputeModule[], beforeScoresGrad = false): LayerTerm =>
    ({ name, part, bytes, formula, afterCore, drop, beforeScoresGrad });
  const norm = normName(m);
  const terms: LayerTerm[] = [
    // transformer_layer.py _run_input_layernorm: the norm keeps its input (the residual stream)
    T(`${norm} 1 input`, 'layernorm', rb * sl * b * h * rep, `${rb}·${S}·b·h${sp}`, false),
    // tensor_parallel/layers.py linear_with_grad_accumulation...: linear_qkv keeps its input
    T('QKV input', 'attention', 2 * sl * b * h * rep, `2·${S}·b·h${sp}`, false, ['layernorm']),
    ...qkvTerms(d),
  ];
  // rope_utils.py _apply_rotary_pos_emb_bshd: cos and sin ([s,1,1,d], bf16) kept twice each
  if (d.rope && d.local) terms.push(T('RoPE cos and sin', 'attention', 8 * sl * d.dh, `8·${S}·(h/a)`, false));
  terms.push(...coreTerms(m, p, d));
  terms.push(T('projection input', 'attention', (2 * sl * b * h) / t, `2·${S}·b·h/t`, true));
  if (p.contextParallel > 1 && d.spec.cpStoresOutputTwice)
    terms.push(T('attention output copy (ring merge, reshaped for the projection)', 'attention', (2 * sl * b * h) / t, `2·${S}·b·h/t`, true));
  // fused_bias_dropout.py _bias_dropout_add_func: one boolean mask per dropout
  if (hidDrop) terms.push(T('attention dropout mask', 'attention', sl * b * h * rep, `${S}·b·h${sp}`, true));
  terms.push(T(`${norm} 2 input`, 'layernorm', rb * sl * b * h * rep, `${rb}·${S}·b·h${sp}`, true));
  // A recomputed MLP keeps its checkpoint input as the LayerNorm wrote it; otherwise fc1 keeps its bf16 input. In a MoE
  // layer the router saves that same tensor (moe/moe_utils.py:1382, router_gating_linear's save_for_backward(inp); the
  // router's forward passes its input on as it is), and so do a shared expert's fc1 and the moe or shared_experts
  // checkpoint: one storage, counted once, as the router's input; the experts' tokens are the dispatcher's new tensor
  // (moe_utils.py permute: index_select), counted apart (moeTerms). Until 2026-12-07 the model counted the MoE layer's
  // input twice, as the MLP's input and as the router's.
  const nb = modules(p).some((x) => x === 'mlp' || x === 'moe') ? d.spec.normOutputBytes : 2;
  terms.push(T(m.moe ? ROUTER_INPUT : 'MLP input', 'mlp', nb * sl * b * h * rep, `${nb}·${S}·b·h${sp}`, true, ['layernorm']));
  terms.push(...(m.moe ? moeTerms(m, m.moe, p, d) : mlpTerms(m, d, sl * b, `${S}·b`, 'f', d.f, ['mlp'])));
  if (hidDrop) terms.push(T('MLP dropout mask', 'mlp', sl * b * h * rep, `${S}·b·h${sp}`, true));
  return terms;
}

/**
 * Q, K and V as they are kept. Q, K and V are views of linear_qkv's output (one storage); RoPE makes
 * new Q and K (rope_utils.py). The local core (dot_product_attention.py) keeps for baddbmm/bmm Q
 * reshaped and, with fewer K/V heads than heads, K and V repeated to every head (repeat_interleave):
 * then linear_qkv's output is not kept. A recomputed core's checkpoint (attention.py
 * _checkpointed_attention_forward) keeps its inputs instead: the rotated Q and K (or, without RoPE, Q's
 * reshaped copy where it is one) and the QKV output,
 * under FlashAttention too (the same checkpoint; read from Megatron-LM's and TE's code, not measured:
 * every stored run has local attention).
 */
function qkvTerms(d: Dims): LayerTerm[] {
  const { sl, b, h, hk, t, S } = d;
  const kv = hk === h ? 'h' : 'h·g/a';
  const T = (name: string, bytes: number, formula: string, o: Partial<LayerTerm> = {}): LayerTerm => ({ name, part: 'attention', bytes, formula, afterCore: false, ...o });
  const qkvOut = (o: Partial<LayerTerm> = {}) => T('Q, K and V (the QKV output)', (2 * sl * b * (h + 2 * hk)) / t, `2·${S}·b·(h + 2·${kv})/t`, o);
  const rotated = (o: Partial<LayerTerm> = {}) => T('Q and K after RoPE', (2 * sl * b * (h + hk)) / t, `2·${S}·b·(h + ${kv})/t`, o);
  const checkpoint = { keptIf: 'core_attn' as const };
  const core = { drop: ['core_attn' as const] };
  if (!d.local && !d.rope) return [qkvOut()];
  // RoPE (fused or not) makes new Q and K; the fused core (TE's get_qkv_layout finding no packed layout) then
  // makes V contiguous too and saves the three: as many bytes as the QKV output. A checkpointed core keeps
  // its inputs instead: the rotated Q and K, and V, a view that keeps the QKV output alive.
  if (!d.local) return [{ ...qkvOut(core), name: 'Q and K after RoPE, V made contiguous (as the fused core saves them)' }, rotated(checkpoint), qkvOut(checkpoint)];
  // attention.py get_query_key_value_tensors: Q is sliced from the [s, b, g/t, (a/g + 2)·h/a] QKV output and reshaped
  // to [s, b, a/t, h/a], a copy when a rank holds more than one group of more than one head. RoPE's Q is new anyway
  // (and RoPE saves no input); without it the checkpoint keeps the copy beside the QKV output (the MoE-extras draw's
  // r04, traced: 8 MiB a layer at attention.py:1918).
  const groupsPerRank = (hk * d.a) / h / t;
  const qCopy = !d.rope && hk < h && groupsPerRank > 1 ? [T('Q reshaped from the grouped QKV output (a copy)', (2 * sl * b * h) / t, `2·${S}·b·h/t`, checkpoint)] : [];
  const saved = d.rope ? [rotated(checkpoint), qkvOut(checkpoint)] : [qkvOut(checkpoint), ...qCopy];
  if (hk === h) return [...saved, ...(d.rope ? [rotated(core), qkvOut(core)] : [qkvOut(core)])];
  return [...saved, T('Q (rotated or reshaped) and K, V repeated to every head', (6 * sl * b * h) / t, `6·${S}·b·h/t`, core)];
}

/** The attention core: FlashAttention's LSE, or the local implementation's s² softmax and dropout. */
function coreTerms(m: ModelConfig, p: ParallelConfig, d: Dims): LayerTerm[] {
  const { s, sl, b, a, t, S, ss } = d;
  const T = (name: string, bytes: number, formula: string, beforeScoresGrad = false): LayerTerm =>
    ({ name, part: 'attention', bytes, formula, afterCore: false, drop: ['core_attn'], beforeScoresGrad });
  if (p.flashAttention) return [T('softmax LSE (FlashAttention, f32)', (4 * a * sl * b) / t, `4·a·${S}·b/t`)];
  // fused_softmax.py forward_torch_softmax keeps the softmax output; dot_product_attention.py's
  // attention_dropout keeps its mask and bmm keeps the dropped-out probabilities
  const out = [T('softmax output', (2 * a * sl * s * b) / t, `2·a·${ss}·b/t`)];
  if ((m.attentionDropout ?? 0.1) > 0)
    out.push(T('softmax dropout mask', (a * sl * s * b) / t, `a·${ss}·b/t`, true), T('softmax dropout output', (2 * a * sl * s * b) / t, `2·a·${ss}·b/t`, true));
  return out;
}

/** A MoE layer's input, the pre-MLP norm's output: what its router, a shared expert's fc1 and a moe checkpoint keep (allLayerTerms). */
export const ROUTER_INPUT = 'router input (the MoE layer input)';
/** What the routed experts' product with the router probability keeps where it is not fused into the activation (moeTerms). */
export const EXPERTS_UNSCALED = 'experts: activation output, kept by its scaling by the router probability (unfused)';
/** SwiGLU with Megatron-LM's bias activation fusion (--bias-swiglu-fusion, the default). */
const fusedSwiglu = (m: ModelConfig) => !!m.swiglu && m.biasActivationFusion !== false;

/**
 * An MLP of width w over n tokens (mlp.py): GeLU keeps fc1's output and fc2's input (2 + 2 bytes per
 * element); SwiGLU keeps fc1's output (gate and up, 4), when not fused the SiLU output and the
 * offset linear half (mlp.py glu, 2 + 2), and fc2's input (2).
 */
function mlpTerms(m: ModelConfig, d: Dims, n: number, nf: string, w: string, width: number, drop: RecomputeModule[], what = ''): LayerTerm[] {
  const T = (name: string, k: number): LayerTerm => ({ name: what + name, part: 'mlp', bytes: (k * n * width) / d.t, formula: `${k}·${nf}·${w}/t`, afterCore: true, drop });
  if (!m.swiglu) return [T('GeLU input', 2), T('second linear input', 2)];
  const out = [T('gate and up projections', 4)];
  // mlp.py glu (unfused): the product keeps the SiLU output and x_linear + glu_linear_offset (a new tensor)
  if (!fusedSwiglu(m)) out.push(T('SiLU output (unfused SwiGLU)', 2), T('linear half plus offset (unfused SwiGLU)', 2));
  out.push(T('second linear input', 2));
  return out;
}

/**
 * A MoE layer (megatron/core/transformer/moe): the router keeps its fp32 scores (its input is the layer's, counted
 * once in allLayerTerms as ROUTER_INPUT); the
 * permuted tokens (k per token, at most the capacity) feed the experts, each an MLP of width f_e
 * whose activation output is scaled by the router probability (mlp.py per_token_scale, experts.py
 * TEGroupedMLP alike); a shared expert is an MLP over every token. Unfused (GeLU, which Megatron-LM
 * never fuses with a scale, or --no-bias-swiglu-fusion) the product keeps the activation output beside
 * fc2's input, the scaled copy; the fused SwiGLU (weighted_bias_swiglu_impl, fusions/fused_bias_swiglu.py)
 * scales inside its kernel and keeps only its input and the probabilities (the MoE-extras r05 trace:
 * fused_bias_swiglu.py:335, no mlp.py:340).
 */
function moeTerms(m: ModelConfig, e: MoeConfig, p: ParallelConfig, d: Dims): LayerTerm[] {
  const { sl, b, h, S } = d;
  const k = e.routerTopk, E = e.numExperts, fe = e.ffnHiddenSize ?? d.f;
  const routed = sl * b * k * Math.min(1, e.capacityFactor ?? 1);
  const T = (name: string, bytes: number, formula: string): LayerTerm => ({ name, part: 'mlp', bytes, formula, afterCore: true, drop: ['moe'] });
  const out = [
    // the router's input is the layer's (allLayerTerms); with sequence parallelism the router sees its rank's shard of the tokens
    T('router scores (fp32, top-k and auxiliary loss)', 8 * sl * b * E * d.rep, `8·${S}·b·E${d.sp}`),
    T('permuted tokens (experts\' fc1 input)', 2 * routed * h, `2·${S}·b·k·h`),
    ...mlpTerms(m, d, routed, `${S}·b·k`, 'f_e', fe, ['moe'], 'experts: '),
  ];
  if (!fusedSwiglu(m)) out.push(T(EXPERTS_UNSCALED, (2 * routed * fe) / d.t, `2·${S}·b·k·f_e/t`));
  if (e.sharedExpertSize) out.push(...mlpTerms(m, d, sl * b, `${S}·b`, 'f_s', e.sharedExpertSize, ['moe', 'shared_experts'], 'shared expert: '));
  return out;
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
  return all.filter((x) => !x.drop?.some((y) => mods.includes(y)) && (!x.keptIf || mods.includes(x.keptIf)));
}

function inputTerm(d: Dims): MemoryTerm {
  return { name: 'layer input (full recompute)', part: 'layernorm', bytes: d.rb * d.sl * d.b * d.h * d.rep, formula: `${d.rb}·s·b·h${d.sp}` };
}

/**
 * What a checkpoint that recomputes a MoE layer leaves behind after its backward, until that layer's next forward: the
 * checkpoint's input and the input's gradient. Megatron-LM's checkpoint recomputes from detached copies of its saved
 * inputs (tensor_parallel/random.py:657, torch.utils.checkpoint.detach_variable: leaves that require grad and share the
 * saved input's storage), backpropagates into them (random.py:668) and reads their `.grad` (random.py:669), which stays
 * on the leaf. The token dispatcher keeps on itself a tensor made from the router's probabilities (allgather:
 * `self.local_probs`, moe/token_dispatcher.py:331; alltoall: `self.probs`, token_dispatcher.py:642), whose autograd graph
 * runs back through the router (moe_utils.py:1382, on the checkpoint's input) to the leaf's AccumulateGrad node, which
 * holds the leaf and so its `.grad`. The layer's next forward runs under no_grad inside the checkpoint (random.py:616) and
 * replaces the attribute with a tensor without a graph: then both are freed. So between steps (and in the optimizer
 * step) every such checkpoint holds its input and that input's gradient; in backward, each one whose backward has run.
 * One checkpoint a MoE layer with --recompute-modules moe (moe_layer.py:699, around the MoE layer, its input the pre-MLP
 * norm's output), one a checkpointed chunk with full recompute (recompute.py:142, its input the chunk's input; every
 * layer here is a MoE layer). Without a checkpoint the layer's input is no leaf, and the graph, its saved tensors freed
 * by the backward, holds nothing of size. What the dispatcher keeps besides (the routing map, the probabilities and the
 * permutation indices themselves) is held with or without a checkpoint: dispatcherKeepsTerm.
 */
interface CheckpointLeftover {
  /** Checkpoints of the stage whose recomputation runs a MoE layer. */
  checkpoints: number;
  /** How checkpoints is counted, as a formula writes it. */
  count: string;
  /** Bytes of one checkpoint's input (its gradient is as many). */
  inputBytes: number;
  input: string;
  /** One checkpoint a MoE layer (--recompute-modules moe): the last layer's backward has run it before that layer's attention backward. */
  perLayer: boolean;
  /** The stage's last layer is in such a checkpoint: its leftover lives until that layer's MoE forward. */
  lastLayer: boolean;
}

function checkpointLeftover(m: ModelConfig, p: ParallelConfig, d: Dims): CheckpointLeftover | null {
  if (!m.moe) return null;
  const stage = m.numLayers / p.pipelineParallel, L = p.pipelineParallel > 1 ? 'L/p' : 'L';
  if (modules(p).includes('moe')) {
    const nb = d.spec.normOutputBytes;
    return { checkpoints: stage, count: L, inputBytes: nb * d.sl * d.b * d.h * d.rep, input: `${nb}·${d.S}·b·h${d.sp}`, perLayer: true, lastLayer: true };
  }
  if (p.recompute !== 'full') return null;
  const chunk = chunkLayers(m, p), n = Math.min(p.recomputeNumLayers!, chunk), v = p.virtualStages;
  const uniform = p.recomputeMethod === 'uniform';
  const input = inputTerm(d);
  return { checkpoints: uniform ? Math.ceil(chunk / n) * v : blockRecomputedLayers(stage, p), count: uniform ? `⌈${L}/${n}⌉` : `${n}`,
    inputBytes: input.bytes, input: input.formula, perLayer: false, lastLayer: uniform || n === chunk };
}

/** What checkpointLeftover says is held between steps, as a term (null where nothing is). */
function heldAfterBackwardTerm(lo: CheckpointLeftover | null): MemoryTerm | null {
  return lo && { name: "MoE checkpoints' inputs and their gradients, held by the token dispatcher's graph from backward to the next forward", part: 'mlp',
    bytes: lo.checkpoints * 2 * lo.inputBytes, formula: `2·${lo.input}·${lo.count}`, betweenSteps: true };
}

/**
 * The vocabulary as the stack sizes the embedding, the output layer and the logits: Megatron-LM pads it to a multiple
 * of 128·TP (vocab_utils.py calculate_padded_vocab_size; gpt_builders.py builds GPTModel with padded_vocab_size), the
 * padding rows parameters like the rest; PyTorch's harness does not pad.
 */
export function paddedVocab(m: Pick<ModelConfig, 'vocabSize'>, p: Pick<ParallelConfig, 'tensorParallel' | 'stack'>): number {
  const div = STACKS[p.stack ?? 'megatron'].vocabDivisor * p.tensorParallel;
  return Math.ceil((m.vocabSize ?? DEFAULT_VOCAB_SIZE) / div) * div;
}

/** Parameters of the whole model (GPT/Llama-style decoder), the vocabulary padded as the stack pads it at this TP (paddedVocab; default Megatron-LM's at TP = 1). */
export function parameterCount(m: ModelConfig, seqLength: number, p: Pick<ParallelConfig, 'tensorParallel' | 'stack'> = { tensorParallel: 1 }): number {
  const x = parameterParts(m, seqLength, paddedVocab(m, p));
  return m.numLayers * (x.layer + x.routed) + x.embedding + x.output + x.finalNorm;
}

/**
 * The parameters by where they sit: a layer's (its attention, dense MLP or shared expert, norms and
 * router; its routed experts apart), the input embedding (word, and learned positions), the untied
 * output layer (both of `vocab` rows: paddedVocab), the final norm.
 */
function parameterParts(m: ModelConfig, seqLength: number, vocab: number): ParameterParts {
  const h = m.hiddenSize, a = m.numAttentionHeads, g = m.numQueryGroups ?? a, f = ffnWidth(m);
  const hk = (h * g) / a;
  const bias = linearBias(m), norm = m.rmsNorm ? 1 : 2;
  const qkvBias = bias * (h + 2 * hk), projBias = bias * h;
  const attn = h * h + 2 * h * hk + h * h + qkvBias + projBias; // Q, K, V, output (+ biases)
  const dense = mlpParameters(m, f);   // a dense model's MLP (none in a MoE layer)
  const mlp = m.moe ? 0 : dense.all;
  // TopKRouter (moe/router.py:64-72): a weight of E·h and, under add_bias_linear, a bias of E.
  const router = m.moe ? (h + bias) * m.moe.numExperts : 0;
  const perLayer = attn + mlp + 2 * norm * h + router; // two norms (+ the router)
  const e = expertParameters(m), positions = positionRows(m, seqLength) * h;
  return {
    layer: perLayer + e.shared, routed: e.routed, routedWhole: e.routedWhole,
    // Of a layer's, what every TP rank holds whole: the norms, the row-parallel layers' biases (attention's output
    // projection, the MLP's second; RowParallelLinear's bias is output-sized), the router (TopKRouter's weight and bias).
    whole: 2 * norm * h + projBias + (m.moe ? router : dense.whole),
    // Of them, the biases and 1-D parameters (undecayedParameters): split over the TP ranks, the column-parallel layers'
    // biases (QKV, fc1); whole, the norms, the row-parallel biases and the router's bias (its weight is 2-D).
    undecayed: { split: qkvBias + (m.moe ? 0 : dense.bias - dense.whole), whole: 2 * norm * h + projBias + (m.moe ? bias * m.moe.numExperts : dense.whole) },
    routedUndecayed: { split: e.routedBias - e.routedWhole, whole: e.routedWhole },
    embedding: vocab * h + positions, word: vocab * h, positions, output: m.untieEmbeddings ? vocab * h : 0, finalNorm: norm * h,
  };
}

/** parameterParts': a layer's (and of it what each TP rank holds whole), the routed experts', the embeddings', the final norm's; of a layer's and the experts', the biases and 1-D parameters apart. */
interface ParameterParts {
  layer: number; whole: number; routed: number; routedWhole: number;
  undecayed: { split: number; whole: number }; routedUndecayed: { split: number; whole: number };
  embedding: number; word: number; positions: number; output: number; finalNorm: number;
}

/** 1 where Megatron-LM's linear layers have biases (--add-bias-linear, its default), else 0. */
const linearBias = (m: ModelConfig): number => (m.biasLinear === false ? 0 : 1);

/**
 * One MLP of width f (mlp.py:220-250: fc1 and fc2 built with bias=add_bias_linear; a dense MLP, a routed expert
 * of SequentialMLP or TEGroupedMLP, experts.py:223, :246): its weights and biases, and of them what every TP rank
 * holds whole, fc2's output-sized bias (RowParallelLinear, tensor_parallel/layers.py:1484).
 */
function mlpParameters(m: ModelConfig, f: number): { all: number; whole: number; bias: number } {
  const h = m.hiddenSize, bias = linearBias(m) * ((m.swiglu ? 2 : 1) * f + h);   // fc1's and fc2's
  return { all: (m.swiglu ? 3 : 2) * h * f + bias, whole: linearBias(m) * h, bias };
}

/**
 * Parameters per GPU on a pipeline stage, and of them the routed experts': its L/PP layers, each over the TP
 * ranks but for what every TP rank holds whole (norms, row-parallel biases, the router), the routed experts
 * (but their fc2 biases, whole on each TP rank) also over the EP ranks; the first stage the input embedding too, the word embedding over the TP ranks and the
 * learned position table whole on each (LanguageModelEmbedding's "(serial)" torch.nn.Embedding: Megatron-LM's
 * own estimate, (layers / PP + embedding) / TP, leaves the table out); the last the final norm (whole) and the
 * output layer, which with tied embeddings is a copy of the word embedding there (kept in step by an
 * all-reduce); with one stage, everything. `replicated`: of them, those every TP rank holds whole that Megatron-LM
 * marks `sequence_parallel` (norms, fused_layer_norm.py:119-120; row-parallel biases, tensor_parallel/layers.py:1499;
 * the router, moe/router.py:85-88; not the position table), whose gradients sequence parallelism all-reduces over
 * the TP ranks once a step (distributed/finalize_model_grads.py:416-476).
 */
export function stageParameters(m: ModelConfig, p: ParallelConfig, stage: PipelineStage = 'first'): { perGpu: number; experts: number; replicated: number } {
  const x = parameterParts(m, p.seqLength, paddedVocab(m, p)), pp = p.pipelineParallel, tp = p.tensorParallel;
  const layers = m.numLayers / pp;
  const ep = p.expertParallel ?? 1, experts = (layers * ((x.routed - x.routedWhole) / tp + x.routedWhole)) / ep;
  const first = pp === 1 || stage === 'first', last = pp === 1 || stage === 'last';
  const split = layers * (x.layer - x.whole) + (first ? x.word : 0) + (last ? (pp === 1 ? x.output : x.word) : 0);
  const replicated = layers * (x.whole + x.routedWhole / ep) + (last ? x.finalNorm : 0);
  const whole = layers * x.whole + (first ? x.positions : 0) + (last ? x.finalNorm : 0);
  return { perGpu: split / tp + whole + experts, experts, replicated };
}

/**
 * The ranks a gradient is reduced over, which the distributed optimizer also shards its state over: DP·CP
 * for the dense parameters, DP·CP/EP for the routed experts (Megatron-LM's expert data-parallel group,
 * expert tensor parallelism being TP).
 */
export function gradientRanks(p: ParallelConfig): { dense: number; experts: number } {
  const dense = p.dataParallel * p.contextParallel;
  return { dense, experts: dense / (p.expertParallel ?? 1) };
}

/** Parameters whose optimizer state a GPU holds: all it holds, or with the distributed optimizer its shard of them. */
export function optimizerShardParameters(p: ParallelConfig, params: { perGpu: number; experts: number }): number {
  if (!p.distributedOptimizer) return params.perGpu;
  const r = gradientRanks(p);
  return (params.perGpu - params.experts) / r.dense + params.experts / r.experts;
}

/**
 * Of a stage's parameters per GPU (stageParameters), those Megatron-LM does not weight-decay, and of them the routed
 * experts': every 1-D parameter and every bias (optimizer/__init__.py:114-118: `*.bias` or len(shape) == 1), that is the
 * norms (whole on each TP rank), the linear biases (column-parallel ones split over the TP ranks: QKV and fc1;
 * row-parallel ones whole: the output projection's and fc2's), the router's bias, and the final norm on the last stage
 * (parameterParts' `undecayed`, split as stageParameters splits the rest). Their AdamW group is stepped apart from the
 * weight-decayed one (optimizerStepTransient).
 */
export function undecayedParameters(m: ModelConfig, p: ParallelConfig, stage: PipelineStage = 'first'): { perGpu: number; experts: number } {
  const x = parameterParts(m, p.seqLength, paddedVocab(m, p)), tp = p.tensorParallel, ep = p.expertParallel ?? 1;
  const layers = m.numLayers / p.pipelineParallel, last = p.pipelineParallel === 1 || stage === 'last';
  const experts = (layers * (x.routedUndecayed.split / tp + x.routedUndecayed.whole)) / ep;
  return { perGpu: layers * (x.undecayed.split / tp + x.undecayed.whole) + experts + (last ? x.finalNorm : 0), experts };
}

/**
 * Parameters of one layer's experts: the routed ones (split over EP ranks), with biases under add_bias_linear, and of
 * them the fc2 biases every TP rank holds whole; the shared one (biases refused, validateMoe); 0 for a dense model.
 */
function expertParameters(m: ModelConfig): { routed: number; routedWhole: number; routedBias: number; shared: number } {
  if (!m.moe) return { routed: 0, routedWhole: 0, routedBias: 0, shared: 0 };
  const E = m.moe.numExperts, one = mlpParameters(m, m.moe.ffnHiddenSize ?? ffnWidth(m));
  return { routed: E * one.all, routedWhole: E * one.whole, routedBias: E * one.bias, shared: (m.swiglu ? 3 : 2) * m.hiddenSize * (m.moe.sharedExpertSize ?? 0) };
}

/**
 * Weight-matrix parameters per GPU whose bf16 autocast copies are held until backward: layers of the
 * stage that are not fully recomputed (without the MLP's when it is recomputed), and the output layer
 * on the last stage. Inside a checkpoint the copies are made again in backward, not kept.
 */
function heldMatmulParamsPerGpu(m: ModelConfig, p: ParallelConfig, d: Dims, heldOnly = true): number {
  const mlp = heldOnly && modules(p).includes('mlp') ? 0 : (m.swiglu ? 3 : 2) * d.h * d.f;
  const perLayer = d.h * (d.h + 2 * d.hk) + d.h * d.h + mlp;
  const stage = m.numLayers / p.pipelineParallel;
  const stored = !heldOnly || p.recompute !== 'full' ? stage : p.recomputeMethod === 'block' ? stage - blockRecomputedLayers(stage, p) : 0;
  const out = d.last ? d.V * d.h : 0;
  return (stored * perLayer + out) / d.t;
}

/**
 * Stored layers of a stage, grouped by what each keeps (full recompute splits them). Full recompute works
 * within each model chunk (VP of them a stage, interleaved): uniform checkpoints every n layers of a chunk,
 * block the first n layers of each chunk.
 */
function layerGroups(m: ModelConfig, p: ParallelConfig, d: Dims, inflight: number, full: MemoryTerm[]): LayerGroup[] {
  const stage = m.numLayers / p.pipelineParallel, v = p.virtualStages, chunk = chunkLayers(m, p);
  const G = (label: string, layers: number, terms: MemoryTerm[]): LayerGroup => ({ label, layers: layers * inflight, terms, bytesPerLayer: sum(terms) });
  if (p.recompute !== 'full') return [G('stored layers', stage, full)];
  const n = Math.min(p.recomputeNumLayers!, chunk), each = v > 1 ? ' of each model chunk' : '';
  if (p.recomputeMethod === 'uniform') return [G(`chunk inputs (uniform, ${counted(n, 'layer')} per chunk)`, Math.ceil(chunk / n) * v, [inputTerm(d)])];
  const recomputedLayers = blockRecomputedLayers(stage, p);
  const groups = [G(`recomputed layers (block, first ${n}${each})`, recomputedLayers, [inputTerm(d)])];
  if (stage > recomputedLayers) groups.push(G('stored layers', stage - recomputedLayers, full));
  return groups;
}

/**
 * Micro batches a stage holds in flight. 1F1B's first stage: PP, or m where fewer a step (Megatron-LM's
 * estimate: min(1, num_microbatches / pp); interleaved schedules take whole groups of PP, validate()); its last
 * stage: one (it runs each micro batch's backward right after its forward), or PP interleaved (its earlier
 * model chunks' warm-up); 1 without a pipeline.
 */
function microBatchesInFlight(p: ParallelConfig, stage: PipelineStage = 'first'): number {
  const pp = p.pipelineParallel;
  if (stage === 'last' && p.virtualStages === 1) return 1;
  return p.virtualStages === 1 && p.numMicrobatches !== undefined ? Math.min(pp, p.numMicrobatches) : pp;
}

/**
 * Layers' worth of activations a stage holds, as L/PP × this: without a pipeline 1; 1F1B's first stage the
 * micro batches in flight; interleaved, its first stage p·(1 + (p−1)/(p·v)) (Megatron-LM's estimate: the
 * warm-up's 2(p−1) + (v−1)p model chunks and the one running, of L/(p·v) layers each) and its last stage
 * (v−1)p + 1 model chunks, p − (p−1)/v, both p where m = p (every forward first); 1F1B's last stage one.
 */
function layersInFlight(p: ParallelConfig, stage: PipelineStage): number {
  const pp = p.pipelineParallel, v = p.virtualStages;
  if (pp === 1) return 1;
  // With as many micro batches a step as stages, the interleaved schedule runs every forward first
  // (all_warmup_microbatches): each rank holds all m·v of its model chunks, p layer-worths.
  if (v > 1 && p.numMicrobatches === pp) return pp;
  if (v > 1) return stage === 'first' ? pp * (1 + (pp - 1) / (pp * v)) : pp - (pp - 1) / v;
  return microBatchesInFlight(p, stage);
}

/** The vocab-parallel embedding's copies of the ids at TP > 1 (outsideTerms). */
export const MASKED_IDS = 'masked input ids (int64) and out-of-range mask (bool) of the vocab-parallel embedding';

/** Terms outside the transformer layers, as theoretical_memory_usage.py names them (the first stage's and the last's). */
function outsideTerms(m: ModelConfig, p: ParallelConfig, d: Dims): MemoryTerm[] {
  const { sl, b, h, V, t, rep, sp, rb, spec, S, ss } = d, pp = p.pipelineParallel;
  // One copy per micro batch in flight on the stage.
  const inFlight = microBatchesInFlight(p, d.first ? 'first' : 'last'), k = !d.first && inFlight === 1 ? '' : inFlight < pp ? '·m' : '·p';
  const ids = d.first ? 'input ids (and labels)' : "labels and loss mask (the last stage's batch)";
  const out: MemoryTerm[] = [{ name: ids, part: d.first ? 'embedding' : 'loss', bytes: spec.idsBytes * sl * b * inFlight, formula: `${spec.idsBytes}·${S}·b${k}` }];
  // tensor_parallel/layers.py:344-347, :362, :365 (VocabParallelEmbedding at TP > 1, which the torch-amp stack refuses):
  // the ids shifted into the rank's vocabulary range (int64, saved by F.embedding) and the out-of-range mask (bool,
  // saved by the index_put_ that zeroes those rows), both until the embedding's backward; at TP = 1 F.embedding
  // saves the ids themselves.
  if (d.first && t > 1) out.push({ name: MASKED_IDS, part: 'embedding', bytes: 9 * sl * b * inFlight, formula: `9·${S}·b${k}` });
  if (d.first && (m.hiddenDropout ?? 0.1) > 0) out.push({ name: 'embedding dropout mask', part: 'embedding', bytes: sl * b * h * rep * inFlight, formula: `${S}·b·h${k}${sp}` });
  if (spec.autocastWeightCopies)
    out.push({ name: 'autocast bf16 weight copies (held until backward)', part: 'weights', bytes: 2 * heldMatmulParamsPerGpu(m, p, d), formula: '2·(weight-matrix parameters per GPU not recomputed)' });
  if (d.local) {
    // megatron/core/utils.py get_tensor (GlobalMemoryBuffer): baddbmm writes QKᵀ into one buffer kept between steps
    out.push({ name: 'QKᵀ scores buffer (unfused attention, kept between steps)', part: 'attention', bytes: (2 * d.a * sl * d.s * b) / t, formula: `2·a·${ss}·b/t`, betweenSteps: true });
    // transformer/utils.py attention_mask_func: masked_fill keeps the data loader's boolean [b,1,s,s] mask, one storage for all layers
    out.push({ name: 'attention mask (boolean, shared by the layers)', part: 'attention', bytes: sl * d.s * b * inFlight, formula: `${ss}·b${k}` });
  }
  if (d.rope && spec.ropeTableCached) out.push(ropeTableTerm(p, d));
  if (m.moe?.expertBias) out.push(routerExpertBiasTerm(m.moe.numExperts, m.numLayers / pp, pp > 1 ? 'L/p' : 'L'));
  const keeps = m.moe ? dispatcherKeepsTerm(m.moe, p, d, m.numLayers / pp, pp > 1 ? 'L/p' : 'L') : null;
  if (keeps) out.push(keeps);
  if (!d.last) return out; // the first stage of a pipeline has no output layer
  out.push({ name: `final ${normName(m)} input`, part: 'output', bytes: rb * sl * b * h * rep, formula: `${rb}·${S}·b·h${sp}` });
  out.push({ name: 'output layer input', part: 'output', bytes: (2 * sl * b * h) / (p.sequenceParallel ? t : 1), formula: `2·${S}·b·h${sp}` });
  out.push({ name: spec.ce.storedName, part: 'loss', bytes: (spec.ce.stored * sl * b * V) / t, formula: `${spec.ce.stored}·${S}·b·V/t` });
  // tensor_parallel/cross_entropy.py:45-46, :181: the target shifted into the rank's vocabulary range (int64) and its
  // out-of-range mask (bool), saved for the loss's backward at every TP (the campaign's traces: cross_entropy.py:233)
  if (spec.ce.savedTarget)
    out.push({ name: 'cross-entropy masked target (int64) and mask (bool)', part: 'loss', bytes: spec.ce.savedTarget * sl * b, formula: `${spec.ce.savedTarget}·${S}·b` });
  return out;
}

/** Bytes PyTorch's CUDA caching allocator hands out for a tensor of `bytes`: blocks of 512 bytes at least (kMinBlockSize). */
const allocatorBytes = (bytes: number): number => Math.ceil(bytes / 512) * 512;

/**
 * --moe-router-enable-expert-bias: TopKRouter (moe/router.py) registers two buffers of E, `expert_bias` (fp32,
 * persistent) and `local_tokens_per_expert` (fp32, not persistent), on the GPU in each of the stage's MoE layers.
 * Float16Module (transformer/module.py, convert_module_to_dtype_except_fp32_marked) casts every floating buffer to
 * bf16; the router's forward (_maintain_float32_expert_bias) casts expert_bias back to fp32, the token counts stay
 * bf16. Each is its own allocation, so each takes at least a 512-byte block. They live between steps; what the
 * update (distributed/finalize_model_grads.py _update_router_expert_bias) stacks once a step is L·E values, never a peak.
 */
function routerExpertBiasTerm(E: number, layers: number, perStage: string): MemoryTerm {
  return { name: 'router expert bias (fp32) and tokens per expert (bf16), kept between steps', part: 'weights',
    bytes: layers * (allocatorBytes(4 * E) + allocatorBytes(2 * E)), formula: `(4·E + 2·E bytes, each at least a 512-byte block)·${perStage}`, betweenSteps: true };
}

/** The term of RoPE's cached table (ropeTableTerm). */
export const ROPE_TABLE = "RoPE's table (fp32, lru-cached) and its inverse frequencies, kept between steps";
/** The start of the term of what the token dispatcher keeps on itself (dispatcherKeepsTerm; its dispatcher follows). */
export const DISPATCHER_KEEPS = "token dispatcher's routing map, probabilities and permutation indices";

/**
 * RoPE's table, which Megatron-LM computes once and keeps for the whole run (snapshot d98e8a64,
 * megatron/core/models/common/embeddings/rotary_pos_embedding.py): RotaryEmbedding.forward is wrapped in
 * functools.lru_cache (:177, maxsize 32, keyed on the module and its arguments), so the tensor it returns for the
 * run's one sequence length stays referenced by the cache from the first forward on. That tensor is get_emb's
 * (:168): the positions' outer product with the inverse frequencies, fp32 (inv_freq is a plain fp32 attribute,
 * :79-81, not a buffer the bf16 module casts), concatenated with itself (or stacked and viewed where
 * --rotary-interleaved: the same bytes), [s, 1, 1, kv_channels], and kv_channels is h/a (replay refuses another
 * --kv-channels); --rotary-percent below 1 would shrink it (the model takes 1.0, every stored run's); --use-rope-scaling
 * changes the frequencies only (:83-84). The sequence it covers is the whole s (get_rotary_seq_len, :299-302, undoes SP's
 * split); with CP > 1, get_pos_emb_on_this_cp_rank (rope_utils.py:48-70, index_select) makes the rank's s/CP rows a
 * new tensor and the cache keeps that one. Beside it inv_freq itself, h/(2a) fp32 (:79-81), a 512-byte block. Each
 * model chunk (GPTModel, gpt_model.py:183-194) has its own RotaryEmbedding, so an interleaved stage keeps v of each (read
 * from the code: no stored run has a pipeline). Every pipeline stage makes it (gpt_model.py:412-420, for its layers).
 * It is not the local path's cos and sin (rope_utils.py:142-143, new bf16 tensors each layer saves, a stored term) nor
 * what TE's fused RoPE saves (this very tensor, no copy); a full-recompute checkpoint saves it too (the campaign's traces
 * list it at random.py:687 under `decoder`), the same storage, allocated before the step. The traces show it live at
 * the peak of every RoPE run, 4·s·(h/a) bytes at rotary_pos_embedding.py:168 and 2·(h/a) at :79
 * (test/memory-traces-kept.test.ts). YaRN (taken as RoPE) caches its table alike (yarn_rotary_pos_embedding.py:159); its
 * cos/sin buffers of --yarn-original-max-position-embeddings rows (:98-100) are not counted.
 */
function ropeTableTerm(p: ParallelConfig, d: Dims): MemoryTerm {
  const v = p.virtualStages, table = allocatorBytes(4 * d.sl * d.dh), inv = allocatorBytes(2 * d.dh);
  const formula = `${blocks(4 * d.sl * d.dh, `4·${d.S}·(h/a)`)} + ${inv === 512 ? '512 (a block for the inverse frequencies)' : blocks(2 * d.dh, '2·(h/a)')}`;
  return { name: ROPE_TABLE, part: 'embedding',
    bytes: v * (table + inv), formula: v > 1 ? `(${formula})·${v} (model chunks)` : formula, betweenSteps: true };
}

/**
 * What Megatron-LM's token dispatcher keeps on itself from a MoE layer's forward until the same layer's next forward
 * replaces it (megatron/core/transformer/moe/token_dispatcher.py, d98e8a64), one set a layer of the stage whatever the
 * micro batches in flight (a checkpoint's recomputation replaces the first forward's). The router makes, per token of
 * the rank, its probabilities over the E experts in the logits' dtype (moe_utils.py:954: bf16, --moe-router-dtype unset,
 * as in every stored run) and its boolean routing map (:955); permute keeps the routed tokens' source rows as int64
 * (sorted_indices, moe_utils.py:475). Each is its own allocation, at least a 512-byte block:
 *  - allgather: local_map (:312), the routing map gathered over TP·EP (:290; with SP s/t·b·TP·EP = s·b·EP tokens) over the
 *    rank's E/EP experts, s·b·E bools (at EP = 1 the slice is the whole map, no copy; :334 frees the gathered one);
 *    local_probs (:331, masked_select: the probabilities of the tokens routed to the rank's experts, T·k at EP = 1) and
 *    reversed_local_input_permutation_mapping (:322, as many int64). At EP > 1 how many tokens the rank's experts take
 *    depends on the routing: counted at the balanced share, s·b·k, as moeTerms counts the permuted tokens. The gathered
 *    tokens themselves go into Megatron-LM's GlobalMemoryBuffer (:299-301, use_global_buffer; mappings.py:142), kept
 *    between steps and shared with the QKᵀ scores' buffer: not counted here (read, not run: no stored run gathers);
 *  - alltoall: probs (:642, the rank's own tokens, s·b/t with SP, × E), routing_map (:643) and
 *    reversed_local_input_permutation_mapping (:665-671, T·k int64). The splits it keeps at TP or EP > 1 (:563-590) are
 *    moved to the host (:938-951).
 * With a capacity factor the router's token dropping makes the map and the probabilities anew, of the same shapes
 * (moe_utils.py:1079-1080), and fewer tokens are routed: counted at the bound, T·k·min(1, cf), as moeTerms counts them.
 * With --moe-permute-fusion TE's row_id_map takes the indices' place (not held by the model: every stored run has it off).
 * flex (DeepEP, HybridEP) keeps its backend's handles and buffers: not read, not counted (null).
 * The traces (test/memory-traces-kept.test.ts) show each at its line, live at the peak.
 */
function dispatcherKeepsTerm(e: MoeConfig, p: ParallelConfig, d: Dims, layers: number, perStage: string): MemoryTerm | null {
  const kind = e.dispatcher ?? 'allgather';
  if (kind === 'flex') return null;
  const E = e.numExperts, cf = Math.min(1, e.capacityFactor ?? 1), ag = kind === 'allgather';
  // allgather: every token of the sequence (gathered over TP·EP, E/EP experts a rank); alltoall: the rank's own (s·b/t with SP)
  const T = ag ? d.sl * d.b : d.sl * d.b * d.rep, routed = T * e.routerTopk * cf;
  const S = `${d.S}·b${ag ? '' : d.sp}`, k = cf < 1 ? 'k·cf' : 'k';
  const map = [T * E, `${S}·E`] as const, probs = ag ? [2 * routed, `2·${S}·${k}`] as const : [2 * T * E, `2·${S}·E`] as const;
  const indices = [8 * routed, `8·${S}·${k}`] as const;
  const parts = ag ? [map, probs, indices] : [probs, map, indices];   // in the order the dispatcher's code keeps them
  const bytes = parts.reduce((x, [b]) => x + allocatorBytes(b), 0);
  return { name: `${DISPATCHER_KEEPS} (${kind}), kept until the layer's next forward`, part: 'mlp',
    bytes: layers * bytes, formula: `(${parts.map(([b, f]) => blocks(b, f)).join(' + ')})·${perStage}`, betweenSteps: true };
}

/** A tensor of `bytes` as the allocator holds it, in words: its formula where it fills whole 512-byte blocks, else rounded up to them (allocatorBytes). */
const blocks = (bytes: number, formula: string): string => (bytes % 512 === 0 ? formula : `⌈${formula}/512⌉·512`);

/**
 * Buffers of context parallelism live during one layer's attention backward (bytes for one micro
 * batch), and for Megatron-LM (Transformer Engine's context_parallel.py, snapshot d0067d0) during its
 * forward too. TE keeps for backward the same Q, K, V (local or head-sharded), O and LSE in every
 * scheme, so the schemes differ only here:
 *  - p2p (AttnFuncWithCPAndKVP2P): forward keeps every step's received K/V (p2p_comm_buffers, one per
 *    rank until forward returns: the whole sequence's K and V), every step's output in the input's dtype,
 *    bf16 (out_per_step, context_parallel.py:1672; fp32 only under FP8, :1928) and f32 LSE
 *    (softmax_lse_per_step), and the merged output, bf16 too (flash_attn_fwd_out_correction_init, :139, casts
 *    back to out_per_step's dtype; it becomes the projection's input); the causal ring's last rank runs every
 *    step on its whole local sequence; backward two [2, K+V] send/receive slots (K/V and dK/dV) and a dQ buffer;
 *  - all_gather (AttnFuncWithCPAndKVAllGather, TE d0067d0 context_parallel.py:3215-3230): forward gathers K and V
 *    (gather_along_first_dim) and reorders them (index_select: a copy that replaces the gathered tensor, freed as
 *    the name is rebound), so at most three of the four full-sequence tensors are live, 6hk·s·b/t, then K and V
 *    with the two half steps' outputs (out_per_step, bf16); backward zeroes full-sequence dK, dV (:3768-3777),
 *    gathers and reorders K, V again (:3788-3807) and reorders dK, dV at the end (:4116-4117): at most five,
 *    10hk·s·b/t;
 *  - a2a (AttnFuncWithCPAndQKVOA2A): all-to-all copies of Q, K, V and O (a2a_inputs/a2a_outputs),
 *    of dO, dQ, dK, dV in backward.
 * Formulas in the local sequence s/CP, or the full s where they hold every rank's tokens.
 */
function ringBuffers(p: ParallelConfig, d: Dims, moment: 'forward' | 'backward' = 'backward'): MemoryTerm | null {
  const R = p.contextParallel;
  if (R === 1) return null;
  const { sl, b, h, hk, a, t } = d, n = sl * b / t;
  const kv = hk === h ? 'h' : 'hk';
  if (d.spec.cpRing === 'torch')
    return moment === 'forward' ? null : { name: 'ring attention backward (PyTorch: fp32 dQ/dK/dV, contiguous and all-gathered K/V, dK/dV in flight, step grads)', part: 'ring',
      bytes: n * (4 * (h + 2 * hk) + 4 * hk + R * 4 * hk + 16 * hk + 2 * (h + 2 * hk)), formula: '(4(h+2hk) + 4hk + 4R·hk + 16hk + 2(h+2hk))·s/CP·b/t' };
  const T = (name: string, bytes: number, formula: string): MemoryTerm => ({ name, part: 'ring', bytes, formula });
  if (p.cpCommType === 'all_gather') {
    if (moment === 'backward') return T('full-sequence dK/dV and the all-gathered K/V while one is reordered (all_gather)', 10 * hk * R * n, `10·${kv}·s·b/t`);
    // The larger of the reorder's moment and the steps' (few K/V groups: the half steps' outputs weigh more).
    return 6 * hk * R >= 4 * hk * R + 2 * h ? T('all-gathered K/V while one is reordered (all_gather)', 6 * hk * R * n, `6·${kv}·s·b/t`)
      : T('all-gathered K/V and the half steps\' outputs (all_gather)', (4 * hk * R + 2 * h) * n, `(4·${kv}·s + 2h·s/CP)·b/t`);
  }
  if (p.cpCommType === 'a2a')
    return moment === 'forward' ? T('all-to-all copies of Q/K/V/O (a2a)', (2 * (h + 2 * hk) + 2 * h) * n, `(2(h+2·${kv}) + 2h)·s/CP·b/t`)
      : T('all-to-all copies of Q/K/V/O and their gradients (a2a)', 2 * (2 * (h + 2 * hk) + 2 * h) * n, `2·(2(h+2·${kv}) + 2h)·s/CP·b/t`);
  return moment === 'forward' ? T('every step\'s K/V, bf16 output and LSE, and the merged output (p2p)', (4 * hk + 2 * h + 4 * a) * R * n + 2 * h * n, `(4·${kv} + 2h + 4a)·s·b/t + 2h·s/CP·b/t`)
    : T('ring K/V and dK/dV slots and dQ (p2p)', (16 * hk + 2 * h) * n, `(16·${kv} + 2h)·s/CP·b/t`);
}

/** A transient term at its moment, net of the stored bytes already released then, with what is held then that no stored term counts. */
const transient = (term: MemoryTerm, freedBytes: number, held?: { bytes: number; formula: string }): Transient =>
  ({ ...term, freedBytes, ...(held?.bytes ? { heldBytes: held.bytes, heldFormula: held.formula } : {}), netBytes: Math.max(0, term.bytes + (held?.bytes ?? 0) - freedBytes) });

/** Transients, each with the stored bytes already released at its moment. */
function transients(m: ModelConfig, p: ParallelConfig, d: Dims, groups: LayerGroup[], outside: MemoryTerm[]): Transient[] {
  const { sl, b, h, a, s, V, t, rep, rb, spec, S, ss } = d;
  const X = transient;
  const lossAndOutput = sum(outside.filter((o) => o.part === 'output' || o.part === 'loss'));
  const list: Transient[] = [];
  if (d.last) {
    list.push(X({ name: spec.ce.transientName, part: 'loss', bytes: (spec.ce.transient * sl * b * V) / t, formula: `${spec.ce.transient}·${S}·b·V/t` }, 0));
    // autocast caches every weight copy until the forward ends, recomputed matmuls' too.
    const cached = spec.autocastWeightCopies ? 2 * (heldMatmulParamsPerGpu(m, p, d, false) - heldMatmulParamsPerGpu(m, p, d)) : 0;
    list.push(X({ name: spec.ce.forwardName, part: 'loss', bytes: (spec.ce.forward * sl * b * V) / t + cached,
      formula: `${spec.ce.forward}·${S}·b·V/t${cached ? ' + 2·(recomputed weight-matrix parameters per GPU)' : ''}` }, 0));
  }
  // A layer's attention backward runs after its MLP and projection (and, unfused, bmm's use of the
  // dropout output and mask) have been released.
  const full = keptTerms(m, { ...p, recompute: 'none' }, d);
  const releasedAtCore = sum(full.filter((x) => x.afterCore || x.beforeScoresGrad));
  const last = groups[groups.length - 1];
  const lastStored = last.label === 'stored layers' ? keptTerms(m, p, d).filter((x) => x.afterCore || x.beforeScoresGrad) : [];
  const freedAtAttn = lossAndOutput + sum(lastStored);
  // Held by MoE checkpoints (checkpointLeftover): at the last layer's attention backward, with --recompute-modules moe, that
  // layer's MoE checkpoint has run its backward: its input (which freedAtAttn counts as released) and its gradient.
  const lo = checkpointLeftover(m, p, d);
  const heldAtAttn = lo?.perLayer ? { bytes: 2 * lo.inputBytes, formula: `2·${lo.input} (the last layer's MoE checkpoint: its input and gradient)` } : undefined;
  // upstream gradients of the residual stream, and a tied output weight's gradient held from the output layer's backward on
  const tied = spec.tiedGradientHeld && !m.untieEmbeddings && p.pipelineParallel === 1 ? (2 * V * h) / t : 0;
  const upstream = (rb + 2) * sl * b * h * rep + tied;
  const ring = ringBuffers(p, d);
  // Unfused attention's backward (the autograd engine under dot_product_attention.py) holds three
  // bf16 s²-sized gradients at once (of the probabilities, the masked and the scaled scores): 6·a·s²·b
  // at every peak inside an attention backward in the campaign's traces (6.01-6.12×, build half).
  const scoresGrad = d.local ? (6 * a * sl * s * b) / t : 0;
  const up = `${rb + 2}·${S}·b·h${d.sp} (upstream gradients)${tied ? ' + 2·V·h/t (tied weight gradient)' : ''}${scoresGrad ? ` + 6·a·${ss}·b/t (three scores gradients)` : ''}`;
  // With FlashAttention at CP = 1 too, where what it holds passes what is released by then: the upstream
  // gradients (and a tied output weight's gradient) beside every stored layer, which can pass the loss's
  // transient at short sequences.
  if (ring || scoresGrad || upstream > freedAtAttn) list.push(X({ name: `last layer's attention backward${ring ? `: ${ring.name}` : scoresGrad ? ' (unfused)' : ''}`, part: ring ? 'ring' : 'attention',
    bytes: (ring?.bytes ?? 0) + scoresGrad + upstream, formula: `${ring ? ring.formula + ' + ' : ''}${up}` }, freedAtAttn, heldAtAttn));
  // The last layer's attention forward: the loss, the output layer and that layer's MLP do not exist yet.
  const ringFwd = ringBuffers(p, d, 'forward');
  // the last layer's (or its chunk's) checkpoint leftover of the step before lives until that layer's MoE forward
  const heldBefore = lo?.lastLayer ? { bytes: 2 * lo.inputBytes, formula: `2·${lo.input} (the last MoE checkpoint's input and gradient, of the step before)` } : undefined;
  if (ringFwd) list.push(X({ ...ringFwd, name: `last layer's attention forward: ${ringFwd.name}` }, freedAtAttn, heldBefore));
  list.push(...recomputeTransients(m, p, d, { scoresGrad, upstream, up, lossAndOutput, freedAtAttn, heldAtAttn }));
  if (p.recompute === 'full') {
    const layer = sum(full);
    const n = p.recomputeMethod === 'uniform' ? p.recomputeNumLayers! : 1;
    // block: its recomputed layers come last in backward, after every stored layer was released.
    const freed = lossAndOutput + (p.recomputeMethod === 'block' && p.pipelineParallel === 1 ? sum(groups.filter((g) => g.label === 'stored layers').map((g) => ({ bytes: g.bytesPerLayer * g.layers }))) : 0);
    // the chunk's last layer: its MLP backward (whole chunk live), then its attention backward (that layer's MLP released)
    // the last chunk recomputed: the gradients of the inputs of those before, held by MoE checkpoints (their inputs are stored terms still)
    const grads = lo && lo.checkpoints > 1 ? { bytes: (lo.checkpoints - 1) * lo.inputBytes, formula: `(${lo.count} − 1)·${lo.input} (the MoE chunks recomputed before: their inputs' gradients)` } : undefined;
    list.push(X({ name: `recomputing one checkpointed chunk (${counted(n, 'layer')}) in backward`, part: 'attention', bytes: n * layer + upstream + Math.max(0, scoresGrad - releasedAtCore),
      formula: `${n}·(one stored layer) + ${up}` }, freed, grads));
  }
  return list;
}

/** A recompute module (--recompute-modules' key) as a person reads it: 'layernorm' as the model's norm (RMSNorm or LayerNorm). */
const moduleWords = (x: RecomputeModule, m: ModelConfig): string =>
  ({ core_attn: 'attention core', mlp: 'MLP', layernorm: normName(m), moe: 'MoE layer', shared_experts: 'shared experts' })[x];

/** Selective recompute: each recomputed module of the last layer at its own moment in backward. */
function recomputeTransients(m: ModelConfig, p: ParallelConfig, d: Dims, c: { scoresGrad: number; upstream: number; up: string; lossAndOutput: number; freedAtAttn: number; heldAtAttn?: { bytes: number; formula: string } }): Transient[] {
  const X = transient;
  const all = allLayerTerms(m, p, d);
  const groups: { label: string; mods: RecomputeModule[]; core: boolean }[] = [];
  const mods = modules(p);
  if (mods.includes('core_attn')) groups.push({ label: 'the attention core', mods: ['core_attn'], core: true });
  const rest = mods.filter((x) => x !== 'core_attn');
  if (rest.length) groups.push({ label: `the ${rest.map((x) => moduleWords(x, m)).join(' and ')}`, mods: rest, core: false });
  return groups.map((g) => {
    // the core's dropout terms are released before its scores gradients are live
    const re = all.filter((x) => x.drop?.some((y) => g.mods.includes(y)) && !(g.core && x.beforeScoresGrad));
    const grad = g.core ? c.scoresGrad + c.upstream : c.upstream;
    return X({ name: `recomputing ${g.label} of one layer in backward`, part: g.core ? 'attention' : 'mlp', bytes: sum(re) + grad,
      formula: `${re.map((x) => x.formula).join(' + ')} + ${c.up}` }, g.core ? c.freedAtAttn : c.lossAndOutput, g.core ? c.heldAtAttn : undefined);
  });
}

/**
 * The per-GPU peak of a configuration, term by term: without a pipeline its one stage; with one, the larger
 * of its first stage (the most micro batches in flight, the input embedding) and its last (the output layer,
 * the logits and the loss), each worked out in full, the other's total beside it.
 */
export function memoryBreakdown(m: ModelConfig, p: ParallelConfig): MemoryBreakdown {
  validate(m, p);
  if (p.pipelineParallel === 1) return stageBreakdown(m, p, 'first');
  const first = stageBreakdown(m, p, 'first'), last = stageBreakdown(m, p, 'last');
  const [peak, other] = last.totalBytes > first.totalBytes ? [last, first] : [first, last];
  return { ...peak, otherStage: { stage: other.stage as PipelineStage, totalBytes: other.totalBytes } };
}

/** One pipeline stage's breakdown (memoryBreakdown gives the larger of the first and the last); without a pipeline, the one stage. */
export function stageMemory(m: ModelConfig, p: ParallelConfig, stage: PipelineStage): MemoryBreakdown {
  validate(m, p);
  return stageBreakdown(m, p, stage);
}

/**
 * The optimizer step of torch.optim.AdamW (torch/optim/adam.py _multi_tensor_adam, its default on CUDA): with every
 * activation released, `exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs)` makes one fp32 temporary for each
 * parameter of a param group at once, 4 bytes a parameter the optimizer steps on this GPU (its shard with the
 * distributed optimizer) of the group being stepped. Megatron-LM's groups are the weight-decayed parameters and the rest
 * (biases and 1-D parameters, undecayedParameters: a fraction of a percent), stepped one after the other, so the larger
 * group is counted (until 2026-12-07 every parameter was: 0.3 MiB more on the eighth draw's r00). Routed experts go to an optimizer of
 * their own only where their parameters are marked `allreduce = False`, which Transformer Engine's layers do and the
 * local implementation's do not (the only one there is without TE): the fourth fresh draw's r05 (MoE, local) peaked
 * 4 bytes × all its 1068.3 M parameters above its memory between steps, to 0.2%. Measured: the eighth held-out draw's r00
 * (643.4 M parameters, full recompute) peaked 2454.0 MiB above its memory between steps, 4 bytes × its 643.3 M
 * weight-decayed parameters to the MiB (bench/results/2026-12-06-time-heldout8). What outlives the step: the QKᵀ buffer
 * kept between steps (unfused attention) and what MoE checkpoints hold until the next forward (checkpointLeftover).
 */
function optimizerStepTransient(stepped: number, outside: MemoryTerm[], activationBytes: number, stack: Stack, held: MemoryTerm | null): Transient {
  const kept = sum(outside.filter((o) => o.betweenSteps));
  const why = stack === 'megatron' ? ' (Megatron-LM without Transformer Engine or Apex)' : ' (not fused)';
  return transient({ name: `optimizer step: torch.optim.AdamW's foreach temporary${why}`, part: 'weights',
    bytes: 4 * stepped, formula: '4·(weight-decayed parameters the optimizer steps per GPU: the larger of its two groups)' }, activationBytes - kept, held ? { bytes: held.bytes, formula: `${held.formula} (MoE checkpoints' inputs and gradients)` } : undefined);
}

/**
 * The parameters of AdamW's larger param group on this GPU, of the `stepped` it steps: its groups are stepped one after
 * another, Megatron-LM's the weight-decayed and the rest (undecayedParameters), each sharded as the whole is; the PyTorch
 * harness's one group holds every parameter (bench/torchcp/cp_memory.py:166).
 */
function largestAdamGroup(m: ModelConfig, p: ParallelConfig, stage: PipelineStage, stepped: number): number {
  if ((p.stack ?? 'megatron') !== 'megatron') return stepped;
  const undecayed = optimizerShardParameters(p, undecayedParameters(m, p, stage));
  return Math.max(stepped - undecayed, undecayed);
}

/** One stage's breakdown; without a pipeline the one stage is both first and last ('all'), whichever is asked. */
function stageBreakdown(m: ModelConfig, p: ParallelConfig, stage: PipelineStage): MemoryBreakdown {
  const d = dims(m, p, stage);
  // A fully stored layer's terms (selective modules applied; full recompute stores whole only the layers it leaves).
  const perLayer = keptTerms(m, { ...p, recompute: p.recompute === 'full' ? 'none' : p.recompute }, d).map(strip);
  const groups = layerGroups(m, p, d, layersInFlight(p, stage), perLayer);
  const outside = outsideTerms(m, p, d);
  const layerBytes = groups.reduce((x, g) => x + g.bytesPerLayer * g.layers, 0);
  const activationBytes = layerBytes + sum(outside);
  const parameters = parameterCount(m, p.seqLength, p);
  // the stage's: its layers and the embedding or the output layer; experts are split over EP ranks too (the shared expert is not)
  const { perGpu: parametersPerGpu, experts: expertsPerGpu } = stageParameters(m, p, stage);
  const stepped = optimizerShardParameters(p, { perGpu: parametersPerGpu, experts: expertsPerGpu });
  const heldAfterBackward = heldAfterBackwardTerm(checkpointLeftover(m, p, d));
  const optimizerStep = p.torchOptimizer ? optimizerStepTransient(largestAdamGroup(m, p, stage, stepped), outside, activationBytes, p.stack ?? 'megatron', heldAfterBackward) : null;
  const ts = [...transients(m, p, d, groups, outside), ...(optimizerStep ? [optimizerStep] : [])];
  const peak = ts.reduce<Transient | null>((x, y) => (!x || y.netBytes > x.netBytes ? y : x), null);
  const pr = m.paramPrecision === 'amp' ? STACKS['torch-amp'].perParam : m.paramPrecision === 'megatron' ? STACKS.megatron.perParam : d.spec.perParam;
  // The distributed optimizer shards dense parameters' state over the DP·CP ranks, and the experts' over
  // the expert data-parallel group, DP·CP/EP ranks (gradientRanks).
  const weightBytes = pr.weight * parametersPerGpu, gradientBytes = pr.gradient * parametersPerGpu;
  const optimizerBytes = pr.optimizer * stepped;
  const gradientBucketBytes = d.spec.ddpGradientBuckets && gradientRanks(p).dense > 1 ? 4 * parametersPerGpu : 0;
  const transientBytes = peak?.netBytes ?? 0;
  return {
    stack: p.stack ?? 'megatron', stage: p.pipelineParallel === 1 ? 'all' : stage, perLayer, perLayerBytes: sum(perLayer), layersHeld: groups.reduce((x, g) => x + g.layers, 0), layerGroups: groups,
    outside, transients: ts, peakTransient: peak, activationBytes, transientBytes, heldAfterBackward, ringBufferBytes: ringBuffers(p, d)?.bytes ?? 0, optimizerStep,
    parameters, parametersPerGpu, weightBytes, gradientBytes, optimizerBytes, gradientBucketBytes, weightBytesPerParam: pr.weight,
    workspaceBytes: d.spec.workspaceBytes,
    totalBytes: weightBytes + gradientBytes + optimizerBytes + gradientBucketBytes + d.spec.workspaceBytes + activationBytes + transientBytes,
  };
}

/**
 * The activations' peak: the stored activations and the largest transient of theirs (net of what its moment has freed),
 * as a measurement of the peak minus weights, gradients, optimizer and buckets reports them. The optimizer step's
 * temporary (optimizerStep) is no activation, whether or not it is the step's peak: optimizerStepBytes says it apart.
 */
export function peakActivationBytes(r: MemoryBreakdown): number {
  return r.activationBytes + Math.max(0, ...r.transients.filter((t) => t !== r.optimizerStep).map((t) => t.netBytes));
}

/** Bytes of the optimizer step's temporary (torch.optim.AdamW's foreach step, --torch-optimizer); 0 for a fused Adam. */
export const optimizerStepBytes = (r: MemoryBreakdown): number => r.optimizerStep?.bytes ?? 0;

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

/** The flag of the lines (the CLI's --lines): parseRecomputeSpec's and parseLines' default `where`. */
const LINES_FLAG = '--lines';

/** A recompute setting as recomputeSpec writes it; refused naming `where` (the flag or field it came from: its refusals' flags where it is LINES_FLAG). */
export function parseRecomputeSpec(spec: string, where = LINES_FLAG): Pick<ParallelConfig, 'recompute' | 'recomputeModules' | 'recomputeMethod' | 'recomputeNumLayers'> {
  const [kind, arg] = [spec.split(':')[0], spec.split(':').slice(1).join(':')];
  const bad = (what: string) => refusal(`${where}: ${what}`, ...(where === LINES_FLAG ? [LINES_FLAG] : []));
  if (kind === 'none' && !arg) return { recompute: 'none' };
  if (kind === 'selective') {
    if (!arg) return { recompute: 'selective', recomputeModules: ['core_attn'] };
    const mods = arg.split('+');
    for (const x of mods) if (!RECOMPUTE_MODULES.includes(x as RecomputeModule)) throw bad(`unknown recompute module '${x}' in '${spec}' (${RECOMPUTE_MODULES.join(', ')})`);
    return { recompute: 'selective', recomputeModules: mods as RecomputeModule[] };
  }
  if (kind === 'full') {
    const mm = /^(uniform|block)\/(\d+)$/.exec(arg);
    if (!mm) throw bad(`'${spec}': full recompute needs a method and a layer count, e.g. full:uniform/1 or full:block/8 (Megatron-LM refuses full recompute without a method)`);
    if (Number(mm[2]) < 1) throw bad(`'${spec}': the layer count after the method must be a positive integer (full:${mm[1]}/1 or more)`);
    return { recompute: 'full', recomputeMethod: mm[1] as RecomputeMethod, recomputeNumLayers: Number(mm[2]) };
  }
  throw bad(`'${spec}' is not a recompute setting (none, selective, selective:core_attn+mlp, full:uniform/N, full:block/N)`);
}

/**
 * The plot's "+ recompute" (a line `CP:recompute`), chosen per model and stack:
 * - selective recompute of the attention core and the MLP (`--recompute-granularity selective
 *   --recompute-modules core_attn mlp`) where Megatron-LM can train it. The seed's commands ask for
 *   selective recomputation; with FlashAttention Megatron-LM's default selective (core_attn) stores almost
 *   the same (the core keeps its Q, K, V inputs; only the LSE goes), while adding mlp drops the MLP's two
 *   4h-wide activations, about half of a layer's, at the cost of the attention core's and the MLP's
 *   forwards run again in the backward; the attention core's share grows with the context, so the cost
 *   does too (the time model's figure: advise.ts's recomputeCost, in the page's tooltips).
 * - full recompute of every layer (`--recompute-granularity full --recompute-method uniform
 *   --recompute-num-layers 1`) where it cannot: a Megatron-LM model with linear biases (the seed's) fails
 *   in the MLP's checkpoint (untrainable.ts), and core_attn alone would draw the line without recompute
 *   again. Full recompute is the recompute that moves memory and trains there, for one more forward.
 */
export const SELECTIVE_RECOMPUTE = 'selective:core_attn+mlp';
export const FULL_RECOMPUTE = 'full:uniform/1';

/** What `recompute` in a line stands for on this model and stack (SELECTIVE_RECOMPUTE or FULL_RECOMPUTE). */
export function defaultRecompute(m: ModelConfig, stack?: Stack): string {
  return mlpRecomputeWithBias(m, { recompute: 'selective', recomputeModules: ['core_attn', 'mlp'], stack }) ? FULL_RECOMPUTE : SELECTIVE_RECOMPUTE;
}

export const DEFAULT_LINES_SPEC = '1,1:recompute,2,4,4:recompute';

function lineLabel(cp: number, spec: string, dflt: string): string {
  if (spec === 'none') return `CP=${cp}`;
  if (spec === dflt) return `CP=${cp} + recompute`;
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
      if (seqSplitProblem(s, config) || cpAttentionProblem(config)) continue;
      const breakdown = memoryBreakdown(m, config);
      const totalGib = breakdown.totalBytes / GIB;
      out.push({ line: line.label, config, breakdown, totalGib, activationGib: peakActivationBytes(breakdown) / GIB, fits: totalGib <= hbmGib });
    }
  return out;
}

/** sweepGaps' refusal of lines that split none of the sequence lengths: the message names the first, `lines` every one. */
export class NoLengthError extends InputError {
  override name = 'NoLengthError';   // not the minified class name (FlashringError's constructor)
  constructor(message: string, readonly lines: string[], flags: readonly string[] = []) {
    super(message, { flags });
  }
}

/** Sequence lengths a line of a sweep leaves out, and why: 'split' (seqSplitProblem's, of the first), or 'attention' (every length: cpAttentionProblem's). */
export interface SweepGap { line: string; cp: number; lengths: number[]; reason: 'split' | 'attention'; why: string }

/**
 * The sequence lengths each line of a sweep leaves out, which sweep() skips: those it cannot split
 * (seqSplitProblem: 2·CP chunks, and s/CP over the TP ranks with SP), and every length of a CP line where
 * the attention cannot run CP (cpAttentionProblem). A line that could keep some lengths and splits none is
 * refused by name, as is a sweep with no line left; the others' gaps are for the caller to say. `defaultLines`: the
 * lines are the default ones, not the user's (the CLI without --lines), and the refusal says so.
 */
export function sweepGaps(base: ParallelConfig, seqLengths: number[], lines: SweepLine[], defaultLines = false): SweepGap[] {
  const gaps = lines.map((l): SweepGap => {
    const cfg = { ...base, ...l.overrides };
    const cp = cfg.contextParallel;
    const attention = cpAttentionProblem(cfg);
    if (attention) return { line: l.label, cp, lengths: seqLengths, reason: 'attention', why: attention };
    const lengths = seqLengths.filter((s) => seqSplitProblem(s, cfg) !== null);
    return { line: l.label, cp, lengths, reason: 'split', why: lengths.length ? seqSplitProblem(lengths[0], cfg)! : '' };
  });
  // Lines that split none of the lengths: refused, the first by name and what to choose, every one listed (NoLengthError.lines).
  const none = gaps.filter((g) => g.reason === 'split' && g.lengths.length === seqLengths.length);
  if (none.length) {
    const l = none[0], cfg = { ...base, ...lines.find((x) => x.label === l.line)!.overrides }, cp = l.cp, tp = cfg.sequenceParallel && cfg.tensorParallel > 1;
    const why = seqSplitRefusal(l.lengths[0], cfg)!;
    throw new NoLengthError(`${defaultLines ? `default line '${l.line}' (${LINES_FLAG} not given: ${DEFAULT_LINES_SPEC})` : `line '${l.line}'`}: none of the sequence lengths (${seqLengths.join(', ')}) splits over CP ${cp}${tp ? ` and TP ${cfg.tensorParallel}` : ''} (${why.message}): choose lengths that are multiples of ${cp > 1 ? 2 * cp : 1}${tp ? `·${cfg.tensorParallel}` : ''}${defaultLines ? `, or give ${LINES_FLAG}` : ''}`,
      none.map((g) => g.line), [...(defaultLines ? [LINES_FLAG] : []), ...why.flags]);
  }
  const blocked = gaps.filter((g) => g.reason === 'attention');
  if (blocked.length === lines.length) {
    const why = cpAttentionRefusal({ ...base, ...lines[0].overrides })!;
    throw refusal(`no line of the sweep can run: ${why.message}`, ...why.flags);
  }
  return gaps.filter((g) => g.lengths.length > 0);
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

/** A lines item's parts, cp[:recompute…], each trimmed: ' 2 : selective' is ['2', 'selective'] (the CLI's --lines and the page's Lines). */
export const lineParts = (item: string): string[] => item.split(':').map((x) => x.trim());

/**
 * Sweep lines from a spec like `1,1:selective:core_attn+mlp,2,4,4:full:block/8`: items
 * cp[:recompute], recompute as `recomputeSpec` writes it. `cp:recompute` alone means the model's
 * default (defaultRecompute), labelled "CP=cp + recompute", as is that setting spelled out.
 * A line given twice (by any spelling: `4:recompute` is `4:selective:core_attn+mlp` on a model without
 * linear biases) is refused: it would draw one column twice and repeat its CSV rows under one label.
 */
export function parseLines(spec: string | undefined, m: ModelConfig, stack?: Stack): SweepLine[] {
  const items = (spec || DEFAULT_LINES_SPEC).split(',');
  const dflt = defaultRecompute(m, stack);
  const lines = items.map((item) => {
    const [cp, ...rest] = lineParts(item);
    const c = Number(cp);
    if (!/^\d+$/.test(cp) || !Number.isInteger(c) || c < 1 || c > 4096) throw refusal(`${LINES_FLAG}: '${item.trim()}' does not start with a context-parallel size (a positive integer)`, LINES_FLAG);
    const rc = rest.length === 0 ? 'none' : rest.join(':') === 'recompute' ? dflt : rest.join(':');
    const r = parseRecomputeSpec(rc, LINES_FLAG);
    return { label: lineLabel(c, recomputeSpec(r), dflt), overrides: { contextParallel: c, ...r } };
  });
  lines.forEach((l, i) => {
    const j = lines.findIndex((x) => x.label === l.label);
    if (j < i)
      throw refusal(`${LINES_FLAG}: '${items[i].trim()}' is the line '${items[j].trim()}' again (${l.label}): give each line once`, LINES_FLAG);
  });
  return lines;
}

/** The default lines (DEFAULT_LINES_SPEC) on this model and stack. */
export const defaultLines = (m: ModelConfig, stack?: Stack): SweepLine[] => parseLines(DEFAULT_LINES_SPEC, m, stack);

/** Model presets for the planner and the CLI; `stack` is the stack the preset was measured or published with. */
export const PRESETS: Record<string, { model: ModelConfig; note: string; stack?: Stack }> = {
  'seed-32L-4096h': { model: { numLayers: 32, hiddenSize: 4096, numAttentionHeads: 32, vocabSize: 128256 }, note: 'the Megatron-LM commands of the seed module (GPT-style, 4h GeLU MLP)' },
  // Llama 3: no linear biases, RMSNorm (Megatron-LM's --disable-bias-linear --normalization RMSNorm); RoPE is the SwiGLU default.
  'llama3-8b': { model: { numLayers: 32, hiddenSize: 4096, numAttentionHeads: 32, numQueryGroups: 8, ffnHiddenSize: 14336, swiglu: true, vocabSize: 128256, untieEmbeddings: true, attentionDropout: 0, hiddenDropout: 0, biasLinear: false, rmsNorm: true }, note: 'Llama-3 8B' },
  'llama3-70b': { model: { numLayers: 80, hiddenSize: 8192, numAttentionHeads: 64, numQueryGroups: 8, ffnHiddenSize: 28672, swiglu: true, vocabSize: 128256, untieEmbeddings: true, attentionDropout: 0, hiddenDropout: 0, biasLinear: false, rmsNorm: true }, note: 'Llama-3 70B' },
  'torchcp-8L-4096h': { model: { numLayers: 8, hiddenSize: 4096, numAttentionHeads: 32, vocabSize: 8192, untieEmbeddings: true, attentionDropout: 0, hiddenDropout: 0, positionEmbedding: 'none' }, stack: 'torch-amp', note: 'the measured companion run (bench/torchcp, PyTorch AMP, 8 layers)' },
  'gpt3-175b': { model: { numLayers: 96, hiddenSize: 12288, numAttentionHeads: 96, vocabSize: 50257 }, note: 'GPT-3 175B' },
};
