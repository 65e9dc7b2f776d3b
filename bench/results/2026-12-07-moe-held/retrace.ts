/**
 * The re-traced runs of this draw (retrace-h100/: the four of two micro batches a step, traced again with saved tensors of
 * the first micro batch only) judged as the README's "What is judged" says, twice: at the model as frozen in
 * predicted.csv (today's less the two static terms counted since: RoPE's cached table, what the token dispatcher keeps),
 * and at today's. Prints the README's table and the figures its findings quote; test/memory-moe-retrace.test.ts checks
 * that the README states each.
 *
 *   npx tsx bench/results/2026-12-07-moe-held/retrace.ts
 */
import { readFileSync } from 'node:fs';
import { configFromLog, parseMegatronLog } from '../../../src/memory/megatron.js';
import { DISPATCHER_KEEPS, ROPE_TABLE, memoryBreakdown } from '../../../src/memory/model.js';
import { MegatronTrace, PartComparison, comparePeakParts, compareTrace } from '../../../src/memory/trace.js';

export const DRAW = 'bench/results/2026-12-07-moe-held';
export const RETRACE = `${DRAW}/retrace-h100`;
export const RETRACED = ['r00', 'r01', 'r03', 'r04'] as const;
const MiB = 2 ** 20;

/** A traced run of the draw (`sub`: 'runs' for the first traces, 'retrace-h100/runs' for the re-traces). */
export function tracedRun(sub: string, id: string) {
  const res = parseMegatronLog(readFileSync(`${DRAW}/${sub}/${id}.log`, 'utf8'), id);
  const c = configFromLog(res);
  if ('error' in c) throw new Error(`${id}: ${c.error}`);
  const trace = JSON.parse(readFileSync(`${DRAW}/${sub}/${id}.trace.json`, 'utf8')) as MegatronTrace;
  return { res, ...c, b: memoryBreakdown(c.model, c.par), trace, peak: res.point.peakMaxAllocatedGiB! * 2 ** 30 };
}

/** predicted.csv's row of a run: the frozen peak (bytes) and parts (MiB, one decimal). */
export function frozen(id: string): { peakBytes: number; staticMib: number; storedMib: number; transientMib: number; heldMib: number } {
  const line = readFileSync(`${DRAW}/predicted.csv`, 'utf8').trim().split('\n').find((l) => l.startsWith(`${id},`));
  if (!line) throw new Error(`${id}: not in predicted.csv`);
  const [peakBytes, , staticMib, storedMib, transientMib, heldMib] = line.split('",')[1].split(',').map(Number);
  return { peakBytes, staticMib, storedMib, transientMib, heldMib };
}

export interface Judged {
  id: string;
  peak: number;
  /** The parts at today's model (comparePeakParts). */
  today: PartComparison[];
  /** The parts at the frozen model: today's static less the terms counted since; stored and transient as today's. */
  frozen: PartComparison[];
  /** Total error, (model − measured) / measured: frozen (predicted.csv's peak) and today's. */
  errorFrozen: number;
  errorToday: number;
  /** The terms counted since the prediction (bytes, all static). */
  since: number;
  /** The largest |model − trace| of a stored group (compareTrace), bytes. */
  worstGroup: number;
  /** What the live tensors asked for at the peak (the history's peak bytes) less today's model, bytes. */
  requestedShort: number;
}

/** One traced run judged at both models: a re-trace, or (`sub` 'runs') a first trace. */
export function judge(id: string, sub = 'retrace-h100/runs'): Judged {
  const r = tracedRun(sub, id), f = frozen(id);
  const since = r.b.outside.filter((t) => t.name === ROPE_TABLE || t.name.startsWith(DISPATCHER_KEEPS)).reduce((s, t) => s + t.bytes, 0);
  const today = comparePeakParts(r.b, r.trace, r.peak);
  const frozenParts = today.map((p) => (p.part === 'static' ? { ...p, model: p.model - since, ofPeak: (p.model - since - p.measured) / r.peak } : p));
  const worstGroup = Math.max(...compareTrace(r.b, r.trace, r.peak).map((g) => Math.abs(g.model - g.traced)));
  const history = r.trace.history as { peak_bytes: number };
  return {
    id, peak: r.peak, today, frozen: frozenParts, since, worstGroup,
    errorFrozen: (f.peakBytes - r.peak) / r.peak, errorToday: (r.b.totalBytes - r.peak) / r.peak,
    requestedShort: history.peak_bytes - r.b.totalBytes,
  };
}

const pct2 = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(100 * x).toFixed(2)}%`;
const ofPart = (ps: PartComparison[], part: PartComparison['part']) => ps.find((p) => p.part === part)!.ofPeak;

/** The README's table row of a judged run: measured and predicted GiB, error and static frozen / today, stored, transient. */
export function tableRow(j: Judged): string {
  const cells = [j.id, (j.peak / 2 ** 30).toFixed(2), (frozen(j.id).peakBytes / 2 ** 30).toFixed(2), `${pct2(j.errorFrozen)} / ${pct2(j.errorToday)}`,
    `${pct2(ofPart(j.frozen, 'static'))} / ${pct2(ofPart(j.today, 'static'))}`, pct2(ofPart(j.today, 'stored')), pct2(ofPart(j.today, 'transient'))];
  return `| ${cells.join(' | ')} |`;
}

/** Saved bytes of the first trace and of the re-trace, MiB, as "first → again". */
export function savedMove(id: string): string {
  const mib = (sub: string) => (tracedRun(sub, id).trace.saved_bytes / MiB).toFixed(1);
  return `${mib('runs')} → ${mib('retrace-h100/runs')}`;
}

/** Each part of all six runs at the frozen model (the four re-traces, r02 and r05's first traces): its range of model − trace, of the peak. */
export function allSix(): Record<PartComparison['part'], [number, number]> {
  const js = [...RETRACED.map((id) => judge(id)), ...['r02', 'r05'].map((id) => judge(id, 'runs'))];
  const range = (part: PartComparison['part']): [number, number] => { const xs = js.map((j) => ofPart(j.frozen, part)); return [Math.min(...xs), Math.max(...xs)]; };
  return { static: range('static'), stored: range('stored'), transient: range('transient') };
}

/** A range of shares as the README writes it: "−0.42% to −0.01%". */
export const rangeText = ([lo, hi]: [number, number]) => `${pct2(lo)} to ${pct2(hi)}`;

function main(): void {
  const js = RETRACED.map((id) => judge(id));
  console.log('| run | measured GiB | predicted GiB | error (predicted / today) | static (predicted / today) | stored | transient |');
  console.log('|---|---|---|---|---|---|---|');
  for (const j of js) console.log(tableRow(j));
  console.log(`\nsaved MiB, first trace → re-trace: ${RETRACED.map((id) => `${id} ${savedMove(id)}`).join(', ')}`);
  console.log(`largest stored group off: ${(Math.max(...js.map((j) => j.worstGroup)) / MiB).toFixed(2)} MiB`);
  const six = allSix();
  console.log(`all six at the frozen model: static ${rangeText(six.static)}, stored ${rangeText(six.stored)}, transient ${rangeText(six.transient)}`);
  console.log(`requested at the peak less today's model: ${js.map((j) => `${j.id} ${(j.requestedShort / MiB).toFixed(2)}`).join(', ')} MiB`);
}

if (process.argv[1]?.endsWith('2026-12-07-moe-held/retrace.ts')) main();
