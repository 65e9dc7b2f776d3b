/**
 * The pieces of a training step's time on one GPU (issue 36; step.ts puts them together). Each op
 * of ops.ts / moe.ts / torchAmp.ts takes its work at the device profile's measured rate (rates.ts);
 * the GPU's time is their sum; the host's is the kernels launched times the profile's launch cost,
 * overlapped with the GPU's where the host runs ahead through the step (max of the two: a dense
 * Megatron-LM step, the PyTorch harness) and added to it where the host waits for the GPU within the
 * step (a Megatron-LM MoE step: each MoE layer reads its token counts on the host): TIME_STACKS.
 *
 * Recompute runs the forward of what it recomputes once more in backward: selective modules
 * (core_attn, Megatron-LM's default; mlp; layernorm; moe; shared_experts) or full (uniform: every
 * layer; block: N layers of each stage). Tensor parallelism's collectives (all-reduce; with sequence
 * parallelism all-gather / reduce-scatter, and the all-gather again in backward for the weight
 * gradients) and context parallelism's (p2p: K/V around the ring behind each step's attention;
 * all_gather and a2a: exposed; the PyTorch harness: PyTorch's own ring, torchAmp.ts) go over the link
 * model (src/cp/plan/linkModel.ts): TP's forward ones exposed, as Megatron-LM runs without userbuffers,
 * the column-parallel linears' backward ones behind their own GEMMs (tpRegionMs). Pipeline: (m + (p−1)/v)/m of m micro batches.
 * Data parallelism (× CP ranks): the fp32 gradients all-reduced (reduce-scatter + all-gather of the
 * bf16 parameters with the distributed optimizer), after the backward (overlap_grad_reduce off).
 * The optimizer: Adam (torch.optim.AdamW's foreach path) over the fp32 main parameters this GPU
 * updates, memory-bound (TIME_STACKS).
 */
import { LINKS, transferMs, type Link } from '../../cp/plan/linkModel.js';
import { blockRecomputedLayers, type ModelConfig, type ParallelConfig, type RecomputeModule, type Stack } from '../model.js';
import type { DeviceProfile } from './devices.js';
import type { FusionFlags, Op, OpTerm, TimeDims } from './ops.js';
import { bmmTflops, flashTflops, gemmMs, scoreMs } from './rates.js';

/** What differs in time between training stacks, as data (the memory model's `Stack`). */
export interface StackTime {
  /** Bytes per parameter of one optimizer step over the parameters this GPU updates. */
  optimizerBytesPerParam: number;
  /**
   * Of those, the bytes zeroing the gradient buffer, which covers every parameter this GPU holds, not only
   * the distributed optimizer's shard (Megatron-LM's zero_grad_buffer: grad_data.zero_() over the whole buffer).
   */
  zeroBytesPerParam: number;
  optimizerKernelsPerTensor: number;
  /** Bytes per parameter per micro batch adding the bf16 gradients into fp32 main gradients (0 where the ops count it). */
  gradBytesPerParam: number;
  /**
   * The host's launches overlap the GPU's kernels (the step lasts max(host, GPU)), except in a MoE
   * step when this is set: its host waits for the GPU in every MoE layer (the token counts read on the
   * host), so the step lasts host + GPU.
   */
  moeSerial: boolean;
  /** The data-parallel gradient reduction runs behind the backward (PyTorch DDP's buckets) rather than after it. */
  dpOverlap: boolean;
  /** Bytes per parameter the gradient reduction's buckets move on the GPU, once a step, when there are ranks to reduce over (scaling, copies). */
  bucketBytesPerParam: number;
  /** The profile's fixed time per iteration applies (Megatron-LM's logging, timers and checks). */
  fixedHost: boolean;
  note: string;
}

