/**
 * The memory model against a saved-tensor trace of a real Megatron-LM run (bench/megatron/trace.py:
 * every tensor autograd keeps for backward, by module and by the Megatron-LM line that saved it,
 * each storage once), term by term: the trace's tensors and the model's stored terms are both
 * sorted into the same groups (what a module keeps), and each group is compared.
 *
 * The groups: the two norms' inputs; the attention's linear inputs; the attention core (Q, K, V, the
 * RoPE copies and tables, the s² softmax and its dropout, or FlashAttention's LSE); the boolean
 * attention mask; the hidden-dropout masks; the MLP or MoE layer (its input, the experts, the router);
 * the layer inputs kept by full recompute; the embedding; the output layer and loss.
 */
import { MASKED_IDS, type MemoryBreakdown, type MemoryTerm } from './model.js';
import { InputError } from '../errors.js';

export interface TraceSaved {
  module: string;
  site: string;
  dtype: string;
  count: number;
  /** Bytes of the storages first saved here (a storage saved again elsewhere counts once). */
  bytes: number;
  shared: number;
  shapes: number[][];
  layers: number;
}

export interface MegatronTrace {
  format: string;
  /** The iteration whose saved tensors are listed; the allocator's timeline runs through history_iterations. */
  saved_iteration: number;
  history_iterations: number;
  saved: TraceSaved[];
  saved_bytes: number;
  max_allocated_bytes: number | null;
  history: { peak_bytes: number; peak_frames: string[]; live_at_peak: { site: string; bytes: number; count: number }[] } | { error: string } | null;
  iterations: { iteration: number; allocated_bytes: number; max_allocated_bytes: number }[];
  errors: string[];
  /** What the saved tensors are of: 'first micro batch' (bench/megatron/trace.py since 2026-12-07); absent in older traces, whose saved tensors are of every forward of the step. */
  saved_scope?: string;
  /** The command line the run was given (its flags). */
  args?: string[];
}

/** Micro batches a step of a traced run, from its flags: the global batch over the micro batch (one GPU: no data parallelism). */
export function tracedMicroBatches(trace: Pick<MegatronTrace, 'args'>): number {
  const flag = (name: string) => { const i = trace.args?.indexOf(name) ?? -1; return i >= 0 ? Number(trace.args![i + 1]) : NaN; };
  const n = flag('--global-batch-size') / flag('--micro-batch-size');
  return Number.isInteger(n) && n > 0 ? n : 1;
}

/**
 * Whether a trace's saved tensors are one micro batch's, which the model's stored part is: recorded so since 2026-12-07
 * (saved_scope), or a step of one micro batch. Older traces of steps with several recorded every micro batch's forward,
 * each storage once, so micro batches whose blocks the allocator reused counted once and the others twice: the MoE
 * held-out draw's r04 (2 micro batches, 6 layers) lists 12 saved inputs of each layer norm, 6620 MiB where the model's
 * one micro batch stores 5628 (bench/results/2026-12-07-moe-held). Their stored and transient parts measure nothing.
 */
export const savedIsOneMicroBatch = (trace: Pick<MegatronTrace, 'args' | 'saved_scope'>) =>
  trace.saved_scope === 'first micro batch' || tracedMicroBatches(trace) === 1;

export const TRACE_GROUPS = ['norm inputs', 'attention linears', 'attention core', 'attention mask', 'hidden dropout', 'mlp', 'layer inputs', 'embedding', 'output and loss', 'other'] as const;
export type TraceGroup = (typeof TRACE_GROUPS)[number];

const isMask = (x: TraceSaved) => x.dtype === 'bool' && x.shapes.some((s) => s.length === 4 && s[1] === 1 && s[2] === s[3]);

/** The group of one traced entry, from its module and the line that saved it. */
export function traceGroup(x: TraceSaved): TraceGroup {
  const mod = x.module, site = x.site;
  if (isMask(x)) return 'attention mask';
  if (/input_layernorm$|pre_mlp_layernorm$/.test(mod)) return 'norm inputs';
  if (/linear_qkv$|linear_proj$/.test(mod)) return 'attention linears';
  if (/core_attention|\.self_attention$/.test(mod) || site.includes('fused_softmax.py') || site.includes('rope_utils.py')) return 'attention core';
  if (/\.mlp(\.|$)/.test(mod) || mod.endsWith('.mlp')) return 'mlp';
  if (/layers\.\*$/.test(mod) && site.includes('fused_bias_dropout.py')) return 'hidden dropout';
  // selective mlp/moe recompute: the layer checkpoints its MLP input
  if (/layers\.\*$/.test(mod) && site.includes('random.py')) return 'mlp';
  // full recompute: the block checkpoints each chunk's input (and passes the RoPE table along)
  if (/^decoder$/.test(mod) && site.includes('random.py')) return x.dtype === 'float32' ? 'attention core' : 'layer inputs';
  if (mod.startsWith('embedding')) return 'embedding';
  if (/final_layernorm|output_layer/.test(mod) || site.includes('cross_entropy.py') || mod === '(outside modules)') return 'output and loss';
  return 'other';
}

