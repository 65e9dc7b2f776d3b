/** `flashring attention --cp R`: the same outputs as a single device, through the ring. */
import { MaskOptions, maskOf } from '../mask.js';
import { acquireDevices, adapterName } from '../gpu/device.js';
import { nodeGPU, robustShaders } from '../gpu/node.js';
import { HostTensor } from '../kernels/attention.js';
import { Precision, PrecisionRequest } from '../kernels/precision.js';
import { ringAttention, RingOptions, RingResult, RingTimeline } from '../cp/launch/ringAttention.js';
import { ONE_RANK, STEP_LABELS, STEP_MEANINGS, oneRankTransfers } from '../cp/rank/timeline.js';
import { RankDevice, gpuPerRankWrapper, nvidiaDevices, ranksNamed, ringAttentionProcesses } from '../cp/launch/processRanks.js';
import { AttentionShape } from '../shape.js';
import { counted, plural } from '../plural.js';
import { RunAbout, devicePrecision, noteF32, noteStaleOutputs, outputFiles } from './outputs.js';
import { OutputPlan } from './files.js';
import { RingArgs } from './ringArgs.js';
import { ringProgress, timedPhase } from './progress.js';
import { outputBadRows, outputNote } from './nonFinite.js';

/**
 * The run's one header, as a single device's run says it (`attention {shape} causal=… on adapter`) with the ring's
 * settings: `attention {…} causal=false, CP R=2 p2p layout=zigzag f32 one-device on llvmpipe`; one rank says it
 * has no ring (ONE_RANK) after its mode. `gpuPerRank`: processes behind --gpu-per-rank, rank r on GPU r.
 */
export function timelineHeader(tl: RingTimeline, gpuPerRank = false): string {
  const [left, right] = tl.schedule.window ?? [-1, -1], docs = tl.schedule.documents ?? 0;
  const mask = `causal=${tl.causal}${left !== -1 || right !== -1 ? ` window=${left},${right}` : ''}${docs ? ` documents=${docs}` : ''}`;
  const how = [tl.R === 1 ? ONE_RANK : '', gpuPerRank ? 'rank r on GPU r' : ''].filter(Boolean).join('; ');
  return `attention ${JSON.stringify(tl.shape)} ${mask}, CP R=${tl.R} ${tl.scheme}${tl.scheme === 'a2a+p2p' ? ` ${tl.hierarchy.join(',')}` : ''} layout=${tl.layout} ${tl.precision} ` +
    `${tl.mode}${tl.pipelined ? ' pipelined' : ''}${how ? ` (${how})` : ''} on ${[...new Set(tl.adapters)].join(', ')}`;
}

/** A cell the data may lack: '-' for a null GPU time (no timestamp queries, or no timer interval left) or for kvFrom −1 (a collective: no rank's K/V). */
const cell = (x: number | null, width: number, digits?: number): string =>
  (x === null || (digits === undefined && x < 0) ? '-' : digits === undefined ? String(x) : x.toFixed(digits)).padStart(width);

/**
 * What the table's columns mean, under it (the JSON's fields: label, kvFrom, computeMs, gpuComputeMs, transferMs, transferBytes,
 * idleMs), with what = the label of each step, as STEP_MEANINGS says it, for the labels given (STEP_LABELS' order).
 */
export function timelineColumns(labels: readonly string[]): string[] {
  const what = STEP_LABELS.filter((l) => labels.includes(l)).map((l) => `    ${l} = ${STEP_MEANINGS[l]}`);
  return [
    '  columns (measured on this run\'s adapter): from = the rank whose K/V the step computes with (- for a collective);',
    '  compute = the step\'s compute in host wall ms, gpu = its kernels\' GPU time from timestamps (- where there is none);',
    `  transfer = ms until the step's transfers were done; bytes = bytes this rank sent; idle = ms it waited for the step's slowest rank${what.length ? ';' : ''}`,
    ...(what.length ? ['  what = the step, by its label:', ...what] : []),
  ];
}

