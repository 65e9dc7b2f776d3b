/**
 * The iteration-time model (src/memory/time/) against real Megatron-LM runs that ran alone on the
 * H200 (bench/results/2026-12-02-megatron-timing/runs: configurations of the 2026-12-02 campaign,
 * same build / held-out split): each log predicted from its own argument dump beside its measured
 * steady iteration time (median after the 2 warm-up iterations). The profile's fitted figures come
 * from the build half only (src/memory/time/fit.ts).
 *
 *   npx tsx bench/megatron/timeTable.ts        # the fit on the build half, then the table of both halves
 *   npx tsx bench/megatron/timeTable.ts --fresh bench/results/2026-12-02-time-heldout   # a fresh draw against the shipped model
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { configFromArgs, parseMegatronLog, type ParseResult } from '../../src/memory/megatron.js';
import { describe } from './campaignTable.js';
import { DEFAULT_PARALLEL, parseRecomputeSpec, recomputeSpec, type ModelConfig, type ParallelConfig } from '../../src/memory/model.js';
import { median } from '../../src/stats.js';
import { H200, type DeviceProfile, type ScoreRates } from '../../src/memory/time/devices.js';
import { fitHost, type HostFit, type HostFitPoint } from '../../src/memory/time/fit.js';
import { predictTimeFromLog, steadyIterMs, timeOptionsFromArgs } from '../../src/memory/time/fromLog.js';
import { recomputed, resolveFusion, type IterationTime } from '../../src/memory/time/iteration.js';
import { coreOps, maskPieces, timeDims } from '../../src/memory/time/ops.js';
import { iterationTime } from '../../src/memory/time/step.js';

export const TIMING_DIR = 'bench/results/2026-12-02-megatron-timing';
export const DRAW = 'bench/results/2026-12-02-megatron-campaign/draw.json';

export interface TimeRow {
  id: string;
  split: 'build' | 'heldout';
  config: string;
  /** Iterations after warm-up the median was taken over. */
  iterations: number;
  measuredMs: number;
  predicted: IterationTime;
  error: number;
}

interface Drawn { id: string; split: 'build' | 'heldout'; config: { layers: number; hidden: number; heads: number; groups: number | null; swiglu: boolean; seq: number; micro_batch: number; moe?: { experts: number; topk: number } } }

/**
 * Every timing log, predicted with `profile` (default the shipped H200 profile). `asFitted`: a run
 * timed again later (runs/) read from the log the fit saw (superseded/: r07's 6 iterations).
 */
export function timeRows(profile: DeviceProfile = H200, dir = TIMING_DIR, asFitted = false, drawFile = DRAW): TimeRow[] {
  const draw = JSON.parse(readFileSync(drawFile, 'utf8')) as { kept: Drawn[] };
  const failed = new Set(outOfMemory(dir));
  const ids = readdirSync(`${dir}/runs`).filter((f) => f.endsWith('.log')).map((f) => f.slice(0, -4)).filter((id) => !failed.has(id)).sort();
  return ids.map((id) => {
    const k = draw.kept.find((x) => x.id === id);
    if (!k) throw new Error(`${id}: not in the campaign's draw`);
    const file = asFitted && existsSync(`${dir}/superseded/${id}.log`) ? `${dir}/superseded/${id}.log` : `${dir}/runs/${id}.log`;
    const res = parseMegatronLog(readFileSync(file, 'utf8'), id);
    const p = predictTimeFromLog(res, { profile });
    if ('error' in p) throw new Error(`${id}: ${p.error}`);
    const m = steadyIterMs(res);
    if (m.ms === null) throw new Error(`${id}: no iteration after warm-up`);
    const c = configFromArgs(res.args);
    if ('error' in c) throw new Error(`${id}: ${c.error}`);
    return { id, split: k.split, config: describe(k.config, recomputeSpec(c.par)), iterations: m.iterations, measuredMs: m.ms, predicted: p, error: p.iterMs / m.ms - 1 };
  });
}

