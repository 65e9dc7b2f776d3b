/**
 * The kernels of one training step, as work: for each op its forward and backward FLOPs (GEMMs,
 * batched GEMMs, FlashAttention) or bytes read + written (memory-bound kernels), how many kernels it
 * launches each way, and which recompute module runs its forward again. The layer is Megatron-LM's
 * GPT layer (megatron/core/transformer, snapshot d98e8a64); with `--transformer-impl local` its
 * attention is unfused (dot_product_attention.py: baddbmm into the s² scores, masked_fill_ with the
 * data loader's mask, softmax in bf16 (attention_softmax_in_fp32 False), dropout, bmm; causal
 * masking computes every score and masks half), with Transformer Engine it is one FlashAttention
 * kernel counting the causal half only. Bytes per element are bf16 (2) unless the op says otherwise.
 *
 * Per layer, T tokens (s·b/CP), h hidden, a heads, g K/V groups (hk = h·g/a), d = h/a, f MLP width,
 * t tensor-parallel ranks (norms, dropouts and residual adds on T/t tokens with sequence parallelism),
 * E = b·(a/t)·(s/CP)·s attention scores.
 */
import { attentionPairFlops } from '../../shape.js';
import { ffnWidth, paddedVocab, positionEmbedding, type CpCommType, type ModelConfig, type ParallelConfig, type RecomputeModule } from '../model.js';

export type OpKind = 'gemm' | 'bmm' | 'flash' | 'copy' | 'softmax' | 'dropout' | 'scores';
/** The unfused attention core's kernels over the scores, priced per score at the profile's in-step rates (devices.ts ScoreRates). */
export type ScoreKey = 'maskFill' | 'maskFillContiguous' | 'softmaxFwd' | 'softmaxBwd' | 'gradCopies' | 'dropoutFwd' | 'dropoutBwd';
export type OpTerm = 'gemm' | 'attention' | 'elementwise' | 'moe' | 'loss' | 'embedding' | 'gradients';

export interface Op {
  name: string;
  term: OpTerm;
  kind: OpKind;
  /** Forward and backward work: FLOPs (gemm, bmm, flash), bytes read + written (copy, softmax, dropout) or attention scores (scores). */
  fwd: number;
  bwd: number;
  /** gemm: the forward GEMM (m×k · k×n); backward is dX (m×n · n×k) and dW (k×m · m×n). */
  shape?: [number, number, number];
  /** gemm: how many GEMMs of that shape (the experts of a MoE layer); default 1. */
  count?: number;
  /** scores: the profile's rate forward and backward (null: no kernel that way). */
  rates?: [ScoreKey | null, ScoreKey | null];
  /** bmm and flash: head dimension; scores: sequence; flash: queries of one call, mask, batch × heads of a call. */
  d?: number;
  s?: number;
  heads?: number;
  /** flash: keys of one call (default s). */
  sk?: number;
  causal?: boolean;
  /** flash: which FlashAttention (default the flash backend; 'sdpa': PyTorch's SDPA with no backend chosen). */
  backend?: 'flash' | 'sdpa';
  /** Kernels launched forward and backward. */
  kernels: [number, number];
  /** The recompute module whose checkpoint runs this op's forward again in backward. */
  module?: RecomputeModule;
  /**
   * gemm: a column-parallel linear with tensor parallelism's collectives in its backward (QKV, a dense MLP's or shared
   * expert's fc1, the output layer; not the routed experts', whose tokens the dispatcher moves): they run behind its
   * own backward GEMMs (iteration.ts tpRegionMs).
   */
  tpColumn?: boolean;
}

/** What the time model reads beyond the memory model's configuration (Megatron-LM's fusion flags). */
export interface FusionFlags {
  /** --bias-dropout-fusion (default on): bias + dropout + residual add in one kernel. */
  biasDropout: boolean;
  /** --bias-gelu-fusion / --bias-swiglu-fusion (default on; GeLU's is off without linear biases). */
  biasActivation: boolean;
}

