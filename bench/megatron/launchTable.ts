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

const KERNEL_GROUP: [Group, RegExp][] = [
  ['gemm', /nvjet|cutlass|gemm|xmma|splitKreduce/i], ['norm', /layer_norm|GammaBeta|rms_norm/], ['softmax', /softmax|SoftMax/],
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
  fbHostMs: number;
  fbGpuBusyMs: number;
}

const zero = () => Object.fromEntries(GROUPS.map((g) => [g, 0])) as Record<Group, number>;

/** The model's forward-backward kernels by group: every layer's forward and backward, the recomputed forward, outside the layers, one main-gradient add a tensor. */
export function modelGroups(logText: string, id: string): Record<Group, number> {
  const log = parseMegatronLog(logText, id), c = configFromArgs(log.args);
  if ('error' in c) throw new Error(`${id}: ${c.error}`);
  const x = timeDims(c.model, c.par, resolveFusion(c.model, timeOptionsFromArgs(log.args).fusion as Parameters<typeof resolveFusion>[1]));
  const ops = layerOps(c.model, x), L = c.model.numLayers / c.par.pipelineParallel, rc = recomputed(c.par, L, ops), g = zero();
  for (const op of ops) g[opGroup(op)] += L * (op.kernels[0] + op.kernels[1]);
  for (const op of rc.ops) g[opGroup(op)] += rc.layers * op.kernels[0];
  for (const op of outsideOps(x)) g[opGroup(op)] += op.kernels[0] + op.kernels[1];
  g['main-grad'] += parameterTensorCount(c.model, L);
  return g;
}

export function launchRows(dir = LAUNCH_DIR): LaunchRow[] {
  return readdirSync(dir).filter((f) => f.endsWith('.phases.json')).sort().map((f) => {
    const [id, tag] = f.split('.'), ph = JSON.parse(readFileSync(`${dir}/${f}`, 'utf8'));
    const kernels: Record<string, number> | undefined = ph.profiled?.kernels?.fb;
    if (!kernels) throw new Error(`${dir}/${f}: no kernels by name for the forward-backward (a phases.py from before 73ed9eb, or the profile failed)`);
    const logText = readFileSync(`${dir}/${id}.${tag}.log`, 'utf8'), measured = zero();
    let apiCalls = 0;
    for (const [name, n] of Object.entries(kernels)) if (API.test(name)) apiCalls += n; else measured[kernelGroup(name)] += n;
    const model = modelGroups(logText, id), fb = ph.profiled.phases.fb;
    return {
      id, moe: /num_experts \.+ \d/.test(logText), launches: fb.launches, modelLaunches: GROUPS.reduce((s, g) => s + model[g], 0),
      apiCalls, measured, model, fbHostMs: ph.events.phases.fb.hostMs, fbGpuBusyMs: fb.gpuBusyMs,
    };
  });
}

/** A step is host-bound in the forward-backward when its host time there is this much over the GPU's busy time. */
export const HOST_BOUND = 1.3;
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
}
