/**
 * A Megatron-LM step phase by phase (bench/megatron/phases.py, run by terms.py --phases) beside the
 * time model's pieces of the same step: the forward-backward's GPU time and kernels, the optimizer's
 * GPU time and kernels, the parameter tensors. Terms, not totals:
 *
 *   npx tsx bench/megatron/phasesTable.ts [DIR]     # default bench/results/2026-12-03-time-phases/ph2
 */
import { readFileSync, readdirSync } from 'node:fs';
import { configFromArgs, parseMegatronLog } from '../../src/memory/megatron.js';
import { predictTimeFromLog } from '../../src/memory/time/fromLog.js';
import { TIME_STACKS } from '../../src/memory/time/iteration.js';
import { parameterTensorCount } from '../../src/memory/time/ops.js';
import { median } from '../../src/stats.js';
import { HOST_BOUND, LAUNCH_DIR } from './launchTable.js';

export const PHASES_DIR = 'bench/results/2026-12-03-time-phases/ph2';

interface Phase { hostMs?: number; gpuSpanMs?: number; gpuBusyMs?: number; idleMs?: number; launches?: number; waits?: number }

export interface PhaseRow {
  id: string;
  moe: boolean;
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
    return {
      id, moe: !!c.model.moe, tensors, stepMs: ph.events.stepMs, events: ph.events.phases, profiled: ph.profiled.phases,
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
}
