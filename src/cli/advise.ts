/**
 * `flashring advise`: for a model (Megatron-LM's flags, as `flashring memory` takes them, or a preset),
 * a sequence length and the GPUs (count, HBM, link), every layout of TP × CP (× --cp-comm-type) × PP
 * × recompute × distributed optimizer that divides the GPUs and the model; keeps those whose
 * predicted peak (src/memory/model.ts) fits the HBM with a margin, ranks them by predicted step time
 * for the same global batch (src/memory/time/: the H200 profile's rates), and says why: which term
 * forced CP, what recompute costs in time, which communication is not hidden.
 */
import { InputError } from '../errors.js';
import { GIB, memoryBreakdown, recomputeSpec, parseRecomputeSpec, type ModelConfig, type ParallelConfig, type CpCommType } from '../memory/model.js';
import { iterationTime } from '../memory/time/step.js';
import type { IterationTime } from '../memory/time/iteration.js';
import { H200 } from '../memory/time/devices.js';
import { LINK_NAMES, resolveLink, type Link } from '../ring/linkModel.js';
import { numberArg, parseCommand } from './args.js';
import { MODEL_OPTS, configFromFlags, joinModuleArgs } from './memory.js';

const HELP = `usage: flashring advise <model flags of flashring memory> --seq-length S --gpus N [options]
  Searches TP × CP (× --cp-comm-type p2p|all_gather|a2a) × PP × recompute (none, selective,
  selective:core_attn+mlp, full:uniform/1) × distributed optimizer over N GPUs; keeps what fits
  the HBM with a margin; ranks by predicted step time for the same global batch.
  --gpus N                GPUs (TP ≤ 8, within a node; DP = N / (TP·CP·PP))
  --hbm-gib G             GPU memory (default 80)
  --margin F              keep a fraction of the HBM free (default 0.1: fits ≤ 90%)
  --global-batch-size B   sequences per step (default N: one per GPU's share)
  --link NAME             ${LINK_NAMES.join('|')} (default nvlink-h200); --link-gbps G --link-latency-us U for custom
  --top K                 how many to print (default 5)
  --json                  every fitting candidate: tp, cp, cpCommType, pp, dp, recompute, iterMs, totalBytes, …
Rates: the H200 profile (src/memory/time/devices.ts); --hbm-gib changes the memory only.`;

const OPTS = {
  ...MODEL_OPTS, gpus: { type: 'string' }, margin: { type: 'string' }, 'global-batch-size': { type: 'string' }, link: { type: 'string' },
  'link-gbps': { type: 'string' }, 'link-latency-us': { type: 'string' }, top: { type: 'string' },
} as const;

/** Flags of `memory` that the advisor chooses itself, or that mean nothing here: refused, not ignored. */
const SEARCHED = ['tensor-model-parallel-size', 'context-parallel-size', 'pipeline-model-parallel-size', 'data-parallel-size', 'sequence-parallel',
  'cp-comm-type', 'recompute-granularity', 'recompute-modules', 'recompute-method', 'recompute-num-layers', 'use-distributed-optimizer',
  'num-layers-per-virtual-pipeline-stage'];
const NOT_HERE = ['sweep', 'seq-lengths', 'lines', 'csv', 'compare'];

export const RECOMPUTE_CHOICES = ['none', 'selective', 'selective:core_attn+mlp', 'full:uniform/1'];

export interface Candidate {
  tp: number; cp: number; cpCommType: CpCommType | null; pp: number; dp: number; recompute: string; distributedOptimizer: boolean;
  iterMs: number; totalBytes: number; tokensPerSecond: number; tflopsPerGpu: number; commFraction: number; time: IterationTime;
}

interface Request { model: ModelConfig; base: ParallelConfig; gpus: number; hbmGib: number; margin: number; gbs: number; link: Link; top: number; json: boolean }

const divisors = (n: number) => Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);

