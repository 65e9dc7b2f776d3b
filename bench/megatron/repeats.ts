/**
 * Is a miss of the iteration-time model the model's or the measurement's? Every stored Megatron-LM
 * timing log (the campaign's runs timed alone and the fresh draws) is predicted by the shipped
 * model; the misses (|error| ≥ 15%) and a seeded random sample of the hits are run again, alone,
 * with the same flags, in a later call. A miss that is the measurement's comes back near the model
 * (regression to the mean); a miss that is the model's comes back where it was.
 *
 *   npx tsx bench/megatron/repeats.ts select --seed S --hits N --out DIR   # DIR/draw.json (commit it before the runs)
 *   python3 bench/megatron/campaign.py run DIR/draw.json --out OUT --lanes 1 --no-trace --ids <DIR/draw.json order>
 *     (each entry's `iters`: as many iterations as its first run)
 *   npx tsx bench/megatron/repeats.ts table DIR                             # first measurement, again, model
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { rng } from '../../src/reference/compare.js';
import { median } from '../../src/stats.js';
import { DRAW, pct, TIMING_DIR, timeRows, type TimeRow } from './timeTable.js';

/** The stored timing sets: a tag for the repeat's ids, the folder of runs/, its draw. */
export const TIMING_SETS = [
  { tag: 'c', dir: TIMING_DIR, draw: DRAW },
  ...['2026-12-02-time-heldout', '2026-12-02-time-heldout2', '2026-12-02-time-heldout3', '2026-12-03-time-heldout4', '2026-12-03-time-heldout5'].map((d, i) => ({
    tag: `h${i + 1}`, dir: `bench/results/${d}`, draw: `bench/results/${d}/draw.json`,
  })),
  { tag: 'h5d', dir: 'bench/results/2026-12-03-time-heldout5-deep', draw: 'bench/results/2026-12-03-time-heldout5-deep/draw.json' },
  { tag: 'h6', dir: 'bench/results/2026-12-03-time-heldout6', draw: 'bench/results/2026-12-03-time-heldout6/draw.json' },
];

export const MISS = 0.15;

export interface StoredRow extends TimeRow { key: string; set: string }

/** Every stored timing log against the shipped model, keyed `<tag>-<id>`. */
export function storedRows(): StoredRow[] {
  return TIMING_SETS.flatMap((s) => timeRows(undefined, s.dir, false, s.draw).map((r) => ({ ...r, key: `${s.tag}-${r.id}`, set: s.dir })));
}

/**
 * The first timing logs a re-run replaced (TIMING_DIR/superseded/: r07's 6 iterations, r11's and r40's
 * 18 before their 38), against the shipped model: stored too, so counted beside storedRows.
 */
export function supersededRows(): StoredRow[] {
  const ids = new Set(readdirSync(`${TIMING_DIR}/superseded`).filter((f) => f.endsWith('.log')).map((f) => f.slice(0, -4)));
  return timeRows(undefined, TIMING_DIR, true).filter((r) => ids.has(r.id)).map((r) => ({ ...r, key: `c-${r.id}-first`, set: `${TIMING_DIR}/superseded` }));
}

interface Kept { id: string; split: string; rough_gib: number; config: unknown; flags: string[] }

