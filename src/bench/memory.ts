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

/** The bench's memory sweep at tensor-parallel size `tp`: with sequence parallelism where TP > 1. */
export const memoryParallel = (tp: number): Partial<ParallelConfig> => ({ tensorParallel: tp, sequenceParallel: tp > 1 });

/** The sweep's model, parallel configuration and lines for a preset and `base`. */
function sweepSetup(presetName: string, base: Partial<ParallelConfig>) {
  const preset = memoryPreset(presetName);
  const par = { ...DEFAULT_PARALLEL, ...(preset.stack ? { stack: preset.stack } : {}), ...base }; // the preset's stack (torchcp: torch-amp)
  return { preset, par, lines: defaultLines(preset.model, par.stack) };
}

/**
 * An InputError naming --memory-tp where the bench's memory sweep at that TP has no point: a TP the preset's model
 * does not split (its heads), or one that splits none of the sweep's sequence lengths. Such a sweep wrote files
 * without a row, which the next run into the folder then refused to overwrite.
 */
export function checkMemorySweep(presetName: string, tp: number): void {
  const { preset, par, lines } = sweepSetup(presetName, memoryParallel(tp));
  const why = (e: unknown) => (e instanceof InputError ? new InputError(`--memory-tp ${tp}: ${e.message} (model of --memory-preset ${presetName})`) : e);
  let points: number;
  try {
    points = sweep(preset.model, par, DEFAULT_SEQ_LENGTHS, lines, 80).length;
  } catch (e) {
    throw why(e);
  }
  if (!points) throw new InputError(`--memory-tp ${tp}: none of the memory sweep's sequence lengths (${DEFAULT_SEQ_LENGTHS.join(', ')}) splits over TP ${tp} with sequence parallelism: give a power of two`);
}

export async function memorySweep(outDir: string, write: WriteFiles, presetName: string, base: Partial<ParallelConfig>, hbmGib: number, measured: CsvRow[] = []): Promise<MemorySweepResult> {
  const { preset, par, lines } = sweepSetup(presetName, base);
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