function request(argv: string[]): Request | null {
  const { values } = parseCommand('advise', joinModuleArgs(argv), OPTS);
  if (values.help) return null;
  for (const f of SEARCHED) if (values[f as keyof typeof values] !== undefined) throw new InputError(`--${f} is what advise searches: leave it out`);
  for (const f of NOT_HERE) if (values[f as keyof typeof values] !== undefined) throw new InputError(`--${f} belongs to flashring memory, not advise`);
  if (values['seq-length'] === undefined) throw new InputError('--seq-length is required (the sequence length to train at)');
  if (values.gpus === undefined) throw new InputError('--gpus is required (how many GPUs to spread the model over)');
  const gpus = numberArg('gpus', values.gpus, { integer: true, min: 1, max: 65536, what: 'a positive integer up to 65536' });
  const { model, par, hbmGib } = configFromFlags(values);
  const margin = values.margin === undefined ? 0.1 : numberArg('margin', values.margin, { min: 0, max: 0.9, what: 'a fraction in [0, 0.9]' });
  const gbs = values['global-batch-size'] === undefined ? gpus : numberArg('global-batch-size', values['global-batch-size'], { integer: true, min: 1, max: 1e7, what: 'a positive integer' });
  const num = (k: 'link-gbps' | 'link-latency-us') => (values[k] === undefined ? undefined : numberArg(k, values[k]!, { min: 0, max: 1e9, what: 'a non-negative number' }));
  const link = resolveLink(values.link ?? 'nvlink-h200', num('link-gbps'), num('link-latency-us'));
  const top = values.top === undefined ? 5 : numberArg('top', values.top, { integer: true, min: 1, max: 1000, what: 'a positive integer' });
  return { model, base: par, gpus, hbmGib, margin, gbs, link, top, json: !!values.json };
}

/** Every layout the GPUs and the model allow (the memory model's validate() decides), evaluated. */
export function candidates(r: Request): { all: number; fitting: Candidate[]; smallest: { c: Candidate; bytes: number } | null } {
  const out: Candidate[] = [];
  let all = 0, smallest: { c: Candidate; bytes: number } | null = null;
  for (const tp of divisors(r.gpus).filter((t) => t <= 8))
    for (const cp of divisors(r.gpus / tp))
      for (const pp of divisors(r.gpus / (tp * cp))) {
        const dp = r.gpus / (tp * cp * pp);
        if (r.gbs % (dp * r.base.microBatchSize)) continue;
        for (const cpCommType of cp > 1 ? (['p2p', 'all_gather', 'a2a'] as const) : [undefined])
          for (const recompute of RECOMPUTE_CHOICES)
            for (const distributedOptimizer of dp * cp > 1 ? [false, true] : [false]) {
              const c = evaluate(r, { tp, cp, pp, dp, cpCommType, recompute, distributedOptimizer });
              if (!c) continue;
              all++;
              if (!smallest || c.totalBytes < smallest.bytes) smallest = { c, bytes: c.totalBytes };
              if (c.totalBytes <= r.hbmGib * GIB * (1 - r.margin)) out.push(c);
            }
      }
  return { all, fitting: out.sort((a, b) => a.iterMs - b.iterMs), smallest };
}

type Layout = { tp: number; cp: number; pp: number; dp: number; cpCommType: CpCommType | undefined; recompute: string; distributedOptimizer: boolean };

export function layoutConfig(r: Pick<Request, 'base'>, l: Layout): ParallelConfig {
  return {
    ...r.base, recomputeModules: undefined, recomputeMethod: undefined, recomputeNumLayers: undefined, ...parseRecomputeSpec(l.recompute),
    tensorParallel: l.tp, contextParallel: l.cp, pipelineParallel: l.pp, dataParallel: l.dp, sequenceParallel: l.tp > 1,
    cpCommType: l.cpCommType, distributedOptimizer: l.distributedOptimizer, virtualStages: 1,
  };
}

function evaluate(r: Request, l: Layout): Candidate | null {
  const par = layoutConfig(r, l);
  let totalBytes: number, time: IterationTime;
  try {
    totalBytes = memoryBreakdown(r.model, par).totalBytes;
    time = iterationTime(r.model, par, { link: r.link, microBatches: r.gbs / (l.dp * par.microBatchSize) });
  } catch (e) {
    if (e instanceof InputError) return null; // a layout the model does not divide (heads, groups, layers, a2a)
    throw e;
  }
  return {
    tp: l.tp, cp: l.cp, cpCommType: l.cpCommType ?? null, pp: l.pp, dp: l.dp, recompute: recomputeSpec(par), distributedOptimizer: l.distributedOptimizer,
    iterMs: time.iterMs, totalBytes, tokensPerSecond: time.tokensPerSecond, tflopsPerGpu: time.tflopsPerGpu, commFraction: time.commFraction, time,
  };
}

const term = (c: Candidate, name: string) => c.time.terms.find((t) => t.name === name)?.ms ?? 0;
const pctOf = (x: number, c: Candidate) => `${((100 * x) / c.iterMs).toFixed(0)}%`;

