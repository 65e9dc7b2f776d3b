/**
 * The campaign's table: each run of bench/results/<date>-megatron-campaign predicted by the memory
 * model from its own log's argument dump, beside its measured peak (max allocated), and its trace
 * compared group by group (src/memory/trace.ts).
 *
 *   npx tsx bench/megatron/campaignTable.ts [DIR] [--runs]     # prints the markdown table and the summary
 *                                                             # (--runs: each traced run's parts as well)
 *
 * DIR is a draw's folder (its draw.json and runs/), or a folder inside one holding some of its runs run again (runs/
 * alone: the draw above's draw.json; the runs it lacks read 'not run'). A folder with neither is refused (InputError).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { configFromLog, parseMegatronLog } from '../../src/memory/megatron.js';
import { predictFromLog } from '../../src/memory/compare.js';
import { memoryBreakdown, recomputeSpec } from '../../src/memory/model.js';
import { GroupComparison, MegatronTrace, PEAK_PARTS, PartComparison, comparePeakParts, compareTrace } from '../../src/memory/trace.js';
import { median } from '../../src/stats.js';
import { InputError } from '../../src/errors.js';

export const CAMPAIGN_DIR = 'bench/results/2026-12-02-megatron-campaign';

export interface CampaignRow {
  id: string;
  split: 'build' | 'heldout';
  config: string;
  measuredGib: number | null;
  modelGib: number | null;
  error: number | null;
  /** Why there is no measurement (a failed run), else null. */
  failure: string | null;
  groups: GroupComparison[] | null;
  /** The peak as static, stored and transient, the model's against the trace's. */
  parts: PartComparison[] | null;
  moe: boolean;
}

interface Drawn { id: string; split: 'build' | 'heldout'; config: Record<string, unknown> & { moe?: { experts: number; topk: number } } }

export function describe(c: Drawn['config'], rc: string): string {
  const moe = c.moe ? ` MoE ${c.moe.experts}×top-${c.moe.topk}` : '';
  // b: sequences a micro batch, ×m: micro batches a step where more than one (a draw's pair of runs differs only there)
  const m = Number(c.micro_batches ?? 1) > 1 ? `×${c.micro_batches}` : '';
  return `L${c.layers} h${c.hidden} a${c.heads}${c.groups ? ` g${c.groups}` : ''} ${c.swiglu ? 'SwiGLU' : 'GeLU'}${moe} s${c.seq} b${c.micro_batch}${m} ${rc}`;
}

/**
 * The draw a folder's runs are of: its own draw.json, or, for a folder inside a draw that holds some of its runs run
 * again (e.g. bench/results/2026-12-07-moe-held/retrace-h100: runs/ of its own, no draw.json), the draw's. A folder with
 * neither (a mistyped one, or a draw's runs/ itself) is refused: the draw above would read every run 'not run'.
 */
function drawOf(dir: string): { kept: Drawn[] } {
  const own = `${dir}/draw.json`, parent = `${dirname(dir)}/draw.json`;
  const pass = "pass a draw's folder (its draw.json and runs/, e.g. bench/results/2026-12-07-moe-held) or a folder of its runs run again inside it (runs/ of its own, e.g. bench/results/2026-12-07-moe-held/retrace-h100)";
  if (existsSync(own)) return JSON.parse(readFileSync(own, 'utf8')) as { kept: Drawn[] };
  if (!isDir(`${dir}/runs`)) throw new InputError(`${dir}: neither a draw.json nor a runs/ folder there; ${pass}`);
  if (!existsSync(parent)) throw new InputError(`${dir}: runs/ but no draw.json there nor in the folder above; ${pass}`);
  return JSON.parse(readFileSync(parent, 'utf8')) as { kept: Drawn[] };
}

const isDir = (path: string) => existsSync(path) && statSync(path).isDirectory();