/** Runs of `dir` that stopped out of GPU memory before their first iteration (no time to compare: the configuration does not fit alone). */
export function outOfMemory(dir = TIMING_DIR): string[] {
  return readdirSync(`${dir}/runs`).filter((f) => f.endsWith('.log')).filter((f) => {
    const text = readFileSync(`${dir}/runs/${f}`, 'utf8');
    return /torch\.OutOfMemoryError/.test(text) && parseMegatronLog(text, f).iterations.length === 0;
  }).map((f) => f.slice(0, -4)).sort();
}

/**
 * The build runs the three figures were fitted on: those timed when they were fitted (2026-12-02
 * 09:05-10:29 UTC). Build runs timed later (r03 r19 r28 r38 r39 r42, 14:00-14:16 UTC) are checked
 * against the frozen figures, not fitted: refitting would change what the held-out half was predicted with.
 */
export const FIT_RUNS = ['r01', 'r02', 'r06', 'r07', 'r09', 'r10', 'r15', 'r16', 'r21', 'r22', 'r24', 'r26', 'r30', 'r31', 'r35', 'r36', 'r37', 'r43', 'r47'];

/** The fit's inputs from the fitted build runs: the model's GPU side (no host time, no wait for the loader). */
export function buildFitPoints(profile: DeviceProfile = H200): HostFitPoint[] {
  // The data loader's wait is a floor (the step's time or the loader's, the larger), not a sum: the
  // figures are fitted without it, on steps it does not bind.
  const zero: DeviceProfile = { ...profile, loaderMaskMsPerGB: 0, host: { ...profile.host, launchUs: 0, iterationMs: 0, moeExpertUs: 0, microBatchLaunchUs: 0 } };
  return timeRows(zero, TIMING_DIR, true).filter((r) => FIT_RUNS.includes(r.id)).map((r) => ({
    id: r.id, gpuMs: r.predicted.iterMs, kernels: r.predicted.kernels, expertPasses: r.predicted.expertPasses, serial: r.predicted.hostSerial, measuredMs: r.measuredMs,
  }));
}

export function buildFit(profile: DeviceProfile = H200): HostFit {
  return fitHost(buildFitPoints(profile));
}

