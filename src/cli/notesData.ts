/**
 * The figures `flashring notes` quotes, each read from a committed results file (bench/results/)
 * or computed by the memory model (src/memory/) when the notes are generated: nothing here is a
 * typed-in measurement. SOURCES names every file read; a file missing or lacking the row asked
 * for is one line naming it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.js';
import { comparePoints, sourceModel, type Comparison } from '../memory/compare.js';
import { parseCsv, type CsvRow } from '../memory/csv.js';
import { DEFAULT_PARALLEL, DEFAULT_SEQ_LENGTHS, GIB, PRESETS, memoryBreakdown, oomPoints, defaultLines, defaultRecompute, sweep, type ModelConfig } from '../memory/model.js';
import { configFromFlags } from './memory.js';

const R = 'bench/results';
/** Every file the notes read, relative to the repository root. */
export const SOURCES = {
  // The tensor-core kernels as they ship, in the newest same-call run on the H200 (2026-12-05,
  // bench/results/2026-12-05-next-h200, part a, tc-r0: robustness off).
  tensorCores: [`${R}/2026-12-05-next-h200/a/tc-r0/bench-2026-12-05T04-12-28-081Z-kernels.csv`],
  // The portable kernels as they ship (fma chains, 32411d4), robustness on as browsers run them, against PyTorch's
  // memory-efficient f32 in the same call and cuBLAS's f32 GEMM with TF32 off (gemmShare): an H100 (2026-12-06,
  // bench/results/2026-12-06-units-h100, call 1; f32 and f16 storage); and the same f32 kernels on the H200 against
  // PyTorch's f32 (2026-12-06, bench/results/2026-12-06-h200-owed: its peer file has no GEMM, so no gemmShare).
  portableUnits: `${R}/2026-12-06-units-h100/call1/p32/bench-2026-12-06T01-27-25-434Z-kernels.csv`,
  portableUnitsF16: `${R}/2026-12-06-units-h100/call1/p16/bench-2026-12-06T01-27-52-502Z-kernels.csv`,
  portableH200: `${R}/2026-12-06-h200-owed/call/fma/p32-ship/bench-2026-12-06T07-19-55-607Z-kernels.csv`,
  gemm: [`${R}/gemm-h200-2026-12-01/bench-2026-12-01T06-23-37-296Z.json`, `${R}/gemm-h200-2026-12-01/bench-2026-12-01T06-35-38-514Z.json`],
  matmulPeer: `${R}/h200-2026-11-30T06-56-same-call-v3b/peer.json`,
  ring: `${R}/h200-2026-11-30T04-31-first/bench-2026-11-30T04-42-43-812Z-ring.csv`,
  torchcp: `${R}/torchcp-2xh200-2026-11-30/activation_memory_measured.csv`,
  torchcpPoints: `${R}/torchcp-2xh200-2026-11-30/points.jsonl`,
  torchcpFirstModel: `${R}/torchcp-2xh200-2026-11-30/model_vs_measured.md`,
  memoryH200: `${R}/memory-h200-2026-12-01/activation_memory_measured.csv`,
  // flashring's own p2p zigzag ring, R ranks sharing one H200 (one-device mode): summed kernel time against R = 1
  // (2026-12-05, the real ring's sweep), and FlashAttention-2 on the same split, its backward timed alone (2026-12-03).
  ringSweep: `${R}/2026-12-05-next-h200/b/sweep-new/cp-sweep.json`,
  ringPeer: `${R}/peer-steps-fresh-h200-2026-12-03/peer-steps-fresh.json`,
} as const;

/** The bench's float64 spot check (checkErr) runs at this N (src/bench/kernels.ts SPOT_CHECK_N; 67 since 2b7086d, 2026-12-02, before every run read here). */
export const SPOT_CHECK_N = 67;

export const sourceFiles = (): string[] => Object.values(SOURCES).flat();

