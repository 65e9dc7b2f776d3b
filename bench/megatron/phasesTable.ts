/**
 * A Megatron-LM step phase by phase (bench/megatron/phases.py, run by terms.py --phases) beside the
 * time model's pieces of the same step: the forward-backward's GPU time and kernels, the optimizer's
 * GPU time and kernels, the parameter tensors. Terms, not totals:
 *
 *   npx tsx bench/megatron/phasesTable.ts [DIR]     # default bench/results/2026-12-03-time-phases/ph2
 */
import { readFileSync, readdirSync } from 'node:fs';
import { configFromArgs, parseMegatronLog } from '../../src/memory/megatron.js';
import { predictTimeFromLog, timeOptionsFromArgs } from '../../src/memory/time/fromLog.js';
import { TIME_STACKS } from '../../src/memory/time/iteration.js';
import { parameterTensorCount } from '../../src/memory/time/ops.js';
import { median } from '../../src/stats.js';
import { HOST_BOUND, LAUNCH_DIR } from './launchTable.js';

export const PHASES_DIR = 'bench/results/2026-12-03-time-phases/ph2';

interface Phase { hostMs?: number; gpuSpanMs?: number; gpuBusyMs?: number; idleMs?: number; launches?: number; waits?: number; waitMs?: number; syncs?: number }

export interface PhaseRow {
  id: string;
  moe: boolean;
  layers: number;
  /** Micro batches a step, as the time model reads them (timeOptionsFromArgs: global batch over micro batch × data-parallel size). */
  microBatches: number;
  /** cudaMemcpy calls in the forward-backward (its kernels by name, where phases.py recorded them): phases.py counts each among its waits. */
  fbCopies?: number;
  /** Parameter tensors (the optimizer's per-tensor loops run over them). */
  tensors: number;
  /** Steps of the CUDA-event window (no profiler), host clock from one train_step call to the next. */
  stepMs: number[];
  events: Record<string, Phase>;
  profiled: Record<string, Phase>;
  model: { fbGpuMs: number; fbKernels: number; optGpuMs: number; optKernels: number; iterMs: number };
}

export function phaseRows(dir = PHASES_DIR): PhaseRow[] {
  return readdirSync(dir).filter((f) => f.endsWith('.phases.json')).sort().map((f) => {
    const [id, tag] = f.split('.'), ph = JSON.parse(readFileSync(`${dir}/${f}`, 'utf8'));
    const missing = ['events', 'profiled'].filter((k) => !ph[k]?.phases);
    if (missing.length) throw new Error(`${dir}/${f}: no ${missing.join(' or ')} window (${ph.incomplete ?? (ph.profiled?.error ? 'the profile failed' : 'the run stopped early')})`);
    const log = parseMegatronLog(readFileSync(`${dir}/${id}.${tag}.log`, 'utf8'), id), c = configFromArgs(log.args);
    if ('error' in c) throw new Error(`${id}: ${c.error}`);
    const p = predictTimeFromLog(log);
    if ('error' in p) throw new Error(`${id}: ${p.error}`);
    const tensors = parameterTensorCount(c.model);
    const optGpuMs = p.terms.find((x) => x.name === 'optimizer')!.ms, optKernels = tensors * TIME_STACKS.megatron.optimizerKernelsPerTensor;
    const names: Record<string, number> | undefined = ph.profiled.kernels?.fb;
    return {
      id, moe: !!c.model.moe, layers: c.model.numLayers, microBatches: timeOptionsFromArgs(log.args).microBatches ?? 1, tensors,
      fbCopies: names && Object.entries(names).filter(([n]) => n.startsWith('Memcpy')).reduce((s, [, k]) => s + k, 0), stepMs: ph.events.stepMs, events: ph.events.phases, profiled: ph.profiled.phases,
      model: { fbGpuMs: p.gpuMs - optGpuMs, fbKernels: p.kernels - optKernels, optGpuMs, optKernels, iterMs: p.iterMs },
    };
  });
}

/** Launches of the optimizer's phases under the profiler (gradient norm, clip, update). */
export const optLaunches = (r: PhaseRow) => ['opt.norm', 'opt.clip', 'opt.update'].reduce((s, k) => s + (r.profiled[k]?.launches ?? 0), 0);
/** Host ms of the optimizer's per-tensor loops (gradient norm and clip), CUDA-event window. */
export const normClipMs = (r: PhaseRow) => (r.events['opt.norm']?.hostMs ?? 0) + (r.events['opt.clip']?.hostMs ?? 0);

/**
 * The host's time per kernel of a micro batch (the profile's microBatchLaunchUs): the forward-backward's host
 * ms over the kernels the model counts in it, in the dense steps host-bound there (host ms ≥ HOST_BOUND × the
 * GPU's busy ms) of both phase studies, their median. A MoE step's host waits for the GPU inside its layers,
 * and a GPU-bound step's host time is the GPU's: neither measures the host.
 */
export function microBatchLaunch(dirs = [PHASES_DIR, LAUNCH_DIR]): { us: number; runs: { id: string; us: number }[] } {
  const runs = dirs.flatMap((d) => phaseRows(d)).filter((r) => !r.moe && r.events.fb.hostMs! >= HOST_BOUND * r.profiled.fb.gpuBusyMs!)
    .map((r) => ({ id: r.id, us: (1e3 * r.events.fb.hostMs!) / r.model.fbKernels }));
  return { us: median(runs.map((r) => r.us))!, runs };
}

