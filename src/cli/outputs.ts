/**
 * What the attention commands (single device and ring) write and say about their outputs: the
 * .npy files, stale outputs of an earlier run, the precision the device computes in.
 */
import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { FlashDevice, adapterName } from '../gpu/device.js';
import { HostTensor } from '../kernels/attention.js';
import { Precision, PrecisionRequest } from '../kernels/precision.js';
import { AttentionShape } from '../shape.js';
import { NpyArray, encodeNpy } from './npy.js';

export const OUTPUT_NAMES = ['o.npy', 'lse.npy', 'dq.npy', 'dk.npy', 'dv.npy'] as const;

/** f16 asked for by the data on a device without shader-f16: f32, with a note. */
export function devicePrecision(p: Precision, req: PrecisionRequest, dev: FlashDevice): Precision {
  if (p === 'f16' && req === 'auto' && !dev.hasF16) {
    console.error(`note: the inputs are float16 but ${adapterName(dev.adapter)} has no shader-f16; computing in f32 and writing float32`);
    return 'f32';
  }
  return p;
}

/** Outputs of an earlier run left beside this run's (gradients of a run with --do, when this one had none): said, not deleted. */
export function noteStaleOutputs(dir: string, written: { path: string }[]): void {
  const wrote = new Set(written.map((f) => resolve(f.path)));
  const stale = OUTPUT_NAMES.map((n) => join(dir, n)).filter((f) => !wrote.has(resolve(f)) && existsSync(f));
  if (stale.length) console.error(`note: ${dir} also holds ${stale.map((f) => basename(f)).join(', ')} from an earlier run; this run did not write ${stale.length > 1 ? 'them' : 'it'}`);
}

/** The .npy files of a run's outputs (f16 bits as float16, f32 as float32; LSE always float32). */
export function outputFiles(
  dir: string, s: AttentionShape, precision: Precision, tensors: Record<string, HostTensor>, lse?: Float32Array,
): { path: string; data: Uint8Array }[] {
  const dtype = precision === 'f16' ? 'f2' : 'f4';
  const files = Object.entries(tensors).map(([name, data]) => {
    const heads = name === 'dk' || name === 'dv' ? s.Hkv : s.Hq;
    const n = name === 'dk' || name === 'dv' ? s.Nk : s.Nq;
    const arr: NpyArray = data instanceof Uint16Array ? { dtype: 'f2', shape: [s.B, heads, n, s.D], data } : { dtype, shape: [s.B, heads, n, s.D], data };
    return { path: join(dir, `${name}.npy`), data: encodeNpy(arr) };
  });
  if (lse) files.push({ path: join(dir, 'lse.npy'), data: encodeNpy({ dtype: 'f4', shape: [s.B, s.Hq, s.Nq], data: lse }) });
  return files;
}