export const TIME_STACKS: Record<Stack, StackTime> = {
  megatron: {
    // foreach AdamW (torch.optim.AdamW without apex / TE: weight decay 8, first moment 12, second moment 12, sqrt 8,
    // divide 8, add ε 8, update 16 = 72), bias corrections 8, grad norm 4 and clip 8 (local_multi_tensor_l2_norm /
    // _scale), the copy to the bf16 model parameters 6, zeroing the main gradients 4; the DDP hook adds each bf16
    // gradient into its fp32 main gradient in backward (read 2 + 4, write 4). With DP·CP ranks, once a step before the
    // reduction, DDP scales the fp32 gradient buffer by 1/(DP·CP) in place (average_in_collective off, its default:
    // param_and_grad_buffer.py start_grad_sync, bucket.grad_data *= gradient_scaling_factor): read 4 + write 4.
    optimizerBytesPerParam: 102, zeroBytesPerParam: 4, optimizerKernelsPerTensor: 8, gradBytesPerParam: 10, moeSerial: true, dpOverlap: false, bucketBytesPerParam: 8, fixedHost: true,
    note: 'Megatron-LM: the host runs ahead of the GPU through a dense step (max(host, GPU), then its fixed part: the loss and grad-norm checks at the end); ' +
      'a MoE layer reads its token counts on the host (SequentialMLP tokens_per_expert.tolist(), the dispatcher\'s .cpu()), so a MoE step is host + GPU',
  },
  'torch-amp': {
    // fused AdamW over fp32 parameters: read parameter, gradient, two moments (16), write three (12); zero_grad(set_to_none=False) 4.
    // DDP (gradient_as_bucket_view off, its default): each fp32 gradient copied into its bucket scaled by 1/n (8 B, the
    // reducer's mul_out), the bucket copied back into .grad after the all-reduce (8 B).
    optimizerBytesPerParam: 32, zeroBytesPerParam: 4, optimizerKernelsPerTensor: 1, gradBytesPerParam: 0, moeSerial: false, dpOverlap: true, bucketBytesPerParam: 16, fixedHost: false,
    note: 'the PyTorch harness (bench/torchcp): one synchronisation per step, DDP buckets behind the backward: max(host, GPU); ' +
      "its launch cost is the profile's, fitted on Megatron-LM steps (the harness's measured points are all GPU-bound: none fits it)",
  },
};

export interface TimeOptions {
  profile?: DeviceProfile;
  /** The link within a node, for every group of ranks inside one (default NVLink of an H200 node). */
  link?: Link;
  /** The link between nodes, for a group whose ranks span several (default InfiniBand NDR). */
  interNodeLink?: Link;
  /** GPUs a node (default GPUS_PER_NODE, 8). */
  gpusPerNode?: number;
  fusion?: Partial<FusionFlags>;
  /** Micro batches per iteration per data-parallel rank (global batch / (micro batch · DP)); default 1. */
  microBatches?: number;
}

/** The link of each group of ranks a step talks over. */
export interface GroupLinks { tp: Link; cp: Link; ep: Link; dp: Link; pp: Link }

/** GPUs a node where a request does not say (TimeOptions.gpusPerNode, advise's --gpus-per-node, the page's advisor): an HGX node's 8. */
export const GPUS_PER_NODE = 8;
/** The link between nodes where a request does not say (TimeOptions.interNodeLink, advise's --inter-node-link): InfiniBand NDR. */
export const INTER_NODE_LINK = LINKS['ib-ndr'];

/**
 * Which link each group talks over: Megatron-LM orders ranks TP first, then CP, then DP (the experts: TP,
 * EP, then their data-parallel ranks), then PP, so a group of size n with stride k spans n·k consecutive
 * GPUs: TP tp, CP tp·cp, EP tp·ep, the gradient reduction tp·cp·dp (both the dense and the experts'),
 * the pipeline's stage-to-stage sends the whole layout. A group that fits one node runs on the node's
 * link; one that spans nodes runs at the link between them (its ring's slowest hop).
 */
export function groupLinks(p: Pick<ParallelConfig, 'tensorParallel' | 'contextParallel' | 'dataParallel' | 'pipelineParallel' | 'expertParallel'>, o: Pick<TimeOptions, 'link' | 'interNodeLink' | 'gpusPerNode'>): GroupLinks {
  const intra = o.link ?? LINKS['nvlink-h200'], inter = o.interNodeLink ?? INTER_NODE_LINK, node = o.gpusPerNode ?? GPUS_PER_NODE;
  const tp = p.tensorParallel, cp = p.contextParallel, dp = p.dataParallel, gpus = tp * cp * dp * p.pipelineParallel;
  // Groups are blocks of `span` consecutive ranks: each inside one node where the whole layout is, or where the
  // span divides the node's GPUs; else some block straddles two nodes, and the step waits for it.
  const over = (span: number) => (gpus <= node || (span <= node && node % span === 0) ? intra : inter);
  return { tp: over(tp), cp: over(tp * cp), ep: over(tp * (p.expertParallel ?? 1)), dp: over(tp * cp * dp), pp: over(tp * cp * dp * p.pipelineParallel) };
}

/** The host's launch time not hidden behind the GPU's: all of it where the host waits for the GPU (serial), else what outlasts the GPU. */
export const exposedLaunchMs = (serial: boolean, launchMs: number, gpuMs: number): number => (serial ? launchMs : Math.max(0, launchMs - gpuMs));

