/**
 * The ops of the PyTorch companion harness (bench/torchcp/cp_memory.py, the memory model's
 * `--stack torch-amp`): bf16 autocast over fp32 parameters. What differs from Megatron-LM's layer:
 * LayerNorm runs in fp32 on the fp32 residual stream (8 B per element forward, 12 backward) and its
 * output is cast to bf16 before each linear layer (6 B, and the gradient cast back); autocast copies
 * every weight to bf16 in each forward (6 B per parameter) and AccumulateGrad adds each bf16 weight
 * gradient into the fp32 .grad (10 B); biases are fused into the GEMM (addmm); the residual add is
 * fp32 + bf16 → fp32 (10 B); attention is SDPA's FlashAttention (causal), its output transposed back
 * (a copy); the loss is F.cross_entropy(logits.float()): the fp32 copy (6 B per logit) and an fp32
 * log-softmax (softmax rate), their backward 10 + 12 B.
 */
import { coreOps, ew, linear, type Op, type TimeDims } from './ops.js';

const norm32 = (name: string, n: number, module?: Op['module']): Op => ew(name, 'elementwise', n, 8, 12, [1, 2], 'copy', module);
const cast = (name: string, n: number, module?: Op['module']): Op => ew(name, 'elementwise', n, 6, 6, [1, 1], 'copy', module);
/** autocast's bf16 weight copies (per forward, recompute included) and the fp32 gradient accumulation. */
const weights = (name: string, params: number, tensors: number, module?: Op['module']): Op =>
  ew(name, 'gradients', params, 6, 10, [tensors, 2 * tensors], 'copy', module);

export function ampLayerOps(x: TimeDims): Op[] {
  const th = x.T * x.h, hq = (x.h + 2 * x.hk) / x.t;
  return [
    norm32('LayerNorm 1 (fp32)', th), cast('QKV input to bf16', th), weights('attention weights to bf16, gradients to fp32', x.h * (hq + x.h / x.t), 2),
    linear('QKV projection', 'gemm', x.T, x.h, hq), ...coreOps(x), ew('attention output transposed back', 'attention', th / x.t, 4, 4, [1, 1]),
    linear('output projection', 'gemm', x.T, x.h / x.t, x.h), ew('residual add (fp32 + bf16)', 'elementwise', th, 10, 12, [1, 1]),
    norm32('LayerNorm 2 (fp32)', th), cast('MLP input to bf16', th, 'mlp'), weights('MLP weights to bf16, gradients to fp32', (2 * x.h * x.f) / x.t, 2, 'mlp'),
    linear('MLP fc1', 'gemm', x.T, x.h, x.f / x.t, 'mlp'), ew('GeLU', 'elementwise', (x.T * x.f) / x.t, 4, 6, [1, 1], 'copy', 'mlp'),
    linear('MLP fc2', 'gemm', x.T, x.f / x.t, x.h, 'mlp'), ew('residual add (fp32 + bf16)', 'elementwise', th, 10, 12, [1, 1]),
  ];
}

export function ampOutsideOps(x: TimeDims): Op[] {
  const th = x.T * x.h, logits = (x.T * x.V) / x.t;
  return [
    ew('embedding lookup (fp32)', 'embedding', th, 8, 8, [1, 4]), ew('embedding weight gradient (fp32, dense)', 'embedding', (x.V * x.h) / x.t, 0, 4, [0, 1]),
    norm32('final LayerNorm (fp32)', th), cast('output layer input to bf16', th), weights('output weight to bf16, gradient to fp32', (x.V * x.h) / x.t, 1),
    linear('output layer (logits)', 'loss', x.T, x.h, x.V / x.t), ew('logits to fp32', 'loss', logits, 6, 10, [1, 2]),
    ew('log-softmax (fp32)', 'loss', logits, 8, 12, [1, 1], 'softmax'),
  ];
}
