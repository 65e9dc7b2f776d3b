/**
 * One training iteration put together from the pieces of iteration.ts: a micro batch's forward and
 * backward on the busiest pipeline stage, the pipeline's micro batches and bubble, the data-parallel
 * gradient reduction, the optimizer step, and the host: its kernel launches (and MoE expert module
 * passes) added to the GPU's time or overlapped with it as the stack synchronises (TIME_STACKS),
 * plus the profile's fixed time per iteration. `terms` add up to `iterMs`.
 */
import { gradientRanks, optimizerShardParameters, stageParameters, validate, type ModelConfig, type ParallelConfig } from '../model.js';
import { H200, type DeviceProfile } from './devices.js';
import {
  TIME_STACKS, allReduceMs, collectiveMs, crossEntropyAllReducesMs, cpCommMs, exposedLaunchMs, groupLinks, passTimes, recomputed, resolveFusion, tpRegionMs,
  type GroupLinks, type IterationTime, type PassTimes, type StackTime, type TimeOptions, type TimeTerm, type TimeTermName,
} from './iteration.js';
import { moeDispatchMs, moeOps } from './moe.js';
import { attentionOps, mlpOps, outsideOps, parameterTensorCount, residualOps, timeDims, type Op, type TimeDims } from './ops.js';
import { ampLayerOps, ampOutsideOps, torchRingCommMs } from './torchAmp.js';
import { counted } from '../../plural.js';

/** Every op of one layer's forward: attention, then the dense MLP or the MoE layer (this rank's E/EP experts), then the residual add (the stack's op set). */
export function layerOps(m: ModelConfig, x: TimeDims, ep = 1): Op[] {
  if (x.amp) return ampLayerOps(x);
  return [...attentionOps(x), ...(m.moe ? moeOps(x, m.moe, ep) : mlpOps(x, 'MLP', x.T, x.f, 'gemm', 'mlp')), ...residualOps(x, 'MLP')];
}

const outside = (x: TimeDims) => (x.amp ? ampOutsideOps(x) : outsideOps(x));
/**
 * An op's FLOPs in the model's count, forward + backward, as Megatron-LM counts the throughput it logs
 * (training.py num_floating_point_operations): every product 3× its forward, and the attention core over
 * the causal half of the scores. So FlashAttention's backward counts 2× its forward, not the 2.5× it runs
 * (it computes the scores again), and the unfused core's bmm, which multiplies every score, half of that.
 * Elementwise ops count nothing.
 */
function modelFlops(o: Op): number {
  if (o.kind === 'gemm') return o.fwd + o.bwd;
  if (o.kind === 'flash') return 3 * o.fwd;   // the calls' pairs are the causal ones already
  if (o.kind === 'bmm') return (3 * o.fwd) / 2;   // QKᵀ or PV over every score; the model's are the causal half
  return 0;
}
const flopsOf = (ops: Op[]) => ops.reduce((s, o) => s + modelFlops(o), 0);

class Terms {
  readonly map = new Map<TimeTermName, { ms: number; what: string }>();
  add(name: TimeTermName, ms: number, what: string): void {
    const t = this.map.get(name);
    this.map.set(name, { ms: (t?.ms ?? 0) + ms, what: t?.what ?? what });
  }
  addPass(p: PassTimes, scale: number): void {
    for (const [k, v] of p.byTerm) this.add(k, v * scale, TERM_WHAT[k] ?? k);
  }
  list(): TimeTerm[] {
    return [...this.map.entries()].filter(([, v]) => v.ms > 0).map(([name, v]) => ({ name, ms: v.ms, what: v.what }));
  }
}

const TERM_WHAT: Record<string, string> = {
  gemm: "the layers' linear layers (QKV, projection, MLP)", attention: 'the attention core', elementwise: 'norms, RoPE, activations, dropout, residual adds',
  moe: 'router, token permutation, experts', loss: 'final norm, output layer and cross-entropy', embedding: 'embedding lookup and its gradient',
  gradients: 'gradients added into the fp32 (main) gradients; autocast weight copies',
};

/** A micro batch on the busiest stage; `flops` is the model's a GPU (each stage's layers, the output layer over the PP stages). */
interface Micro { gpu: number; comm: number; backward: number; kernels: number; flops: number; expertPasses: number }

/** What every piece of a step reads: the device, each group's link, the stack, the first stage's parameters a GPU (stageParameters). */
interface StepContext { profile: DeviceProfile; links: GroupLinks; st: StackTime; params: { perGpu: number; experts: number; replicated: number } }

