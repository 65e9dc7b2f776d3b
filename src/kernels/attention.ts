/**
 * Host-level FlashAttention: typed arrays in, typed arrays out, on one device. Tensors larger
 * than one storage binding are split over (batch, kv-head) units (each unit = one K/V head and
 * the query heads that share it), so any size that fits the device's memory runs.
 *
 * Data: f32 tensors are Float32Array; f16 tensors are Uint16Array of raw half bits. Precision
 * 'auto' (the default) follows the inputs: f16 only when Q, K and V are all f16 and the device
 * has shader-f16, else f32. Inputs are converted to the chosen precision; outputs come back in it
 * (LSE always f32). Asking for f16 with f32 inputs beyond f16's range (|x| > 65504) is an error.
 */
import { FlashDevice, checkDevice } from '../gpu/device.js';
import { InputError, LimitError } from '../errors.js';
import { counted } from '../plural.js';
import { HALF_MAX, toHalfArray, fromHalfArray } from '../f16.js';
import { AttentionOptions, AttentionShape, ResolvedOptions, numel, resolveOptions, validateShape } from '../shape.js';
import { FlashForward } from './flashForward.js';
import { needsExactMax } from './stale.js';
import { FlashBackward } from './flashBackward.js';
import { KernelPath, PathRequest } from './pipeline.js';
import { Precision, PrecisionRequest, elemBytes, resolvePrecision } from './precision.js';
import { readback, storage, upload } from '../gpu/buffers.js';

export type HostTensor = Float32Array | Uint16Array;

export interface RunOptions extends AttentionOptions {
  precision?: PrecisionRequest;
  /** Kernel path (default auto: subgroup matrices for f16 where the adapter has them and the tiles fit). */
  path?: PathRequest;
  /** Cap on bytes per binding used for splitting (default: the device limit). For tests. */
  maxBindingBytes?: number;
  /**
   * Progress of a pass: called after each group of (batch, K/V head) units with the units done and
   * their total. Given, a pass runs in groups of about GROUP_MS each at the pace its first group
   * measured (a first group of at most 1/64 of the units), so a long pass reports as it goes and no
   * one submission runs for minutes; a pass of one unit (B·Hkv = 1) is one submission whatever its
   * length. Without it a pass takes as few submissions as the bindings allow.
   */
  onProgress?: (done: number, total: number) => void;
}

/** How long a group of units should take on the GPU where the caller follows progress (RunOptions.onProgress). */
export const GROUP_MS = 1000;

export interface ForwardOutput {
  o: HostTensor;
  lse: Float32Array;
  precision: Precision;
  path: KernelPath;
}

export interface BackwardOutput {
  dq: HostTensor;
  dk: HostTensor;
  dv: HostTensor;
  precision: Precision;
  path: KernelPath;
}

export { HALF_MAX };

/** Throws an InputError naming the tensor if a finite value lies beyond f16's range (it would become ±Inf). */
export function checkHalfRange(name: string, x: ArrayLike<number>): void {
  for (let i = 0; i < x.length; i++) {
    const a = Math.abs(x[i]);
    if (a > HALF_MAX && a !== Infinity)
      throw new InputError(`${name} holds ${x[i]} (element ${i}), beyond float16's range (±${HALF_MAX}); compute in f32 or rescale the input`);
  }
}

/**
 * Converts a host tensor to the storage type of `p` (f32 → f16 rounds to nearest; a finite value
 * beyond f16's range is an error naming `name`).
 */
export function toPrecision(x: HostTensor, p: Precision, name = 'an input tensor'): HostTensor {
  if (p === 'f16') {
    if (x instanceof Uint16Array) return x;
    checkHalfRange(name, x);
    return toHalfArray(x);
  }
  return x instanceof Float32Array ? x : fromHalfArray(x);
}