/** Each run of the draw, from `dir`/runs (a run not there: 'not run'). */
export function campaignRows(dir = CAMPAIGN_DIR): CampaignRow[] {
  const draw = drawOf(dir);
  return draw.kept.map((k) => {
    const log = `${dir}/runs/${k.id}.log`;
    // A run the call did not start (a deadline): its row says so, from the draw alone.
    if (!existsSync(log)) return { id: k.id, split: k.split, config: describe(k.config, 'recompute as drawn'), measuredGib: null, modelGib: null, error: null, failure: 'not run', groups: null, parts: null, moe: !!k.config.moe };
    const text = readFileSync(log, 'utf8');
    const res = parseMegatronLog(text, k.id);
    const c = configFromLog(res);
    if ('error' in c) throw new Error(`${k.id}: ${c.error}`);
    const config = describe(k.config, recomputeSpec(c.par));
    const p = predictFromLog(res, null);
    if ('error' in p) throw new Error(`${k.id}: ${p.error}`);
    const measured = res.point.peakMaxAllocatedGiB;
    const nested = (text.match(/random\.py", line \d+, in backward/g) ?? []).length;
    const failure = measured !== null ? null : nested > 100 ? `no measurement: Megatron-LM's checkpoint backward recursed ${nested} deep and ran out of memory in the first step` : 'no measurement';
    const tracePath = `${dir}/runs/${k.id}.trace.json`;
    const trace = measured !== null && existsSync(tracePath) ? (JSON.parse(readFileSync(tracePath, 'utf8')) as MegatronTrace) : null;
    const b = memoryBreakdown(c.model, c.par);
    const groups = trace && compareTrace(b, trace, measured! * 2 ** 30);
    const parts = trace && comparePeakParts(b, trace, measured! * 2 ** 30);
    return { id: k.id, split: k.split, config, measuredGib: measured, modelGib: p.totalBytes / 2 ** 30, error: p.totalError, failure, groups, parts, moe: !!k.config.moe };
  });
}

/** The part tables' heads of PEAK_PARTS, in their order. */
const PART_HEADS = 'static (held between steps) | stored (saved for backward) | transient (the rest of the peak) |';
const pct2 = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(2)}%`;
const pct = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)}%`;

/** A half's measured runs and their largest and median |error|; both null where no run of the half was measured. */
export function summary(rows: CampaignRow[], split: 'build' | 'heldout'): { runs: number; maxAbs: number | null; median: number | null } {
  const e = rows.filter((r) => r.split === split && r.error !== null).map((r) => Math.abs(r.error!));
  return { runs: e.length, maxAbs: e.length ? Math.max(...e) : null, median: median(e) };
}

/** The summary line the results README prints for a half ('no run measured' where none was: a folder of re-runs of the other half). */
export function summaryLine(rows: CampaignRow[], split: 'build' | 'heldout'): string {
  const x = summary(rows, split);
  if (x.maxAbs === null || x.median === null) return `${split}: ${x.runs} runs, no run measured`;
  return `${split}: ${x.runs} runs, largest |error| ${(x.maxAbs * 100).toFixed(1)}%, median |error| ${(x.median * 100).toFixed(2)}%`;
}

export function campaignTable(rows: CampaignRow[]): string {
  const out = ['| run | half | configuration | measured GiB | model GiB | error | worst group (of the peak) |', '|---|---|---|---|---|---|---|'];
  for (const r of rows) {
    const worst = r.groups?.reduce((x, g) => (Math.abs(g.ofPeak) > Math.abs(x.ofPeak) ? g : x));
    out.push(`| ${r.id} | ${r.split} | ${r.config} | ${r.measuredGib?.toFixed(2) ?? '—'} | ${r.modelGib?.toFixed(2) ?? '—'} | ${r.error === null ? r.failure ?? '—' : pct(r.error)} | ${worst ? `${worst.group} ${pct(worst.ofPeak)}` : '—'} |`);
  }
  return out.join('\n');
}

/** Each traced run's parts, model − trace as a share of its peak (static, stored, transient): a draw's terms judged run by run. */
export function runPartsTable(rows: CampaignRow[]): string {
  const out = [`| run | ${PART_HEADS}`, '|---|---|---|---|'];
  const cell = (r: CampaignRow, part: PartComparison['part']) => { const x = r.parts!.find((p) => p.part === part); return x ? pct2(x.ofPeak) : 'not measured (saved tensors of every micro batch)'; };
  for (const r of rows) if (r.parts) out.push(`| ${r.id} | ${PEAK_PARTS.map((part) => cell(r, part)).join(' | ')} |`);
  return out.join('\n');
}

/** Each part's worst run (model − trace, of the peak), dense and MoE apart: the table docs/memory.md shows. */
export function partsTable(rows: CampaignRow[]): string {
  const out = [`| traced runs | ${PART_HEADS}`, '|---|---|---|---|'];
  for (const moe of [false, true]) {
    const rs = rows.filter((r) => r.parts && r.moe === moe);
    if (!rs.length) continue;   // a draw of MoE runs alone, or dense alone
    // Each part's worst run among those whose trace measures it (comparePeakParts: a trace of several micro batches, the static part alone).
    const cell = (part: PartComparison['part']) => {
      const has = rs.flatMap((r) => r.parts!.filter((p) => p.part === part).map((p) => ({ id: r.id, ofPeak: p.ofPeak })));
      const w = has.reduce((a, x) => (Math.abs(x.ofPeak) > Math.abs(a.ofPeak) ? x : a));
      return `${pct2(w.ofPeak)} (${w.id}${has.length < rs.length ? `; ${has.length} of ${rs.length}` : ''})`;
    };
    out.push(`| ${moe ? 'MoE' : 'dense'}, ${rs.length} | ${PEAK_PARTS.map(cell).join(' | ')} |`);
  }
  return out.join('\n');
}

if (process.argv[1]?.endsWith('campaignTable.ts')) {
  try {
    const rows = campaignRows(process.argv[2]);
    console.log(campaignTable(rows));
    for (const s of ['build', 'heldout'] as const) console.log(summaryLine(rows, s));
    console.log(`\n${partsTable(rows)}`);
    if (process.argv.includes('--runs')) console.log(`\n${runPartsTable(rows)}`);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    console.error(`${e.name}: ${e.message}`);
    process.exitCode = 1;
  }
}