const folderOf = (path: string) => path.split('/')[2];
const text = (root: string, path: string) => {
  try {
    return readFileSync(join(root, path), 'utf8');
  } catch (e) {
    throw new InputError(`notes: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
};

/** A bench CSV (no quoted fields) as rows of strings by column name. */
function table(root: string, path: string): Record<string, string>[] {
  const [head, ...lines] = text(root, path).trim().split('\n');
  const cols = head.split(',');
  return lines.map((l, i) => {
    const cells = l.split(',');
    if (cells.length !== cols.length) throw new InputError(`notes: ${path} line ${i + 2} has ${cells.length} fields, not ${cols.length}`);
    return Object.fromEntries(cols.map((c, j) => [c, cells[j]]));
  });
}

function one<T>(rows: T[], what: string, path: string): T {
  if (rows.length !== 1) throw new InputError(`notes: ${path} has ${rows.length} rows for ${what}, not one`);
  return rows[0];
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export interface KernelFigures {
  folder: string; runs: string[]; n: number; b: number; h: number;
  /** The folders whose float64 spot checks (N = 67, before each timed point) give errF32 and errF16. */
  errFolders: string[];
  /** [D=64, D=128]: flashring (mean of the runs) and the peer in the same call. */
  fwd: number[]; fwdBwd: number[]; peerFwd: number[]; peerFwdBwd: number[]; ratios: number[];
  errF32: number; errF16: number;
  /** The portable f32 forward as it ships (an H100): TFLOP/s, × the peer, × cuBLAS's f32 GEMM, at D = 64 and 128; on the H200: × its peer. */
  portable: { folder: string; fwd: number[]; ratio: number[]; gemmShare: number[]; h200: { folder: string; ratio: number[] } };
  gemm: { folder: string; tflops: number; m: number }; matmul: { folder: string; tflops: number };
}

/** The newest tensor-core figures (non-causal, N, B, H as the runs have them), their peer, and the checks. */
export function kernelFigures(root: string): KernelFigures {
  const runs = SOURCES.tensorCores.map((p) => ({ p, rows: table(root, p) }));
  const pick = (pass: string, d: number) => runs.map(({ p, rows }) => one(rows.filter((r) => r.pass === pass && +r.D === d && r.precision === 'f16' && r.causal === 'false'), `${pass} D=${d}`, p));
  const ds = [64, 128];
  const fwd = ds.map((d) => pick('fwd', d)), fb = ds.map((d) => pick('fwd+bwd', d));
  const tf = (rs: Record<string, string>[][]) => rs.map((r) => mean(r.map((x) => +x.tflops)));
  const peer = (rs: Record<string, string>[][]) => rs.map((r) => +r[0].peerTflops);
  const first = fwd[0][0];
  const errFiles = [...SOURCES.tensorCores, SOURCES.portableUnits, SOURCES.portableUnitsF16];
  const errs = errFiles.flatMap((p) => table(root, p));
  const err = (prec: string) => Math.max(...errs.filter((r) => r.precision === prec).map((r) => +r.checkErr));
  const k = { fwd: tf(fwd), fwdBwd: tf(fb), peerFwd: peer(fwd), peerFwdBwd: peer(fb) };
  return {
    folder: folderOf(SOURCES.tensorCores[0]), runs: SOURCES.tensorCores.map((p) => p.split('/').slice(3, -1).join('/')), n: +first.N, b: +first.B, h: +first.H, ...k,
    errFolders: [...new Set(errFiles.map(folderOf))],
    ratios: [...k.fwd.map((x, i) => x / k.peerFwd[i]), ...k.fwdBwd.map((x, i) => x / k.peerFwdBwd[i])],
    errF32: err('f32'), errF16: err('f16'), portable: portableFigures(root), ...gemmFigures(root),
  };
}

/** The portable f32 forward as it ships, Dawn's robustness on (as browsers run it), not causal: its ratios to the peer and to cuBLAS's f32 GEMM. */
function portableFigures(root: string): KernelFigures['portable'] {
  const forwards = (p: string) => {
    const rows = table(root, p);
    const at = (d: number) => one(rows.filter((r) => r.pass === 'fwd' && +r.D === d && r.precision === 'f32' && r.robust === 'true' && r.causal === 'false'), `robust f32 fwd D=${d}, not causal`, p);
    return [at(64), at(128)];
  };
  const rs = forwards(SOURCES.portableUnits), h200 = forwards(SOURCES.portableH200);
  return {
    folder: folderOf(SOURCES.portableUnits), fwd: rs.map((r) => +r.tflops), ratio: rs.map((r) => +r.ratio), gemmShare: rs.map((r) => +r.gemmShare),
    h200: { folder: folderOf(SOURCES.portableH200), ratio: h200.map((r) => +r.ratio) },
  };
}

function gemmFigures(root: string): Pick<KernelFigures, 'gemm' | 'matmul'> {
  type Ceiling = { M: number; N: number; K: number; tflops: number };
  const all = SOURCES.gemm.flatMap((p) => (JSON.parse(text(root, p)).ceiling ?? []) as Ceiling[]);
  const best = all.reduce((a, b) => (b.tflops > a.tflops ? b : a));
  type Peer = { pass: string; backend: string; M?: number; tflops: number };
  const mm = (JSON.parse(text(root, SOURCES.matmulPeer)).results as Peer[]).filter((r) => r.backend === 'matmul' && r.M === best.M);
  return { gemm: { folder: folderOf(SOURCES.gemm[0]), tflops: best.tflops, m: best.M }, matmul: { folder: folderOf(SOURCES.matmulPeer), tflops: one(mm, `matmul ${best.M}`, SOURCES.matmulPeer).tflops } };
}

/** Causal imbalance per layout and R from the first ring sweep (the schedule's exact counts). */
export function imbalance(root: string): { folder: string; n: number; contiguous: Map<number, number>; balanced: Map<string, number> } {
  const rows = table(root, SOURCES.ring).filter((r) => +r.R > 1);
  const contiguous = new Map(rows.filter((r) => r.layout === 'contiguous').map((r) => [+r.R, +r.imbalance]));
  const balanced = new Map<string, number>();
  for (const r of rows.filter((x) => x.layout !== 'contiguous')) balanced.set(r.layout, Math.max(balanced.get(r.layout) ?? 0, +r.imbalance));
  return { folder: folderOf(SOURCES.ring), n: +rows[0].N, contiguous, balanced };
}

/** The ring's cost over one call, per R > 1: flashring's p2p sweep (one device) and FlashAttention-2 on the same split. */
export interface RingCost {
  folder: string; peerFolder: string; n: number; h: number; d: number; R: number[]; ours: number[]; peer: number[];
  /** One causal call of N (R = 1), forward + backward kernel ms: flashring's, FlashAttention-2's. */
  oursR1Ms: number; peerR1Ms: number;
}

export function ringCost(root: string): RingCost {
  const sweep = JSON.parse(text(root, SOURCES.ringSweep)) as { rows: { R: number; scheme: string; layout: string; N: number; H: number; D: number; vsR1: number; kernelMs: number }[] };
  const rows = sweep.rows.filter((r) => r.scheme === 'p2p' && r.layout === 'zigzag' && r.R > 1).sort((a, b) => a.R - b.R);
  const peer = (JSON.parse(text(root, SOURCES.ringPeer)) as { results: { N: number; R: number; ratio: number; fwdMs: number; bwdMs: number }[] }).results;
  const at = (r: { R: number; N: number }) => peer.find((x) => x.R === r.R && x.N === r.N);
  const oursOne = sweep.rows.find((r) => r.scheme === 'p2p' && r.R === 1), peerOne = rows.length ? at({ R: 1, N: rows[0].N }) : undefined;
  if (!rows.length || rows.some((r) => !at(r)) || !oursOne || !peerOne) throw new InputError(`notes: ${SOURCES.ringSweep} and ${SOURCES.ringPeer} lack the same p2p points (R = 1 and R > 1)`);
  return {
    folder: folderOf(SOURCES.ringSweep), peerFolder: folderOf(SOURCES.ringPeer), n: rows[0].N, h: rows[0].H, d: rows[0].D,
    R: rows.map((r) => r.R), ours: rows.map((r) => r.vsR1), peer: rows.map((r) => at(r)!.ratio),
    oursR1Ms: oursOne.kernelMs, peerR1Ms: peerOne.fwdMs + peerOne.bwdMs,
  };
}

export interface SeedFigures {
  layers: number; hidden: number; heads: number; seq: number; tp: number;
  /** Stored activations (GiB) without / with FlashAttention (TP only). */
  actNoFlash: number; actFlash: number;
  /** With FlashAttention: activations and total without / with sequence parallelism. */
  actSp: number; totalNoSp: number; totalSp: number;
  hbm: number; longest: Record<string, number | null>; recompute: string;
  /** Without FlashAttention (TP only): the longest swept sequence that fits in hbm, and the next one swept (null: none). */
  noFlash: { longest: number | null; next: number | null };
  /** The sweep's longest sequence: a line that fits there may fit longer ones. */
  sweepEnd: number;
}

/** The memory model's breakdown of `model` at `seqLength` tokens and TP = `tp`, with or without FlashAttention and SP. */
const breakdownAt = (model: ModelConfig, seqLength: number, tp: number, flashAttention: boolean, sequenceParallel: boolean) =>
  memoryBreakdown(model, { ...DEFAULT_PARALLEL, seqLength, tensorParallel: tp, flashAttention, sequenceParallel });

/** The memory model on the seed's preset (Megatron-LM stack) at `seq` tokens and TP = `tp`. */
export function seedFigures(seq: number, tp: number, hbm: number): SeedFigures {
  const { model } = PRESETS['seed-32L-4096h'];
  const at = (flashAttention: boolean, sequenceParallel: boolean) => breakdownAt(model, seq, tp, flashAttention, sequenceParallel);
  const [noFa, fa, sp] = [at(false, false), at(true, false), at(true, true)];
  const pts = sweep(model, { ...DEFAULT_PARALLEL, tensorParallel: tp, sequenceParallel: true }, DEFAULT_SEQ_LENGTHS, defaultLines(model), hbm);
  return {
    layers: model.numLayers, hidden: model.hiddenSize, heads: model.numAttentionHeads, seq, tp,
    actNoFlash: noFa.activationBytes / GIB, actFlash: fa.activationBytes / GIB, actSp: sp.activationBytes / GIB,
    totalNoSp: fa.totalBytes / GIB, totalSp: sp.totalBytes / GIB, hbm, longest: oomPoints(pts), recompute: defaultRecompute(model),
    noFlash: noFlashReach(model, tp, hbm), sweepEnd: Math.max(...DEFAULT_SEQ_LENGTHS) };
}

/** Without FlashAttention at TP = `tp` (no SP): the longest swept sequence that fits in `hbm` GiB, and the next one swept. */
function noFlashReach(model: ModelConfig, tp: number, hbm: number): SeedFigures['noFlash'] {
  const fits = (seqLength: number) => breakdownAt(model, seqLength, tp, false, false).totalBytes / GIB <= hbm;
  const lengths = [...DEFAULT_SEQ_LENGTHS].sort((a, b) => a - b);
  const first = lengths.findIndex((n) => !fits(n));
  if (first < 0) return { longest: lengths.at(-1)!, next: null };
  return { longest: first ? lengths[first - 1] : null, next: lengths[first] };
}

export interface TorchLine {
  label: string; cp: number; recompute: string;
  longest: CsvRow; oom: number | null; modelLongest: number; modelOom: number | null; modelOomFits: boolean | null;
}

export interface TorchFigures {
  folder: string; rows: CsvRow[]; engine: string; gpus: number; layers: number; hidden: number; heads: number; vocab: number; microBatch: number; hbm: number;
  lines: TorchLine[]; ddpGib: number;
  /** Peak saved by selective recompute at each CP's longest sequence; its iteration-time cost, smallest and largest. */
  saved: { cp: number; seq: number; fraction: number; model: { fraction: number; errorWith: number } | null }[]; costMin: number; costMax: number;
  /** Points compared, those that ran (with an error figure); the largest errors are of those. */
  points: number; ran: number; maxTotalError: number; maxActError: number; wrongVerdicts: number;
  first: { file: string; errMin: number; errMax: number; ooms: number; oomsCalledFits: number };
}

const MEASURED_ENGINE = /^measured: (torch \S+)/;
const GPU_COUNT = /\b(\d+)x NVIDIA /;

/** The PyTorch context-parallel runs (2×H200) and the memory model (`replay --compare --preset torchcp-8L-4096h`) on them. */
export function torchFigures(root: string): TorchFigures {
  const rows = parseCsv(text(root, SOURCES.torchcp), SOURCES.torchcp);
  const { model, par } = configFromFlags({ preset: 'torchcp-8L-4096h' });
  const comps = comparePoints(rows, model, par, rows[0].hbm_gib ?? 0);
  const size = sourceModel(rows[0].source);
  const engine = MEASURED_ENGINE.exec(rows[0].source)?.[1];
  if (!size || !engine || size.vocab === undefined || rows[0].hbm_gib == null || rows[0].micro_batch === null) throw new InputError(`notes: ${SOURCES.torchcp} does not name its model, engine, HBM and micro batch`);
  const lines = torchLines(rows, comps);
  const errs = (f: (c: Comparison) => number | null) => Math.max(...comps.map(f).filter((x): x is number => x !== null).map(Math.abs));
  return {
    folder: folderOf(SOURCES.torchcp), rows, engine, gpus: Math.max(...rows.map((r) => Number(GPU_COUNT.exec(r.source)?.[1] ?? 1))), layers: size.layers!, hidden: size.hidden!, heads: size.heads!, vocab: size.vocab,
    microBatch: rows[0].micro_batch, hbm: rows[0].hbm_gib, lines, ddpGib: ddpBuckets(root), ...recomputeEffect(rows, lines),
    points: comps.length, ran: comps.filter((c) => c.totalError !== null).length, maxTotalError: errs((c) => c.totalError), maxActError: errs((c) => c.activationError),
    wrongVerdicts: comps.filter((c) => c.verdict !== 'right').length, first: firstModel(root, rows[0].hbm_gib),
  };
}

function torchLines(rows: CsvRow[], comps: Comparison[]): TorchLine[] {
  const labels = [...new Set(rows.map((r) => r.line ?? ''))];
  return labels.map((label) => {
    const cs = comps.filter((c) => (c.row.line ?? '') === label);
    const ran = cs.filter((c) => c.row.fits === true && c.row.total_gib !== null);
    const oom = cs.filter((c) => c.row.fits === false).sort((a, b) => a.row.seq_len - b.row.seq_len)[0];
    const longest = ran.sort((a, b) => b.row.seq_len - a.row.seq_len)[0];
    if (!longest) throw new InputError(`notes: ${SOURCES.torchcp}: line '${label}' has no point that ran`);
    return {
      label, cp: longest.row.cp ?? 1, recompute: longest.row.recompute ?? 'none', longest: longest.row, oom: oom?.row.seq_len ?? null,
      modelLongest: longest.modelTotalGib!, modelOom: oom?.modelTotalGib ?? null, modelOomFits: oom?.modelFits ?? null,
    };
  });
}

/** Selective recompute against none: peak saved at each CP's longest sequence, and the iteration-time cost at every length both ran. */
function recomputeEffect(rows: CsvRow[], lines: TorchLine[]): Pick<TorchFigures, 'saved' | 'costMin' | 'costMax'> {
  const find = (cp: number, rc: string, seq: number) => rows.find((r) => (r.cp ?? 1) === cp && (r.recompute ?? 'none') === rc && r.seq_len === seq && r.fits === true);
  const saved = lines.filter((l) => l.recompute === 'none').map((l) => {
    const sel = find(l.cp, 'selective', l.longest.seq_len);
    if (!sel?.total_gib) throw new InputError(`notes: ${SOURCES.torchcp}: no selective point at CP=${l.cp}, ${l.longest.seq_len}`);
    // The model's saving on the same pair (both lines' longest run at this length), and its error on the selective point.
    const selLine = lines.find((x) => x.cp === l.cp && x.recompute === 'selective' && x.longest.seq_len === l.longest.seq_len);
    const model = selLine ? { fraction: (l.modelLongest - selLine.modelLongest) / l.modelLongest, errorWith: selLine.modelLongest / sel.total_gib - 1 } : null;
    return { cp: l.cp, seq: l.longest.seq_len, fraction: (l.longest.total_gib! - sel.total_gib) / l.longest.total_gib!, model };
  });
  const costs = rows.filter((r) => r.recompute === 'selective' && r.iter_ms).flatMap((r) => {
    const base = find(r.cp ?? 1, 'none', r.seq_len);
    return base?.iter_ms ? [r.iter_ms! / base.iter_ms - 1] : [];
  });
  return { saved, costMin: Math.min(...costs), costMax: Math.max(...costs) };
}

/** DDP's gradient buckets: the memory held before the first step at CP=2 less that at CP=1 (points.jsonl, static_gib). */
function ddpBuckets(root: string): number {
  const pts = text(root, SOURCES.torchcpPoints).trim().split('\n').map((l) => JSON.parse(l) as { cp: number; static_gib: number });
  const at = (cp: number) => {
    const xs = [...new Set(pts.filter((p) => p.cp === cp).map((p) => p.static_gib))];
    return one(xs, `static_gib at CP=${cp}`, SOURCES.torchcpPoints);
  };
  return at(2) - at(1);
}

/** The model as first written against these runs (its table, model_vs_measured.md): error range and OOM verdicts. */
function firstModel(root: string, hbm: number): TorchFigures['first'] {
  const cells = text(root, SOURCES.torchcpFirstModel).split('\n').filter((l) => /^\| CP=/.test(l)).map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
  const ran = cells.filter((c) => c[4] !== 'OOM').map((c) => Math.abs(parseFloat(c[6])));
  const ooms = cells.filter((c) => c[4] === 'OOM').map((c) => parseFloat(c[5]));
  if (!ran.length || ran.some(Number.isNaN) || ooms.some(Number.isNaN)) throw new InputError(`notes: ${SOURCES.torchcpFirstModel}: no table of model against measured`);
  return { file: SOURCES.torchcpFirstModel, errMin: Math.min(...ran) / 100, errMax: Math.max(...ran) / 100, ooms: ooms.length, oomsCalledFits: ooms.filter((g) => g <= hbm).length };
}

export interface MlpFigures {
  folder: string; layers: number; hidden: number; seq: number;
  none: number; mlp: number; full: number; maxModelError: number;
  /** Iteration time over none's, less one: core_attn + mlp and full recompute (null where a run has no time). */
  costMlp: number | null; costFull: number | null;
}

const MLP = 'selective:core_attn+mlp', FULL = 'full:uniform/1';

const mlpCosts = ([none, mlp, full]: CsvRow[]): Pick<MlpFigures, 'costMlp' | 'costFull'> => {
  const cost = (r: CsvRow) => (none.iter_ms && r.iter_ms ? r.iter_ms / none.iter_ms - 1 : null);
  return { costMlp: cost(mlp), costFull: cost(full) };
};

/** The PyTorch harness on one H200: the model measured with none, core_attn+mlp and full recompute, at its longest common length. */
export function mlpFigures(root: string): MlpFigures {
  const rows = parseCsv(text(root, SOURCES.memoryH200), SOURCES.memoryH200).filter((r) => r.fits === true && r.total_gib !== null);
  const bySource = new Map<string, CsvRow[]>();
  for (const r of rows) bySource.set(r.source, [...(bySource.get(r.source) ?? []), r]);
  for (const [source, rs] of bySource) {
    const at = (rc: string, s: number) => rs.find((r) => (r.recompute ?? 'none') === rc && r.seq_len === s);
    const seq = Math.max(...rs.filter((r) => at('none', r.seq_len) && at(MLP, r.seq_len) && at(FULL, r.seq_len)).map((r) => r.seq_len));
    const size = sourceModel(source);
    if (!Number.isFinite(seq) || !size) continue;
    const three = [at('none', seq)!, at(MLP, seq)!, at(FULL, seq)!];
    const base = PRESETS['torchcp-8L-4096h'];
    const model: ModelConfig = { ...base.model, numLayers: size.layers!, hiddenSize: size.hidden!, numAttentionHeads: size.heads!, vocabSize: size.vocab };
    const comps = comparePoints(three, model, { ...DEFAULT_PARALLEL, stack: base.stack }, three[0].hbm_gib ?? 0);
    return {
      folder: folderOf(SOURCES.memoryH200), layers: size.layers!, hidden: size.hidden!, seq,
      none: three[0].total_gib!, mlp: three[1].total_gib!, full: three[2].total_gib!, maxModelError: Math.max(...comps.map((c) => Math.abs(c.totalError!))),
      ...mlpCosts(three),
    };
  }
  throw new InputError(`notes: ${SOURCES.memoryH200} has no model measured with none, ${MLP} and ${FULL} at one length`);
}
