/**
 * `flashring bench` / `npm run bench`: the headless benchmark. Kernel sweep, then ring sweep;
 * progress on stderr, a summary table at the end, and results (adapter, date, command, shapes)
 * as JSON and CSV under --out. `--peer FILE` (JSON from bench/peers/torch_sdpa.py, run in the
 * same session on the same GPU) adds flashring/PyTorch ratios.
 */
import { robustShaders } from '../src/gpu/node.js';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { acquireDevices, adapterName, FlashDevice } from '../src/gpu/device.js';
import { nodeGPU } from '../src/gpu/node.js';
import { InputError } from '../src/errors.js';
import { envPin } from '../src/kernels/env.js';
import { Precision } from '../src/kernels/precision.js';
import { LAYOUTS } from '../src/ring/schedule.js';
import { MAX_RANKS } from '../src/cli/ringArgs.js';
import { KernelRow, spotCheck, timeKernels } from './kernels.js';
import { RingRow, ringPoint } from './ring.js';
import { CeilingRow, gemmCeiling, gemmCeilingF32 } from './gemm.js';
import { memorySweep } from './memory.js';
import { CsvRow, measuredRows, parseCsv } from '../src/memory/csv.js';
import { checkOutputDir, numberArg, parseCommand } from '../src/cli/args.js';

const HELP = `usage: flashring bench [options]   (npm run bench -- [options])
  --quick               small sizes, about 20 s on a 2-core CPU (lavapipe)
  --N LIST              sequence lengths for the kernel sweep (default 1024,4096,16384; quick 128,256)
  --D LIST              head dims (default 64,128; quick 64)
  --heads H --batch B   (default 16 and 1; quick 2 and 1)
  --precision LIST      f32,f16 (default: every path the adapter has)
  --causal LIST         false,true (default both)
  --reps K              timed repeats, median reported (default 10; quick 3)
  --ring-R LIST         ring sizes (default 1,2,4,8; quick 1,2,4)
  --ring-N LIST         ring sequence lengths (default 4096,16384; quick 256)
  --layouts LIST        ring layouts (default contiguous,zigzag,striped)
  --no-ring             skip the ring sweep
  --no-kernels          skip the kernel sweep
  --no-memory           skip the memory sweep (activation_memory.csv/.json/.png)
  --memory-preset P     model of the memory sweep (default seed-32L-4096h)
  --memory-tp T         tensor-parallel size of the memory sweep (default 8, with sequence parallelism)
  --hbm-gib G           HBM line of the memory plot (default 80)
  --measured FILE       activation_memory.csv of measured points drawn over the model's lines
  --ceiling             also time GEMMs over several tilings: a plain-WGSL f32 one (shaders/gemm_f32.wgsl,
                        the portable kernels' yardstick) and, where the device has subgroup matrices,
                        tensor-core ones (shaders/gemm_sgmm*.wgsl: staged, padded double-buffered,
                        direct from storage): what the device reaches at all
  --ceiling-size S      its M = N = K (default 8192; quick 512; a multiple of 256)
  --peer FILE           PyTorch peer results (bench/peers/torch_sdpa.py) for ratios
  --out DIR             results folder (default bench/out)`;

const list = (s: string | undefined, d: string) => (s ?? d).split(',').map((x) => x.trim()).filter(Boolean);
const nums = (s: string | undefined, d: string, name: string, max = 2 ** 31) => {
  const xs = list(s, d);
  if (!xs.length) throw new InputError(`--${name} needs at least one value, got '${s}'`);
  return xs.map((x) => {
    try {
      return numberArg(name, x, { integer: true, min: 1, max, what: `a list of positive integers${max < 2 ** 31 ? ` up to ${max}` : ''}` });
    } catch {
      throw new InputError(`--${name}: '${x}' is not a positive integer${max < 2 ** 31 ? ` up to ${max}` : ''}`);
    }
  });
};
/** A comma-separated list whose entries must be among `allowed`. */
const choices = <T extends string>(s: string | undefined, d: string, name: string, allowed: readonly T[]): T[] => {
  const xs = list(s, d);
  for (const x of xs) if (!allowed.includes(x as T)) throw new InputError(`--${name}: '${x}' is not one of ${allowed.join(', ')}`);
  if (!xs.length) throw new InputError(`--${name} needs at least one value, got '${s}'`);
  return xs as T[];
};