/** f32 view of a host tensor (f16 bits decoded). */
export function toF32(x: HostTensor): Float32Array {
  return x instanceof Float32Array ? x : fromHalfArray(x);
}

function checkLength(name: string, x: HostTensor | undefined, want: number, dims: string): void {
  if (!x) throw new InputError(`${name} is missing`);
  if (!(x instanceof Float32Array || x instanceof Uint16Array))
    throw new InputError(`${name} must be a Float32Array (f32) or Uint16Array (f16 bits)`);
  if (x.length !== want) throw new InputError(`${name} has ${x.length} elements; shape ${dims} needs ${want}`);
}

interface Unit {
  start: number;
  count: number;
}

/**
 * The most (batch, kv-head) units a group may hold: its tensors (qPer / kvPer elements a unit) each
 * fit one binding, and its count, the kernels' batch (their grid's z), fits the device's workgroups
 * per dimension.
 */
function unitsPerGroup(dev: FlashDevice, s: AttentionShape, qPer: number, kvPer: number, elemBytes: number, cap?: number): number {
  const max = Math.min(cap ?? Infinity, dev.device.limits.maxStorageBufferBindingSize);
  const G = s.Hq / s.Hkv;
  const perUnit = Math.max(qPer, kvPer) * elemBytes;
  const per = Math.min(Math.floor(max / perUnit), dev.device.limits.maxComputeWorkgroupsPerDimension);
  if (per < 1)
    throw new LimitError(
      `one K/V head with its ${counted(G, 'query head')} needs ${perUnit} bytes in one binding (Nq=${s.Nq}, Nk=${s.Nk}, D=${s.D}); ` +
        `this device allows ${max} (maxStorageBufferBindingSize). ` +
        (s.Nq === s.Nk ? 'Split the sequence with the ring (--cp) instead.' : `The ring (--cp), which splits a sequence, takes Q and K/V of one length (here ${s.Nq} and ${s.Nk}): this shape does not run on this device.`),
    );
  return per;
}

/**
 * Runs `run` over the B·Hkv units in groups of at most `per`, in order. With `onProgress`, the first
 * group holds at most 1/64 of the units and each next one as many as take about GROUP_MS at the pace
 * of the last (the time of `run`: upload, kernels, readback), each followed by onProgress(done, total).
 */
async function inGroups(total: number, per: number, run: (u: Unit) => Promise<void>, onProgress?: (done: number, total: number) => void): Promise<void> {
  let size = onProgress ? Math.min(per, Math.ceil(total / 64)) : per;
  for (let start = 0; start < total; ) {
    const count = Math.min(size, total - start);
    const t0 = performance.now();
    await run({ start, count });
    start += count;
    if (!onProgress) continue;
    onProgress(start, total);
    const msPerUnit = Math.max(performance.now() - t0, 1e-3) / count;
    size = Math.max(1, Math.min(per, Math.floor(GROUP_MS / msPerUnit)));
  }
}

/** The shape of a group of units: they behave as a batch of `count` with Hkv = 1. */
function unitShape(s: AttentionShape, u: Unit): AttentionShape {
  return { B: u.count, Hq: s.Hq / s.Hkv, Hkv: 1, Nq: s.Nq, Nk: s.Nk, D: s.D };
}

function slice(x: HostTensor, u: Unit, perUnit: number): HostTensor {
  return x.subarray(u.start * perUnit, (u.start + u.count) * perUnit);
}

/** A unit's slices of Q, K and V, uploaded. */
function uploadQKV(dev: FlashDevice, t: { q: HostTensor; k: HostTensor; v: HostTensor }, u: Unit, qPer: number, kvPer: number) {
  return { q: upload(dev, slice(t.q, u, qPer), 'Q'), k: upload(dev, slice(t.k, u, kvPer), 'K'), v: upload(dev, slice(t.v, u, kvPer), 'V') };
}

/**
 * What both passes do first: validate the shape, options and Q/K/V lengths, pick the precision,
 * convert Q/K/V to it, and size one (batch, kv-head) unit of each tensor.
 */