export interface TimeDims {
  T: number; Tn: number; h: number; a: number; hk: number; d: number; f: number; t: number; V: number;
  s: number; sl: number; b: number; flash: boolean; rope: boolean; learnedPos: boolean; bias: boolean;
  attnDrop: boolean; hidDrop: boolean; swiglu: boolean; fusion: FusionFlags;
  /** The training stack's op set: Megatron-LM's, or PyTorch autocast over fp32 parameters (torchAmp.ts). */
  amp: boolean;
  /** How CP splits the attention core's calls (PyTorch's ring calls as p2p does). */
  cpComm: CpCommType;
}

export function timeDims(m: ModelConfig, p: ParallelConfig, fusion: FusionFlags): TimeDims {
  const a = m.numAttentionHeads, h = m.hiddenSize, t = p.tensorParallel, sl = p.seqLength / p.contextParallel, b = p.microBatchSize;
  const pos = positionEmbedding(m);
  return {
    T: sl * b, Tn: p.sequenceParallel ? (sl * b) / t : sl * b, h, a, hk: (h * (m.numQueryGroups ?? a)) / a, d: h / a,
    f: ffnWidth(m), t, V: paddedVocab(m, p), s: p.seqLength, sl, b,
    flash: p.flashAttention, rope: pos === 'rope', learnedPos: pos === 'learned_absolute', bias: m.biasLinear !== false,
    attnDrop: (m.attentionDropout ?? 0.1) > 0, hidDrop: (m.hiddenDropout ?? 0.1) > 0, swiglu: !!m.swiglu, fusion, amp: p.stack === 'torch-amp',
    cpComm: p.stack === 'torch-amp' ? 'p2p' : p.cpCommType ?? 'p2p',
  };
}

/** A memory-bound op over n elements: bytes per element forward and backward, kernels each way. */
export const ew = (name: string, term: OpTerm, n: number, fb: number, bb: number, kernels: [number, number], kind: OpKind = 'copy', module?: RecomputeModule): Op =>
  ({ name, term, kind, fwd: n * fb, bwd: n * bb, kernels, module });

/** A linear layer's GEMM (tokens × in → out); its bias add is a separate kernel when it is not fused into a later op. */
export function linear(name: string, term: OpTerm, T: number, inF: number, outF: number, module?: RecomputeModule): Op {
  return { name, term, kind: 'gemm', fwd: 2 * T * inF * outF, bwd: 4 * T * inF * outF, shape: [T, outF, inF], kernels: [1, 2], module };
}

/** A LayerNorm/RMSNorm (torch.nn, the local spec without apex): one kernel forward, the input and weight gradients backward. */
const norm = (name: string, x: TimeDims, module?: RecomputeModule): Op => ew(name, 'elementwise', x.Tn * x.h, 4, 6, [1, 2], 'copy', module);

/** QKV projection, RoPE (unfused: mul, rotate_half's neg and cat, mul, add, cat per Q and K), Q reshaped with GQA. */
function qkvOps(x: TimeDims): Op[] {
  const q = (x.T * x.h) / x.t, k = (x.T * x.hk) / x.t, qkv = q + 2 * k;
  const ops: Op[] = [{ ...linear('QKV projection', 'gemm', x.T, x.h, qkv / x.T), tpColumn: true }];
  if (x.bias) ops.push(ew('QKV bias add', 'elementwise', qkv, 4, 2, [1, 1]));
  if (x.rope && !x.flash) ops.push(ew('RoPE on Q and K (unfused)', 'elementwise', q + k, 24, 16, [12, 10]));
  if (x.hk < x.h && !x.flash) ops.push(ew('Q reshaped (GQA view copy)', 'elementwise', q, 4, 4, [1, 1]));
  return ops;
}

const INT32_MAX = 2 ** 31 - 1;