/** The columns with every label said: what docs/ring.md lists (a run's table says the labels it shows). */
export const TIMELINE_COLUMNS = timelineColumns(STEP_LABELS);

/** More decimals than this would take a figure's whole units past 2^53 (or past what anyone reads). */
const MAX_DECIMALS = 12;

/**
 * Non-negative parts and their total written at one number of decimals, so that the parts as written add up to the total
 * as written (each rounded apart to 3 decimals they read 0.003 + 0.009 = 0.013 for 0.0034 + 0.0094): at least 3 decimals,
 * and enough for 3 significant digits of the smallest figure above 0, then up to 3 more where the rounded parts miss the
 * rounded total by a unit. Where none of those counts does it, the total written is the written parts' sum, and `exact`
 * the total at 3 decimals more.
 */
export function addingUp(parts: number[], total: number): { parts: string[]; total: string; exact?: string } {
  const small = Math.min(...[...parts, total].filter((x) => x > 0));
  const whole = Math.max(1, Math.ceil(Math.log10(total + 1)));
  const d0 = Math.min(Math.max(3, Number.isFinite(small) ? 2 - Math.floor(Math.log10(small)) : 3), Math.max(3, MAX_DECIMALS - whole));
  const at = (d: number) => {
    const u = 10 ** d, rounded = parts.map((x) => Math.round(x * u));
    const text = (n: number) => (n / u).toFixed(d);
    return { parts: rounded.map(text), sum: text(rounded.reduce((a, b) => a + b, 0)), total: text(Math.round(total * u)) };
  };
  for (let d = d0; d <= d0 + 3; d++) {
    const w = at(d);
    if (w.sum === w.total) return { parts: w.parts, total: w.total };
  }
  const w = at(d0);
  return { parts: w.parts, total: w.sum, exact: total.toFixed(d0 + 3) };
}

/** The link model's line: what R real GPUs would show, each phase's time, and where its compute times came from. */
function predictedLine(pr: NonNullable<RingTimeline['predicted']>): string {
  const src = pr.compute.source === 'tflops' ? `compute at ${typeof pr.compute.tflops === 'number' ? pr.compute.tflops : `${pr.compute.tflops.forward}/${pr.compute.tflops.backward}`} TFLOP/s` : 'the measured step compute';
  const w = addingUp(pr.phases.map((ph) => ph.stepMs.reduce((a, b) => a + b, 0)), pr.totalMs);
  const phases = pr.phases.map((ph, i) => `${ph.phase} ${w.parts[i]} ms`).join(' + ');
  const total = pr.phases.length > 1 ? ` = ${w.total} ms${w.exact ? ` (the sum of the parts as written; ${w.exact} ms before rounding)` : ''}` : '';
  return `  predicted on ${pr.link.name} (${pr.link.gbps} Gbit/s, ${pr.link.latencyUs} µs; the link model from ${src}): ` +
    `${phases}${total}, comm ${(100 * pr.commFraction).toFixed(1)}%, ${pr.tflopsPerGpu.toPrecision(3)} TFLOP/s per GPU`;
}

/**
 * The summary: one rank has nothing to overlap; R ranks say their overlap, and in one-device mode, where they take turns
 * on one GPU and transfers are device copies, a line under it says that this is not what R GPUs would show (as the page).
 */
function overlapLines(tl: RingTimeline): string[] {
  const sm = tl.summary;
  if (tl.R === 1) return [`  no transfer to overlap: ${oneRankTransfers(sm)}`];
  const line = `  overlap efficiency ${(100 * sm.overlapEfficiency).toFixed(1)}%, unhidden transfer ${(100 * sm.unhiddenFraction).toFixed(1)}% of step time, ${sm.bytesMoved} bytes moved`;
  if (tl.mode !== 'one-device') return [line];
  return [line, `  (one-device: the ${tl.R} ranks take turns on one GPU and their transfers are device copies, so this overlap is not what ${tl.R} GPUs would show; ${tl.predicted ? 'the predicted line below models them' : 'add --link for a prediction'})`];
}

