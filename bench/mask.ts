/**
 * Masks on the GPU host (issue 21): does a sliding window make the work N·W, and do packed
 * documents cost what the documents cost one by one?
 *   window   causal, window (W, 0), f16, B=1, H=16, D=128, N = 16384 … 131072: forward and
 *            backward time per token, for the portable path and (asked for explicitly) the
 *            tensor-core path; flat time per token = work N·W.
 *   packed   causal documents of DOC tokens packed into one sequence (cu_seqlens) against one
 *            document of DOC tokens timed alone, times the document count.
 * FLOPs: 4·H·D·(visible pairs) forward, 2.5× backward (the visible pairs counted by src/mask.ts).
 * Every (path, kind) is first checked against the float64 reference at a small shape (forward
 * and backward, f16 contract); a path that fails gets no time. GPU timestamps, median of `reps`
 * after a warm-up. Writes mask.json under --out; the table last.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { acquireDevices, FlashDevice } from '../src/gpu/device.js';
import { nodeGPU } from '../src/gpu/node.js';
import { AttentionOptions, AttentionShape, attentionPairFlops, resolveOptions } from '../src/shape.js';
import { KernelPath } from '../src/kernels/pipeline.js';
import { checkAgainstReference } from '../src/kernels/check.js';
import { TOL } from '../src/reference/compare.js';
import { Mask } from '../src/mask.js';
import { timeForwardBackward } from '../src/bench/kernels.js';

interface Row { kind: string; path: KernelPath; N: number; docs: number; fwdMs: number; bwdMs: number; fwdTflops: number; bwdTflops: number; usPerToken: number }

const arg = (argv: string[], name: string, def: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : def;
};

/** Forward and backward against the float64 reference at a small shape under `opts`: max error / tolerance. */
async function spotCheck(dev: FlashDevice, path: KernelPath, opts: AttentionOptions): Promise<number> {
  const r = await checkAgainstReference(dev, { B: 1, Hq: 2, Hkv: 2, Nq: 300, Nk: 300, D: 128 }, { ...opts, precision: 'f16', seed: 1, path });
  return Math.max(r.errO / TOL.f16.out, r.errLSE / TOL.f16.out, r.errDQ / TOL.f16.grad, r.errDK / TOL.f16.grad, r.errDV / TOL.f16.grad);
}

/** Median forward and backward GPU milliseconds at one shape and mask (f16). */
async function time(dev: FlashDevice, path: KernelPath, s: AttentionShape, opts: AttentionOptions, reps: number): Promise<[number, number]> {
  const t = await timeForwardBackward(dev, s, opts, 'f16', reps, [1, 50], path);
  if (!t.gpu) throw new Error(`the mask bench needs GPU timestamps (timestamp-query); ${dev.adapter.description} gave none`);
  return t.gpu;
}

function row(kind: string, path: KernelPath, s: AttentionShape, opts: AttentionOptions, docs: number, [f, b]: [number, number]): Row {
  const pairs = new Mask(resolveOptions(s, opts), s.Nq, s.Nk).visiblePairs();
  const flops = (pass: 'fwd' | 'bwd') => attentionPairFlops(pairs, s.B, s.Hq, s.D, pass);
  return { kind, path, N: s.Nq, docs, fwdMs: f, bwdMs: b, fwdTflops: flops('fwd') / (f * 1e9), bwdTflops: flops('bwd') / (b * 1e9), usPerToken: ((f + b) * 1e3) / (s.Nq * s.B) };
}