/**
 * How PyTorch runs the masked_fill_ over the bf16 scores [b, a/t, sl, s] with the data loader's bool
 * mask [b, 1, sl, s], broadcast over the heads. A call whose largest byte offset passes 2³¹ − 1
 * (TensorIterator can_use_32bit_indexing: 1 + Σ (size − 1)·stride in bytes, 2 B a score) is split,
 * the dimension of the largest extent halved (with_32bit_indexing), until every piece fits. A piece
 * over several heads is strided (the mask's head stride is 0): PyTorch's strided elementwise kernel;
 * a piece within one head is contiguous: its vectorised kernel, 2.4× faster (profiled: 1.15 ms per
 * 10⁹ scores at s = 32768, 2.77-3.01 at 2K-16K). So at sl·s > 2²⁹ (two heads' bytes past the bound)
 * every piece is one head or less; below, a call that must split has pieces of several heads, or a mix
 * (three heads: one, then two). Returns the kernels a call launches and the share of the scores in
 * contiguous pieces. One head a GPU with b > 1 counts as strided (contiguous with the loader's mask,
 * not with a causal [1, 1, s, s] one; no such step was measured).
 */
export function maskPieces(x: TimeDims): { pieces: number; contiguous: number } {
  const slice = x.sl * x.s, A = x.a / x.t, E = x.b * A * slice;
  // A piece: kb batches × kh heads × n scores of one head (n ≤ slice), at the original strides.
  const go = (kb: number, kh: number, n: number): { pieces: number; contiguous: number } => {
    const ext = [n - 1, (kh - 1) * slice, (kb - 1) * A * slice];
    if (1 + 2 * (ext[0] + ext[1] + ext[2]) <= INT32_MAX) return { pieces: 1, contiguous: kb === 1 && kh === 1 ? n : 0 };
    const dim = ext.indexOf(Math.max(...ext)), size = [n, kh, kb][dim], half = Math.floor(size / 2);
    const part = (k: number) => (dim === 0 ? go(kb, kh, k) : dim === 1 ? go(kb, k, n) : go(k, kh, n));
    const p = part(half), q = part(size - half);
    return { pieces: p.pieces + q.pieces, contiguous: p.contiguous + q.contiguous };
  };
  const r = go(x.b, A, slice);
  return { pieces: r.pieces, contiguous: r.contiguous / E };
}

/** A kernel over the core's scores (kind 'scores'): `share` of the E scores, at rate f forward and b backward (null: no kernel that way). */
const scoreOp = (x: TimeDims, E: number, name: string, f: ScoreKey | null, b: ScoreKey | null, kernels: [number, number], share = 1): Op =>
  ({ name, term: 'attention', kind: 'scores', fwd: f ? E * share : 0, bwd: b ? E * share : 0, rates: [f, b], s: x.s, kernels, module: 'core_attn' });

/** The attention core: unfused (local) with its s² elementwise passes, or one FlashAttention kernel. */
export function coreOps(x: TimeDims): Op[] {
  const E = x.b * (x.a / x.t) * x.sl * x.s, M = 'core_attn' as const;
  if (x.flash) return flashOps(x);
  const bmm = (name: string): Op => ({ name, term: 'attention', kind: 'bmm', fwd: 2 * E * x.d, bwd: 4 * E * x.d, d: x.d, kernels: [1, 2], module: M });
  const sc = (name: string, f: ScoreKey | null, b: ScoreKey | null, kernels: [number, number]) => scoreOp(x, E, name, f, b, kernels);
  const ops: Op[] = [];
  if (x.hk < x.h) ops.push(ew('K, V repeated to every head', 'attention', (2 * x.T * x.h) / x.t, 4, 4, [2, 2], 'copy', M));
  ops.push(bmm('QKᵀ (baddbmm, every score)'));
  ops.push(...maskOps(x, E));
  ops.push(sc('softmax (bf16)', 'softmaxFwd', 'softmaxBwd', [1, 1]));
  ops.push(sc('s² gradient copies, fill and multiply (autograd around the in-place masked_fill_ on a view)', null, 'gradCopies', [0, 3]));
  if (x.attnDrop) ops.push(sc('attention dropout', 'dropoutFwd', 'dropoutBwd', [1, 1]));
  ops.push(bmm('PV (bmm)'));
  ops.push(ew('context permute', 'attention', (x.T * x.h) / x.t, 4, 4, [1, 1], 'copy', M));
  return ops;
}