function prepare(dev: FlashDevice, s: AttentionShape, t: { q: HostTensor; k: HostTensor; v: HostTensor }, opts: RunOptions) {
  validateShape(s);
  checkDevice(dev, 'attention');
  const p = resolvePrecision(dev, opts.precision, [t.q, t.k, t.v]);
  const ro = resolveOptions(s, opts);
  const qDims = `[${s.B},${s.Hq},${s.Nq},${s.D}]`;
  const kvDims = `[${s.B},${s.Hkv},${s.Nk},${s.D}]`;
  checkLength('Q', t.q, numel(s, 'q'), qDims);
  checkLength('K', t.k, numel(s, 'kv'), kvDims);
  checkLength('V', t.v, numel(s, 'kv'), kvDims);
  const G = s.Hq / s.Hkv;
  // Every mask (causal, window, documents) takes the same path choice: the tensor-core kernels
  // apply the same mask helper (shaders/common.wgsl) as the portable ones, checked against the
  // reference by test/mask.test.ts where the adapter has them, and run a 4096-token window
  // 2.4× faster per token than the portable kernels on the H200 (bench/results/mask-h200-2026-12-01).
  const path: PathRequest | undefined = opts.path;
  return {
    p, ro, qDims, path,
    q: toPrecision(t.q, p, 'Q'), k: toPrecision(t.k, p, 'K'), v: toPrecision(t.v, p, 'V'),
    /** Elements of one unit: its query heads' Q/O rows, its K/V head, its LSE rows. */
    qPer: G * s.Nq * s.D, kvPer: s.Nk * s.D, lsePer: G * s.Nq,
  };
}

function newHost(p: Precision, n: number): HostTensor {
  return p === 'f16' ? new Uint16Array(n) : new Float32Array(n);
}

function asHost(p: Precision, ab: ArrayBuffer): HostTensor {
  return p === 'f16' ? new Uint16Array(ab) : new Float32Array(ab);
}

/**
 * One unit's pass: encodes the kernel over the unit's buffers, submits, reads the results back
 * (`read`) and checks the device, then frees the buffers and the kernel's temporaries whatever
 * happened.
 */
async function runUnit<B extends Record<string, GPUBuffer>>(
  dev: FlashDevice, pass: 'forward' | 'backward',
  kernel: { encode(enc: GPUCommandEncoder, b: B, s: AttentionShape, o: ResolvedOptions, temps: GPUBuffer[]): unknown },
  bufs: B, us: AttentionShape, ro: ResolvedOptions, read: () => Promise<void>,
): Promise<void> {
  const temps: GPUBuffer[] = [];
  try {
    const enc = dev.device.createCommandEncoder({ label: pass === 'forward' ? 'attentionForward' : 'attentionBackward' });
    kernel.encode(enc, bufs, us, ro, temps);
    dev.device.queue.submit([enc.finish()]);
    await read();
    checkDevice(dev, `attention ${pass}`);
  } finally {
    for (const b of [...Object.values(bufs), ...temps]) dev.tracker.destroy(b);
  }
}

