/**
 * The GEMM ceiling probe, a bench of its own (not part of `flashring bench`, nor of the product):
 *   node bench/ceiling/run.mjs [--quick] [--size S] [--reps K] [--peer FILE] [--f32-only] [--out DIR]
 *   (on the GPU host: bash .gpu/enter.sh node bench/ceiling/run.mjs; --help for the options)
 * It times GEMMs over several tilings: a plain-WGSL f32 one (shaders/gemm_f32.wgsl here, the
 * portable attention kernels' yardstick) and, where the device has subgroup matrices,
 * tensor-core ones (shaders/gemm_sgmm*.wgsl: staged, padded double- and triple-buffered, direct
 * from storage): what the device reaches at all through WebGPU. Each tiling is first checked
 * against float64 (ceiling.ts). Kernel pins (FLASHRING_PATH, …) do not apply: these are not the
 * attention kernels. Results: a table on stdout, JSON and CSV under --out.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireDevices, adapterName } from '../../src/gpu/device.js';
import { nodeGPU } from '../../src/gpu/node.js';
import { InputError } from '../../src/errors.js';
import { numberArg, parseCommand } from '../../src/cli/args.js';
import { OutputPlan } from '../../src/cli/files.js';
import { CeilingRow, gemmCeiling, gemmCeilingF32 } from './ceiling.js';
import { PeerGemm, PeerGemms, gemmPeers } from '../../src/bench/peerGemm.js';

const HELP = `usage: node bench/ceiling/run.mjs [options]
  --quick        M = N = K = 512, 3 repeats (a CPU adapter: seconds to minutes)
  --size S       M = N = K (default 8192; a multiple of 256)
  --reps K       timed repeats, median reported (default 10)
  --peer FILE    PyTorch peer results (bench/peers/torch_sdpa.py --gemm): its f16 matmul for the tensor-core
                 tilings' ratios, its f32 one (TF32 off) for the f32 tilings'
  --f32-only     the plain-WGSL f32 tilings only, not the tensor-core ones
  --out DIR      results folder (default bench/out/ceiling)`;

const OPTIONS = {
  quick: { type: 'boolean' }, 'f32-only': { type: 'boolean' }, size: { type: 'string' }, reps: { type: 'string' }, peer: { type: 'string' }, out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The PyTorch matmuls of the same size in a peer file (bench/peers/torch_sdpa.py --gemm), if any. */
async function peerGemms(path: string | undefined, size: number): Promise<PeerGemms> {
  if (path === undefined) return {};
  try {
    return gemmPeers(JSON.parse(await readFile(path, 'utf8')).results as PeerGemm[], size);
  } catch (e) {
    throw new InputError(`--peer ${path}: cannot read PyTorch peer results (${(e as Error).message})`);
  }
}

/** The table printed at the end: one line per tiling, with the ratio to PyTorch's matmul of its arithmetic where the peer file has it. */
function table(rows: CeilingRow[], size: number, adapter: string, peer: PeerGemms): string {
  const peers = [peer.f16 && `PyTorch f16 matmul ${peer.f16.tflops.toFixed(1)} TFLOP/s`, peer.f32 && `f32 matmul, TF32 off, ${peer.f32.tflops.toFixed(1)}`].filter(Boolean);
  const head = `ceiling on ${adapter}: GEMM ${size}³, plain-WGSL f32 ('f32 …') and f16 on subgroup matrices (f32 accumulation)${peers.length ? `; ${peers.join(', ')}` : ''}`;
  const line = (r: CeilingRow) => {
    if (r.tflops === null) return `  ${r.tiling.padEnd(46)} - (${r.error})`;
    const p = r.tiling.startsWith('f32 ') ? peer.f32 : peer.f16;
    return `  ${r.tiling.padEnd(46)} ${r.tflops.toFixed(1).padStart(7)} TFLOP/s${p ? `  ratio ${(r.tflops / p.tflops).toFixed(3)}` : ''}  err ${r.err!.toExponential(1)}`;
  };
  return [head, ...rows.map(line)].join('\n');
}

export async function ceilingBench(argv: string[]): Promise<number> {
  const { values } = parseCommand('ceiling', argv, OPTIONS, false, 'node bench/ceiling/run.mjs --help');
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const size = numberArg('size', values.size ?? (values.quick ? '512' : '8192'), { integer: true, min: 256, max: 65536, what: 'a multiple of 256' });
  if (size % 256 !== 0) throw new InputError(`--size must be a multiple of 256, got ${size}`);
  const reps = numberArg('reps', values.reps ?? (values.quick ? '3' : '10'), { integer: true, min: 1, max: 10000, what: 'a positive number of repeats' });
  const outDir = values.out ?? 'bench/out/ceiling';
  const plan = await OutputPlan.make(values.peer ? [{ flag: 'peer', path: values.peer }] : [], [{ flag: 'out', path: outDir, kind: 'dir', names: [] }]);
  const peer = await peerGemms(values.peer, size);
  const [dev] = await acquireDevices(await nodeGPU(), 1);
  const progress = (i: number, n: number, label: string) => process.stderr.write(`\r${i}/${n} ${label.padEnd(60).slice(0, 60)}${i === n ? '\n' : ''}`);
  const rows: CeilingRow[] = [];
  try {
    // The portable f32 GEMM runs everywhere; the tensor-core one where subgroup matrices exist.
    rows.push(...(await gemmCeilingF32(dev, size, reps, progress)));
    if (values['f32-only']) { /* asked for the f32 tilings only */ } else if (dev.hasSubgroupMatrix) rows.push(...(await gemmCeiling(dev, size, reps, progress)));
    else console.error('the adapter has no chromium-experimental-subgroup-matrix: the f32 GEMM only');
  } finally {
    dev.destroy();
  }
  const adapter = adapterName(dev.adapter);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const cols = ['M', 'N', 'K', 'tiling', 'ms', 'tflops', 'err', 'error'] as const;
  await plan.write([
    { path: join(outDir, `ceiling-${stamp}.json`), data: JSON.stringify({ kind: 'flashring.ceiling', adapter, command: `node bench/ceiling/run.mjs ${argv.join(' ')}`.trim(), rows, peer: peer.f16 ?? null, peerF32: peer.f32 ?? null }, null, 1) },
    { path: join(outDir, `ceiling-${stamp}.csv`), data: [cols.join(','), ...rows.map((r) => cols.map((c) => JSON.stringify(r[c] ?? '')).join(','))].join('\n') + '\n' },
  ]);
  console.log(table(rows, size, adapter, peer));
  const failed = rows.filter((r) => r.error && !/needs \d+|not a multiple/.test(r.error));
  for (const r of failed) console.log(`failed: ${r.tiling}: ${r.error}`);
  return failed.length ? 1 : 0;
}