/**
 * FlashAttention's causal calls on one rank, each priced at the rate its shape gets (rates.ts): without
 * CP one call of s; p2p (and PyTorch's ring) a causal call of its T local tokens and R − 1 non-causal
 * calls of T × T/2 (load balancing: each step's pairs are T²/2); a2a one call of s over heads/R;
 * all_gather two calls of T/2 queries against the keys up to each of its chunks (bottom-right causal),
 * the last rank's: R·T/2 and (R + 1)·T/2 keys. Forward 4·pairs·d per head, backward ×2.5.
 */
function flashOps(x: TimeDims): Op[] {
  const R = x.s / x.sl, H = x.b * (x.a / x.t), T = x.sl;
  const call = (name: string, n: number, q: number, k: number, causal: boolean, heads: number): Op => {
    const pairs = (causal ? q * k - (q * q) / 2 : q * k) * n;
    return {
      name, term: 'attention', kind: 'flash', fwd: attentionPairFlops(pairs, 1, heads, x.d), bwd: attentionPairFlops(pairs, 1, heads, x.d, 'bwd'), d: x.d, s: q, sk: k, heads, causal,
      backend: x.amp ? 'sdpa' : 'flash', kernels: [n, 2 * n], module: 'core_attn',
    };
  };
  if (R <= 1) return [call('FlashAttention (causal)', 1, x.s, x.s, true, H)];
  if (x.cpComm === 'a2a') return [call(`FlashAttention (causal), heads over ${R} ranks`, 1, x.s, x.s, true, H / R)];
  if (x.cpComm === 'all_gather')
    return [call('FlashAttention (causal), first chunk against the keys before it', 1, T / 2, (R * T) / 2, true, H),
      call('FlashAttention (causal), second chunk against the keys before it', 1, T / 2, ((R + 1) * T) / 2, true, H)];
  return [call('FlashAttention ring: diagonal step (causal T × T)', 1, T, T, true, H), call(`FlashAttention ring: ${R - 1} later steps (T × T/2)`, R - 1, T, T / 2, false, H)];
}

/** The masked_fill_ (forward, and its gradient backward): its contiguous and strided pieces at their rates (maskPieces). */
function maskOps(x: TimeDims, E: number): Op[] {
  const { pieces, contiguous } = maskPieces(x);
  const part = (key: ScoreKey, share: number, what: string) =>
    scoreOp(x, E, `mask (masked_fill_: scores, bool mask${what})`, key, key, [pieces * share, pieces * share], share);
  if (contiguous === 0) return [part('maskFill', 1, '')];
  if (contiguous === 1) return [part('maskFillContiguous', 1, ', contiguous pieces')];
  return [part('maskFillContiguous', contiguous, ', its contiguous pieces'), part('maskFill', 1 - contiguous, ', its strided pieces')];
}

/** Bias + dropout + residual add after the projection and after the MLP: one fused kernel, or up to three. */
export function residualOps(x: TimeDims, where: string): Op[] {
  const n = x.Tn * x.h;
  if (x.fusion.biasDropout) return [ew(`bias-dropout-add (${where}, fused)`, 'elementwise', n, x.hidDrop ? 7 : 6, x.hidDrop ? 11 : 6, [1, 2])];
  const ops: Op[] = [];
  if (x.bias) ops.push(ew(`bias add (${where})`, 'elementwise', n, 4, 2, [1, 1]));
  if (x.hidDrop) ops.push(ew(`hidden dropout (${where})`, 'elementwise', n, 5, 5, [1, 1], 'dropout'));
  ops.push(ew(`residual add (${where})`, 'elementwise', n, 6, 6, [1, 1]));
  return ops;
}