/** Every folder of stored phase timings that holds a MoE step: the H200's (both phase studies) and the ninth draw's (an H100). */
export const MOE_PHASE_DIRS = [PHASES_DIR, LAUNCH_DIR, 'bench/results/2026-12-06-time-heldout9/phases'];

export interface MoeHostTerms {
  id: string;
  layers: number;
  microBatches: number;
  /** Kernel launches in the forward-backward (profiler) and the model's count there. */
  launches: number;
  modelKernels: number;
  /** Synchronise calls in the forward-backward: `syncs` where phases.py counted them, else its waits less the memcpy calls its kernels list holds; null where neither can be told. */
  syncs: number | null;
  /** Host ms blocked in the calls that may wait (profiled: the GPU's queue the host waited out). */
  waitMs: number;
  /** The forward-backward's host ms (CUDA-event window; a mean, not a median), the GPU's busy ms in it (profiled). */
  fbHostMs: number;
  gpuBusyMs: number;
  /** Host µs a launch outside the waits: (fb host − waitMs) / launches. */
  usPerLaunch: number;
  /** µs a kernel the model counts of the forward-backward's host ms beyond the GPU's busy ms: what a serial model prices a micro batch's kernel at. */
  usBeyondGpu: number;
  /** No step of the event window took twice the median (h1-r02's holds a 1.7 s one: its fb host mean is not a steady figure). */
  steady: boolean;
}

/** A MoE step's host, term by term, from its phase timings (bench/megatron/phases.py): per run, what docs/memory.md's table gives. */
export function moeHostTerms(dirs = MOE_PHASE_DIRS): MoeHostTerms[] {
  return dirs.flatMap((dir) => phaseRows(dir).filter((r) => r.moe).map((r) => {
    const fb = r.profiled.fb, e = r.events.fb;
    return {
      id: r.id, layers: r.layers, microBatches: r.microBatches,
      launches: fb.launches!, modelKernels: r.model.fbKernels, syncs: fb.syncs ?? (r.fbCopies === undefined ? null : fb.waits! - r.fbCopies), waitMs: fb.waitMs!,
      fbHostMs: e.hostMs!, gpuBusyMs: fb.gpuBusyMs!, usPerLaunch: (1e3 * (e.hostMs! - fb.waitMs!)) / fb.launches!, usBeyondGpu: (1e3 * (e.hostMs! - fb.gpuBusyMs!)) / r.model.fbKernels,
      steady: Math.max(...r.stepMs) < 2 * median(r.stepMs)!,
    };
  }));
}

if (process.argv[1]?.endsWith('phasesTable.ts')) {
  const rows = phaseRows(process.argv[2]);
  const f = (x: number, d = 1) => x.toFixed(d);
  console.log('| run | tensors | step ms (median) | fb host ms | fb GPU busy / model | fb launches / model | µs a launch (fb host) | norm+clip host ms (µs a tensor) | update host / GPU span / model ms | post host ms | between + zero ms | optimizer launches / model |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const e = r.events, p = r.profiled, med = [...r.stepMs].sort((a, b) => a - b)[r.stepMs.length >> 1];
    console.log(`| ${r.id} | ${r.tensors} | ${f(med)} | ${f(e.fb.hostMs!)} | ${f(p.fb.gpuBusyMs!)} / ${f(r.model.fbGpuMs)} | ${f(p.fb.launches!, 0)} / ${f(r.model.fbKernels, 0)} | ${f((1e3 * e.fb.hostMs!) / p.fb.launches!, 0)} | ${f(normClipMs(r))} (${f((1e3 * normClipMs(r)) / r.tensors, 0)}) | ${f(e['opt.update'].hostMs!)} / ${f(e['opt.update'].gpuSpanMs!)} / ${f(r.model.optGpuMs)} | ${f(e.post.hostMs!)} | ${f(e.between.hostMs! + e.zero.hostMs!)} | ${f(optLaunches(r), 0)} / ${f(r.model.optKernels, 0)} |`);
  }
  const u = microBatchLaunch();
  console.log(`\nµs of host a kernel the model counts in a micro batch (fb host ms / model fb kernels; dense, host-bound; both phase studies): ` +
    `median ${f(u.us)} over ${u.runs.map((r) => `${r.id} ${f(r.us)}`).join(', ')}`);
  console.log('\n| MoE run | layers × micro batches | fb launches / model | syncs | host ms waiting (profiled) | fb host ms | GPU busy ms | host µs a launch outside the waits | µs a counted kernel beyond the GPU |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const t of moeHostTerms())
    console.log(`| ${t.id}${t.steady ? '' : ' (not steady)'} | ${t.layers} × ${t.microBatches} | ${f(t.launches, 0)} / ${f(t.modelKernels, 0)} | ${t.syncs === null ? '–' : f(t.syncs, 0)} | ${f(t.waitMs)} | ${f(t.fbHostMs)} | ${f(t.gpuBusyMs)} | ${f(t.usPerLaunch, 0)} | ${f(t.usBeyondGpu, 0)} |`);
}
