/**
 * What the context-parallel bench's tables (bench/cp.ts, cpSteps.ts, cpPlaces.ts, cpProcs.ts) share: the line that names
 * the adapter (and says where it is a CPU, whose timings are no GPU's performance figures), figures that their decimals
 * would write as 0, and values that are absent (columns padded to their widest cell: src/table.ts aligned).
 */
import { isCpuAdapter } from '../src/gpu/device.js';

/** What a result says of where it ran (the JSON files' `adapter`; absent in files written before some modes named it). */
export interface RunMeta {
  adapter?: string;
}

/** Whether an adapter, known by its name alone (adapterName), is a CPU implementation: as isCpuAdapter tells from its summary. */
export const cpuByName = (name: string): boolean => isCpuAdapter({ vendor: '', architecture: '', device: '', description: name });

/** The first line of a table: the adapter the figures were measured on; a CPU adapter said to be one. */
export function adapterLine(m: RunMeta | readonly string[]): string {
  const names = Array.isArray(m) ? [...new Set(m as readonly string[])] : (m as RunMeta).adapter ? [(m as RunMeta).adapter!] : [];
  if (!names.length) return 'adapter: not recorded (a result written before the bench named it)';
  const cpu = names.some(cpuByName);
  return `adapter: ${names.join(', ')}${cpu ? ' (a CPU adapter: its timings are not GPU performance figures)' : ''}`;
}

/**
 * x at `decimals` decimals; a nonzero x those would give fewer than two significant digits (0.000 ms for 0.0004 ms,
 * 0.001 for 0.0008) at two significant digits instead; `absent` where there is no value (null, or a NaN or infinity
 * that a missing measurement left).
 */
export function fig(x: number | null | undefined, decimals: number, absent = '-'): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return absent;
  return x !== 0 && Math.abs(x) < 10 ** (1 - decimals) ? x.toPrecision(2) : x.toFixed(decimals);
}

/** A time in ms as people read it: ms below a second, else s (fig's decimals: 1); `absent` where there is none. */
export function duration(ms: number | null | undefined, absent = '-'): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return absent;
  return Math.abs(ms) < 1000 ? `${fig(ms, 1)} ms` : `${fig(ms / 1e3, 1)} s`;
}
