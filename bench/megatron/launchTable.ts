/**
 * The forward-backward's kernels by name (bench/megatron/phases.py `kernels`, run by terms.py
 * --phases) beside the time model's ops (ops.ts, step.ts layerOps), group by group: which of the
 * model's launch counts are right op by op, and where the launches it does not count are.
 *
 *   npx tsx bench/megatron/launchTable.ts [DIR]     # default bench/results/2026-12-03-launch-counts/runs
 */
import { readFileSync, readdirSync } from 'node:fs';
import { configFromArgs, parseMegatronLog } from '../../src/memory/megatron.js';
import { timeOptionsFromArgs } from '../../src/memory/time/fromLog.js';
import { recomputed, resolveFusion } from '../../src/memory/time/iteration.js';
import { outsideOps, parameterTensorCount, timeDims, type Op } from '../../src/memory/time/ops.js';
import { layerOps } from '../../src/memory/time/step.js';

export const LAUNCH_DIR = 'bench/results/2026-12-03-launch-counts/runs';

/** The groups compared: a kernel's name (the profiler's, cut at 120 characters) and a model op's, each to one group. */
export const GROUPS = ['gemm', 'norm', 'softmax', 'dropout', 'main-grad', 'rest'] as const;
export type Group = (typeof GROUPS)[number];

// A split-K GEMM's second kernel (cuBLASLt's splitKreduce: one in r10, r15 and r45) is not a GEMM of the model's: it counts in the rest.
// The softmax group is the attention core's bf16 softmax; a MoE router's fp32 softmax counts in the rest, as the model's router op does.
const KERNEL_GROUP: [Group, RegExp][] = [
  ['gemm', /^(?!.*splitKreduce).*(nvjet|cutlass|gemm|xmma)/i], ['norm', /layer_norm|GammaBeta|rms_norm/], ['softmax', /(softmax|SoftMax)[\w:]*<(\d+, )?c10::BFloat16/],
  ['dropout', /fused_dropout|masked_scale/],
  // The fp32 main gradient += the bf16 gradient, one a parameter tensor (--no-gradient-accumulation-fusion).
  ['main-grad', /^void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<float>/],
];
/** Not kernel launches but memory API calls on the stream (cudaMemsetAsync, cudaMemcpyAsync): host calls the model does not count. */
const API = /^(Memset|Memcpy)/;

export const kernelGroup = (name: string): Group => KERNEL_GROUP.find(([, r]) => r.test(name))?.[0] ?? 'rest';

function opGroup(op: Op): Group {
  if (op.kind === 'gemm' || op.kind === 'bmm') return 'gemm';
  if (/^(input|pre-MLP|final) norm$/.test(op.name)) return 'norm';
  if (/^softmax/.test(op.name)) return 'softmax';
  if (/^(hidden|attention|embedding) dropout/.test(op.name)) return 'dropout';
  return 'rest';
}

export interface LaunchRow {
  id: string;
  moe: boolean;
  /** Kernel launches in the forward-backward per iteration: the profiler's and the model's. */
  launches: number;
  modelLaunches: number;
  /** Memset and memcpy calls in the forward-backward (not launches; the model counts none). */
  apiCalls: number;
  measured: Record<Group, number>;
  model: Record<Group, number>;
  /** The rest group's measured kernels by kind (REST_KINDS, first match; not matched to the model's ops: its rest is counted as one). */
  restKinds: Map<string, number>;
  fbHostMs: number;
  fbGpuBusyMs: number;
}

const zero = () => Object.fromEntries(GROUPS.map((g) => [g, 0])) as Record<Group, number>;

/**
 * The model's forward-backward kernels by group, per iteration as step.ts counts them: each micro batch's
 * layers forward and backward, the recomputed forward, outside the layers, one main-gradient add a tensor.
 */
export function modelGroups(logText: string, id: string): Record<Group, number> {
  const log = parseMegatronLog(logText, id), c = configFromArgs(log.args);
  if ('error' in c) throw new Error(`${id}: ${c.error}`);
  const opts = timeOptionsFromArgs(log.args), mb = opts.microBatches ?? 1;
  const x = timeDims(c.model, c.par, resolveFusion(c.model, opts.fusion as Parameters<typeof resolveFusion>[1]));
  const ops = layerOps(c.model, x), L = c.model.numLayers / c.par.pipelineParallel, rc = recomputed(c.par, L, ops), g = zero();
  for (const op of ops) g[opGroup(op)] += mb * L * (op.kernels[0] + op.kernels[1]);
  for (const op of rc.ops) g[opGroup(op)] += mb * rc.layers * op.kernels[0];
  for (const op of outsideOps(x)) g[opGroup(op)] += mb * (op.kernels[0] + op.kernels[1]);
  g['main-grad'] += mb * parameterTensorCount(c.model, L);
  return g;
}