export type TimeTermName = OpTerm | 'recompute' | 'tp-comm' | 'cp-comm' | 'ep-comm' | 'dp-comm' | 'pp-comm' | 'optimizer' | 'pipeline-bubble' | 'host' | 'data-loader' | 'mask-copy';

export interface TimeTerm { name: TimeTermName; ms: number; what: string }

export interface IterationTime {
  iterMs: number;
  /** What the step's time is made of; they add up to iterMs. */
  terms: TimeTerm[];
  /** GPU kernel time, host launch time, exposed communication (all micro batches). */
  gpuMs: number;
  hostMs: number;
  commMs: number;
  /** Exposed communication over the iteration. */
  commFraction: number;
  kernels: number;
  /** MoE experts run as modules (SequentialMLP): layers × experts × (forward, backward, recompute). */
  expertPasses: number;
  /** The host's launches are added to the GPU's time (the host waits for the GPU within the step), not overlapped with it. */
  hostSerial: boolean;
  /** The host's launch time (kernels and MoE expert passes): overlapped or added as hostSerial says; hostMs is what is not hidden, plus the fixed part. */
  launchMs: number;
  /** FLOPs of the model (forward + backward, no recompute: Megatron-LM's count, step.ts modelFlops) per GPU per second. */
  tflopsPerGpu: number;
  tokensPerSecond: number;
}

export interface PassTimes { fwd: number; bwd: number; kf: number; kb: number; byTerm: Map<OpTerm, number> }

/** One op's milliseconds, one way. */
export function opMs(op: Op, pass: 'fwd' | 'bwd', prof: DeviceProfile): number {
  const work = pass === 'fwd' ? op.fwd : op.bwd;
  if (work === 0) return 0;
  switch (op.kind) {
    case 'gemm': {
      if (pass === 'bwd') { const g = gemmBackwardMs(op, prof); return g.dgrad + g.wgrad; }
      const [m, n, k] = op.shape!;
      return (op.count ?? 1) * gemmMs(prof, m, n, k);
    }
    case 'bmm': return work / (bmmTflops(prof, op.d!) * 1e9);
    case 'flash': return work / (flashTflops(prof, op.d!, op.s!, op.causal!, pass, op.backend, op.heads, op.sk) * 1e9);
    case 'scores': return (work / 1e9) * scoreMs(prof, op.rates![pass === 'fwd' ? 0 : 1]!, op.s!);
    default: return work / (prof.bandwidthGBs[op.kind] * 1e6);
  }
}

/** A gemm op's backward GEMMs apart: the input gradient dX (m×n · n×k) and the weight gradient dW (k×m · m×n). */
export function gemmBackwardMs(op: Op, prof: DeviceProfile): { dgrad: number; wgrad: number } {
  const [m, n, k] = op.shape!, c = op.count ?? 1;
  return { dgrad: c * gemmMs(prof, m, k, n), wgrad: c * gemmMs(prof, k, n, m) };
}

export function passTimes(ops: Op[], prof: DeviceProfile, times = 1): PassTimes {
  const r: PassTimes = { fwd: 0, bwd: 0, kf: 0, kb: 0, byTerm: new Map() };
  for (const op of ops) {
    const f = opMs(op, 'fwd', prof) * times, b = opMs(op, 'bwd', prof) * times;
    r.fwd += f; r.bwd += b; r.kf += op.kernels[0] * times; r.kb += op.kernels[1] * times;
    r.byTerm.set(op.term, (r.byTerm.get(op.term) ?? 0) + f + b);
  }
  return r;
}

/** Layers of one pipeline stage whose forward runs again in backward (full recompute), and the ops that selective recompute re-runs. */
export function recomputed(p: ParallelConfig, stageLayers: number, layerOps: Op[]): { layers: number; ops: Op[] } {
  if (p.recompute === 'full') return { layers: p.recomputeMethod === 'block' ? blockRecomputedLayers(stageLayers, p) : stageLayers, ops: layerOps };
  if (p.recompute === 'selective') {
    const named: RecomputeModule[] = p.recomputeModules?.length ? p.recomputeModules : ['core_attn'];
    // moe's checkpoint runs the whole MoE layer's forward, its shared expert included (moe_layer.py custom_forward).
    const mods: RecomputeModule[] = named.includes('moe') ? [...named, 'shared_experts'] : named;
    return { layers: stageLayers, ops: layerOps.filter((o) => o.module !== undefined && mods.includes(o.module)) };
  }
  return { layers: 0, ops: [] };
}

