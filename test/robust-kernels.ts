/**
 * What test/robust-child.mjs runs in each robustness mode: every kernel family (forward,
 * backward, merge and add; f32 and f16; scalar and, where the adapter has it, subgroup-matrix;
 * causal and not; odd sizes, GQA, masked rows; the portable forward with RR = 8 pinned too) on inputs fixed by a seed, with a SHA-256 of
 * each output's bytes, and the probe that tells the modes apart.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { nodeGPU, robustShaders, releaseNodeGPU } from '../src/gpu/node.js';
import { acquireDevices, FlashDevice } from '../src/gpu/device.js';
import { attentionForward, attentionBackward } from '../src/kernels/attention.js';
import { MergeKernel } from '../src/kernels/merge.js';
import { KernelPath } from '../src/kernels/pipeline.js';
import { Precision } from '../src/kernels/precision.js';
import { readback, upload } from '../src/gpu/buffers.js';
import { randn } from '../src/reference/compare.js';
import { AttentionShape, numel } from '../src/shape.js';

export interface RobustReport {
  robust: boolean;
  adapter: string;
  /** w[3] after the probe wrote index 5 of a 4-element array: 99 only where the index is clamped. */
  probe: number;
  /** Output name → SHA-256 of its bytes. */
  outputs: Record<string, string>;
}

/**
 * Odd sizes (no multiple of any tile), GQA/MQA, masked rows (Nq > Nk under causal masking);
 * the last shape (D a multiple of 16) only for the tensor-core path, where the adapter has it.
 */
export const ROBUST_SHAPES: [string, AttentionShape, boolean][] = [
  ['N=37 D=24 GQA 4:2', { B: 1, Hq: 4, Hkv: 2, Nq: 37, Nk: 37, D: 24 }, false],
  ['Nq=100 Nk=37 D=72 MQA 3:1 B=2', { B: 2, Hq: 3, Hkv: 1, Nq: 100, Nk: 37, D: 72 }, false],
  ['N=100 D=64 GQA 2:1', { B: 1, Hq: 2, Hkv: 1, Nq: 100, Nk: 100, D: 64 }, true],
];

const hash = (x: ArrayBufferView) => createHash('sha256').update(new Uint8Array(x.buffer, x.byteOffset, x.byteLength)).digest('hex');

async function probe(dev: FlashDevice): Promise<number> {
  const code = readFileSync(new URL('./fixtures/robust_probe.wgsl', import.meta.url), 'utf8');
  const d = dev.device;
  const pipeline = await d.createComputePipelineAsync({ layout: 'auto', compute: { module: d.createShaderModule({ code }), entryPoint: 'main' } });
  const buf = upload(dev, new Uint32Array([5, 0, 0, 0]), 'probe');
  const enc = d.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, d.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: buf } }] }));
  pass.dispatchWorkgroups(1);
  pass.end();
  d.queue.submit([enc.finish()]);
  const out = new Uint32Array(await readback(dev, buf, 16));
  dev.tracker.destroy(buf);
  return out[1];
}

async function attention(dev: FlashDevice, seed: number, outputs: Record<string, string>): Promise<void> {
  const runs: [Precision, KernelPath][] = [['f32', 'scalar']];
  if (dev.hasF16) runs.push(['f16', 'scalar']);
  const tensorCores = dev.hasF16 && dev.hasSubgroupMatrix;
  for (const [name, s, tensorCoreOnly] of ROBUST_SHAPES) {
    const x = { q: randn(numel(s, 'q'), seed), k: randn(numel(s, 'kv'), seed + 1), v: randn(numel(s, 'kv'), seed + 2), dout: randn(numel(s, 'q'), seed + 3) };
    const all: [Precision, KernelPath][] = [...(tensorCoreOnly ? [] : runs), ...(tensorCores && s.D % 16 === 0 ? [['f16', 'subgroup-matrix'] as [Precision, KernelPath]] : [])];
    for (const causal of [false, true])
      for (const [precision, path] of all) {
        const opts = { causal, precision, path };
        const f = await attentionForward(dev, s, x, opts);
        const b = await attentionBackward(dev, s, { ...x, o: f.o, lse: f.lse }, opts);
        const tag = `${name} ${causal ? 'causal' : 'full'} ${precision}/${path}`;
        for (const [k, v] of Object.entries({ o: f.o, lse: f.lse, dq: b.dq, dk: b.dk, dv: b.dv })) outputs[`${tag} ${k}`] = hash(v);
      }
  }
}