export const pct = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)}%`;

export function timeSummary(rows: TimeRow[], split: 'build' | 'heldout'): { runs: number; maxAbs: number; median: number } {
  const e = rows.filter((r) => r.split === split).map((r) => Math.abs(r.error));
  return { runs: e.length, maxAbs: e.reduce((a, b) => Math.max(a, b), 0), median: median(e) ?? NaN };
}

/** The markdown table: one row per run, its largest terms named. */
export function timeTable(rows: TimeRow[]): string {
  const out = ['| run | half | configuration | iterations | measured ms | model ms | error | largest terms (ms) |', '|---|---|---|---|---|---|---|---|'];
  for (const r of rows) {
    const top = [...r.predicted.terms].sort((a, b) => b.ms - a.ms).slice(0, 3).map((t) => `${t.name} ${t.ms.toFixed(0)}`).join(', ');
    out.push(`| ${r.id} | ${r.split} | ${r.config} | ${r.iterations} | ${r.measuredMs.toFixed(1)} | ${r.predicted.iterMs.toFixed(1)} | ${pct(r.error)} | ${top} |`);
  }
  return out.join('\n');
}

/** The PyTorch harness's points (bench/torchcp/cp_memory.py): one GPU, or CP ranks on 2 × H200. */
export const TORCH_POINTS = ['bench/results/memory-h200-2026-12-01/torchcp_points.jsonl', 'bench/results/torchcp-2xh200-2026-11-30/points.jsonl'];

interface TorchPoint { cp: number; gpus: number; recompute: string; seq_len: number; layers: number; hidden: number; heads: number; vocab: number; oom: boolean; iter_ms?: number }

export interface TorchRow { source: string; config: string; measuredMs: number; predicted: IterationTime; error: number }

/** Each measured point of the harness (out-of-memory points measured no time) against the model (--stack torch-amp). */
export function torchRows(profile: DeviceProfile = H200): TorchRow[] {
  const rows: TorchRow[] = [];
  for (const file of TORCH_POINTS)
    for (const line of readFileSync(file, 'utf8').split('\n').filter((l) => l.trim())) {
      const q = JSON.parse(line) as TorchPoint;
      if (q.oom || q.iter_ms === undefined) continue;
      const model: ModelConfig = { numLayers: q.layers, hiddenSize: q.hidden, numAttentionHeads: q.heads, vocabSize: q.vocab, untieEmbeddings: true, attentionDropout: 0, hiddenDropout: 0, positionEmbedding: 'none' };
      const rc = TORCH_RECOMPUTE[q.recompute];
      const par: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: q.seq_len, microBatchSize: 1, contextParallel: q.cp, stack: 'torch-amp', ...parseRecomputeSpec(rc) };
      const predicted = iterationTime(model, par, { profile });
      rows.push({ source: file.split('/')[2], config: `L${q.layers} h${q.hidden} a${q.heads} V${q.vocab} s${q.seq_len} CP${q.cp} ${rc}`, measuredMs: q.iter_ms, predicted, error: predicted.iterMs / q.iter_ms - 1 });
    }
  return rows;
}

/** Terms measured on their own (terms/: timers, configurations with a flag left out; terms/kernels: torch.profiler). */
export const TERMS_DIR = `${TIMING_DIR}/terms`;

export interface TermRun {
  /** `<id>.<tag>`: the campaign configuration and what was changed (timers: as drawn; norc: no recompute; a2a: the alltoall dispatcher; attnrc: core_attn recomputed only). */
  name: string;
  /** The log, parsed. */
  log: ParseResult;
  measuredMs: number;
  predicted: IterationTime;
  /** The model's GPU side: every term but host and data-loader. */
  gpuMs: number;
  /** From a torch.profiler window (terms/kernels): the GPU's busy time and kernels per iteration. */
  profile?: { gpuBusyMs: number; kernelCount: number; syncWaitsMs: number; kernels: { name: string; count: number; ms: number }[]; runtime: { name: string; count: number; ms: number }[] };
}

/** The kernel launches of a profile window: the CUDA runtime's launch calls (copies and memsets are not launches). */
export const launchesOf = (p: NonNullable<TermRun['profile']>): number =>
  p.runtime.filter((x) => /^cu(da)?LaunchKernel(Ex|ExC)?$/.test(x.name)).reduce((a, x) => a + x.count, 0);

/** Every log of `dir` (a terms folder), predicted from its own arguments, beside its steady time. */
export function termRuns(dir = TERMS_DIR): TermRun[] {
  return readdirSync(dir).filter((f) => f.endsWith('.log') && !f.startsWith('console')).sort().map((f) => {
    const name = f.slice(0, -4), res = parseMegatronLog(readFileSync(`${dir}/${f}`, 'utf8'), name);
    const p = predictTimeFromLog(res);
    if ('error' in p) throw new Error(`${name}: ${p.error}`);
    const m = steadyIterMs(res);
    if (m.ms === null) throw new Error(`${name}: no iteration after warm-up`);
    const gpuMs = p.terms.filter((t) => t.name !== 'host' && t.name !== 'data-loader').reduce((s, t) => s + t.ms, 0);
    const kf = `${dir}/${name}.kernels.json`;
    const profile = existsSync(kf) ? (JSON.parse(readFileSync(kf, 'utf8')) as TermRun['profile']) : undefined;
    return { name, log: res, measuredMs: m.ms, predicted: p, gpuMs, profile };
  });
}

/** Kernel classes of the unfused attention core in a profiled step, by kernel name (PyTorch 2.11's CUDA kernels). */
const SCORE_KERNELS: [string, RegExp][] = [
  ['maskFill', /masked_fill/], ['softmaxFwd', /SoftMaxForward|softmax_warp_forward/], ['softmaxBwd', /SoftMaxBackward|softmax_warp_backward/],
  ['dropoutFwd', /fused_dropout/], ['dropoutBwd', /masked_scale/],
  ['gradCopies', /Memcpy DtoD|vectorized_elementwise_kernel<8, at::native::(FillFunctor|BinaryFunctor)<c10::BFloat16/],
];

export interface ScoreSample { name: string; s: number; scoresPerLayer: number; layers: number; recomputed: number; moe: boolean; /** The share of the masked_fill_'s scores in contiguous pieces (ops.ts maskPieces). */ maskContiguousShare: number; ms: Record<string, number> }

/** The profiled steps: the campaign's (terms/kernels) and the fresh draw's (r09, r16, r20: profiled after they were judged). */
export const PROFILE_DIRS = [`${TERMS_DIR}/kernels`, 'bench/results/2026-12-02-time-heldout/terms'];

/** Each profiled step's score-kernel milliseconds by class, with the scores they ran over (one GPU: b·a·s² a layer). */
export function scoreSamples(dirs = PROFILE_DIRS): ScoreSample[] {
  return dirs.flatMap((dir) => termRuns(dir).filter((r) => r.profile).map((r) => {
    const c = configFromArgs(r.log.args);
    if ('error' in c) throw new Error(`${r.name}: ${c.error}`);
    const { model: m, par: p } = c, L = m.numLayers, o = timeOptionsFromArgs(r.log.args);
    // b·a·s² a layer and L layers a step: one GPU, one micro batch a step (as every profiled step is).
    if (p.tensorParallel * p.contextParallel * p.pipelineParallel !== 1 || (o.microBatches ?? 1) !== 1) throw new Error(`${r.name}: scoreSamples takes one-GPU steps of one micro batch`);
    // Layers whose attention core runs forward again in backward: the time model's own rule (iteration.ts recomputed).
    const x = timeDims(m, p, resolveFusion(m)), rc = recomputed(p, L, coreOps(x));
    const coreAgain = rc.ops.length ? rc.layers : 0;
    const ms: Record<string, number> = {};
    for (const k of r.profile!.kernels) {
      const cls = SCORE_KERNELS.find(([, re]) => re.test(k.name));
      if (cls) ms[cls[0]] = (ms[cls[0]] ?? 0) + k.ms;
    }
    if ((m.attentionDropout ?? 0.1) === 0 || (m.hiddenDropout ?? 0.1) > 0) { delete ms.dropoutFwd; delete ms.dropoutBwd; }
    return { name: r.name, s: p.seqLength, scoresPerLayer: p.microBatchSize * m.numAttentionHeads * p.seqLength ** 2, layers: L, recomputed: coreAgain, moe: !!m.moe, maskContiguousShare: maskPieces(x).contiguous, ms };
  }));
}

/**
 * The profile's per-score rates (devices.ts ScoreRates) from the profiled steps: ms per 10⁹ scores of one
 * call, a class's calls per layer being 1 forward (again where core_attn is recomputed) and 1 backward
 * (maskFill: both), the median over the steps: the masked_fill_ over the steps whose pieces are all strided
 * and over those whose pieces are all contiguous (ops.ts maskPieces; a step with both is left out), softmax and the gradient's copies
 * over the steps of each sequence length. Dropout only from steps with attention dropout and no hidden
 * dropout (whose kernels share the names); gradCopies only from dense steps (a MoE step's token
 * permutation adds copies and fills of its own).
 */
export function scoreRates(samples = scoreSamples()): Omit<ScoreRates, 'source'> {
  const calls = (x: ScoreSample, cls: string) => (cls === 'maskFill' ? 2 * x.layers + x.recomputed : /Fwd$/.test(cls) ? x.layers + x.recomputed : x.layers);
  const rate = (cls: string, xs = samples) => median(xs.filter((x) => x.ms[cls] !== undefined).map((x) => (x.ms[cls] * 1e9) / (x.scoresPerLayer * calls(x, cls))))!;
  const byS = (cls: string, xs = samples) => [...new Set(xs.map((x) => x.s))].sort((a, b) => a - b)
    .map((s) => ({ s, ms: rate(cls, xs.filter((x) => x.s === s)) })).filter((p) => p.ms !== null);
  return {
    maskFill: rate('maskFill', samples.filter((x) => x.maskContiguousShare === 0)), maskFillContiguous: rate('maskFill', samples.filter((x) => x.maskContiguousShare === 1)),
    softmaxFwd: byS('softmaxFwd'), softmaxBwd: byS('softmaxBwd'), gradCopies: byS('gradCopies', samples.filter((x) => !x.moe)),
    dropoutFwd: rate('dropoutFwd'), dropoutBwd: rate('dropoutBwd'),
  };
}

/** The harness's recompute names as the memory model's settings (bench/torchcp/to_csv.py). */
const TORCH_RECOMPUTE: Record<string, string> = { none: 'none', selective: 'selective', attn_mlp: 'selective:core_attn+mlp', full: 'full:uniform/1' };

/**
 * The runs list of a fresh draw: DIR/runs.json where campaign.py twins wrote one (the draw's runs and each again with
 * one micro batch a step, `-mb1`, which draw.json does not name), else DIR/draw.json.
 */
export const freshDrawFile = (dir: string): string => (existsSync(`${dir}/runs.json`) ? `${dir}/runs.json` : `${dir}/draw.json`);

/** A fresh draw's runs (DIR/draw.json or its twins' runs.json, DIR/runs) against the shipped model. */
export const freshRows = (dir: string): TimeRow[] => timeRows(H200, dir, false, freshDrawFile(dir));

/** A fresh draw's runs against the shipped model: the table, what ran out of memory, the summary. */
function printFresh(dir: string): void {
  const rows = freshRows(dir), e = rows.map((r) => Math.abs(r.error));
  console.log(timeTable(rows).replace('| run | half |', '| run | (draw split) |') + '\n');
  console.log(`out of memory: ${outOfMemory(dir).join(' ') || 'none'}`);
  console.log(`${rows.length} runs: ${rows.filter((r) => Math.abs(r.error) < 0.15).length} within 15%, median |error| ${(100 * median(e)!).toFixed(2)}%, largest ${(100 * Math.max(...e)).toFixed(1)}%`);
}

if (process.argv[1]?.endsWith('timeTable.ts') && process.argv[2] === '--fresh') {
  if (!process.argv[3]) throw new Error('usage: npx tsx bench/megatron/timeTable.ts --fresh DIR (a folder with draw.json and runs/)');
  printFresh(process.argv[3]);
} else if (process.argv[1]?.endsWith('timeTable.ts')) {
  console.log('score rates from the profiled steps (ms per 10⁹ scores a call):', JSON.stringify(scoreRates()));
  const f = buildFit();
  console.log(`fit on the build half: launchUs ${f.launchUs.toFixed(2)}, moeExpertUs ${f.moeExpertUs.toFixed(1)}, iterationMs ${f.iterationMs.toFixed(2)}`);
  console.log(`shipped H200 profile: launchUs ${H200.host.launchUs}, moeExpertUs ${H200.host.moeExpertUs}, iterationMs ${H200.host.iterationMs}\n`);
  const rows = timeRows();
  console.log(timeTable(rows) + '\n');
  for (const s of ['build', 'heldout'] as const) {
    const x = timeSummary(rows, s);
    console.log(`- ${s}: ${x.runs} runs, largest |error| ${(x.maxAbs * 100).toFixed(1)}%, median |error| ${(x.median * 100).toFixed(1)}%`);
  }
  console.log('\n| PyTorch harness point | file | measured ms | model ms | error | largest terms (ms) |\n|---|---|---|---|---|---|');
  for (const r of torchRows()) {
    const top = [...r.predicted.terms].sort((a, b) => b.ms - a.ms).slice(0, 3).map((t) => `${t.name} ${t.ms.toFixed(0)}`).join(', ');
    console.log(`| ${r.config} | ${r.source} | ${r.measuredMs.toFixed(1)} | ${r.predicted.iterMs.toFixed(1)} | ${pct(r.error)} | ${top} |`);
  }
  console.log('\n| terms run | measured ms | model ms | error | model GPU ms | GPU busy ms (profiler) | kernel launches measured / model |\n|---|---|---|---|---|---|---|');
  for (const dir of [TERMS_DIR, `${TERMS_DIR}/kernels`])
    for (const r of termRuns(dir)) {
      const k = r.profile;
      console.log(`| ${r.name} | ${r.measuredMs.toFixed(1)} | ${r.predicted.iterMs.toFixed(1)} | ${pct(r.predicted.iterMs / r.measuredMs - 1)} | ${r.gpuMs.toFixed(1)} | ${k ? k.gpuBusyMs.toFixed(1) : ''} | ${k ? `${launchesOf(k).toFixed(0)} / ${Math.round(r.predicted.kernels)}` : ''} |`);
    }
}