/** Why this candidate: what CP = 1 would need, what recompute costs, which communication is exposed. */
export function reasons(r: Request, c: Candidate): string[] {
  const out: string[] = [];
  if (c.cp > 1) {
    const one = layoutConfig(r, { ...c, cp: 1, dp: c.dp * c.cp, cpCommType: undefined });
    try {
      const b = memoryBreakdown(r.model, one);
      const big = [...b.layerGroups.flatMap((g) => g.terms.map((t) => ({ name: t.name, bytes: t.bytes * g.layers }))), ...b.outside, ...(b.peakTransient ? [{ name: b.peakTransient.name, bytes: b.peakTransient.netBytes }] : [])]
        .sort((x, y) => y.bytes - x.bytes)[0];
      out.push(b.totalBytes > r.hbmGib * GIB * (1 - r.margin) ? `CP=${c.cp}: at CP=1 the same layout needs ${(b.totalBytes / GIB).toFixed(1)} GiB (largest: ${big.name}, ${(big.bytes / GIB).toFixed(1)} GiB)`
        : `CP=${c.cp} is faster than CP=1 here (it fits at CP=1 too: ${(b.totalBytes / GIB).toFixed(1)} GiB)`);
    } catch {
      out.push(`CP=${c.cp}: CP=1 is not a valid layout here`);
    }
  }
  const rc = term(c, 'recompute');
  if (rc > 0) out.push(`recompute ${c.recompute} costs ${rc.toFixed(0)} ms (${pctOf(rc, c)} of the step)`);
  const comm = ['tp-comm', 'cp-comm', 'dp-comm', 'pp-comm', 'pipeline-bubble'].map((n) => [n, term(c, n)] as const).filter(([, ms]) => ms / c.iterMs > 0.03);
  out.push(comm.length ? `not hidden: ${comm.map(([n, ms]) => `${n} ${ms.toFixed(0)} ms (${pctOf(ms, c)})`).join(', ')}` : 'communication hidden or under 3% of the step');
  return out;
}

function print(r: Request, res: ReturnType<typeof candidates>): void {
  console.log(`advise: ${r.model.numLayers} layers, h=${r.model.hiddenSize}, ${r.model.numAttentionHeads} heads, s=${r.base.seqLength}, ${r.gpus} GPUs × ${r.hbmGib} GiB (fits ≤ ${(100 * (1 - r.margin)).toFixed(0)}%), ` +
    `link ${r.link.name}, global batch ${r.gbs} sequences; rates: ${H200.name} profile`);
  console.log(`${res.all} layouts evaluated, ${res.fitting.length} fit`);
  if (!res.fitting.length) {
    const s = res.smallest;
    console.log(s ? `nothing fits: the smallest is TP=${s.c.tp} CP=${s.c.cp} PP=${s.c.pp} ${s.c.recompute} at ${(s.bytes / GIB).toFixed(1)} GiB` : 'no layout divides this model over these GPUs');
    return;
  }
  for (const [i, c] of res.fitting.slice(0, r.top).entries()) {
    console.log(`${i + 1}. TP=${c.tp} CP=${c.cp}${c.cpCommType ? ` (${c.cpCommType})` : ''} PP=${c.pp} DP=${c.dp} recompute=${c.recompute}${c.distributedOptimizer ? ' distributed-optimizer' : ''}: ` +
      `${c.iterMs.toFixed(0)} ms/step, ${(c.tokensPerSecond / 1e3).toFixed(1)}K tokens/s, ${c.tflopsPerGpu.toFixed(0)} TFLOP/s/GPU, comm ${(100 * c.commFraction).toFixed(0)}%, ${(c.totalBytes / GIB).toFixed(1)} GiB`);
    for (const why of reasons(r, c)) console.log(`     ${why}`);
  }
}

export async function adviseCommand(argv: string[]): Promise<number> {
  const r = request(argv);
  if (!r) {
    console.log(HELP);
    return 0;
  }
  const res = candidates(r);
  if (r.json) {
    const strip = ({ time, ...c }: Candidate) => ({ ...c, why: reasons(r, { ...c, time }), terms: time.terms });
    console.log(JSON.stringify({ model: r.model, seqLength: r.base.seqLength, gpus: r.gpus, hbmGib: r.hbmGib, margin: r.margin, globalBatchSize: r.gbs, link: r.link, profile: H200.name, evaluated: res.all, candidates: res.fitting.map(strip) }, null, 1));
    return 0;
  }
  print(r, res);
  return 0;
}
