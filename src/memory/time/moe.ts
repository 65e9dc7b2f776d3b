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
 * With expert parallelism (EP ranks) a rank holds E/EP experts and runs them on the tokens every EP
 * rank routes to them: T·k copies on average, as at EP = 1, in E/EP GEMMs EP times larger; the tokens
 * travel there and back (moeDispatchMs).
 */
import type { Link } from '../../cp/plan/linkModel.js';
import type { MoeConfig } from '../model.js';
import { collectiveMs } from './iteration.js';
import { mlpOps, type Op, type TimeDims } from './ops.js';
import { counted } from '../../plural.js';

/** Kernels of the router (gating GEMM aside) and of the permutation, forward and backward: small ops, counted from the code path. */
const ROUTER_KERNELS: [number, number] = [24, 16];
const PERMUTE_KERNELS: [number, number] = [10, 6];

/** Routed token copies of this rank's T tokens: T·k, capped by a capacity factor below 1. */
const routedTokens = (x: TimeDims, e: MoeConfig) => x.T * e.routerTopk * Math.min(1, e.capacityFactor ?? 1);

export function moeOps(x: TimeDims, e: MoeConfig, ep = 1): Op[] {
  const E = e.numExperts, routed = routedTokens(x, e), w = e.ffnHiddenSize ?? x.f, local = E / ep;
  // The router runs on this rank's tokens: T/t with sequence parallelism (the dispatcher gathers after it).
  const scores = x.Tn * E;
  const ops: Op[] = [
    { name: 'router gating GEMM', term: 'moe', kind: 'gemm', fwd: 2 * x.Tn * x.h * E, bwd: 4 * x.Tn * x.h * E, shape: [x.Tn, E, x.h], kernels: [1, 2], module: 'moe' },
    { name: 'router softmax, top-k, auxiliary loss (fp32)', term: 'moe', kind: 'copy', fwd: 40 * scores, bwd: 24 * scores, kernels: ROUTER_KERNELS, module: 'moe' },
    { name: 'permute routed tokens', term: 'moe', kind: 'copy', fwd: 4 * routed * x.h, bwd: 6 * routed * x.h, kernels: PERMUTE_KERNELS, module: 'moe' },
  ];
  // Each local expert's MLP on its share: routed/(E/EP) tokens (the GEMM fit's bytes term prices their shape).
  for (const op of mlpOps(x, 'experts', routed / local, w, 'moe', 'moe'))
    ops.push({ ...op, fwd: op.fwd * local, bwd: op.bwd * local, kernels: [op.kernels[0] * local, op.kernels[1] * local], name: `${op.name} (${counted(local, 'expert')}${ep > 1 ? `, ${E} over EP = ${ep}` : ''})`, count: local });
  ops.push({ name: 'unpermute (scaled by the router probabilities)', term: 'moe', kind: 'copy', fwd: 8 * routed * x.h, bwd: 8 * routed * x.h, kernels: [4, 4], module: 'moe' });
  if (e.sharedExpertSize) ops.push(...mlpOps(x, 'shared expert', x.T, e.sharedExpertSize, 'moe', 'shared_experts'),
    { name: 'shared expert output added', term: 'moe', kind: 'copy', fwd: 6 * x.Tn * x.h, bwd: 0, kernels: [1, 0], module: 'shared_experts' });
  return ops;
}

/**
 * The token exchange of one MoE layer, forward and backward, as Megatron-LM's dispatchers run it
 * (token_dispatcher.py; expert tensor parallelism = TP, tokens sequence-parallel: T/t a rank). Each runs
 * twice a pass: the dispatch to the experts and the combine back (backward: the same for the gradients).
 * The alltoall dispatcher sends each of a rank's T/t·k routed copies (bf16, h wide) to its expert's EP
 * rank (an all-to-all, (EP−1)/EP of it leaving), then all-gathers them over the TP ranks (T·k copies; the
 * combine reduce-scatters them back). The flex dispatcher makes one exchange over the TP × EP group
 * (as many bytes a rank: (EP·t − 1)/(EP·t) of T·k copies). The allgather dispatcher (Megatron-LM's
 * default) gathers every TP × EP rank's T/t tokens (EP·T in all) and reduce-scatters the outputs back.
 * Nothing at TP = EP = 1. A group spanning TP × EP runs on `links.ep` (groupLinks).
 */
export function moeDispatchMs(x: TimeDims, e: MoeConfig, ep: number, links: { ep: Link; tp: Link }): { fwd: number; bwd: number } {
  const t = x.t, copies = 2 * routedTokens(x, e) * x.h;
  const one = e.dispatcher === 'alltoall' ? collectiveMs(links.ep, copies / t, ep) + collectiveMs(links.tp, copies, t)
    : e.dispatcher === 'flex' ? collectiveMs(links.ep, copies, t * ep)
    : collectiveMs(links.ep, 2 * ep * x.T * x.h, t * ep);
  return { fwd: 2 * one, bwd: 2 * one };
}
