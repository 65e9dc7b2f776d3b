/**
 * What the attention commands (single device and ring) write and say about their outputs: the
 * .npy files, stale outputs of an earlier run, the precision the device computes in.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { FlashDevice, adapterName } from '../gpu/device.js';
import { HostTensor } from '../kernels/attention.js';
import { Precision, PrecisionRequest } from '../kernels/precision.js';
import { AttentionShape } from '../shape.js';
import { NpyArray, npyParts } from './npy.js';
import type { FileData } from './files.js';

export const OUTPUT_NAMES = ['o.npy', 'lse.npy', 'dq.npy', 'dk.npy', 'dv.npy'] as const;

/**
 * The record a run leaves in --out beside its arrays (`kind: "flashring.attention-run"`): what it
 * wrote (and what earlier runs wrote there that is still there), the shape and precision, the adapter and whether
 * Dawn's robustness transform was on (RanOn), and what made the arrays (RunAbout). A later
 * run overwrites only the arrays it lists (src/cli/files.ts Manifest).
 */
export const RUN_RECORD = 'flashring-run.json';
const RECORD_KIND = 'flashring.attention-run';

/** The names a run record lists, or null when `text` is not one. */
export function recordLists(text: string): string[] | null {
  try {
    const j = JSON.parse(text) as { kind?: unknown; files?: unknown };
    return j.kind === RECORD_KIND && Array.isArray(j.files) && j.files.every((f) => typeof f === 'string') ? (j.files as string[]) : null;
  } catch {
    return null;
  }
}

/**
 * What produced a run's arrays, as its record keeps it (runAbout, src/cli/attention.ts): the inputs as absolute paths,
 * the mask, the scale the kernels used, the precision asked for, and the ring's settings (null without --cp), so that
 * a folder of outputs says how to make it again.
 */
export interface RunAbout {
  inputs: Record<string, string>;
  causal: boolean;
  window: [number, number] | null;
  documents: number | null;
  scale: number;
  precisionRequest: string;
  ring: Record<string, unknown> | null;
}

/**
 * What a run computed on, for its record, under bench's JSON's names: the precision, the `adapter` (its name; a ring's, each
 * distinct rank adapter's, as the timeline's header) and `robust` (Dawn's robustness transform on: --robust or FLASHRING_ROBUST=1).
 */
export interface RanOn { precision: Precision; adapter: string; robust: boolean }

/** The record of a run writing `names` into `dir` (plus the arrays an earlier record there lists that remain). */
function runRecord(dir: string, names: string[], s: AttentionShape, ran: RanOn, about: RunAbout): { path: string; data: Uint8Array } {
  const path = join(dir, RUN_RECORD);
  let earlier: string[] = [];
  try {
    // Only an ordinary file of a record's size is read (OutputPlan refused anything else before the run).
    const st = statSync(path);
    if (st.isFile() && st.size <= 1 << 20) earlier = (recordLists(readFileSync(path, 'utf8')) ?? []).filter((n) => !names.includes(n) && existsSync(join(dir, n)));
  } catch { /* no record yet */ }
  const record = {
    kind: RECORD_KIND, version: 1, createdAt: new Date().toISOString(), files: [...names, ...earlier], shape: s, precision: ran.precision,
    adapter: ran.adapter, robust: ran.robust, run: about, ...(earlier.length ? { fromEarlierRuns: earlier } : {}),
  };
  return { path, data: new TextEncoder().encode(JSON.stringify(record, null, 1) + '\n') };
}

/**
 * The sizes of the files a run writes into --out (O, LSE and, with the backward, dQ, dK, dV, each with its
 * header; its record), at `precision`: what the folder's file system needs free (files replaced stay until
 * the new ones are in).
 */
export function outputSizes(s: AttentionShape, precision: Precision, backward: boolean, about: RunAbout): number[] {
  // The record: its lists, shape and adapter's name within 2 KiB, its run description (paths) twice over for the indentation.
  const item = precision === 'f16' ? 2 : 4, header = 128, record = 2048 + 2 * Buffer.byteLength(JSON.stringify(about));
  const q = header + s.B * s.Hq * s.Nq * s.D * item, kv = header + s.B * s.Hkv * s.Nk * s.D * item;
  return [q, header + s.B * s.Hq * s.Nq * 4, ...(backward ? [q, kv, kv] : []), record];
}

/** f16 asked for by the data on a device without shader-f16: f32, with a note. */
export function devicePrecision(p: Precision, req: PrecisionRequest, dev: FlashDevice): Precision {
  if (p === 'f16' && req === 'auto' && !dev.hasF16) {
    noteF32(`${adapterName(dev.adapter)} has`);
    return 'f32';
  }
  return p;
}

/** The note of float16 data computed in f32 for want of shader-f16 (`who`: 'ADAPTER has', 'rank 1 (ADAPTER) has'). */
export function noteF32(who: string): void {
  console.error(`note: the inputs are float16 but ${who} no shader-f16; computing in f32 and writing float32`);
}

/**
 * Outputs of an earlier run left beside this run's (gradients of a run with --do, when this one had none): said,
 * not deleted. Those the record just written lists as from earlier runs, so a file of the user's own under such a
 * name (a reference dq.npy) is not called an earlier run's.
 */
export function noteStaleOutputs(dir: string, written: { path: string }[]): void {
  const wrote = new Set(written.map((f) => resolve(f.path)));
  let earlier: unknown = [];
  try {
    earlier = (JSON.parse(readFileSync(join(dir, RUN_RECORD), 'utf8')) as { fromEarlierRuns?: unknown }).fromEarlierRuns ?? [];
  } catch { /* no record to go by: nothing said */ }
  const listed = Array.isArray(earlier) ? earlier : [];
  const stale = OUTPUT_NAMES.filter((n) => listed.includes(n) && !wrote.has(resolve(join(dir, n))) && existsSync(join(dir, n)));
  if (stale.length) console.error(`note: ${dir} also holds ${stale.join(', ')} from an earlier run; this run did not write ${stale.length > 1 ? 'them' : 'it'}`);
}

/**
 * The .npy files of a run's outputs (f16 bits as float16, f32 as float32; LSE always float32), [B, H, N, D]
 * and LSE [B, H, N]; without `batched` (every input was [H, N, D], so B = 1) [H, N, D] and [H, N], as the inputs;
 * and the run's record, with what it ran on (`ran`).
 */
export function outputFiles(
  dir: string, s: AttentionShape, ran: RanOn, tensors: Record<string, HostTensor>, about: RunAbout, lse?: Float32Array, batched = true,
): { path: string; data: FileData }[] {
  const dtype = ran.precision === 'f16' ? 'f2' : 'f4';
  const lead = batched ? [s.B] : [];
  const files: { path: string; data: FileData }[] = Object.entries(tensors).map(([name, data]) => {
    const heads = name === 'dk' || name === 'dv' ? s.Hkv : s.Hq;
    const n = name === 'dk' || name === 'dv' ? s.Nk : s.Nq;
    const shape = [...lead, heads, n, s.D];
    const arr: NpyArray = data instanceof Uint16Array ? { dtype: 'f2', shape, data } : { dtype, shape, data };
    return { path: join(dir, `${name}.npy`), data: npyParts(arr) };
  });
  if (lse) files.push({ path: join(dir, 'lse.npy'), data: npyParts({ dtype: 'f4', shape: [...lead, s.Hq, s.Nq], data: lse }) });
  files.push(runRecord(dir, files.map((f) => basename(f.path)), s, ran, about));
  return files;
}