function select(seed: number, hits: number, out: string): void {
  const rows = storedRows();
  const misses = rows.filter((r) => Math.abs(r.error) >= MISS);
  const rand = rng(seed);
  const pool = rows.filter((r) => Math.abs(r.error) < MISS);
  const sample: StoredRow[] = [];
  while (sample.length < hits && pool.length) sample.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]);
  const chosen = [...misses.map((r) => ({ r, why: 'miss' })), ...sample.map((r) => ({ r, why: 'hit' }))];
  // Run order shuffled with the same generator, so that a call cut short leaves out misses and hits alike.
  for (let i = chosen.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [chosen[i], chosen[j]] = [chosen[j], chosen[i]];
  }
  // Each set's draw read once: the chosen runs' flags and configurations come from it.
  const draws = new Map(TIMING_SETS.map((s) => [s.dir, (JSON.parse(readFileSync(s.draw, 'utf8')) as { kept: Kept[] }).kept]));
  const kept = chosen.map(({ r, why }) => {
    const k = draws.get(r.set)!.find((x) => x.id === r.id)!;
    // As many iterations as the first run had (a MoE step's median moves with them: its steps drift down).
    return { ...k, id: r.key, iters: r.iterations + 2, first: { set: r.set, id: r.id, why, measuredMs: r.measuredMs, modelMs: r.predicted.iterMs, error: r.error } };
  });
  const common = (JSON.parse(readFileSync(DRAW, 'utf8')) as { common_flags: unknown }).common_flags;
  mkdirSync(out, { recursive: true });
  writeFileSync(`${out}/draw.json`, JSON.stringify({
    purpose: 'repeats of stored timing logs (bench/megatron/repeats.ts): every miss of the shipped model and a seeded sample of its hits',
    seed, hits, miss: MISS, selected_at: new Date().toISOString(), common_flags: common, kept,
  }, null, 1) + '\n');
  console.log(`${misses.length} misses of ${rows.length} logs, ${sample.length} hits sampled; order: ${kept.map((k) => k.id).join(',')}`);
}

function table(dir: string): void {
  const draw = JSON.parse(readFileSync(`${dir}/draw.json`, 'utf8')) as { kept: (Kept & { first: { why: string; measuredMs: number; modelMs: number; error: number } })[] };
  if (!existsSync(`${dir}/runs`)) throw new Error(`${dir}/runs: no runs yet (campaign.py run ${dir}/draw.json --out ..., then unpack its runs/ here)`);
  const again = new Map(timeRows(undefined, dir, false, `${dir}/draw.json`).map((r) => [r.id, r]));
  console.log('| log | kind | configuration | first ms | again ms | again / first | model ms | error first | error again |\n|---|---|---|---|---|---|---|---|---|');
  const moved: Record<string, number[]> = { miss: [], hit: [] };
  let within = 0, missesRun = 0;
  for (const k of draw.kept) {
    const r = again.get(k.id);
    if (!r) { console.log(`| ${k.id} | ${k.first.why} | (not run) | ${k.first.measuredMs.toFixed(1)} | | | ${k.first.modelMs.toFixed(1)} | ${pct(k.first.error)} | |`); continue; }
    const ratio = r.measuredMs / k.first.measuredMs;
    moved[k.first.why].push(Math.abs(ratio - 1));
    if (k.first.why === 'miss') { missesRun++; if (Math.abs(r.error) < MISS) within++; }
    console.log(`| ${k.id} | ${k.first.why} | ${r.config} | ${k.first.measuredMs.toFixed(1)} | ${r.measuredMs.toFixed(1)} | ${ratio.toFixed(2)} | ${r.predicted.iterMs.toFixed(1)} | ${pct(k.first.error)} | ${pct(r.error)} |`);
  }
  console.log(`\nmisses run again: ${missesRun}, of them within 15% the second time: ${within}; median |again / first − 1|: misses ${pct(median(moved.miss) ?? NaN)}, hits ${pct(median(moved.hit) ?? NaN)}`);
}

const [cmd, ...rest] = process.argv.slice(2);
const opt = (name: string) => { const i = rest.indexOf(name); return i >= 0 ? rest[i + 1] : undefined; };
if (process.argv[1]?.endsWith('repeats.ts')) {
  if (cmd === 'select') {
    const seed = Number(opt('--seed')), hits = Number(opt('--hits') ?? 3), out = opt('--out');
    if (!Number.isInteger(seed) || !Number.isInteger(hits) || hits < 0 || !out) throw new Error('usage: repeats.ts select --seed S --hits N --out DIR');
    select(seed, hits, out);
  } else if (cmd === 'table' && rest[0]) table(rest[0]);
  else throw new Error('usage: npx tsx bench/megatron/repeats.ts select --seed S --hits N --out DIR | table DIR');
}