/** The CLI's timeline table under its header (steps counted from 1, as its progress line and the page; ranks from 0, as everywhere). */
export function formatTimeline(tl: RingTimeline, gpuPerRank = false): string {
  const lines = [timelineHeader(tl, gpuPerRank)];
  lines.push(`  work per rank (visible scores under the mask): ${tl.schedule.workPerRank.join(', ')}  (imbalance ${tl.schedule.imbalance.toFixed(3)})`);
  for (const ph of tl.phases) {
    lines.push(`  ${ph.phase}: ${ph.wallMs.toFixed(1)} ms wall${tl.pipelined ? ' (pipelined: compute spans each step\'s encoding and submission, not its GPU time, which gpu is)' : ''}`);
    lines.push('    step rank what           from  compute(ms)  gpu(ms)  transfer(ms)  bytes       idle(ms)');
    for (const st of ph.steps)
      lines.push(`    ${String(st.step + 1).padStart(4)} ${String(st.rank).padStart(4)} ${st.label.padEnd(14)} ${cell(st.kvFrom, 4)}  ${cell(st.computeMs, 11, 2)}  ${cell(st.gpuComputeMs, 7, 2)}  ${cell(st.transferMs, 12, 2)}  ${String(st.transferBytes).padStart(10)}  ${cell(st.idleMs, 8, 2)}`);
  }
  if (tl.phases.length) lines.push(...timelineColumns(tl.phases.flatMap((ph) => ph.steps.map((st) => st.label))));
  lines.push(...overlapLines(tl));
  lines.push(`  peak bytes per rank: ${tl.ranks.map((r) => r.peakBytes).join(', ')}`);
  if (tl.predicted) lines.push(predictedLine(tl.predicted));
  return lines.join('\n');
}

type RingCall = { s: AttentionShape; x: { q: HostTensor; k: HostTensor; v: HostTensor; dout?: HostTensor }; common: RingOptions };

/**
 * The precision the run asks for, and the room check (checkRooms) of its outputs at the precision it writes (a
 * --timeline's with its ranks' adapter names, where known).
 */
type RingPrecision = { precision: Precision; request: PrecisionRequest; room?: (p: Precision, adapters?: string[]) => Promise<void> };

/** The ring in the mode asked for: one process per rank, or R ranks on this process's devices. */
async function runRing({ s, x, common }: RingCall, opts: RingPrecision, ring: RingArgs): Promise<RingResult> {
  const { R, mode } = ring;
  if (mode === 'processes') {
    // One process per rank (src/cp/launch/processRanks.ts); --gpu-per-rank puts each behind
    // scripts/only-gpu.sh (rank r sees only GPU r: two identical GPUs need it).
    if (ring.gpuPerRank && !nvidiaDevices().length)
      console.error(`note: --gpu-per-rank: this host has no NVIDIA GPU (/dev/nvidia*), so nothing is hidden and the ${counted(R, 'rank process', 'rank processes')} share its adapter`);
    // float16 data with --precision auto: f16 where every rank's adapter has shader-f16, else f32 on all (agreedPrecision).
    const precision = opts.precision === 'f16' && opts.request === 'auto' ? 'auto' : opts.precision;
    return ringAttentionProcesses(s, x, { ...common, ranks: R, precision, onPrecision: (p, devs) => ranksPrecision(p, devs, opts, ring.timeline !== undefined), ...(ring.gpuPerRank ? { wrapper: gpuPerRankWrapper(R) } : {}) });
  }
  // One-device mode (the default: Dawn cannot tell identical adapters apart): R ranks share one device.
  const devs = await acquireDevices(await nodeGPU(), mode === 'one-device' ? 1 : R);
  try {
    // f16 needs every rank's adapter to have shader-f16 (multi-adapter: one each); the note names one without it.
    const precision = devicePrecision(opts.precision, opts.request, devs.find((d) => !d.hasF16) ?? devs[0]);
    // Checked again before any GPU work: f32 written for float16 data (twice the bytes); a --timeline with its adapter names.
    const adapters = Array.from({ length: R }, (_, r) => adapterName(devs[devs.length === 1 ? 0 : r].adapter));
    if (precision !== opts.precision || ring.timeline !== undefined) await opts.room?.(precision, adapters);
    // Dawn hands out one adapter however often it is asked: R devices on it share that GPU.
    if (mode === 'multi-adapter' && R > 1 && new Set(devs.map((d) => adapterName(d.adapter))).size === 1)
      console.error(`note: the ${R} ranks' devices are on one adapter (${adapterName(devs[0].adapter)}): they share its GPU, so the times are of that sharing; for one GPU per rank use --cp-mode processes --gpu-per-rank`);
    return await ringAttention(devs, s, x, { ...common, precision, ...(ring.pipelined ? { pipelined: true } : {}) });
  } finally {
    for (const d of devs) d.destroy();
  }
}

