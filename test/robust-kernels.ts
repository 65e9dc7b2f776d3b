/**
 * What test/robust-child.mjs runs in each robustness mode: every kernel family (forward,
 * backward, merge and add; f32 and f16; scalar and, where the adapter has it, subgroup-matrix;
 * causal and not; odd sizes, GQA, masked rows; the portable forward with a tile pinned too; a
 * ring step over the reached row blocks only, and a merge over a row range) on inputs fixed by a seed, with a SHA-256 of
 * each output's bytes, and the probe that tells the modes apart.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { nodeGPU, robustShaders, releaseNodeGPU } from '../src/gpu/node.js';
import { acquireDevices, FlashDevice } from '../src/gpu/device.js';
import { attentionForward, attentionBackward, toPrecision } from '../src/kernels/attention.js';
import { FlashForward } from '../src/kernels/flashForward.js';
import { FlashBackward } from '../src/kernels/flashBackward.js';
import { MergeKernel } from '../src/kernels/merge.js';
import { KernelPath } from '../src/kernels/pipeline.js';
import { Precision } from '../src/kernels/precision.js';
import { readback, storage, upload } from '../src/gpu/buffers.js';
import { randn } from '../src/reference/compare.js';
import { AttentionShape, numel, resolveOptions } from '../src/shape.js';
import { tuningFromEnv } from '../src/kernels/tuning.js';

export interface RobustReport {
  robust: boolean;
  /** The device's own reading of the mode (FlashDevice.robustShaders, from the GPU object nodeGPU marked). */
  deviceRobust: boolean;
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
 * The forward on a device of its own with one pin (`env` = its variable and value) in its tuning,
 * causal and not, on fresh inputs from `seed`: O's and LSE's hashes under "NAME causal|full
 * PRECISION/PATH pinned VALUE". The tensor-core path runs only where the adapter offers it.
 */
async function pinnedForward(name: string, s: AttentionShape, precision: Precision, path: KernelPath, env: [string, string], seed: number, outputs: Record<string, string>): Promise<void> {
  const [dev] = await acquireDevices(await nodeGPU(), 1, { tuning: tuningFromEnv({ [env[0]]: env[1] }) });
  try {
    if (path === 'subgroup-matrix' && !(dev.hasF16 && dev.hasSubgroupMatrix)) return;
    const x = { q: randn(numel(s, 'q'), seed), k: randn(numel(s, 'kv'), seed + 1), v: randn(numel(s, 'kv'), seed + 2) };
    for (const causal of [false, true]) {
      const f = await attentionForward(dev, s, x, { causal, precision, path });
      const tag = `${name} ${causal ? 'causal' : 'full'} ${precision}/${path} pinned ${env[1]}`;
      outputs[`${tag} o`] = hash(f.o);
      outputs[`${tag} lse`] = hash(f.lse);
    }
  } finally {
    dev.destroy();
  }
}

/**
 * The portable forward with a tile pinned (FLASHRING_PORTABLE_FWD; not the one planned by
 * default), f32, on the first shape (its last row block runs past Nq).
 */
const PINNED_TILES: Record<number, string> = { 24: '16x8x24' };
async function pinnedTiles(seed: number, outputs: Record<string, string>): Promise<void> {
  for (const [name, s] of ROBUST_SHAPES.filter(([, s]) => s.D in PINNED_TILES))
    await pinnedForward(name, s, 'f32', 'scalar', ['FLASHRING_PORTABLE_FWD', PINNED_TILES[s.D]], seed + 7, outputs);
}

/**
 * The tensor-core forward's D split (planned only without the robustness transform, so pinned here
 * in both modes: the same kernel must give the same bits with the clamps), at D = 128 where the
 * adapter has subgroup matrices, on a shape whose last row block runs past Nq.
 */
async function pinnedSplit(seed: number, outputs: Record<string, string>): Promise<void> {
  await pinnedForward('N=150 D=128', { B: 1, Hq: 2, Hkv: 1, Nq: 150, Nk: 150, D: 128 }, 'f16', 'subgroup-matrix', ['FLASHRING_SGMM_FWD', '16x32x1x2'], seed + 30, outputs);
}

/**
 * The tensor-core forward's row blocks taking turns through one S and P block (planned only without the
 * robustness transform, so pinned here in both modes), at D = 64 where the adapter has subgroup matrices.
 */
async function pinnedTurns(seed: number, outputs: Record<string, string>): Promise<void> {
  for (const [name, s] of ROBUST_SHAPES.filter(([, s]) => s.D === 64))
    await pinnedForward(name, s, 'f16', 'subgroup-matrix', ['FLASHRING_SGMM_FWD_TURN', '1'], seed + 40, outputs);
}

