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
 * dense MLP), and their MLPs have no bias (Megatron-LM needs --disable-bias-linear with local experts).
 */
import type { ModelConfig, ParallelConfig } from './model.js';

export const MLP_RECOMPUTE_WITH_BIAS =
  "Megatron-LM cannot train selective recompute of mlp with linear biases: its checkpoint's backward re-enters itself through the MLP's output bias " +
  'and recomputes until the GPU is full (10 of 10 runs on an H200 or H100, whatever their size); add --disable-bias-linear or recompute core_attn / full layers instead';

/** Why Megatron-LM cannot train this configuration whatever its memory, or null when nothing is known against it. */
export function untrainable(m: ModelConfig, p: ParallelConfig): string | null {
  if ((p.stack ?? 'megatron') !== 'megatron' || p.recompute !== 'selective' || m.moe || m.biasLinear === false) return null;
  const mods = p.recomputeModules?.length ? p.recomputeModules : ['core_attn'];
  return mods.includes('mlp') ? MLP_RECOMPUTE_WITH_BIAS : null;
}