/** The group of one model term (by its name). */
export function termGroup(t: MemoryTerm): TraceGroup {
  const n = t.name;
  if (/^(LayerNorm|RMSNorm) [12] input$/.test(n)) return 'norm inputs';
  if (n === 'QKV input' || n === 'projection input') return 'attention linears';
  if (/^Q[ ,]|^RoPE cos|^softmax|attention output copy/.test(n)) return 'attention core';
  if (n.startsWith('attention mask')) return 'attention mask';
  if (/dropout mask$/.test(n) && n !== 'softmax dropout mask' && n !== 'embedding dropout mask') return 'hidden dropout';
  if (n === 'layer input (full recompute)') return 'layer inputs';
  if (n === 'input ids (and labels)' || n === MASKED_IDS || n === 'embedding dropout mask') return 'embedding';
  if (/^final (LayerNorm|RMSNorm) input$/.test(n) || n === 'output layer input' || /cross-entropy/.test(n)) return 'output and loss';
  if (t.part === 'mlp') return 'mlp';
  return 'other';
}

/**
 * Terms the model counts among the activations that the allocator holds between steps (the persistent QKᵀ buffer, RoPE's
 * cached table, what the token dispatcher keeps): the model marks them (MemoryTerm.betweenSteps). A full-recompute
 * checkpoint saves RoPE's table too (traceGroup: the attention core), so such a trace's saved bytes list that static
 * storage as well, and its measured transient is short by as much (16 MiB at 32K: r09).
 */
const betweenSteps = (t: MemoryTerm) => t.betweenSteps === true;

export interface GroupComparison {
  group: TraceGroup;
  traced: number;
  model: number;
  /** (model − traced) / the run's measured peak. */
  ofPeak: number;
}

/**
 * Stored activations by group, the model's (every layer group times its layers, and the terms outside
 * the layers that autograd saves) beside the trace's. Buffers that are not saved tensors (the
 * persistent QKᵀ buffer) are left out of both.
 */
export function compareTrace(b: MemoryBreakdown, trace: MegatronTrace, peakBytes: number): GroupComparison[] {
  const model = new Map<TraceGroup, number>(), traced = new Map<TraceGroup, number>();
  const add = (m: Map<TraceGroup, number>, g: TraceGroup, x: number) => m.set(g, (m.get(g) ?? 0) + x);
  for (const g of b.layerGroups) for (const t of g.terms) add(model, termGroup(t), t.bytes * g.layers);
  for (const t of b.outside) if (!betweenSteps(t)) add(model, termGroup(t), t.bytes);
  for (const x of trace.saved) add(traced, traceGroup(x), x.bytes);
  return TRACE_GROUPS.map((group) => {
    const m = model.get(group) ?? 0, t = traced.get(group) ?? 0;
    return { group, traced: t, model: m, ofPeak: (m - t) / peakBytes };
  }).filter((c) => c.traced || c.model);
}

/** The parts of a peak a trace measures, in the order tables give them. */
export const PEAK_PARTS = ['static', 'stored', 'transient'] as const;
export type PeakPart = (typeof PEAK_PARTS)[number];

export interface PartComparison {
  part: PeakPart;
  model: number;
  measured: number;
  /** (model − measured) / the run's measured peak. The three add up to the total's error. */
  ofPeak: number;
}

/**
 * The model's peak in the parts a trace measures: static (allocated between steps: weights, gradients, optimizer,
 * buckets, workspaces, the buffers kept between steps and what MoE checkpoints hold from backward to the next forward),
 * stored (the activations saved for backward but those buffers) and transient (the rest of the peak: its transient
 * less what the checkpoints hold, which the run's allocated-between-steps already has).
 */
export function modelPeakParts(b: MemoryBreakdown): Record<PeakPart, number> {
  const buffers = b.outside.filter(betweenSteps).reduce((s, t) => s + t.bytes, 0);
  const state = b.weightBytes + b.gradientBytes + b.optimizerBytes + b.gradientBucketBytes + b.workspaceBytes;
  const held = b.heldAfterBackward?.bytes ?? 0;
  return { static: state + buffers + held, stored: b.activationBytes - buffers, transient: b.transientBytes - held };
}

/**
 * The peak in three parts, the model's beside the run's. Static: what the allocator holds between
 * steps (allocated when the peak's iteration began; in its blocks, each request rounded up to 512 bytes and a large
 * block left whole where 1 MiB or less would remain, which the model's bytes leave out: up to 34 MiB of a traced run's,
 * test/memory-traces-kept.test.ts), against the model's weights, gradients, optimizer,
 * buckets, workspaces, the buffers it counts as kept between steps and what MoE checkpoints hold until the
 * next forward (heldAfterBackward). Stored: what autograd saves (the trace's saved bytes), against the
 * model's stored activations less those buffers. Transient: the rest of the peak, against the model's
 * largest transient (net of what is freed at its moment) less what MoE checkpoints hold between steps.
 */
export function comparePeakParts(b: MemoryBreakdown, trace: MegatronTrace, peakBytes: number): PartComparison[] {
  const before = trace.iterations.find((i) => i.iteration === trace.history_iterations - 1);
  if (!before) throw new InputError(`trace: no allocation recorded after iteration ${trace.history_iterations - 1}: not a trace of bench/megatron/trace.py with its allocator history`);
  const measured = { static: before.allocated_bytes, stored: trace.saved_bytes, transient: peakBytes - before.allocated_bytes - trace.saved_bytes };
  const model = modelPeakParts(b);
  // A trace whose saved tensors span several micro batches (savedIsOneMicroBatch) measures the static part alone.
  const parts = savedIsOneMicroBatch(trace) ? PEAK_PARTS : (['static'] as const);
  return parts.map((part) => ({ part, model: model[part], measured: measured[part], ofPeak: (model[part] - measured[part]) / peakBytes }));
}