/**
 * The portable forward with 8 query rows per invocation (RR = 8, FLASHRING_PORTABLE_FWD pins;
 * not planned by default), f32, on the first shape (its last row block runs past Nq).
 */
const RR8_TILES: Record<number, string> = { 24: '16x8x24x8' };
async function rows8(dev: FlashDevice, seed: number, outputs: Record<string, string>): Promise<void> {
  const saved = process.env.FLASHRING_PORTABLE_FWD;
  try {
    for (const [name, s] of ROBUST_SHAPES.filter(([, s]) => s.D in RR8_TILES)) {
      process.env.FLASHRING_PORTABLE_FWD = RR8_TILES[s.D];
      const x = { q: randn(numel(s, 'q'), seed + 7), k: randn(numel(s, 'kv'), seed + 8), v: randn(numel(s, 'kv'), seed + 9) };
      for (const causal of [false, true]) {
        const f = await attentionForward(dev, s, x, { causal, precision: 'f32', path: 'scalar' });
        const tag = `${name} ${causal ? 'causal' : 'full'} f32/scalar RR=8 ${RR8_TILES[s.D]}`;
        outputs[`${tag} o`] = hash(f.o);
        outputs[`${tag} lse`] = hash(f.lse);
      }
    }
  } finally {
    process.env.FLASHRING_PORTABLE_FWD = saved ?? '';
  }
}

/** Merge (with masked partials) and add, the ring's two kernels, at D = 24 and 72. */
async function merges(dev: FlashDevice, seed: number, outputs: Record<string, string>): Promise<void> {
  const rows = 37;
  for (const D of [24, 72]) {
    const lseA = randn(rows, seed + D), lseB = randn(rows, seed + D + 1);
    for (const i of [0, 5, 6]) lseA[i] = -Infinity;
    for (const i of [6, 9]) lseB[i] = -Infinity;
    const merge = await MergeKernel.create(dev, D);
    const acc = { o: upload(dev, randn(rows * D, seed + 2), 'oA'), lse: upload(dev, lseA, 'lseA') };
    const part = { o: upload(dev, randn(rows * D, seed + 3), 'oB'), lse: upload(dev, lseB, 'lseB') };
    const sum = upload(dev, randn(rows * D, seed + 4), 'sum');
    const temps: GPUBuffer[] = [];
    const enc = dev.device.createCommandEncoder();
    merge.encode(enc, acc, part, rows, temps);
    merge.encodeAdd(enc, sum, part.o, rows, temps);
    dev.device.queue.submit([enc.finish()]);
    outputs[`merge D=${D} o`] = hash(new Uint8Array(await readback(dev, acc.o, rows * D * 4)));
    outputs[`merge D=${D} lse`] = hash(new Uint8Array(await readback(dev, acc.lse, rows * 4)));
    outputs[`add D=${D}`] = hash(new Uint8Array(await readback(dev, sum, rows * D * 4)));
    for (const b of [acc.o, acc.lse, part.o, part.lse, sum, ...temps]) dev.tracker.destroy(b);
  }
}

export async function runKernels(seed: number): Promise<RobustReport> {
  const [dev] = await acquireDevices(await nodeGPU(), 1);
  try {
    const outputs: Record<string, string> = {};
    const p = await probe(dev);
    await attention(dev, seed, outputs);
    await rows8(dev, seed, outputs);
    await merges(dev, seed, outputs);
    return { robust: robustShaders(), adapter: dev.adapter.description || dev.adapter.device, probe: p, outputs };
  } finally {
    dev.destroy();
    releaseNodeGPU();
  }
}