/** The add of partial dK/dV sums (all_gather's reduce-scatter), at D = 24 and 72. */
async function adds(dev: FlashDevice, seed: number, outputs: Record<string, string>): Promise<void> {
  const rows = 37;
  for (const D of [24, 72]) {
    const merge = await MergeKernel.create(dev, D);
    const part = upload(dev, randn(rows * D, seed + 3), 'part');
    const sum = upload(dev, randn(rows * D, seed + 4), 'sum');
    const temps: GPUBuffer[] = [];
    const enc = dev.device.createCommandEncoder();
    merge.encodeAdd(enc, sum, part, rows, temps);
    dev.device.queue.submit([enc.finish()]);
    outputs[`add D=${D}`] = hash(new Uint8Array(await readback(dev, sum, rows * D * 4)));
    for (const b of [part, sum, ...temps]) dev.tracker.destroy(b);
  }
}

/**
 * A ring step as chunks.ts encodes it, where the reached blocks start past the first (q_blk0,
 * k_blk0 > 0: test/active-blocks.test.ts's mask): the forward over the reached row blocks merging
 * into held (O, LSE) in its epilogue, the backward adding onto held gradients.
 */
async function ringStep(dev: FlashDevice, seed: number, outputs: Record<string, string>): Promise<void> {
  const s: AttentionShape = { B: 1, Hq: 2, Hkv: 1, Nq: 400, Nk: 400, D: 16 };
  const o = resolveOptions(s, { causal: true, window: [50, 0], qPos: { offset: 300, stride: 1 }, kPos: { offset: 0, stride: 1, split: 200, jump: 300 } });
  const runs: [Precision, KernelPath][] = [['f32', 'scalar'], ...(dev.hasF16 && dev.hasSubgroupMatrix ? [['f16', 'subgroup-matrix'] as [Precision, KernelPath]] : [])];
  const nq = numel(s, 'q'), nkv = numel(s, 'kv'), rows = numel(s, 'lse');
  for (const [p, path] of runs) {
    const types = { precision: p, out: 'f32' as const, grad: 'f32' as const };
    const [fwd, bwd] = await Promise.all([FlashForward.create(dev, s.D, { ...types, merge: true }, path), FlashBackward.create(dev, s.D, types, path)]);
    const input = (n: number, k: number, label: string) => upload(dev, toPrecision(randn(n, seed + k), p), label);
    const b = {
      q: input(nq, 20, 'q'), k: input(nkv, 21, 'k'), v: input(nkv, 22, 'v'), dout: input(nq, 23, 'dout'),
      o: upload(dev, randn(nq, seed + 24), 'o'), lse: upload(dev, randn(rows, seed + 25), 'lse'),
      delta: storage(dev, rows * 4, 'delta'),
      dq: upload(dev, randn(nq, seed + 26), 'dq'), dk: upload(dev, randn(nkv, seed + 27), 'dk'), dv: upload(dev, randn(nkv, seed + 28), 'dv'),
    };
    const temps: GPUBuffer[] = [];
    const enc = dev.device.createCommandEncoder();
    fwd.encode(enc, b, s, o, temps, undefined, true, true);
    bwd.encode(enc, b, s, o, temps, { accumulate: true });
    dev.device.queue.submit([enc.finish()]);
    for (const [k, buf, n] of [['o', b.o, nq], ['lse', b.lse, rows], ['dq', b.dq, nq], ['dk', b.dk, nkv], ['dv', b.dv, nkv]] as const)
      outputs[`ring step ${p}/${path} ${k}`] = hash(new Uint8Array(await readback(dev, buf, n * 4)));
    for (const x of [...Object.values(b), ...temps]) dev.tracker.destroy(x);
  }
}

export async function runKernels(seed: number): Promise<RobustReport> {
  // The forward's row blocks do not take turns in either mode here (the robust default; without the transform
  // the default takes turns at D ≤ 64, which sums ℓ in another order): pinnedTurns checks that kernel apart.
  const [dev] = await acquireDevices(await nodeGPU(), 1, { tuning: { sgmmForwardTurns: 0 } });
  try {
    const outputs: Record<string, string> = {};
    const p = await probe(dev);
    await attention(dev, seed, outputs);
    await pinnedTiles(seed, outputs);
    await pinnedSplit(seed, outputs);
    await pinnedTurns(seed, outputs);
    await adds(dev, seed, outputs);
    await ringStep(dev, seed, outputs);
    return { robust: robustShaders(), deviceRobust: dev.robustShaders, adapter: dev.adapter.description || dev.adapter.device, probe: p, outputs };
  } finally {
    dev.destroy();
    releaseNodeGPU();
  }
}
