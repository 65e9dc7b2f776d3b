/**
 * The ops of the PyTorch companion harness (bench/torchcp/cp_memory.py, the memory model's
 * `--stack torch-amp`): bf16 autocast over fp32 parameters. What differs from Megatron-LM's layer:
 * the norm (the harness's nn.LayerNorm; named 'norm' as ops.ts names Megatron-LM's) runs in fp32 on
 * the fp32 residual stream (8 B per element forward, 12 backward) and its output is cast to bf16
 * before each linear layer (6 B, and the gradient cast back); autocast copies
 * every weight to bf16 in each forward (6 B per parameter) and AccumulateGrad adds each bf16 weight
 * gradient into the fp32 .grad (10 B); biases are fused into the GEMM (addmm); the residual add is
 * fp32 + bf16 → fp32 (10 B); attention is SDPA's FlashAttention (causal), its output transposed back
 * (a copy); the loss is F.cross_entropy(logits.float()): the fp32 copy (6 B per logit) and an fp32
 * log-softmax (softmax rate), their backward 10 + 12 B.
 */
import { transferMs, type Link } from '../../cp/plan/linkModel.js';
import { collectiveMs } from './iteration.js';
import { coreOps, ew, linear, type Op, type TimeDims } from './ops.js';

const norm32 = (name: string, n: number, module?: Op['module']): Op => ew(name, 'elementwise', n, 8, 12, [1, 2], 'copy', module);
const cast = (name: string, n: number, module?: Op['module']): Op => ew(name, 'elementwise', n, 6, 6, [1, 1], 'copy', module);
/** autocast's bf16 weight copies (per forward, recompute included) and the fp32 gradient accumulation. */
const weights = (name: string, params: number, tensors: number, module?: Op['module']): Op =>
  ew(name, 'gradients', params, 6, 10, [tensors, 2 * tensors], 'copy', module);

export function ampLayerOps(x: TimeDims): Op[] {
  const th = x.T * x.h, hq = (x.h + 2 * x.hk) / x.t;
  return [
    norm32('input norm (fp32)', th), cast('QKV input to bf16', th), weights('attention weights to bf16, gradients to fp32', x.h * (hq + x.h / x.t), 2),
    linear('QKV projection', 'gemm', x.T, x.h, hq), ...coreOps(x), ...torchRingOps(x), ew('attention output transposed back', 'attention', th / x.t, 4, 4, [1, 1]),
    linear('output projection', 'gemm', x.T, x.h / x.t, x.h), ew('residual add (fp32 + bf16)', 'elementwise', th, 10, 12, [1, 1]),
    norm32('pre-MLP norm (fp32)', th), cast('MLP input to bf16', th, 'mlp'), weights('MLP weights to bf16, gradients to fp32', (2 * x.h * x.f) / x.t, 2, 'mlp'),
    linear('MLP fc1', 'gemm', x.T, x.h, x.f / x.t, 'mlp'), ew('GeLU', 'elementwise', (x.T * x.f) / x.t, 4, 6, [1, 1], 'copy', 'mlp'),
    linear('MLP fc2', 'gemm', x.T, x.f / x.t, x.h, 'mlp'), ew('residual add (fp32 + bf16)', 'elementwise', th, 10, 12, [1, 1]),
  ];
}

export function ampOutsideOps(x: TimeDims): Op[] {
  const th = x.T * x.h, logits = (x.T * x.V) / x.t;
  return [
    ew('embedding lookup (fp32)', 'embedding', th, 8, 8, [1, 4]), ew('embedding weight gradient (fp32, dense)', 'embedding', (x.V * x.h) / x.t, 0, 4, [0, 1]),
    norm32('final norm (fp32)', th), cast('output layer input to bf16', th), weights('output weight to bf16, gradient to fp32', (x.V * x.h) / x.t, 1),
    linear('output layer (logits)', 'loss', x.T, x.h, x.V / x.t), ew('logits to fp32', 'loss', logits, 6, 10, [1, 2]),
    ew('log-softmax (fp32)', 'loss', logits, 8, 12, [1, 1], 'softmax'),
  ];
}

/**
 * PyTorch's context_parallel ring around the attention core (torch 2.11,
 * torch/distributed/tensor/experimental/_context_parallel/_attention.py: _templated_ring_attention and
 * its backward, with the defaults convert_to_f32, enable_load_balance and rotate_method ALL_GATHER), its
 * memory-bound kernels per layer on the last CP rank (every step of its ring takes the whole local Q;
 * the others do less), per element of Q (n = T·h/t) or of K, V (T·hk/t; n where the heads are equal):
 *  forward: K and V made contiguous (the harness's Q, K, V are permuted views) 8n; the K, V cat before
 *  each exchange 8n × (R−1); the merge in f32: out to f32 6n, then per later step the block's out to f32
 *  6, out − block 12, × sigmoid(ΔLSE) 8, out − that 12 (38n); the result back to bf16 6n;
 *  backward: dQ, dK, dV zeroed in f32 12n; K, V contiguous 8n and cat 8n × (R−1); dK, dV += step 0's
 *  (f32 += bf16) 20n; per step the f32 dK, dV cat for the all-to-all 16n and dQ += 10n; per later step
 *  dK, dV's first half added and the whole re-catenated (_partial_update) 26n; dQ, dK, dV back to bf16 18n.
 * In the attention core's checkpoint (selective recompute runs the forward again).
 */
export function torchRingOps(x: TimeDims): Op[] {
  const R = x.s / x.sl, nq = (x.T * x.h) / x.t, nkv = (x.T * x.hk) / x.t;
  if (R <= 1) return [];
  // (with as many K/V heads as Q heads, 20 + 46·(R − 1) and 58 + 26·R + 34·(R − 1) bytes per element)
  const fwd = 8 * nkv * R + nq * (12 + 38 * (R - 1));
  const bwd = nq * (10 + 10 * R) + nkv * (14 + 50 * R);
  return [ew(`context_parallel ring: copies and f32 merges (${R} steps)`, 'attention', 1, fwd, bwd, [4 + 10 * (R - 1), 9 + 2 * R + 5 * (R - 1)], 'copy', 'core_attn')];
}

/**
 * The ring's transfers per layer on the link, what is not hidden: forward, K and V all-gathered once
 * (asynchronous, waited for at step 1: behind step 0's attention, 1/R of the core); backward, the same
 * all-gather behind step 0, then each step's f32 dK, dV sent to the next rank (an all-to-all permute,
 * 8 bytes per element of K) waited for after the next step's attention, the last one right away
 * (exposed whole). The ring's collectives share the default process group with DDP's bucket
 * all-reduces, so they may queue behind them: not modelled, unmeasured (2 GPUs).
 */
export function torchRingCommMs(x: TimeDims, link: Link, attnFwd: number, attnBwd: number): { fwd: number; bwd: number } {
  const R = x.s / x.sl, nkv = (x.T * x.hk) / x.t;
  if (R <= 1) return { fwd: 0, bwd: 0 };
  const gather = collectiveMs(link, R * 4 * nkv, R), dkv = transferMs(link, 8 * nkv, 1);
  return {
    fwd: Math.max(0, gather - attnFwd / R),
    bwd: Math.max(0, gather - attnBwd / R) + (R - 1) * Math.max(0, dkv - attnBwd / R) + dkv,
  };
}
