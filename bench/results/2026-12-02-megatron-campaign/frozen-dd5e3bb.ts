/**
 * The frozen model's predictions (commit dd5e3bb, written from the build half's traces before the
 * held-out half was compared), recomputed by that commit's own code from that commit's own copy of the
 * campaign's logs: for each run of its draw.json, parseMegatronLog then predictFromLog (what
 * `flashring replay` printed as each log's "prediction" at dd5e3bb; the campaign table of 430083b was
 * written over the same two functions). Nothing of today's src/ is imported.
 *
 *   git worktree add /tmp/frozen dd5e3bb && ln -s "$PWD/node_modules" /tmp/frozen/node_modules
 *   npx tsx bench/results/2026-12-02-megatron-campaign/frozen-dd5e3bb.ts /tmp/frozen \
 *     > bench/results/2026-12-02-megatron-campaign/frozen-dd5e3bb.csv
 *   git worktree remove --force /tmp/frozen
 *
 * Columns: run; half (draw.json's split: build or heldout); measured_peak_bytes (the largest "max
 * allocated" of the log as dd5e3bb's parser read it, in MiB, times 2^20; empty for r25, which has none);
 * predicted_peak_bytes (the model's total at dd5e3bb); error (predictFromLog's totalError: (model −
 * measured) / measured, a fraction; empty where the run has no measurement or an option the model did
 * not take). Numbers are written as JavaScript prints a double (shortest exact round trip).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const FROZEN_COMMIT = 'dd5e3bb09ed6b29b98a96880c81d5d5de3d0c62a';
const CAMPAIGN = 'bench/results/2026-12-02-megatron-campaign';

async function main(): Promise<void> {
  const root = resolve(process.argv[2] ?? '');
  if (!process.argv[2]) throw new Error('usage: frozen-dd5e3bb.ts WORKTREE_OF_dd5e3bb > frozen-dd5e3bb.csv');
  const head = execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  if (head !== FROZEN_COMMIT) throw new Error(`${root} is at ${head}, not ${FROZEN_COMMIT}`);
  const dirty = execFileSync('git', ['-C', root, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim();
  if (dirty) throw new Error(`${root} has changes to dd5e3bb's files:\n${dirty}`);
  // dd5e3bb's modules, typed loosely: their types are that commit's, not today's.
  const megatron = await import(pathToFileURL(`${root}/src/memory/megatron.ts`).href);
  const compare = await import(pathToFileURL(`${root}/src/memory/compare.ts`).href);
  const draw = JSON.parse(readFileSync(`${root}/${CAMPAIGN}/draw.json`, 'utf8')) as { kept: { id: string; split: string }[] };
  const out = ['run,half,measured_peak_bytes,predicted_peak_bytes,error'];
  for (const k of draw.kept) {
    const res = megatron.parseMegatronLog(readFileSync(`${root}/${CAMPAIGN}/runs/${k.id}.log`, 'utf8'), k.id);
    const p = compare.predictFromLog(res, null);
    if ('error' in p) throw new Error(`${k.id}: ${p.error}`);
    const gib: number | null = res.point.peakMaxAllocatedGiB;
    const cell = (x: number | null) => (x === null ? '' : String(x));
    out.push([k.id, k.split, cell(gib === null ? null : gib * 2 ** 30), cell(p.totalBytes), cell(p.totalError)].join(','));
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

if (process.argv[1]?.endsWith('frozen-dd5e3bb.ts')) await main();