/** What the measured kernels of the rest group are, by name. */
export const REST_KINDS: [string, RegExp][] = [
  ["sin and cos of RoPE's frequencies", /sin_kernel|cos_kernel/], ['neg (RoPE rotate_half)', /neg_kernel/], ['cat', /CatArray/],
  ['bf16 adds', /CUDAFunctor_add<c10::BFloat16>/], ['copies and casts', /copy_kernel/], ['fills', /FillFunctor/],
  ["the embedding's backward (sort, scan, scatter)", /radix_sort|scan::|unique_by_key|partial|compute_grad_weight|sum_and_scatter|indexing_backward|DeviceCompact|DeviceSelect|write_indices|DeviceReduce|embedding_backward/],
  ['activations', /Gelu|silu|Silu/], ['masked_fill', /masked_fill/], ['reductions', /reduce_kernel/], ['other elementwise', /./],
];

export function launchRows(dir = LAUNCH_DIR): LaunchRow[] {
  return readdirSync(dir).filter((f) => f.endsWith('.phases.json')).sort().map((f) => {
    const [id, tag] = f.split('.'), ph = JSON.parse(readFileSync(`${dir}/${f}`, 'utf8'));
    const kernels: Record<string, number> | undefined = ph.profiled?.kernels?.fb;
    if (!kernels) throw new Error(`${dir}/${f}: no kernels by name for the forward-backward (a phases.py from before 73ed9eb, or the profile failed)`);
    const logText = readFileSync(`${dir}/${id}.${tag}.log`, 'utf8'), measured = zero();
    let apiCalls = 0;
    const restKinds = new Map<string, number>();
    for (const [name, n] of Object.entries(kernels)) {
      if (API.test(name)) {
        apiCalls += n;
        continue;
      }
      const g = kernelGroup(name);
      measured[g] += n;
      if (g !== 'rest') continue;
      const kind = REST_KINDS.find(([, r]) => r.test(name))![0];
      restKinds.set(kind, (restKinds.get(kind) ?? 0) + n);
    }
    const model = modelGroups(logText, id), fb = ph.profiled.phases.fb;
    return {
      id, moe: /num_experts \.+ \d/.test(logText), launches: fb.launches, modelLaunches: GROUPS.reduce((s, g) => s + model[g], 0),
      apiCalls, measured, model, restKinds, fbHostMs: ph.events.phases.fb.hostMs, fbGpuBusyMs: fb.gpuBusyMs,
    };
  });
}

/**
 * A step is host-bound in the forward-backward when its host time there is this much over the GPU's
 * busy time. The phase study's four (test/phases.test.ts) are 1.20-2.13; the closest below, 1.15, is
 * h1-r17 (372 µs a launch: GPU-bound, its host waiting), and here r05 (1.148).
 */
export const HOST_BOUND = 1.18;
export const usPerLaunch = (r: LaunchRow) => (1e3 * r.fbHostMs) / r.launches;

if (process.argv[1]?.endsWith('launchTable.ts')) {
  const rows = launchRows(process.argv[2]), f = (x: number, d = 0) => x.toFixed(d);
  console.log('| run | launches: profiler / model | memset + memcpy | GEMM | norm | softmax | dropout | main-grad add | the rest | fb host / GPU busy ms | µs a launch (host-bound) |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const cells = GROUPS.map((g) => `${f(r.measured[g])} / ${f(r.model[g])}`).join(' | ');
    const hb = r.fbHostMs >= HOST_BOUND * r.fbGpuBusyMs ? f(usPerLaunch(r)) : '–';
    console.log(`| ${r.id}${r.moe ? ' (MoE)' : ''} | ${f(r.launches)} / ${f(r.modelLaunches)} | ${f(r.apiCalls)} | ${cells} | ${f(r.fbHostMs, 1)} / ${f(r.fbGpuBusyMs, 1)} | ${hb} |`);
  }
  const dense = rows.filter((r) => !r.moe), kinds = dense.map((r) => r.restKinds);
  const sum = (g: (r: LaunchRow) => number) => dense.reduce((t, r) => t + g(r), 0);
  console.log(`\nThe dense steps' rest: ${f(sum((r) => r.measured.rest))} kernels measured, ${f(sum((r) => r.model.rest))} modelled. What the measured ones are:\n`);
  console.log(`| kind | ${dense.map((r) => r.id).join(' | ')} | all |`);
  console.log(`|---|${dense.map(() => '---|').join('')}---|`);
  for (const [kind] of REST_KINDS) console.log(`| ${kind} | ${kinds.map((k) => f(k.get(kind) ?? 0)).join(' | ')} | ${f(kinds.reduce((t, k) => t + (k.get(kind) ?? 0), 0))} |`);
}
