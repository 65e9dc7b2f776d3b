/**
 * Precision: what a run computes and returns in, the byte and WGSL type of each, and the element
 * types of one kernel's tensors.
 */
import { InputError } from '../errors.js';
import { FlashDevice } from '../gpu/device.js';

export type Precision = 'f32' | 'f16';
export type PrecisionRequest = Precision | 'auto';

/**
 * The precision a run computes and returns in. 'auto' follows the data: f16 when every input is
 * f16 (Uint16Array of half bits) and the device has shader-f16, else f32 (an f32 input is never
 * rounded to f16 unless f16 is asked for). Without `inputs`, 'auto' is f32.
 */
export function resolvePrecision(dev: FlashDevice, p: PrecisionRequest = 'auto', inputs: ArrayBufferView[] = []): Precision {
  if (p === 'auto') return inputs.length && inputs.every((x) => x instanceof Uint16Array) && dev.hasF16 ? 'f16' : 'f32';
  precisionRequest(p);
  if (p === 'f16' && !dev.hasF16)
    throw new InputError(`precision f16 needs the 'shader-f16' feature, which ${dev.adapter.description || 'this adapter'} does not offer; use f32`);
  return p;
}

/**
 * `p` as a precision a run may ask for (f32, f16 or auto), or an InputError naming it as `name` (the CLI's
 * '--precision'; the library's 'precision').
 */
export function precisionRequest(p: string, name = 'precision'): PrecisionRequest {
  if (p !== 'f32' && p !== 'f16' && p !== 'auto') throw new InputError(`${name} must be f32, f16 or auto, got '${p}'`);
  return p;
}

export const elemBytes = (p: Precision) => (p === 'f16' ? 2 : 4);
export const wgslType = (p: Precision) => (p === 'f16' ? 'f16' : 'f32');

export interface KernelTypes {
  precision: Precision;
  /** Element type of O (and of O read by the backward); f32 for ring partials. */
  out: Precision;
  /** Element type of dQ, dK, dV; f32 for ring accumulators. */
  grad: Precision;
  /** A ring's forward: it may merge its rows into the (O, LSE) that O and LSE hold (f32 O). */
  merge?: boolean;
}