/** A micro batch's forward and backward on the first (busiest) stage: GPU time, kernels launched, exposed communication. */
function microBatch(m: ModelConfig, p: ParallelConfig, o: StepContext, x: TimeDims, terms: Terms, scale: number): Micro {
  const prof = o.profile, Ls = m.numLayers / p.pipelineParallel, ep = p.expertParallel ?? 1;
  const ops = layerOps(m, x, ep), layer = passTimes(ops, prof), outOps = outside(x), out = passTimes(outOps, prof);
  const core = passTimes(ops.filter((op) => op.term === 'attention'), prof);
  const rc = recomputed(p, Ls, ops), rcT = passTimes(rc.ops, prof, rc.layers);
  const L = o.links, cp = x.amp ? torchRingCommMs(x, L.cp, core.fwd, core.bwd) : cpCommMs(x, p, L.cp, core.fwd, core.bwd);
  const full = p.recompute === 'full' ? rc.layers : 0;
  // Layers whose selectively recomputed module `mod` runs again (with its communication).
  const again = (mod: string) => (p.recompute === 'selective' && rc.ops.some((op) => op.module === mod) ? rc.layers : 0);
  // The CP transfers run again where the attention core is recomputed on its own (selective core_attn).
  const coreAgain = again('core_attn');
  const tensorCount = parameterTensorCount(m, Ls, ep);
  const gradMs = (o.params.perGpu * o.st.gradBytesPerParam) / (prof.bandwidthGBs.copy * 1e6);
  // The MoE token exchange over the EP ranks, again where the MoE layer is recomputed (moe, or full).
  const moeAgain = rc.ops.some((op) => op.module === 'moe') ? rc.layers : 0;
  const epc = m.moe && !x.amp ? moeDispatchMs(x, m.moe, ep, L) : { fwd: 0, bwd: 0 };
  // TP's collectives: a layer's around each column-parallel linear (the attention's QKV; a dense MLP's or a MoE layer's
  // shared expert's fc1; a MoE layer's routed experts exchange their tokens through the dispatcher: ep-comm), again
  // forward where full recompute re-runs the layer or selective recompute the MLP; and outside the layers, the
  // embedding's and the output layer's, and the vocab-parallel cross-entropy's three small all-reduces.
  const tp = (op: Op) => (x.amp ? { fwd: 0, bwd: 0 } : tpRegionMs(x, p, L.tp, op, prof));
  const columns = ops.filter((op) => op.tpColumn).map(tp), tpOut = outOps.filter((op) => op.tpColumn).map(tp);
  const mlpAgain = again('mlp') + again('shared_experts'), fwdOne = columns[0]?.fwd ?? 0;
  const tpMs = columns.reduce((s, c) => s + Ls * (c.fwd + c.bwd) + full * c.fwd, 0) + mlpAgain * fwdOne + tpOut.reduce((s, c) => s + c.fwd + c.bwd, 0) +
    (x.amp ? 0 : crossEntropyAllReducesMs(x, L.tp));
  const cpMs = Ls * (cp.fwd + cp.bwd) + (full + coreAgain) * cp.fwd, epMs = Ls * (epc.fwd + epc.bwd) + moeAgain * epc.fwd;
  const comm = tpMs + cpMs + epMs;
  terms.addPass({ ...layer, byTerm: new Map([...layer.byTerm].map(([k, v]) => [k, v * Ls])) }, scale);
  terms.addPass(out, scale);
  terms.add('gradients', gradMs * scale, TERM_WHAT.gradients);
  terms.add('recompute', rcT.fwd * scale, `forward run again in backward (${counted(rc.layers, 'layer')}${p.recompute === 'selective' ? ', the recomputed modules' : ''})`);
  terms.add('tp-comm', tpMs * scale, `tensor-parallel all-reduce / all-gather / reduce-scatter, exposed; the cross-entropy's all-reduces${p.sequenceParallel ? '; with sequence parallelism, once a step, the replicated parameters\' gradients' : ''} (${L.tp.name})`);
  terms.add('cp-comm', cpMs * scale,
    `context-parallel ${x.amp ? "PyTorch context_parallel's" : p.cpCommType ?? 'p2p'} transfers not hidden behind attention (${L.cp.name})`);
  terms.add('ep-comm', epMs * scale, `MoE tokens to and from the experts over ${ep} expert-parallel × ${x.t} tensor-parallel ranks (${m.moe?.dispatcher ?? 'allgather'} dispatcher, ${L.ep.name}${x.t > 1 && m.moe?.dispatcher === 'alltoall' ? `; the gather over TP on ${L.tp.name}` : ''})`);
  const backward = Ls * layer.bwd + out.bwd + rcT.fwd + gradMs;
  const gpu = Ls * layer.fwd + out.fwd + backward + comm;
  // SequentialMLP runs each local expert as its own module, forward, backward and when recomputed (moe or full).
  const E = (m.moe?.numExperts ?? 0) / ep;
  return {
    gpu, comm, backward, kernels: Ls * (layer.kf + layer.kb) + out.kf + out.kb + rcT.kf + tensorCount,
    // The model's FLOPs a GPU: the output layer is one stage's of PP (as Megatron-LM's throughput per GPU divides the whole model's by every GPU).
    flops: Ls * flopsOf(ops) + flopsOf(outOps) / p.pipelineParallel, expertPasses: E * (2 * Ls + moeAgain),
  };
}