/**
 * The precision the rank processes agreed on, once each has its device and before any GPU work: where float16 data
 * runs in f32 (a rank's adapter has no shader-f16), the note the other modes print; then the room check again where
 * that doubles the bytes, or where a --timeline (`timeline`) now has its ranks' adapter names.
 */
async function ranksPrecision(p: Precision, devs: readonly RankDevice[], opts: RingPrecision, timeline: boolean): Promise<void> {
  if (p !== opts.precision) {
    const without = devs.filter((d) => !d.hasF16);
    noteF32(`${ranksNamed(without)} ${plural(without.length, 'has', 'have')}`);
  }
  if (p !== opts.precision || timeline) await opts.room?.(p, [...devs].sort((a, b) => a.rank - b.rank).map((d) => d.adapter));
}

export async function ringCommand(
  s: AttentionShape, t: { q: HostTensor; k: HostTensor; v: HostTensor }, dout: HostTensor | null,
  opts: MaskOptions & { scale?: number } & RingPrecision,
  ring: RingArgs & { out: string; batched: boolean; about: RunAbout }, outputs: OutputPlan,
): Promise<number> {
  const x = { ...t, ...(dout ? { dout } : {}) };
  const progress = ringProgress();
  const common: RingOptions = {
    ...maskOf(opts), scale: opts.scale, layout: ring.layout, ranks: ring.R, scheme: ring.scheme,
    ...(ring.hierarchicalSizes !== undefined ? { hierarchicalSizes: ring.hierarchicalSizes } : {}),
    ...(ring.link ? { link: ring.link, computeTflops: ring.computeTflops } : {}),
    onStep: progress.tick,
  };
  let res: RingResult;
  try {
    res = await runRing({ s, x, common }, opts, ring);
  } finally {
    progress.end(); // the terminal's step line, however the run ended
  }
  const tensors = { o: res.o, ...(res.dq ? { dq: res.dq, dk: res.dk!, dv: res.dv! } : {}) };
  // The ranks' adapters as the header names them (one-device: one; processes, multi-adapter: each distinct one).
  const ran = { precision: res.precision, adapter: [...new Set(res.timeline.adapters)].join(', '), robust: robustShaders() };
  const files = outputFiles(ring.out, s, ran, tensors, ring.about, res.lse, ring.batched);
  if (ring.timeline !== undefined) files.push({ path: ring.timeline, data: new TextEncoder().encode(JSON.stringify(res.timeline, null, 1)) });
  await timedPhase(`writing the outputs into ${ring.out}`, () => outputs.write(files));
  // The result, under the run's one header: stdout (progress and notes: stderr).
  console.log(formatTimeline(res.timeline, ring.mode === 'processes' && !!ring.gpuPerRank && nvidiaDevices().length > 0));
  console.log(`wrote ${files.map((f) => f.path).join(', ')}`);
  noteStaleOutputs(ring.out, files);
  const bad = outputNote(outputBadRows(tensors, s.D, res.lse));
  if (bad) console.error(bad);
  return 0;
}
