/**
 * A mixture-of-experts layer's MLP as Megatron-LM's local implementation runs it
 * (megatron/core/transformer/moe: TopKRouter, the allgather / alltoall dispatcher, SequentialMLP):
 * the router's GEMM (T×h → E) and its fp32 softmax / top-k / auxiliary-loss kernels over T·E scores,
 * the permutation of the T·k routed token copies (index_select forward, index_add backward), each
 * expert's MLP on its share of the routed tokens (T·k/E on average: the balance a router reaches is
 * not in the configuration; a capacity factor below 1 caps it), the unpermutation scaled by the
 * router's probabilities, and the shared expert (a dense MLP over all T tokens). SequentialMLP splits
 * the routed tokens by the experts' counts read on the host (tokens_per_expert.tolist()) and runs
 * each expert as its own module: the host's time per expert pass is a profile figure (moeExpertUs).
 */
import type { MoeConfig } from '../model.js';
import { mlpOps, type Op, type TimeDims } from './ops.js';

/** Kernels of the router (gating GEMM aside) and of the permutation, forward and backward: small ops, counted from the code path. */
const ROUTER_KERNELS: [number, number] = [24, 16];
const PERMUTE_KERNELS: [number, number] = [10, 6];

export function moeOps(x: TimeDims, e: MoeConfig): Op[] {
  const E = e.numExperts, k = e.routerTopk, routed = x.T * k * Math.min(1, e.capacityFactor ?? 1), w = e.ffnHiddenSize ?? x.f;
  const scores = x.T * E;
  const ops: Op[] = [
    { name: 'router gating GEMM', term: 'moe', kind: 'gemm', fwd: 2 * x.T * x.h * E, bwd: 4 * x.T * x.h * E, shape: [x.T, E, x.h], kernels: [1, 2], module: 'moe' },
    { name: 'router softmax, top-k, auxiliary loss (fp32)', term: 'moe', kind: 'copy', fwd: 40 * scores, bwd: 24 * scores, kernels: ROUTER_KERNELS, module: 'moe' },
    { name: 'permute routed tokens', term: 'moe', kind: 'copy', fwd: 4 * routed * x.h, bwd: 6 * routed * x.h, kernels: PERMUTE_KERNELS, module: 'moe' },
  ];
  // Each expert's MLP on its share: per-expert GEMMs are E times smaller (the GEMM fit's bytes term prices their shape).
  for (const op of mlpOps(x, 'experts', routed / E, w, 'moe', 'moe'))
    ops.push({ ...op, fwd: op.fwd * E, bwd: op.bwd * E, kernels: [op.kernels[0] * E, op.kernels[1] * E], name: `${op.name} (${E} experts)`, count: E });
  ops.push({ name: 'unpermute (scaled by the router probabilities)', term: 'moe', kind: 'copy', fwd: 8 * routed * x.h, bwd: 8 * routed * x.h, kernels: [4, 4], module: 'moe' });
  if (e.sharedExpertSize) ops.push(...mlpOps(x, 'shared expert', x.T, e.sharedExpertSize, 'moe', 'shared_experts'),
    { name: 'shared expert output added', term: 'moe', kind: 'copy', fwd: 6 * x.T * x.h, bwd: 0, kernels: [1, 0], module: 'shared_experts' });
  return ops;
}