export async function attentionForward(
  dev: FlashDevice, s: AttentionShape, t: { q: HostTensor; k: HostTensor; v: HostTensor }, opts: RunOptions = {},
): Promise<ForwardOutput> {
  const { p, ro, q, k, v, qPer, kvPer, lsePer, path } = prepare(dev, s, t, opts);
  // The exact running max where the stale one could overflow O's accumulator (src/kernels/stale.ts).
  const kernel = await FlashForward.create(dev, s.D, { precision: p, out: p, grad: p }, path, { exactMax: needsExactMax(s.Nk, v) });
  const out = newHost(p, numel(s, 'q'));
  const lse = new Float32Array(numel(s, 'lse'));
  const eb = elemBytes(p);
  const per = unitsPerGroup(dev, s, qPer, kvPer, eb, opts.maxBindingBytes);
  kernel.checkGrid(unitShape(s, { start: 0, count: Math.min(per, s.B * s.Hkv) }));   // rows and heads a dispatch takes, before any upload
  await inGroups(s.B * s.Hkv, per, async (u) => {
    const us = unitShape(s, u);
    const bufs = {
      ...uploadQKV(dev, { q, k, v }, u, qPer, kvPer),
      o: storage(dev, numel(us, 'q') * eb, 'O'),
      lse: storage(dev, numel(us, 'lse') * 4, 'LSE'),
    };
    await runUnit(dev, 'forward', kernel, bufs, us, ro, async () => {
      out.set(asHost(p, await readback(dev, bufs.o, numel(us, 'q') * eb)), u.start * qPer);
      lse.set(new Float32Array(await readback(dev, bufs.lse, numel(us, 'lse') * 4)), u.start * lsePer);
    });
  }, opts.onProgress);
  return { o: out, lse, precision: p, path: kernel.path };
}

export async function attentionBackward(
  dev: FlashDevice, s: AttentionShape,
  t: { q: HostTensor; k: HostTensor; v: HostTensor; o: HostTensor; lse: Float32Array; dout: HostTensor },
  opts: RunOptions = {},
): Promise<BackwardOutput> {
  const { p, ro, q, k, v, qPer, kvPer, lsePer, qDims, path } = prepare(dev, s, t, opts);
  checkLength('O', t.o, numel(s, 'q'), qDims);
  checkLength('dO', t.dout, numel(s, 'q'), qDims);
  if (!(t.lse instanceof Float32Array) || t.lse.length !== numel(s, 'lse'))
    throw new InputError(`LSE must be a Float32Array of ${numel(s, 'lse')} elements (shape [${s.B},${s.Hq},${s.Nq}])`);
  const o = toPrecision(t.o, p, 'O'), dout = toPrecision(t.dout, p, 'dO');
  const kernel = await FlashBackward.create(dev, s.D, { precision: p, out: p, grad: p }, path);
  const eb = elemBytes(p);
  const dq = newHost(p, numel(s, 'q')), dk = newHost(p, numel(s, 'kv')), dv = newHost(p, numel(s, 'kv'));
  const per = unitsPerGroup(dev, s, qPer, kvPer, eb, opts.maxBindingBytes);
  kernel.checkGrid(unitShape(s, { start: 0, count: Math.min(per, s.B * s.Hkv) }));
  await inGroups(s.B * s.Hkv, per, async (u) => {
    const us = unitShape(s, u);
    const bufs = {
      ...uploadQKV(dev, { q, k, v }, u, qPer, kvPer),
      o: upload(dev, slice(o, u, qPer), 'O'),
      dout: upload(dev, slice(dout, u, qPer), 'dO'),
      lse: upload(dev, t.lse.subarray(u.start * lsePer, (u.start + u.count) * lsePer), 'LSE'),
      delta: storage(dev, numel(us, 'lse') * 4, 'Delta'),
      dq: storage(dev, numel(us, 'q') * eb, 'dQ'),
      dk: storage(dev, numel(us, 'kv') * eb, 'dK'),
      dv: storage(dev, numel(us, 'kv') * eb, 'dV'),
    };
    await runUnit(dev, 'backward', kernel, bufs, us, ro, async () => {
      dq.set(asHost(p, await readback(dev, bufs.dq, numel(us, 'q') * eb)), u.start * qPer);
      dk.set(asHost(p, await readback(dev, bufs.dk, numel(us, 'kv') * eb)), u.start * kvPer);
      dv.set(asHost(p, await readback(dev, bufs.dv, numel(us, 'kv') * eb)), u.start * kvPer);
    });
  }, opts.onProgress);
  return { dq, dk, dv, precision: p, path: kernel.path };
}