/**
 * Data-parallel (× CP ranks) gradient reduction, exposed: after the backward, or what outlasts it (DDP's
 * buckets). The routed experts' gradients over their expert data-parallel group only, DP·CP/EP ranks.
 */
function dpMs(p: ParallelConfig, o: StepContext, backwardMs: number): number {
  const r = gradientRanks(p), { perGpu, experts } = o.params, link = o.links.dp;
  const reduce = (params: number, ranks: number) =>
    p.distributedOptimizer ? collectiveMs(link, 4 * params, ranks) + collectiveMs(link, 2 * params, ranks) : allReduceMs(link, 4 * params, ranks);
  const ms = reduce(perGpu - experts, r.dense) + reduce(experts, r.experts);
  return o.st.dpOverlap ? Math.max(0, ms - backwardMs) : ms;
}

/**
 * Between pipeline stages, exposed: each micro batch's activations leave a rank once per model chunk it holds
 * (VP of them interleaved) and their gradients come back as often; with tied embeddings the word embedding's
 * fp32 gradient is all-reduced between the first and last stages after the backward (Megatron-LM's
 * _allreduce_word_embedding_grads over the embedding group: 2 ranks, V·h/t parameters).
 */
function pipelineCommMs(m: ModelConfig, p: ParallelConfig, o: StepContext, x: TimeDims, mb: number): { ms: number; what: string } {
  if (p.pipelineParallel <= 1) return { ms: 0, what: '' };
  const sends = 2 * mb * p.virtualStages * collectiveMs(o.links.pp, 2 * 2 * x.Tn * x.h, 2);
  const tied = m.untieEmbeddings ? 0 : allReduceMs(o.links.pp, (4 * x.V * x.h) / x.t, 2);
  return { ms: sends + tied, what: `activations and their gradients between stages${tied ? ", the tied embedding's gradient all-reduced between the first and last" : ''} (${o.links.pp.name})` };
}

/**
 * Adam over the parameters this GPU updates (the distributed optimizer's shard: dense parameters over DP·CP
 * ranks, the routed experts' over DP·CP/EP, as the memory model), memory-bound, and the gradient buffer
 * zeroed for every parameter the GPU holds.
 */
function optimizerMs(p: ParallelConfig, o: StepContext): { ms: number; shard: number } {
  const st = o.st, shard = optimizerShardParameters(p, o.params);
  const bytes = shard * (st.optimizerBytesPerParam - st.zeroBytesPerParam) + o.params.perGpu * st.zeroBytesPerParam;
  return { ms: bytes / (o.profile.bandwidthGBs.copy * 1e6), shard };
}

/**
 * Iteration time of one configuration on one GPU (the busiest pipeline stage), term by term: the GPU's
 * kernels and exposed communication, the host's launches (overlapped with the GPU where the host runs
 * ahead through the step: max(host, GPU); added to it where the host waits for the GPU within the
 * step: a Megatron-LM MoE step, TIME_STACKS), the profile's fixed time per iteration.
 * Refuses what the memory model refuses.
 */