export async function maskBench(argv: string[]): Promise<number> {
  const out = arg(argv, 'out', 'bench/out');
  mkdirSync(out, { recursive: true });
  const W = +arg(argv, 'window', '4096'), DOC = +arg(argv, 'doc', '4096'), reps = +arg(argv, 'reps', '3');
  const Ns = arg(argv, 'N', '16384,32768,65536,131072').split(',').map(Number);
  const H = +arg(argv, 'H', '16'), D = +arg(argv, 'D', '128'), nDocs = +arg(argv, 'docs', '16');
  const [dev] = await acquireDevices(await nodeGPU(), 1);
  const rows: Row[] = [];
  const checks: Record<string, number> = {};
  const save = () => writeFileSync(join(out, 'mask.json'), JSON.stringify({ kind: 'flashring.mask-bench', adapter: dev.adapter.description, W, DOC, H, D, checks, rows }, null, 1));
  try {
    const paths: KernelPath[] = dev.hasSubgroupMatrix && dev.hasF16 ? ['scalar', 'subgroup-matrix'] : ['scalar'];
    const cu = (n: number, len: number) => Int32Array.from({ length: n + 1 }, (_, i) => i * len);
    for (const path of paths) {
      const smallDocs = { cuQ: Int32Array.from([0, 1, 100, 100, 170, 300]), cuK: Int32Array.from([0, 1, 100, 100, 170, 300]) };
      for (const [name, o] of [['window', { causal: true, window: [40, 0] }], ['docs', { causal: true, docs: smallDocs }], ['docs+window', { causal: true, window: [17, 3], docs: smallDocs }]] as const) {
        checks[`${path} ${name}`] = await spotCheck(dev, path, o as AttentionOptions);
        console.log(`check ${path} ${name}: max error / tolerance ${checks[`${path} ${name}`].toFixed(3)}`);
      }
      save();
      if (Object.entries(checks).some(([k, v]) => k.startsWith(path) && !(v <= 1))) { console.log(`${path}: fails the f16 contract, not timed`); continue; }
      for (const N of Ns) {
        const s: AttentionShape = { B: 1, Hq: H, Hkv: H, Nq: N, Nk: N, D };
        const o: AttentionOptions = { causal: true, window: [W, 0] };
        rows.push(row(`window ${W}`, path, s, o, 1, await time(dev, path, s, o, reps)));
        console.log(JSON.stringify(rows.at(-1)));
        save();
      }
      const packed: AttentionShape = { B: 1, Hq: H, Hkv: H, Nq: DOC * nDocs, Nk: DOC * nDocs, D };
      const po: AttentionOptions = { causal: true, docs: { cuQ: cu(nDocs, DOC), cuK: cu(nDocs, DOC) } };
      rows.push(row(`packed ${nDocs}x${DOC}`, path, packed, po, nDocs, await time(dev, path, packed, po, reps)));
      const single: AttentionShape = { ...packed, Nq: DOC, Nk: DOC };
      const [f, b] = await time(dev, path, single, { causal: true }, reps);
      rows.push(row(`one by one ${nDocs}x${DOC}`, path, single, { causal: true }, nDocs, [f * nDocs, b * nDocs]));
      rows.at(-1)!.N = DOC * nDocs;
      rows.at(-1)!.usPerToken = ((f + b) * 1e3) / DOC;
      rows.at(-1)!.fwdTflops /= nDocs;
      rows.at(-1)!.bwdTflops /= nDocs;
      save();
    }
    console.log(`\n== masks on ${dev.adapter.description}: causal f16, H=${H}, D=${D}; fwd+bwd time per token (µs) ==`);
    console.log('path             kind                  N        fwd ms    bwd ms    fwd TF/s  bwd TF/s  µs/token  vs first');
    for (const path of paths) {
      const mine = rows.filter((r) => r.path === path);
      const base = mine.find((r) => r.kind.startsWith('window'))?.usPerToken;
      const pack = mine.find((r) => r.kind.startsWith('one by one'))?.usPerToken;
      for (const r of mine) {
        const ref = r.kind.startsWith('window') ? base : pack;
        console.log(`${path.padEnd(16)} ${r.kind.padEnd(20)} ${String(r.N).padStart(7)}  ${r.fwdMs.toFixed(2).padStart(8)}  ${r.bwdMs.toFixed(2).padStart(8)}  ${r.fwdTflops.toFixed(1).padStart(8)}  ${r.bwdTflops.toFixed(1).padStart(8)}  ${r.usPerToken.toFixed(3).padStart(8)}  ${ref ? (r.usPerToken / ref).toFixed(3) : '-'}`);
      }
    }
    return 0;
  } finally {
    save();
    dev.destroy();
  }
}
