/**
 * Memory sweep for the bench: activation_memory.csv, activation_memory.json (what the page
 * loads) and activation_memory.png (the page's chart, rendered headless).
 */
import { join } from 'node:path';
import { DEFAULT_PARALLEL, defaultLines, defaultRecompute, DEFAULT_SEQ_LENGTHS, PRESETS, ParallelConfig, STACKS, oomPoints, sweep } from '../memory/model.js';
import { CsvRow, sweepRows, toCsv } from '../memory/csv.js';
import { chartNotes, memoryChartConfig } from '../memory/chart.js';
import { renderChartPng } from './png.js';
import { InputError } from '../errors.js';

export interface MemorySweepResult {
  csv: string;
  json: string;
  png: string | null;
  pngSkipped: string | null;
  oom: Record<string, number | null>;
}

/** Files written together, through temporaries (src/cli/files.ts OutputPlan.write). */
/** The files a bench's memory sweep writes into --out, by name. */
export const MEMORY_SWEEP_FILES = ['activation_memory.csv', 'activation_memory.json', 'activation_memory.png'] as const;

export type WriteFiles = (files: { path: string; data: Uint8Array | string }[]) => Promise<void>;

/** The preset a name gives (an own entry of PRESETS: 'constructor' is none), else an InputError naming them. */
export function memoryPreset(name: string, flag = 'memory-preset'): (typeof PRESETS)[string] {
  if (!Object.hasOwn(PRESETS, name)) throw new InputError(`--${flag} '${name}' is not a preset: use ${Object.keys(PRESETS).join(', ')}`);
  return PRESETS[name];
}

export async function memorySweep(outDir: string, write: WriteFiles, presetName: string, base: Partial<ParallelConfig>, hbmGib: number, measured: CsvRow[] = []): Promise<MemorySweepResult> {
  const preset = memoryPreset(presetName);
  const par = { ...DEFAULT_PARALLEL, ...(preset.stack ? { stack: preset.stack } : {}), ...base }; // the preset's stack (torchcp: torch-amp)
  const lines = defaultLines(preset.model, par.stack);
  const pts = sweep(preset.model, par, DEFAULT_SEQ_LENGTHS, lines, hbmGib);
  const rows = sweepRows(pts, hbmGib);
  const [csv, json, png] = MEMORY_SWEEP_FILES.map((n) => join(outDir, n));
  const title = `${preset.note}: TP=${par.tensorParallel}${par.sequenceParallel ? ' + SP' : ''}, micro batch ${par.microBatchSize}, ${par.flashAttention ? 'FlashAttention' : 'no FlashAttention'} — lines: flashring's memory model (${STACKS[par.stack ?? 'megatron'].label} stack; "+ recompute" = ${defaultRecompute(preset.model, par.stack).replace(':', ' ').replace(/\+/g, ' + ')})${measured.length ? '; triangles: measured' : ''}`;
  const subtitle = chartNotes(preset.model, pts, lines);
  const config = memoryChartConfig(rows, measured, hbmGib, title, subtitle);
  const image = await renderChartPng(config);
  await write([
    { path: csv, data: toCsv([...rows, ...measured]) },
    { path: json, data: JSON.stringify({ kind: 'flashring.memory', createdAt: new Date().toISOString(), preset: presetName, model: preset.model, parallel: par, hbmGib, rows: [...rows, ...measured], chart: config }, null, 1) },
    ...(typeof image === 'string' ? [] : [{ path: png, data: image }]),
  ]);
  return { csv, json, png: typeof image === 'string' ? null : png, pngSkipped: typeof image === 'string' ? image : null, oom: oomPoints(pts) };
}