export function iterationTime(m: ModelConfig, p: ParallelConfig, opts: TimeOptions = {}): IterationTime {
  validate(m, p);
  const st = TIME_STACKS[p.stack ?? 'megatron'];
  const o: StepContext = { profile: opts.profile ?? H200, links: groupLinks(p, opts), st, params: stageParameters(m, p) };
  const mb = opts.microBatches ?? 1, pp = p.pipelineParallel, bubble = (pp - 1) / p.virtualStages;
  const x = timeDims(m, p, resolveFusion(m, opts.fusion));
  const terms = new Terms(), host = o.profile.host;
  const micro = microBatch(m, p, o, x, terms, mb);
  const ppc = pipelineCommMs(m, p, o, x, mb), dp = dpMs(p, o, micro.backward * mb), opt = optimizerMs(p, o);
  // Sequence parallelism: the fp32 gradients of what every TP rank holds whole, coalesced into one all-reduce over the
  // TP ranks after the data-parallel reduction, exposed (finalize_model_grads.py:416-476).
  const spGrads = p.sequenceParallel && !x.amp ? allReduceMs(o.links.tp, 4 * o.params.replicated, x.t) : 0;
  const ranks = gradientRanks(p).dense;
  const kernels = micro.kernels * mb + parameterTensorCount(m, m.numLayers / pp, p.expertParallel ?? 1) * st.optimizerKernelsPerTensor;
  const expertPasses = micro.expertPasses * mb;
  // A dense Megatron-LM step's micro batches past the first: their kernels at the measured microBatchLaunchUs, not the
  // fitted launchUs (the fit's fixed part holds the rest of the first's host time). A MoE step's host waits for the GPU in
  // its layers (serial): it keeps the fitted cost, which no measurement of its own host time replaces; so does a stack
  // with no fixed part a step (the PyTorch harness: nothing of a micro batch's host time was left to one).
  const serial = st.moeSerial && !!m.moe, measured = !serial && st.fixedHost;
  const mbUs = measured ? host.microBatchLaunchUs : host.launchUs, laterUs = (mb - 1) * micro.kernels * (mbUs - host.launchUs);
  // A pipeline's fill and drain wait on the other stages' hosts as much as on their GPUs: where the host binds, each stage
  // idles (p − 1)/v micro batches of host time (a micro batch's, at the cost its later micro batches are priced at).
  const bubbleUs = bubble * (micro.kernels * mbUs + micro.expertPasses * host.moeExpertUs);
  const launches = (kernels * host.launchUs + laterUs + bubbleUs + expertPasses * host.moeExpertUs) / 1e3;
  const buckets = ranks > 1 ? (o.params.perGpu * st.bucketBytesPerParam) / (o.profile.bandwidthGBs.copy * 1e6) : 0;
  const gpuMs = micro.gpu * (mb + bubble) + ppc.ms + dp + spGrads + opt.ms + buckets;
  terms.add('gradients', buckets, TERM_WHAT.gradients);
  terms.add('tp-comm', spGrads, `with sequence parallelism, the replicated parameters' gradients all-reduced over the TP ranks (${o.links.tp.name})`);
  terms.add('pipeline-bubble', micro.gpu * bubble, `pipeline fill and drain: (p − 1)/v = ${bubble.toFixed(2)} micro batches idle`);
  terms.add('pp-comm', ppc.ms, ppc.what);
  terms.add('dp-comm', dp, `gradients reduced over ${ranks} data-parallel × context-parallel ranks${p.distributedOptimizer ? ', parameters gathered' : ''} (${o.links.dp.name})`);
  const n = (v: number) => Math.round(v).toLocaleString('en-US');
  terms.add('optimizer', opt.ms, `Adam over ${n(opt.shard)} fp32 parameters, ${st.optimizerBytesPerParam - st.zeroBytesPerParam} B each, ` +
    `and the gradient buffer zeroed, ${st.zeroBytesPerParam} B each of ${n(o.params.perGpu)}`);
  const hostMs = exposedLaunchMs(serial, launches, gpuMs) + (st.fixedHost ? host.iterationMs : 0);
  const later = measured && mb > 1 ? ` (${Math.round((mb - 1) * micro.kernels)} of them, the micro batches past the first, at ${host.microBatchLaunchUs} µs)` : '';
  const fill = bubble > 0 ? `, the pipeline's fill and drain: ${bubble.toFixed(2)} micro batches of host time (${(bubbleUs / 1e3).toFixed(1)} ms)` : '';
  terms.add('host', hostMs, `${Math.round(kernels)} kernel launches at ${host.launchUs} µs${later}${expertPasses ? `, ${expertPasses} expert module passes at ${host.moeExpertUs} µs` : ''}${fill}` +
    `${st.fixedHost ? `, ${host.iterationMs} ms per iteration` : ''} (${serial ? 'added to the GPU time' : 'beyond the GPU time'})`);
  const list = terms.list(), iterMs = gpuMs + hostMs, comm = micro.comm * mb + ppc.ms + dp + spGrads;
  return {
    iterMs, terms: list, gpuMs, hostMs, commMs: comm, commFraction: comm / iterMs, kernels, expertPasses, hostSerial: serial, launchMs: launches,
    tflopsPerGpu: (micro.flops * mb) / (iterMs * 1e9), tokensPerSecond: (p.seqLength * p.microBatchSize * mb * p.dataParallel) / (iterMs / 1e3),
  };
}