function progress(label: string, i: number, n: number): void {
  const w = 24, f = Math.round((w * i) / n);
  process.stderr.write(`\r[${'#'.repeat(f)}${'.'.repeat(w - f)}] ${i}/${n} ${label.padEnd(60).slice(0, 60)}`);
  if (i === n) process.stderr.write('\n');
}

/** Whether Dawn's robustness transform was on for the kernels (the `robust` column; src/gpu/node.ts). */
const ROBUST = robustShaders();

interface PeerRow { pass: string; M?: number; N: number; D: number; H: number; B: number; causal: boolean; dtype: string; backend: string; ms: number; tflops: number }

export async function benchCommand(argv: string[]): Promise<number> {
  const { values } = parseCommand('bench', argv, {
      quick: { type: 'boolean' }, N: { type: 'string' }, D: { type: 'string' }, heads: { type: 'string' }, batch: { type: 'string' },
      precision: { type: 'string' }, causal: { type: 'string' }, reps: { type: 'string' }, 'ring-R': { type: 'string' },
      'ring-N': { type: 'string' }, layouts: { type: 'string' }, 'no-ring': { type: 'boolean' }, 'no-kernels': { type: 'boolean' }, 'no-memory': { type: 'boolean' }, 'memory-preset': { type: 'string' },
      'memory-tp': { type: 'string' }, 'hbm-gib': { type: 'string' }, measured: { type: 'string' }, peer: { type: 'string' },
      ceiling: { type: 'boolean' }, 'ceiling-size': { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const q = !!values.quick;
  const Ns = nums(values.N, q ? '128,256' : '1024,4096,16384', 'N');
  const Ds = nums(values.D, q ? '64' : '64,128', 'D');
  const [H] = nums(values.heads, q ? '2' : '16', 'heads');
  const [B] = nums(values.batch, '1', 'batch');
  const reps = nums(values.reps, q ? '3' : '10', 'reps')[0];
  const causals = choices(values.causal, 'false,true', 'causal', ['false', 'true'] as const).map((x) => x === 'true');
  const ringRs = nums(values['ring-R'], q ? '1,2,4' : '1,2,4,8', 'ring-R', MAX_RANKS);
  const ringNs = nums(values['ring-N'], q ? '256' : '4096,16384', 'ring-N');
  if (!values['no-ring'] && Math.max(...ringRs) > Math.min(...ringNs))
    throw new InputError(`--ring-R ${Math.max(...ringRs)} is more ranks than the ${Math.min(...ringNs)} tokens of --ring-N ${Math.min(...ringNs)}`);
  const layouts = choices(values.layouts, LAYOUTS.join(','), 'layouts', LAYOUTS);
  const ceilingSize = nums(values['ceiling-size'], q ? '512' : '8192', 'ceiling-size')[0];
  if (ceilingSize % 256 !== 0) throw new InputError(`--ceiling-size must be a multiple of 256, got ${ceilingSize}`);
  const wanted = values.precision === undefined ? null : choices(values.precision, '', 'precision', ['f32', 'f16'] as const);
  const outDir = values.out ?? 'bench/out';
  await checkOutputDir('out', outDir);
  let peers: PeerRow[] = [];
  if (values.peer) {
    try {
      peers = JSON.parse(await readFile(values.peer, 'utf8')).results;
    } catch (e) {
      throw new InputError(`--peer ${values.peer}: cannot read PyTorch peer results (${(e as Error).message}); run bench/peers/torch_sdpa.py first`);
    }
  }

  let memoryNote = '';
  if (!values['no-memory']) {
    const hbm = numberArg('hbm-gib', values['hbm-gib'] ?? '80', { above: 0, max: 1e6, what: 'a positive number of GiB' });
    const tp = nums(values['memory-tp'], '8', 'memory-tp')[0];
    await mkdir(outDir, { recursive: true });
    let measured: CsvRow[] = [];
    if (values.measured) {
      try {
        measured = measuredRows(parseCsv(await readFile(values.measured, 'utf8'), values.measured), values.measured).rows;
      } catch (e) {
        throw new InputError(`--measured ${values.measured}: ${(e as Error).message}`);
      }
    }
    const m = await memorySweep(outDir, values['memory-preset'] ?? 'seed-32L-4096h', { tensorParallel: tp, sequenceParallel: tp > 1 }, hbm, measured);
    memoryNote = `memory sweep: ${m.csv}, ${m.json}, ${m.png ?? `no PNG (${m.pngSkipped})`}\n  longest fitting sequence: ${Object.entries(m.oom).map(([k, v]) => `${k} ${v ?? 'none'}`).join('; ')}`;
    console.error(memoryNote);
  }
  const gpu = await nodeGPU();
  const devs: FlashDevice[] = await acquireDevices(gpu, Math.max(1, values['no-ring'] ? 1 : Math.max(...ringRs)));
  const dev = devs[0];
  const precisions: Precision[] = wanted ?? (dev.hasF16 ? ['f32', 'f16'] : ['f32']);
  if (precisions.includes('f16') && !dev.hasF16) {
    for (const d of devs) d.destroy();
    throw new InputError(`--precision f16 needs shader-f16, which ${adapterName(dev.adapter)} does not offer`);
  }
  const meta = {
    kind: 'flashring.bench', createdAt: new Date().toISOString(), adapter: adapterName(dev.adapter),
    adapterInfo: { vendor: dev.adapter.vendor, architecture: dev.adapter.architecture, device: dev.adapter.device },
    command: `flashring bench ${argv.join(' ')}`.trim(), node: process.version,
    flops: 'forward 4·B·H·N²·D, ×0.5 causal; backward ×2.5; forward+backward ×3.5',
  };
  const stamp = meta.createdAt.replace(/[:.]/g, '-');
  const peerOf = (r: KernelRow) =>
    peers.find((p) => p.pass === r.pass && p.N === r.N && p.D === r.D && p.H === r.H && p.B === r.B && p.causal === r.causal &&
      (r.precision === 'f16' ? p.dtype === 'float16' && p.backend === 'flash' : p.dtype === 'float32' && p.backend === 'efficient'));
  const withPeers = () => kernelRows.map((r) => {
    const p = peerOf(r);
    return { ...r, peerBackend: p ? `torch-${p.backend}-${p.dtype}` : '', peerTflops: p?.tflops ?? null, ratio: p ? r.tflops / p.tflops : null };
  });
  /** Writes JSON and CSVs; called after every point so an interrupted run keeps what it measured. */
  const save = async () => {
    const rows = withPeers();
    await mkdir(outDir, { recursive: true });
    const json = { ...meta, kernels: rows, ring: ringRows, ceiling: ceilingRows, ceilingPeer: gemmPeer ?? null, failures, peerFile: values.peer ?? null };
    await writeFile(join(outDir, `bench-${stamp}.json`), JSON.stringify(json, null, 1));
    const cols = ['pass', 'B', 'H', 'N', 'D', 'causal', 'precision', 'path', 'tiles', 'robust', 'ms', 'tflops', 'timer', 'checkErr', 'peerBackend', 'peerTflops', 'ratio'] as const;
    await writeFile(join(outDir, `bench-${stamp}-kernels.csv`), [cols.join(','), ...rows.map((r) => cols.map((c) => c === 'robust' ? String(ROBUST) : String(r[c] ?? '')).join(','))].join('\n') + '\n');
    const rcols = ['R', 'layout', 'N', 'B', 'H', 'D', 'causal', 'precision', 'fwdWallMs', 'bwdWallMs', 'gpuKernelMs', 'unhiddenFraction', 'overlapEfficiency', 'bytesMoved', 'imbalance'] as const;
    await writeFile(join(outDir, `bench-${stamp}-ring.csv`), [rcols.join(','), ...ringRows.map((r) => rcols.map((c) => String(r[c] ?? '')).join(','))].join('\n') + '\n');
    return rows;
  };
  console.error(`bench on ${meta.adapter}${dev.isCPU ? ' (CPU adapter: timings are not GPU figures)' : ''}`);
  const kernelRows: KernelRow[] = [];
  const ringRows: RingRow[] = [];
  const ceilingRows: CeilingRow[] = [];
  const gemmPeer = peers.find((p) => p.pass === 'gemm' && p.N === ceilingSize);
  const failures: string[] = [];
  try {
    // Correctness first.
    const checks = new Map<string, number>();
    // A timing profile (bench/profile-portable.sh) leaves steps out: its results are wrong by design,
    // and its speed is reported with the error it has.
    const profile = envPin('FLASHRING_PORTABLE_FWD_SKIP');
    // Only the portable forward leaves steps out: anything else that failed its check would hide here.
    if (profile && envPin('FLASHRING_PATH') !== 'scalar') throw new InputError('FLASHRING_PORTABLE_FWD_SKIP profiles the portable forward: set FLASHRING_PATH=scalar too');
    if (profile) console.error(`timing profile (FLASHRING_PORTABLE_FWD_SKIP=${profile}): speeds reported whatever the check says`);
    if (!values['no-kernels']) for (const D of Ds) for (const p of precisions) for (const c of causals) {
      const r = await spotCheck(dev, D, p, c);
      if (!r.ok && profile) checks.set(`${D}:${p}:${c}`, r.err);
      else if (!r.ok) failures.push(`D=${D} ${p} causal=${c}: error ${r.err.toExponential(2)} over tolerance — no speed reported`);
      else checks.set(`${D}:${p}:${c}`, r.err);
    }
    const jobs = Ns.flatMap((N) => Ds.flatMap((D) => precisions.flatMap((p) => causals.map((c) => ({ N, D, p, c })))))
      .filter((j) => checks.has(`${j.D}:${j.p}:${j.c}`));
    for (const [i, j] of jobs.entries()) {
      progress(`kernels N=${j.N} D=${j.D} ${j.p} causal=${j.c}`, i, jobs.length);
      try {
        kernelRows.push(...(await timeKernels(dev, { B, Hq: H, Hkv: H, Nq: j.N, Nk: j.N, D: j.D }, j.c, j.p, reps, checks.get(`${j.D}:${j.p}:${j.c}`)!)));
        await save();
      } catch (e) {
        failures.push(`kernels N=${j.N} D=${j.D} ${j.p} causal=${j.c}: ${(e as Error).message}`);
      }
    }
    progress('kernels done', jobs.length, jobs.length);
    if (values.ceiling) {
      // The portable f32 GEMM runs everywhere; the tensor-core one where subgroup matrices exist.
      ceilingRows.push(...(await gemmCeilingF32(dev, ceilingSize, reps, (i, n, label) => progress(`ceiling GEMM ${label}`, i, n))));
      if (!dev.hasSubgroupMatrix) failures.push('ceiling: the adapter has no chromium-experimental-subgroup-matrix (f32 GEMM only)');
      else ceilingRows.push(...(await gemmCeiling(dev, ceilingSize, reps, (i, n, label) => progress(`ceiling GEMM ${label}`, i, n))));
      for (const r of ceilingRows) if (r.error && !/needs \d+|not a multiple/.test(r.error)) failures.push(`ceiling ${r.tiling}: ${r.error}`);
      await save();
    }
    if (!values['no-ring']) {
      const rp = precisions.includes('f16') ? 'f16' : 'f32';
      const rjobs = ringNs.flatMap((N) => ringRs.flatMap((R) => layouts.map((layout) => ({ N, R, layout }))));
      let stopAt = Infinity;
      for (const [i, j] of rjobs.entries()) {
        progress(`ring N=${j.N} R=${j.R} ${j.layout}`, i, rjobs.length);
        if (j.N >= stopAt) continue;
        try {
          await mkdir(join(outDir, 'timelines'), { recursive: true });
          ringRows.push(await ringPoint(devs.slice(0, j.R), { B, Hq: H, Hkv: H, Nq: j.N, Nk: j.N, D: Ds[0] }, j.layout, true, rp, true,
            join(outDir, 'timelines', `ring-${stamp}-R${j.R}-${j.layout}-N${j.N}.timeline.json`)));
          await save();
        } catch (e) {
          failures.push(`ring N=${j.N} R=${j.R} ${j.layout}: ${(e as Error).message}`);
          if (/memory|OutOfMemory|exceeds|allocation/i.test((e as Error).message)) stopAt = j.N;
        }
      }
      progress('ring done', rjobs.length, rjobs.length);
    }
  } finally {
    for (const d of devs) d.destroy();
  }

  const rows = await save();
  console.log(`\nflashring bench — ${meta.adapter} — ${meta.createdAt}`);
  console.log('pass     N      D    causal prec path  ms         TFLOP/s  peer TFLOP/s  ratio');
  for (const r of rows)
    console.log(`${r.pass.padEnd(8)} ${String(r.N).padEnd(6)} ${String(r.D).padEnd(4)} ${String(r.causal).padEnd(6)} ${r.precision}  ${r.path === 'scalar' ? 'sc ' : 'tc '}  ${r.ms.toFixed(3).padStart(9)}  ${r.tflops.toFixed(3).padStart(7)}  ${r.peerTflops === null ? '     -' : r.peerTflops.toFixed(1).padStart(12)}  ${r.ratio === null ? '-' : r.ratio.toFixed(3)}`);
  if (ceilingRows.length) {
    console.log(`\nceiling: GEMM ${ceilingSize}³, plain-WGSL f32 ('f32 …') and f16 on subgroup matrices (f32 accumulation)${gemmPeer ? `; PyTorch f16 matmul ${gemmPeer.tflops.toFixed(1)} TFLOP/s` : ''}`);
    for (const r of ceilingRows)
      console.log(`  ${r.tiling.padEnd(46)} ${r.tflops === null ? `- (${r.error})` : `${r.tflops.toFixed(1).padStart(7)} TFLOP/s${gemmPeer ? `  ratio ${(r.tflops / gemmPeer.tflops).toFixed(3)}` : ''}  err ${r.err!.toExponential(1)}`}`);
  }
  if (ringRows.length) {
    console.log('\nring (causal, fwd+bwd)  R layout      N      fwd ms    bwd ms    gpu kernels ms  unhidden  overlap  imbalance');
    for (const r of ringRows)
      console.log(`                        ${r.R} ${r.layout.padEnd(11)} ${String(r.N).padEnd(6)} ${r.fwdWallMs.toFixed(1).padStart(8)}  ${(r.bwdWallMs ?? 0).toFixed(1).padStart(8)}  ${(r.gpuKernelMs ?? NaN).toFixed(1).padStart(14)}  ${(100 * r.unhiddenFraction).toFixed(1).padStart(6)}%  ${(100 * r.overlapEfficiency).toFixed(1).padStart(6)}%  ${r.imbalance.toFixed(3)}`);
  }
  if (memoryNote) console.log(`\n${memoryNote}`);
  if (failures.length) console.log(`\nfailures:\n  ${failures.join('\n  ')}`);
  console.log(`\nresults: ${join(outDir, `bench-${stamp}.json`)} (+ -kernels.csv, -ring.csv)`);
  return failures.length ? 1 : 0;
}
