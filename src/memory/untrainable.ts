/**
 * Configurations Megatron-LM cannot train at any size, as measured on the H200 and an H100 (not a memory limit):
 * the memory model still gives what they would need, and the tools say that they do not run.
 *
 * Selective recompute of `mlp` with linear biases: the dense MLP returns its output bias (fc2's bias
 * parameter, skip_bias_add) through tensor_parallel.checkpoint, and the checkpoint's backward, running
 * autograd over that output again, re-enters itself (megatron/core/tensor_parallel/random.py
 * CheckpointFunction.backward, line 668 in snapshot d98e8a64), recomputing the MLP at each level until
 * the GPU is full. Seen in 10 of 10 such runs, 246-250 levels deep in the first step on the H200 (139.8 GiB), 220 and
 * 249 on an H100 (79.2 GiB: r02 of bench/results/2026-12-06-time-heldout7, core_attn + mlp, and r03 of
 * bench/results/2026-12-06-time-heldout8, core_attn + mlp, each named before it ran): r25 of
 * bench/results/2026-12-02-megatron-campaign, r07 and r21 of bench/results/2026-12-02-time-heldout
 * and r00 of bench/results/2026-12-02-time-heldout2 recomputing mlp alone, and r24 of the first of
 * those draws, r05 of bench/results/2026-12-03-time-heldout5 and A-s8192 and B-s8192 of
 * bench/results/memory-h200-2026-12-01/megatron-failed recomputing core_attn + mlp (the
 * rule named r24, r00 and r05 before they ran: the code path is the same); every run recomputing mlp
 * without linear biases trained (r06 r22 r34 r38; r00 r08 r16 r18 r20; r01 of …-heldout5-deep).
 * MoE layers do not recompute through this path (transformer_layer.py sets recompute_mlp only for a
 * dense MLP).
 *
 * Routed experts with linear biases (MOE_EXPERT_BIASES): read from Megatron-LM's code, then run: r00 and r02 of
 * bench/results/2026-12-07-moe-extras (one GPU, the activation unfused, named before they ran) stopped in their first
 * forward with the RuntimeError below, from mlp.py's in-place add (an H100, 2026-12-06); the fused paths and the ETP
 * refusal are read, not run. Each routed expert
 * is an MLP (transformer/mlp.py) called with its tokens' router probabilities (per_token_scale; experts.py SequentialMLP):
 *  - with the fused bias activation (--bias-swiglu-fusion / --bias-gelu-fusion, the defaults), SwiGLU's
 *    weighted_bias_swiglu_impl raises NotImplementedError on a bias (fusions/fused_bias_swiglu.py) and GeLU's path
 *    raises ValueError ("Only support fusion of swiglu and quick_gelu with per_token_scale in MLP");
 *  - unfused, mlp.py adds fc2's bias in place (`output += output_bias.unsqueeze(0) * per_token_scale.unsqueeze(-1)`)
 *    to fc2's output, which without expert parallelism and at expert TP 1 is the input that
 *    _ReduceFromModelParallelRegion returned as-is (tensor_parallel/mappings.py _reduce; RowParallelLinear's
 *    explicit_expert_comm is off): PyTorch forbids changing such a view in place (RuntimeError, "This view was created
 *    inside a custom Function (or because an input was returned as-is)");
 *  - expert TP above 1 with biases is refused by TransformerConfig ("Bias in Moe is only supported when ETP==1").
 * So on one GPU (EP = 1) no MoE model with linear biases trains; with EP > 1, TP = 1 and the activation unfused
 * (--no-bias-swiglu-fusion, or --no-bias-gelu-fusion with GeLU: ModelConfig.biasActivationFusion holds whichever the
 * activation reads) the code path exists.
 */
import type { ModelConfig, ParallelConfig } from './model.js';

export const MOE_EXPERT_BIASES =
  "Megatron-LM cannot train routed experts with linear biases but split over EP ranks at TP 1 with the bias activation unfused: its experts' fused bias " +
  "activation refuses a bias, and without EP fc2's bias is added in place to a tensor PyTorch forbids changing in place (read from its code: mlp.py, " +
  'fused_bias_swiglu.py, tensor_parallel/mappings.py; the unfused case on one GPU stopped so in 2 of 2 runs named before they ran); add --disable-bias-linear, or use --expert-model-parallel-size 2 or more with --no-bias-swiglu-fusion (GeLU: --no-bias-gelu-fusion) at TP 1';

export const MLP_RECOMPUTE_WITH_BIAS =
  "Megatron-LM cannot train selective recompute of mlp with linear biases: its checkpoint's backward re-enters itself through the MLP's output bias " +
  'and recomputes until the GPU is full (10 of 10 runs on an H200 or H100, whatever their size); add --disable-bias-linear or recompute core_attn / full layers instead';

/** Why Megatron-LM cannot train this configuration whatever its memory, or null when nothing is known against it. */
export function untrainable(m: ModelConfig, p: ParallelConfig): string | null {
  return moeExpertBiases(m, p) ?? mlpRecomputeWithBias(m, p);
}

/** MOE_EXPERT_BIASES where it applies: Megatron-LM's stack, MoE with linear biases, unless EP > 1 at TP 1 with the activation (SwiGLU or GeLU) unfused. */
function moeExpertBiases(m: ModelConfig, p: ParallelConfig): string | null {
  if ((p.stack ?? 'megatron') !== 'megatron' || !m.moe || m.biasLinear === false) return null;
  const splitExperts = (p.expertParallel ?? 1) > 1 && (p.tensorParallel ?? 1) === 1;
  return splitExperts && m.biasActivationFusion === false ? null : MOE_EXPERT_BIASES;
}

/** MLP_RECOMPUTE_WITH_BIAS where it applies (a dense model's selective recompute of mlp with linear biases), else null. */
export function mlpRecomputeWithBias(m: ModelConfig, p: Pick<ParallelConfig, 'stack' | 'recompute' | 'recomputeModules'>): string | null {
  if ((p.stack ?? 'megatron') !== 'megatron' || p.recompute !== 'selective' || m.moe || m.biasLinear === false) return null;
  const mods = p.recomputeModules?.length ? p.recomputeModules : ['core_attn'];
  return mods.includes('mlp') ? MLP_RECOMPUTE_WITH_BIAS : null;
}