/** One collective over n ranks moving `bytes` (the whole tensor) in a ring: (n−1)/n of it per rank, n−1 messages. */
export function collectiveMs(link: Link, bytes: number, n: number): number {
  return n <= 1 ? 0 : transferMs(link, ((n - 1) / n) * bytes, n - 1);
}

/** An all-reduce over n ranks of `bytes`: a reduce-scatter and an all-gather (collectiveMs each), latency and bytes. */
export const allReduceMs = (link: Link, bytes: number, n: number): number => 2 * collectiveMs(link, bytes, n);

/**
 * The vocab-parallel cross-entropy's all-reduces over the TP ranks, per micro batch, forward only (Megatron-LM
 * tensor_parallel/cross_entropy.py:130 the logits' max, :146 the predicted logit, :150 the sum of exponentials):
 * three of one fp32 value a token, T tokens (the whole local sequence: the output layer's input is gathered under SP).
 */
export const crossEntropyAllReducesMs = (x: TimeDims, link: Link): number => 3 * allReduceMs(link, 4 * x.T, x.t);

/**
 * Tensor parallelism's exposed collectives per micro batch around one column-parallel linear, forward and
 * backward: a layer's attention half (QKV) or dense MLP / shared expert half (fc1), each closed by a
 * row-parallel linear, or outside the layers the output layer with the embedding before it. Forward, two
 * collectives of T·h bf16: with SP the column's all-gather of its input and the row's (or the embedding's)
 * reduce-scatter; without SP the row's (the embedding's) all-reduce. Backward, with SP the row's all-gather
 * of its output gradient (the embedding's), exposed, and the column's own, asynchronous (Megatron-LM's
 * LinearWithGradAccumulationAndAsyncCommunication, CUDA_DEVICE_MAX_CONNECTIONS=1): its input gathered again
 * behind its input-gradient GEMM and the input gradient reduce-scattered behind its weight-gradient GEMM;
 * without SP only the column's all-reduce of its input gradient, behind its weight-gradient GEMM (the row's
 * all-reduce has an identity backward). A MoE layer's routed experts move their tokens through the
 * dispatcher (moeDispatchMs).
 */
export function tpRegionMs(x: TimeDims, p: ParallelConfig, link: Link, column: Op, prof: DeviceProfile): { fwd: number; bwd: number } {
  if (x.t <= 1) return { fwd: 0, bwd: 0 };
  const one = collectiveMs(link, 2 * x.T * x.h, x.t), g = gemmBackwardMs(column, prof);
  const behind = (comm: number, gemm: number) => Math.max(0, comm - gemm);
  return { fwd: 2 * one, bwd: p.sequenceParallel ? one + behind(one, g.dgrad) + behind(one, g.wgrad) : behind(2 * one, g.wgrad) };
}

/** Context parallelism's exposed transfers per layer per micro batch (attention forward / backward compute given, for p2p's overlap). */
export function cpCommMs(x: TimeDims, p: ParallelConfig, link: Link, attnFwd: number, attnBwd: number): { fwd: number; bwd: number } {
  const cp = p.contextParallel;
  if (cp <= 1) return { fwd: 0, bwd: 0 };
  const kv = (2 * 2 * x.T * x.hk) / x.t, qo = (2 * 2 * x.T * x.h) / x.t;
  const type = p.cpCommType ?? 'p2p';
  if (type === 'p2p') {
    const step = (bytes: number, compute: number) => (cp - 1) * Math.max(0, transferMs(link, bytes, 1) - compute / cp);
    return { fwd: step(kv, attnFwd), bwd: step(2 * kv, attnBwd) };
  }
  // all_gather (AttnFuncWithCPAndKVAllGather): the forward gathers the whole sequence's K and V (each rank receives
  // the other cp−1 chunks); the backward gathers them again and reduce-scatters dK and dV (as many bytes again).
  const gather = collectiveMs(link, cp * kv, cp);
  if (type === 'all_gather') return { fwd: gather, bwd: 2 * gather };
  // a2a (AttnFuncWithCPAndQKVOA2A): an all-to-all of this rank's Q, K, V in and of O out, each moving (cp−1)/cp of
  // the local tensor; the backward the same of dO in and dQ, dK, dV out.
  const a2a = collectiveMs(link, qo + kv, cp);
  return { fwd: a2a, bwd: a2a };
}

export function resolveFusion(m: ModelConfig, f: Partial<FusionFlags> = {}): FusionFlags {
  return { biasDropout: f.biasDropout ?? true, biasActivation: f.biasActivation ?? m.biasActivationFusion ?? true };
}