/** A dense MLP on n tokens of width w (fc1, activation, fc2): GeLU, or SwiGLU (chunk, SiLU, multiply). */
export function mlpOps(x: TimeDims, name: string, n: number, w: number, term: OpTerm, module: RecomputeModule): Op[] {
  const fw = (n * w) / x.t;
  const ops: Op[] = [{ ...linear(`${name} fc1`, term, n, x.h, ((x.swiglu ? 2 : 1) * w) / x.t, module), tpColumn: module !== 'moe' }];
  if (x.swiglu) ops.push(x.fusion.biasActivation ? ew(`${name} SwiGLU (fused)`, term, fw, 6, 10, [1, 1], 'copy', module)
    : ew(`${name} SwiGLU (SiLU, offset, multiply)`, term, fw, 14 + (x.bias ? 8 : 0), 26, [3 + (x.bias ? 1 : 0), 4 + (x.bias ? 1 : 0)], 'copy', module));
  else ops.push(x.fusion.biasActivation && x.bias ? ew(`${name} bias-GeLU (fused)`, term, fw, 4, 6, [1, 1], 'copy', module)
    : ew(`${name} GeLU`, term, fw, 4 + (x.bias ? 4 : 0), 6 + (x.bias ? 2 : 0), [1 + (x.bias ? 1 : 0), 1 + (x.bias ? 1 : 0)], 'copy', module));
  ops.push(linear(`${name} fc2`, term, n, w / x.t, x.h, module));
  return ops;
}

/** The attention half of a layer's forward: norm, QKV, the core, the projection, its residual add, the pre-MLP norm (step.ts adds the MLP or the MoE layer). */
export function attentionOps(x: TimeDims): Op[] {
  return [norm('input norm', x, 'layernorm'), ...qkvOps(x), ...coreOps(x), linear('output projection', 'gemm', x.T, x.h / x.t, x.h),
    ...residualOps(x, 'attention'), norm('pre-MLP norm', x, 'layernorm')];
}

/**
 * Outside the layers: the embedding (lookup, learned positions, dropout; backward a dense scatter
 * into the V·h gradient), the final norm, the output layer's GEMM and the vocab-parallel
 * cross-entropy (tensor_parallel/cross_entropy.py on T·V/t logits: float() 6 B, max 4, subtract 8,
 * exp 8, sum 4, divide 8 forward; multiply 8 and the bf16 cast back 6 backward).
 */
export function outsideOps(x: TimeDims): Op[] {
  const th = x.Tn * x.h, logits = (x.T * x.V) / x.t;
  const ops = [ew('embedding lookup', 'embedding', x.T * x.h, 2 + (x.learnedPos ? 6 : 0), 8, [1 + (x.learnedPos ? 1 : 0), 6]),
    ew('embedding weight gradient (dense)', 'embedding', (x.V * x.h) / x.t, 0, 2, [0, 1])];
  if (x.hidDrop) ops.push(ew('embedding dropout', 'embedding', th, 5, 5, [1, 1], 'dropout'));
  ops.push(ew('final norm', 'loss', th, 4, 6, [1, 2]), { ...linear('output layer (logits)', 'loss', x.T, x.h, x.V / x.t), tpColumn: true },
    ew('cross-entropy (fp32, vocab-parallel)', 'loss', logits, 38, 14, [8, 3]));
  return ops;
}

/** Parameter tensors of one layer (weights, biases, norms; this rank's E/EP experts) and outside the layers: one main-gradient add and a few optimizer launches each. */
export function parameterTensors(m: ModelConfig, ep = 1): { perLayer: number; outside: number } {
  const bias = m.biasLinear === false ? 0 : 1, normT = m.rmsNorm ? 1 : 2;
  const experts = m.moe ? (m.moe.numExperts / ep) * (2 + 2 * bias) + 1 + (m.moe.sharedExpertSize ? 2 : 0) : 2 + 2 * bias;
  const pos = positionEmbedding(m) === 'learned_absolute' ? 1 : 0;
  return { perLayer: 2 * normT + 2 + 2 * bias + experts, outside: 1 + pos + normT + (m.untieEmbeddings ? 1 : 0) };
}

/** Parameter tensors of `layers` transformer layers and what lies outside them (a stage's count: layers = L / p). */
export function parameterTensorCount(m: ModelConfig, layers = m.numLayers, ep = 1): number {
  const t = parameterTensors(m, ep);
  return layers * t.perLayer + t.outside;
}
