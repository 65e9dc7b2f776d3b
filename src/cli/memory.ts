/** `flashring memory` (the model, flags named like Megatron-LM's) and `flashring replay` (logs → points, compared with the model). */
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { InputError } from '../errors.js';
import { counted } from '../plural.js';
import { formatBytes } from '../bytes.js';
import {
  CP_COMM_TYPES, DEFAULT_LINES_SPEC, DEFAULT_PARALLEL, DEFAULT_SEQ_LENGTHS, DEFAULT_VOCAB_SIZE, GIB, MOE_DISPATCHERS, MOE_SCORE_FUNCTIONS, MemoryBreakdown, MemoryTerm, ModelConfig, MoeConfig, PRESETS, ParallelConfig,
  RecomputeModule, STACKS, Stack, megatronSequenceParallel, memoryBreakdown, normName, oomPoints, parseLines, peakActivationBytes, positionTableProblem, recomputeSpec, sweep, sweepGaps, type SweepLine, type SweepPoint, virtualStagesOf,
} from '../memory/model.js';
import { configFromLog, lastIteration, parseMegatronLogs, POINT_WARMUP, unmodelledArgs, type OthersOom, type ParseResult } from '../memory/megatron.js';
import { untrainable } from '../memory/untrainable.js';
import { DEFAULT_MARGIN, headroom, longestFitting, tightWhy } from '../memory/headroom.js';
import { notText } from '../textKind.js';
import { maxOf } from '../stats.js';
import { recomputeNote, untrainableNote } from '../memory/chart.js';
import { CsvRow, measuredRow, measuredRows, parseCsv, sweepRows, toCsv } from '../memory/csv.js';
import { MeasuredSetup, comparePoints, comparisonTable, otherModelNotes, pct, predictFromLog, withoutVerdict } from '../memory/compare.js';
import { notTimeData, steadyIterMs, WARMUP_ITERATIONS, withIterMs } from '../memory/time/fromLog.js';
import { H200 } from '../memory/time/devices.js';
import { distinct, list, numberArg, parseCommand } from './args.js';
import { checkInputFile, inode, MAX_TEXT_BYTES, OUTPUT_KINDS, OutputPlan, readProblem } from './files.js';

const HELP = `usage: flashring memory [options]            per-GPU memory of one configuration
       flashring memory --sweep [options]    the plot's lines over sequence length
Model (or --preset ${Object.keys(PRESETS).join('|')}):
  --num-layers L --hidden-size H --num-attention-heads A [--num-query-groups G]
  [--ffn-hidden-size F (default 4H; with --swiglu ⌊8H/3/64⌋·64, as Megatron-LM)] [--swiglu] [--vocab-size V (default ${DEFAULT_VOCAB_SIZE}, GPT-2's; padded to a multiple of 128·TP, as Megatron-LM pads it)]
  [--untie-embeddings-and-output-weights]
  [--attention-dropout P] [--hidden-dropout P] [--position-embedding-type learned_absolute|rope|none]
  [--max-position-embeddings N]   rows of the learned position table (default: the sequence length; at least it)
  [--no-bias-swiglu-fusion]   unfused SwiGLU: keeps the SiLU output and the linear half too (routed experts: and
                      the activation output that the router probability scales)
  [--no-bias-gelu-fusion]     unfused GeLU (Megatron-LM's, on without linear biases): keeps the same tensors, but
                      routed experts with linear biases train only so (EP > 1 at TP 1)
  [--disable-bias-linear]     linear layers without biases (Llama-style; default: with)
  [--normalization LayerNorm|RMSNorm]   the norms' parameters: 2h or h (default LayerNorm)
Mixture of experts (every layer's MLP; the other --moe-* flags need --num-experts):
  [--num-experts E --moe-router-topk K (default 2)] [--moe-ffn-hidden-size F (default the MLP width)]
  [--moe-shared-expert-intermediate-size F] [--moe-expert-capacity-factor X (default no dropping)]
  [--moe-token-dispatcher-type allgather|alltoall|flex] [--expert-model-parallel-size EP]
  [--moe-router-score-function softmax|sigmoid|sqrtsoftplus (default softmax; the router's scores counted alike)]
  [--moe-router-enable-expert-bias]   aux-loss-free balancing: two buffers of E a layer (needs sigmoid or sqrtsoftplus)
Stack:
  --stack megatron|torch-amp   what the training stack keeps (default megatron; torch-amp is PyTorch
                      autocast over fp32 parameters with DDP, as bench/torchcp measures)
  [--fp32-params]     parameters, gradients and Adam in fp32 (16 B/param; implied by torch-amp)
  [--fp32-residual-connection] [--transformer-impl transformer_engine|local] (local: unfused attention)
  [--torch-optimizer] Megatron-LM without Transformer Engine or Apex: it falls back to torch.optim.AdamW,
                      whose step holds a 4-byte temporary a parameter (default: a fused Adam, no temporary)
Parallelism and training:
  --seq-length S --micro-batch-size B --tensor-model-parallel-size T --context-parallel-size C
  --pipeline-model-parallel-size P [--num-layers-per-virtual-pipeline-stage K]
  [--data-parallel-size D] [--sequence-parallel] [--cp-comm-type ${CP_COMM_TYPES.join('|')}]
  [--global-batch-size G] (with PP > 1: fewer micro batches a step than stages fill the first stage less)
  [--recompute-granularity selective [--recompute-modules core_attn mlp layernorm moe shared_experts]]
  [--recompute-granularity full --recompute-method uniform|block --recompute-num-layers N]
  [--use-flash-attn (default) | --no-use-flash-attn] [--use-distributed-optimizer]
  --hbm-gib G         GPU memory to compare with (default 80; an H200 has ${H200.hbmGib}, its total capacity as PyTorch reports it)
Output:
  --json              machine-readable breakdown (every term named, with its formula)
  --sweep             lines over 4K…1M (default ${DEFAULT_LINES_SPEC})
  --seq-lengths LIST  sweep lengths (default ${DEFAULT_SEQ_LENGTHS.join(',')})
  --lines LIST        sweep lines as cp[:recompute] items (--lines, --seq-lengths, --csv imply --sweep); recompute is none, selective,
                      selective:core_attn+mlp, full:uniform/N, full:block/N, or 'recompute' for the model's
                      default (selective:core_attn+mlp where Megatron-LM can train it; full:uniform/1 on a model
                      with linear biases, the seed's), e.g. 1,1:recompute,2,4,4:full:block/8; each line once
  --csv FILE          write the sweep as activation_memory.csv (an existing FILE only when it is such a CSV of
                      flashring's, its header line; --force overwrites any file)`;

export const MODEL_OPTS = {
  preset: { type: 'string' }, 'num-layers': { type: 'string' }, 'hidden-size': { type: 'string' }, 'num-attention-heads': { type: 'string' },
  'num-query-groups': { type: 'string' }, 'ffn-hidden-size': { type: 'string' }, swiglu: { type: 'boolean' }, 'vocab-size': { type: 'string' },
  'untie-embeddings-and-output-weights': { type: 'boolean' }, 'attention-dropout': { type: 'string' }, 'hidden-dropout': { type: 'string' },
  'position-embedding-type': { type: 'string' }, 'max-position-embeddings': { type: 'string' }, 'no-bias-swiglu-fusion': { type: 'boolean' }, 'no-bias-gelu-fusion': { type: 'boolean' }, 'num-experts': { type: 'string' },
  'disable-bias-linear': { type: 'boolean' }, normalization: { type: 'string' },
  'moe-router-topk': { type: 'string' }, 'moe-ffn-hidden-size': { type: 'string' }, 'moe-shared-expert-intermediate-size': { type: 'string' },
  'moe-expert-capacity-factor': { type: 'string' }, 'moe-token-dispatcher-type': { type: 'string' }, 'expert-model-parallel-size': { type: 'string' },
  'moe-router-score-function': { type: 'string' }, 'moe-router-enable-expert-bias': { type: 'boolean' },
  'fp32-params': { type: 'boolean' }, compare: { type: 'boolean' }, stack: { type: 'string' },
  'fp32-residual-connection': { type: 'boolean' }, 'torch-optimizer': { type: 'boolean' }, 'transformer-impl': { type: 'string' }, 'cp-comm-type': { type: 'string' },
  'seq-length': { type: 'string' }, 'micro-batch-size': { type: 'string' }, 'tensor-model-parallel-size': { type: 'string' },
  'context-parallel-size': { type: 'string' }, 'pipeline-model-parallel-size': { type: 'string' },
  'num-layers-per-virtual-pipeline-stage': { type: 'string' }, 'data-parallel-size': { type: 'string' }, 'global-batch-size': { type: 'string' },
  'sequence-parallel': { type: 'boolean' }, 'recompute-granularity': { type: 'string' }, 'recompute-modules': { type: 'string' },
  'recompute-method': { type: 'string' }, 'recompute-num-layers': { type: 'string' }, 'use-flash-attn': { type: 'boolean' },
  'no-use-flash-attn': { type: 'boolean' }, 'use-distributed-optimizer': { type: 'boolean' }, 'hbm-gib': { type: 'string' },
  json: { type: 'boolean' }, sweep: { type: 'boolean' }, 'seq-lengths': { type: 'string' }, lines: { type: 'string' }, csv: { type: 'string' }, force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = Record<string, string | boolean | undefined>;

const POSITIVE_INT = { integer: true, min: 1, what: 'a positive integer' };
const INT_FLAGS: [keyof ModelConfig, string][] = [['numLayers', 'num-layers'], ['hiddenSize', 'hidden-size'], ['numAttentionHeads', 'num-attention-heads'],
  ['numQueryGroups', 'num-query-groups'], ['ffnHiddenSize', 'ffn-hidden-size'], ['vocabSize', 'vocab-size'], ['maxPositionEmbeddings', 'max-position-embeddings']];

function int(v: Values, name: string, d?: number): number | undefined {
  const s = v[name];
  return s === undefined ? d : numberArg(name, s as string, POSITIVE_INT);
}

/** Megatron-LM writes `--recompute-modules core_attn mlp` (several values): joined here as one. */
export function joinModuleArgs(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '--recompute-modules') { out.push(argv[i]); continue; }
    const vals: string[] = [];
    while (i + 1 < argv.length && !argv[i + 1].startsWith('-')) vals.push(argv[++i]);
    out.push(vals.length ? `--recompute-modules=${vals.join(',')}` : argv[i]);
  }
  return out;
}

function modelFromFlags(v: Values): { model: ModelConfig; presetStack?: Stack } {
  let model: ModelConfig, presetStack: Stack | undefined;
  if (v.preset !== undefined) {
    const p = Object.hasOwn(PRESETS, v.preset as string) ? PRESETS[v.preset as string] : undefined; // ('constructor' is no preset)
    if (!p) throw new InputError(`unknown --preset '${v.preset}': use ${Object.keys(PRESETS).join(', ')}`);
    model = { ...p.model };
    presetStack = p.stack;
  } else {
    for (const k of ['num-layers', 'hidden-size', 'num-attention-heads'])
      if (v[k] === undefined) throw new InputError(`--${k} is required (or use --preset ${Object.keys(PRESETS).join('|')})`);
    model = { numLayers: 0, hiddenSize: 0, numAttentionHeads: 0 };
  }
  for (const [k, f] of INT_FLAGS) if (v[f] !== undefined) (model as unknown as Record<string, number>)[k] = int(v, f)!;
  for (const [k, f] of [['attentionDropout', 'attention-dropout'], ['hiddenDropout', 'hidden-dropout']] as const)
    if (v[f] !== undefined) model[k] = numberArg(f, v[f] as string, { min: 0, max: 0.999999, what: 'a probability in [0, 1)' });
  if (v.swiglu) model.swiglu = true;
  if (v['position-embedding-type'] !== undefined) {
    const pe = v['position-embedding-type'] as string;
    if (!['learned_absolute', 'rope', 'none'].includes(pe)) throw new InputError(`--position-embedding-type must be learned_absolute, rope or none, got '${pe}'`);
    model.positionEmbedding = pe as ModelConfig['positionEmbedding'];
  }
  if (v['fp32-params']) model.paramPrecision = 'amp';
  if (v['untie-embeddings-and-output-weights']) model.untieEmbeddings = true;
  // Megatron-LM's bias_activation_fusion: the SwiGLU flag with SwiGLU, the GeLU one with GeLU (argument_utils.py); the other is noted (fusionNotes)
  if (v[model.swiglu ? 'no-bias-swiglu-fusion' : 'no-bias-gelu-fusion']) model.biasActivationFusion = false;
  if (v['disable-bias-linear']) model.biasLinear = false;
  if (v.normalization !== undefined) {
    const n = v.normalization as string;
    if (n !== 'LayerNorm' && n !== 'RMSNorm') throw new InputError(`--normalization must be LayerNorm or RMSNorm, got '${n}'`);
    model.rmsNorm = n === 'RMSNorm';
  }
  const moe = moeFromFlags(v);
  if (moe) model.moe = moe;
  return { model, presetStack };
}

/** The --moe-* flags, which mean something only with --num-experts (Megatron-LM's default top-k is 2). */
const MOE_FLAGS = ['moe-router-topk', 'moe-ffn-hidden-size', 'moe-shared-expert-intermediate-size', 'moe-expert-capacity-factor', 'moe-token-dispatcher-type',
  'moe-router-score-function', 'moe-router-enable-expert-bias'];

function moeFromFlags(v: Values): MoeConfig | undefined {
  if (v['num-experts'] === undefined) {
    const stray = MOE_FLAGS.find((f) => v[f] !== undefined);
    if (stray) throw new InputError(`--${stray} needs --num-experts E (mixture-of-experts layers); without it the model is dense`);
    return undefined;
  }
  const moe: MoeConfig = { numExperts: int(v, 'num-experts')!, routerTopk: int(v, 'moe-router-topk', 2)! };
  if (moe.routerTopk > moe.numExperts) throw new InputError(`--moe-router-topk ${moe.routerTopk} is more than --num-experts ${moe.numExperts} (each token goes to k different experts)`);
  if (v['moe-ffn-hidden-size'] !== undefined) moe.ffnHiddenSize = int(v, 'moe-ffn-hidden-size');
  if (v['moe-shared-expert-intermediate-size'] !== undefined) moe.sharedExpertSize = int(v, 'moe-shared-expert-intermediate-size');
  if (v['moe-expert-capacity-factor'] !== undefined)
    moe.capacityFactor = numberArg('moe-expert-capacity-factor', v['moe-expert-capacity-factor'] as string, { above: 0, max: 1e6, what: 'a positive number' });
  const dispatcher = oneOf(v, 'moe-token-dispatcher-type', MOE_DISPATCHERS);
  if (dispatcher) moe.dispatcher = dispatcher;
  // the expert bias's requirement of a score function is the model's refusal (validate), as replay's
  const score = oneOf(v, 'moe-router-score-function', MOE_SCORE_FUNCTIONS);
  if (score && score !== 'softmax') moe.scoreFunction = score;
  if (v['moe-router-enable-expert-bias']) moe.expertBias = true;
  return moe;
}

function oneOf<T extends string>(v: Values, flag: string, allowed: readonly T[]): T | undefined {
  const x = v[flag] as string | undefined;
  if (x !== undefined && !allowed.includes(x as T)) throw new InputError(`--${flag} must be ${allowed.join(', ')}, got '${x}'`);
  return x as T | undefined;
}

function recomputeFromFlags(v: Values): Pick<ParallelConfig, 'recompute' | 'recomputeModules' | 'recomputeMethod' | 'recomputeNumLayers'> {
  const recompute = oneOf(v, 'recompute-granularity', ['selective', 'full'] as const) ?? 'none';
  const mods = v['recompute-modules'] === undefined ? undefined : (v['recompute-modules'] as string).split(',').map((x) => x.trim());
  // Unknown modules are refused by the model's validate() (configFromFlags runs it before anything is written).
  return {
    recompute, recomputeModules: mods as RecomputeModule[] | undefined,
    recomputeMethod: oneOf(v, 'recompute-method', ['uniform', 'block'] as const), recomputeNumLayers: int(v, 'recompute-num-layers'),
  };
}

/**
 * A fusion flag that changes nothing, said (Megatron-LM takes each and reads only the activation's: argument_utils.py):
 * the SwiGLU one with GeLU, the GeLU one with SwiGLU or without linear biases (arguments.py turns it off then).
 */
function fusionNotes(v: Values, model: ModelConfig): string[] {
  const notes: string[] = [];
  if (v['no-bias-swiglu-fusion'] && !model.swiglu) notes.push('--no-bias-swiglu-fusion changes nothing without --swiglu: the MLP is GeLU, whose kept tensors do not depend on it');
  if (v['no-bias-gelu-fusion'] && model.swiglu) notes.push("--no-bias-gelu-fusion changes nothing with --swiglu: Megatron-LM's SwiGLU reads --no-bias-swiglu-fusion");
  else if (v['no-bias-gelu-fusion'] && model.biasLinear === false) notes.push('--no-bias-gelu-fusion changes nothing with --disable-bias-linear: Megatron-LM fuses GeLU only with its bias, and turns the fusion off without one');
  return notes;
}

/**
 * The model and parallel configuration of a command's flags, as Megatron-LM would run them: what it
 * refuses is refused (virtual stages without a pipeline), what it sets aside is set aside with a note
 * (--sequence-parallel at TP = 1: arguments.py, "Disabling sequence parallelism because tensor model
 * parallelism is disabled").
 */
/**
 * The model and parallel configuration the flags give. `searched` (advise): TP, CP, PP and DP are searched per
 * layout, so the base is checked as a layout that EP divides would be, and --global-batch-size is advise's own.
 */
export function configFromFlags(v: Values, searched = false): { model: ModelConfig; par: ParallelConfig; hbmGib: number; notes: string[] } {
  const { model, presetStack } = modelFromFlags(v);
  const stack = oneOf(v, 'stack', Object.keys(STACKS) as Stack[]) ?? presetStack ?? 'megatron';
  const impl = oneOf(v, 'transformer-impl', ['transformer_engine', 'local'] as const);
  if (v['use-flash-attn'] && v['no-use-flash-attn']) throw new InputError('--use-flash-attn and --no-use-flash-attn contradict each other');
  if (impl === 'local' && v['use-flash-attn']) throw new InputError('--transformer-impl local has no FlashAttention (its attention is unfused): drop --use-flash-attn');
  const pp = int(v, 'pipeline-model-parallel-size', 1)!;
  const perVirtual = int(v, 'num-layers-per-virtual-pipeline-stage');
  const virtual = virtualStagesOf(model.numLayers, pp, perVirtual), virtualStages = virtual.stages;
  if (virtual.refused === 'divide')
    throw new InputError(`--num-layers-per-virtual-pipeline-stage ${perVirtual} does not divide ${model.numLayers} layers over ${pp} stages`);
  const par: ParallelConfig = {
    ...DEFAULT_PARALLEL,
    seqLength: int(v, 'seq-length', DEFAULT_PARALLEL.seqLength)!, microBatchSize: int(v, 'micro-batch-size', 1)!,
    tensorParallel: int(v, 'tensor-model-parallel-size', 1)!, contextParallel: int(v, 'context-parallel-size', 1)!,
    pipelineParallel: pp, virtualStages, dataParallel: int(v, 'data-parallel-size', 1)!,
    sequenceParallel: !!v['sequence-parallel'], flashAttention: !v['no-use-flash-attn'] && impl !== 'local',
    distributedOptimizer: !!v['use-distributed-optimizer'], stack, fp32Residual: !!v['fp32-residual-connection'],
    torchOptimizer: !!v['torch-optimizer'],
    cpCommType: oneOf(v, 'cp-comm-type', CP_COMM_TYPES), ...recomputeFromFlags(v),
  };
  const gbs = searched ? undefined : int(v, 'global-batch-size');
  if (gbs !== undefined) {
    const m = gbs / (par.microBatchSize * par.dataParallel);
    if (!Number.isInteger(m)) throw new InputError(`--global-batch-size ${gbs} is not divisible by --micro-batch-size ${par.microBatchSize} × --data-parallel-size ${par.dataParallel}`);
    par.numMicrobatches = m;
  }
  const notes = fusionNotes(v, model);
  if (par.sequenceParallel !== megatronSequenceParallel(par.sequenceParallel, par.tensorParallel)) {
    par.sequenceParallel = false;
    notes.push('--sequence-parallel at TP = 1 is set aside: Megatron-LM turns sequence parallelism off without tensor parallelism, and so does the model');
  }
  // Megatron-LM's interleaved schedule needs a pipeline (virtualStagesOf).
  if (virtual.refused === 'no-pipeline')
    throw new InputError(`--num-layers-per-virtual-pipeline-stage ${perVirtual} makes ${virtualStages} virtual stages, and Megatron-LM refuses virtual stages without a pipeline: add --pipeline-model-parallel-size P > 1 or leave it out`);
  const ep = int(v, 'expert-model-parallel-size');
  // Megatron-LM takes --expert-model-parallel-size 1 on a dense model, and refuses more without --num-experts.
  if (ep !== undefined && ep > 1 && !model.moe) throw new InputError(`--expert-model-parallel-size ${ep} needs --num-experts E (mixture-of-experts layers); without it the model is dense`);
  if (ep !== undefined && model.moe) par.expertParallel = ep;
  const hbmGib = v['hbm-gib'] === undefined ? 80 : numberArg('hbm-gib', v['hbm-gib'] as string, { above: 0, max: 1e6, what: 'a positive number of GiB' });
  // every contradiction as one line, before anything is written (advise: as a layout with DP a multiple of EP); the
  // position table against the sequence only where --seq-length gives it (else at the lengths that run: memory's
  // default point, a sweep's lengths in sweepCommand, each point replay compares)
  const checked = v['seq-length'] === undefined ? { ...model, maxPositionEmbeddings: undefined } : model;
  try {
    memoryBreakdown(checked, searched ? { ...par, dataParallel: par.expertParallel ?? 1 } : par);
  } catch (e) {
    throw fromPreset(e, v);
  }
  return { model, par, hbmGib, notes };
}

/**
 * A model check's refusal with each model flag's value that --preset gave, not the user, said as the preset's
 * (`--num-query-groups 8 (from --preset llama3-8b)`): the user typed no such flag.
 */
function fromPreset(e: unknown, v: Values): unknown {
  if (!(e instanceof InputError) || v.preset === undefined) return e;
  let msg = e.message;
  for (const [, f] of INT_FLAGS) if (v[f] === undefined) msg = msg.replace(new RegExp(`--${f} (\\d+)(?![\\d.])`, 'g'), `--${f} $1 (from --preset ${v.preset})`);
  return msg === e.message ? e : new InputError(msg);
}

/** A count in K, M or B (thousands, millions, billions), four significant digits; below 1000 as it is. */
export function formatCount(n: number): string {
  const units = [[1e9, 'B'], [1e6, 'M'], [1e3, 'K']] as const;
  for (let i = 0; i < units.length; i++) {
    const v = (n / units[i][0]).toPrecision(4);
    if (Math.abs(Number(v)) < 1) continue;
    // 999.96 K rounds to 1000 K: the unit above says it (1.000 M).
    if (Math.abs(Number(v)) >= 1000 && i > 0) return `${(n / units[i - 1][0]).toPrecision(4)} ${units[i - 1][1]}`;
    return `${v} ${units[i][1]}`;
  }
  return String(Number.isInteger(n) ? n : Number(n.toFixed(2)));
}

/** A layer count: an integer as an integer; a fractional one (interleaved pipeline stages) with up to three decimals. */
export function formatLayers(x: number): string {
  return Math.abs(x - Math.round(x)) < 1e-9 ? String(Math.round(x)) : String(Number(x.toFixed(3)));
}

/**
 * A term's label: its part, then its name, the part left out when the name already begins with it (no "attention attention …").
 * The part is its key but for the norm's, which is said as the model's norm (LayerNorm or RMSNorm).
 */
function termLabel(t: MemoryTerm, model: ModelConfig): string {
  const part = t.part === 'layernorm' ? normName(model) : t.part;
  const first = t.name.split(' ')[0].toLowerCase();
  return first === part.toLowerCase() ? t.name : `${part.padEnd(9)} ${t.name}`;
}

/** A log's name in its points' source: its path from here, normalized (`./a/x.log` and `a/x.log` alike), absolute outside this folder. */
function sourceName(file: string): string {
  const rel = relative(process.cwd(), resolve(file));
  return rel.startsWith('..') || isAbsolute(rel) ? resolve(file) : rel;
}

/** The compared flags each point overrides with what it measured (pointConfig). */
const POINT_FLAGS = ['seq-length', 'tensor-model-parallel-size', 'context-parallel-size', 'pipeline-model-parallel-size', 'sequence-parallel', 'micro-batch-size', 'recompute-granularity', 'recompute-modules', 'recompute-method', 'recompute-num-layers'];

/** A file given twice (under two names, or through a symbolic or hard link) would give its points twice: refused. */
async function refuseTwice(files: string[]): Promise<void> {
  const seen = new Map<string, string>();
  for (const f of files) {
    const real = (await stat(f).then(inode, () => undefined)) ?? f;
    const first = seen.get(real);
    if (first !== undefined) throw new InputError(`${f} is ${first === f ? 'given twice' : `the same file as ${first}`}: give each log or CSV once (its points would count twice)`);
    seen.set(real, f);
  }
}

/** --force only says how --csv may write: alone it is refused, not ignored. */
function forceNeedsCsv(values: { force?: boolean; csv?: string }): void {
  if (values.force && values.csv === undefined) throw new InputError('--force applies only with --csv (it lets --csv overwrite a file that is not flashring\'s points CSV); add --csv FILE or leave it out');
}

/**
 * Flags of the model-flag table (MODEL_OPTS) that belong to one command of those that parse it (memory, replay,
 * advise), and where each belongs: the others refuse them, naming it, rather than ignore them.
 */
const OWNER: Record<string, string> = {
  sweep: 'memory --sweep', 'seq-lengths': 'memory --sweep', lines: 'memory --sweep',
  csv: 'memory --sweep or replay', force: 'memory --sweep or replay', compare: 'replay',
};

/** Refuses each of `flags` given to the command `here`, naming the command it belongs to (OWNER). */
export function refuseOthers(values: Record<string, unknown>, here: string, flags: string[]): void {
  for (const f of flags) if (values[f] !== undefined) throw new InputError(`--${f} belongs to flashring ${OWNER[f]}, not ${here}`);
}

export async function memoryCommand(argv: string[]): Promise<number> {
  const { values } = parseCommand('memory', joinModuleArgs(argv), MODEL_OPTS);
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  refuseOthers(values, 'memory', ['compare']);   // replay's (its model flags are memory's): here it would do nothing
  forceNeedsCsv(values);
  const { model, par, hbmGib, notes } = configFromFlags(values);
  for (const n of notes) console.error(`note: ${n}`);
  // --csv, --lines and --seq-lengths only mean something for a sweep: each asks for one.
  if (values.sweep || values.csv !== undefined || values.lines !== undefined || values['seq-lengths'] !== undefined) return sweepCommand(values, model, par, hbmGib);
  const r = memoryBreakdown(model, par), why = untrainable(model, par);
  if (values.json) {
    console.log(JSON.stringify({ model, parallel: par, recompute: recomputeSpec(par), hbmGib, ...r, peakActivationBytes: peakActivationBytes(r), ...jsonHeadroom(r.totalBytes, hbmGib), untrainable: why }, null, 1));
    return 0;
  }
  printBreakdown(r, model, par, hbmGib);
  if (why) console.log(`  note: ${why}`);
  return 0;
}

/** What a sweep sets at each of its points: the length (--seq-lengths) and each line's CP and recompute (--lines). */
const SWEPT_FLAGS = ['seq-length', 'context-parallel-size', 'recompute-granularity', 'recompute-modules', 'recompute-method', 'recompute-num-layers'];

/**
 * The sweep's lengths (--seq-lengths, or the defaults), each once. A flag the sweep sets at every point is refused, not
 * ignored (each line had its own CP and recompute, whatever --context-parallel-size or --recompute-* said), and so is an
 * empty --lines (not taken as the default lines) or --seq-lengths (not taken as the default lengths).
 */
function sweepLengths(values: Values): number[] {
  const f = SWEPT_FLAGS.find((x) => values[x] !== undefined);
  if (f) throw new InputError(`--${f} is set at each point of a sweep (--seq-lengths gives the lengths, --lines each line's CP and recompute, e.g. --lines 1,2,2:selective): leave --${f} out`);
  if (values.lines !== undefined && !(values.lines as string).trim()) throw new InputError(`--lines needs at least one line (cp[:recompute], e.g. ${DEFAULT_LINES_SPEC}), got '${values.lines}'`);
  const raw = values['seq-lengths'] as string | undefined;
  if (raw === undefined) return DEFAULT_SEQ_LENGTHS;
  return distinct('seq-lengths', list(raw, '', 'seq-lengths').map((x) => numberArg('seq-lengths', x, { ...POSITIVE_INT, max: 2 ** 31, what: 'positive integers up to 2^31' })));
}

async function sweepCommand(values: Values, model: ModelConfig, par: ParallelConfig, hbmGib: number): Promise<number> {
  const lens = sweepLengths(values);
  const longest = maxOf(lens), table = positionTableProblem(model, longest, `the sweep's longest length, ${longest} (--seq-lengths)`);
  if (table) throw new InputError(table);
  const lines = parseLines(values.lines as string | undefined, model, par.stack);
  const gaps = sweepGaps(par, lens, lines, values.lines === undefined);
  const csv = values.csv === undefined ? null : await OutputPlan.make([], [{ flag: 'csv', path: values.csv as string, kind: 'file', ...OUTPUT_KINDS.sweepCsv }], { force: !!values.force });
  const pts = sweep(model, par, lens, lines, hbmGib);
  if (csv) await csv.write([{ path: values.csv as string, data: toCsv(sweepRows(pts, hbmGib)) }]);
  if (values.json) {
    const tight = (p: SweepPoint) => headroom(p.breakdown.totalBytes, hbmGib).tight;
    console.log(JSON.stringify({ model, base: par, hbmGib, points: pts.map((p) => ({ line: p.line, seqLength: p.config.seqLength, recompute: recomputeSpec(p.config), totalGib: p.totalGib, activationGib: p.activationGib, fits: p.fits, tight: tight(p) })) }, null, 1));
    return 0;
  }
  printSweepTable(pts, lens, lines, hbmGib, par, model);
  for (const g of gaps) {
    if (g.reason === 'attention') {
      console.log(`'-' under ${g.line}: every length (${g.why})`);
      continue;
    }
    const cfg = { ...par, ...lines.find((l) => l.label === g.line)!.overrides };
    console.log(`'-' under ${g.line}: ${g.lengths.join(', ')} cannot be split over CP ${g.cp}${cfg.sequenceParallel && cfg.tensorParallel > 1 ? ` and TP ${cfg.tensorParallel}` : ''} (${g.why})`);
  }
  const what = recomputeNote(model, lines, par.stack);
  if (what) console.log(`note: ${what}`);
  const note = untrainableNote(model, pts);
  if (note) console.log(`${pts.some((p) => untrainable(model, p.config)) ? '† ' : 'note: '}${note}`);   // † as the table's header marks such a line
  const oom = oomPoints(pts);
  console.log(longestText(pts, hbmGib));
  if (pts.some((p) => headroom(p.breakdown.totalBytes, hbmGib).tight)) console.log(`note: '~' = tight: ${tightWhy()}: such peaks may not run`);
  if (Object.values(oom).every((v) => v === null)) {
    const tp = par.tensorParallel < 8 || !par.sequenceParallel ? `--tensor-model-parallel-size with --sequence-parallel divides the weights and activations (the seed's commands use TP = 8 with SP); ` : '';
    console.log(`note: no line fits in ${hbmGib} GiB at any length here (TP = ${par.tensorParallel}${par.sequenceParallel ? ' + SP' : ''}): ${tp}flashring advise searches TP × CP × PP × recompute for layouts that fit`);
  }
  if (values.csv !== undefined) console.log(`wrote ${values.csv}`);
  return 0;
}

/**
 * The sweep's table: a row a length, a column a line, each point's peak marked as `flashring memory` judges that point alone
 * (headroom()): '!' does not fit, '~' fits but tight (under advise's margin spare), '-' no point.
 */
function printSweepTable(pts: SweepPoint[], lens: number[], lines: SweepLine[], hbmGib: number, par: ParallelConfig, model: ModelConfig): void {
  console.log(`per-GPU peak memory (GiB), ${STACKS[par.stack ?? 'megatron'].label} stack, HBM ${hbmGib} GiB; '!' = does not fit, '~' = tight (fits, under ${100 * DEFAULT_MARGIN}% of the HBM spare)`);
  // A line Megatron-LM cannot train is marked † in its header; the note under the table says why.
  const bad = new Set(pts.filter((p) => untrainable(model, p.config)).map((p) => p.line));
  console.log(['seq_len'.padStart(8), ...lines.map((l) => `${l.label}${bad.has(l.label) ? ' †' : ''}`.padStart(22))].join(' '));
  const mark = (p: SweepPoint) => {
    const h = headroom(p.breakdown.totalBytes, hbmGib);
    return !h.fits ? '!' : h.tight ? '~' : ' ';
  };
  for (const s of lens)
    console.log([String(s).padStart(8), ...lines.map((l) => {
      const p = pts.find((x) => x.line === l.label && x.config.seqLength === s);
      return (p ? `${p.totalGib.toFixed(1)}${mark(p)}` : '-').padStart(22);
    })].join(' '));
}

/**
 * The sweep's last line: each line's longest length that fits, and where that one is tight (headroom()), the longest with
 * advise's margin spare: 'longest fitting sequence: CP=1: none; CP=2: 8192 (tight; with 10% of the HBM spare: none)'.
 */
function longestText(pts: SweepPoint[], hbmGib: number): string {
  const each = longestFitting(pts, hbmGib).map(({ line, longest: v, roomy: r }) =>
    `${line}: ${v ?? 'none'}${v !== null && r !== v ? ` (tight; with ${100 * DEFAULT_MARGIN}% of the HBM spare: ${r ?? 'none'})` : ''}`);
  return `longest fitting sequence: ${each.join('; ')}`;
}

function printBreakdown(r: MemoryBreakdown, model: ModelConfig, par: ParallelConfig, hbmGib: number): void {
  // Two columns: `per layer` (a layer group's terms, whose [formula] is the bytes of one layer) and
  // `total` (what the line adds to the GPU: a layer term's per-layer bytes × the group's layers).
  // A label longer than its column (a long name or formula) gets its own line, whole, and the amounts the next.
  const W = 62, C = 12;
  const line = (label: string, total: number, perLayer: number | null = null, extra = '') => {
    if (label.length > W) console.log(`  ${label}`);
    const cols = `${(perLayer === null ? '' : formatBytes(perLayer)).padStart(C)} ${formatBytes(total).padStart(C)}`;
    console.log(`  ${(label.length > W ? '' : label).padEnd(W)} ${cols}${extra}`.trimEnd());
  };
  console.log(`per-GPU memory, ${STACKS[r.stack].label} stack: s=${par.seqLength} b=${par.microBatchSize} TP=${par.tensorParallel} CP=${par.contextParallel} PP=${par.pipelineParallel} SP=${par.sequenceParallel}${par.expertParallel ? ` EP=${par.expertParallel}` : ''} recompute=${recomputeSpec(par)} flash=${par.flashAttention}`);
  console.log(`  parameters ${formatCount(r.parameters)} total, ${formatCount(r.parametersPerGpu)} per GPU`);
  if (r.otherStage)
    console.log(`  pipeline stage: the ${r.stage} (the larger peak: ${r.stage === 'first' ? 'the embedding and the most micro batches in flight' : 'the output layer, the logits and the loss'}); the ${r.otherStage.stage} stage's total is ${formatBytes(r.otherStage.totalBytes)}`);
  console.log(`  ${'term [formula: its bytes; per layer for a layer group\'s terms]'.padEnd(W)} ${'per layer'.padStart(C)} ${'total'.padStart(C)}`);
  line(`weights (${r.weightBytesPerParam === 4 ? 'fp32' : 'bf16'})`, r.weightBytes);
  line('gradients (fp32)', r.gradientBytes);
  line(r.weightBytesPerParam === 4 ? 'optimizer (Adam moments; the fp32 parameters are their own master weights)' : 'optimizer (Adam moments and master weights)', r.optimizerBytes);
  if (r.gradientBucketBytes) line('DDP gradient buckets (fp32)', r.gradientBucketBytes);
  if (r.workspaceBytes) line('cuBLAS workspaces', r.workspaceBytes);
  line('stored activations', r.activationBytes);
  for (const g of r.layerGroups) {
    const n = formatLayers(g.layers);
    line(`  ${g.label}: ${n} layers (total = ${n} × per layer)`, g.bytesPerLayer * g.layers, g.bytesPerLayer);
    for (const t of g.terms) line(`    ${termLabel(t, model)} [${t.formula}]`, t.bytes * g.layers, t.bytes);
  }
  console.log('    outside the layers:');
  for (const t of r.outside) line(`    ${termLabel(t, model)} [${t.formula}]`, t.bytes);
  console.log('  transients (net of what is freed by their moment; the largest counts):');
  for (const t of r.transients) {
    line(`  ${t === r.peakTransient ? '*' : ' '} ${t.name} [${t.formula}]`, t.netBytes, null,
      `${t.freedBytes ? `  (${formatBytes(t.bytes)} live, ${formatBytes(Math.min(t.bytes, t.freedBytes))} of stored terms freed by then)` : ''}${t === r.peakTransient ? '  ← peak' : ''}`);
    if (t.heldBytes) console.log(`      with, held then: ${formatBytes(t.heldBytes)} [${t.heldFormula}]`);
  }
  if (r.heldAfterBackward) line(`  held between steps, not stored: ${r.heldAfterBackward.name} [${r.heldAfterBackward.formula}]`, r.heldAfterBackward.bytes);
  const h = headroom(r.totalBytes, hbmGib);
  line('total (peak)', r.totalBytes, null, `  ${h.verdict}`);
  if (h.note) console.log(`  note: ${h.note}`);
}

/** The verdict's figures in --json: fits (at most the HBM), tight (with less than advise's margin to spare), the spare in GiB. */
function jsonHeadroom(totalBytes: number, hbmGib: number): { fits: boolean; tight: boolean; spareGib: number } {
  const { fits, tight, spareGib } = headroom(totalBytes, hbmGib);
  return { fits, tight, spareGib: Number(spareGib.toFixed(3)) };
}

/** A file's points, and for each the setup its log's argument dump gives (null for a CSV row or a log without one). */
interface FileResult { rows: CsvRow[]; setups: (MeasuredSetup | null)[]; labels: string[]; reports: unknown[]; ok: boolean; notModelled: string[][]; othersOom: (OthersOom | null)[] }

/** Where replay's report goes: stdout, unless stdout carries the points (CSV) or the JSON; notes and failures go to stderr. */
type Say = (line: string) => void;

/** " (median of iterations a-b)" for a window of iteration numbers, or nothing. */
const iterationsOf = (w: number[]) => (w.length ? ` (median of iterations ${w[0]}-${w[w.length - 1]})` : '');

/**
 * A point's iteration time as replay's line says it: its median and the iterations it took, or '?', with why where the
 * run was shorter than the warm-up by design (it ran all its iterations: a memory run); one cut short has its note.
 */
function iterText(res: ParseResult): string {
  const p = res.point, end = lastIteration(res.iterations);
  if (p.iterMs !== null) return `${p.iterMs.toFixed(1)} ms${iterationsOf(p.window)}`;
  if (end && !p.window.length && end.iteration >= end.total) return `? (a ${end.total}-iteration run, all within the point's ${POINT_WARMUP} warm-up)`;
  return '?';
}

/**
 * The time model beside the log's steady step, as the time model is judged: the median of every
 * iteration after the first WARMUP_ITERATIONS (the memory point's "iter" is the dataset's window).
 */
function stepTimeLine(res: ParseResult, predicted: object): string {
  const prediction = predicted as { iterMs?: number | null; iterMsNote?: string };
  if (prediction.iterMs == null) return `step time: no prediction${prediction.iterMsNote ? ` (${prediction.iterMsNote})` : ''}`;
  const m = steadyIterMs(res);
  if (m.ms === null) return `step time: model ${prediction.iterMs.toFixed(1)} ms; the log has no iteration after the first ${WARMUP_ITERATIONS} to compare with`;
  if (m.ms === 0) return `step time: model ${prediction.iterMs.toFixed(1)} ms; the log's median after the first ${WARMUP_ITERATIONS} is 0.0 ms (no step takes no time): no error taken`;
  const err = (100 * (prediction.iterMs - m.ms)) / m.ms;
  return `step time: model ${prediction.iterMs.toFixed(1)} ms, measured ${m.ms.toFixed(1)} ms (the time model's measure, after the first ${WARMUP_ITERATIONS}: median of ${counted(m.iterations, 'report')}, iterations ${m.from}-${m.to}; the point's iter above is its dataset's window): ${err >= 0 ? '+' : ''}${err.toFixed(1)}%`;
}

/**
 * A refusal of a reader (InputError) names the file as the user gave it, in one line (the readers
 * name it by sourceName, which a point keeps as its source).
 */
function refusal(e: unknown, file: string): unknown {
  if (!(e instanceof InputError)) return e;
  const named = sourceName(file);
  return new InputError(e.message.startsWith(named) ? file + e.message.slice(named.length) : `${file}: ${e.message}`);
}

/**
 * One file → its points: a CSV's measured rows, or one point per run of a Megatron-LM log (a log of
 * several runs gives several, named file.log#k). What a reader refuses (bad quoting, a dump cut
 * off, a repeated argument, an impossible value) is thrown, one line naming the file and line.
 * `apart`: the points' lines go to stdout (the report), away from their notes on stderr, which are then headed by the point's name.
 */
async function readPoints(file: string, hbmGib: number | null, say: Say, apart: boolean): Promise<FileResult> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    console.error(`${file}: ${readProblem(e)}`); // gone or locked since checkInputFile looked at it
    return { rows: [], setups: [], labels: [], reports: [{ file, error: 'cannot read' }], ok: false, notModelled: [], othersOom: [] };
  }
  const binary = notText(bytes);
  if (binary) throw new InputError(`${file}: ${binary}; replay takes Megatron-LM training logs and activation_memory.csv files as text`);
  const text = bytes.toString('utf8');
  if (/\.csv$/i.test(file)) {
    let r: CsvRow[], modelRows: number, all: CsvRow[];
    try {
      // A row without a source is named by the file's path, as a log's point is (two folders' runs.csv apart).
      ({ rows: r, modelRows } = measuredRows(all = parseCsv(text, sourceName(file)), sourceName(file)));
    } catch (e) {
      throw refusal(e, file);
    }
    say(`${file}: ${counted(r.length, 'row')}${modelRows ? `; ${counted(modelRows, 'row')} of source 'model' left out (the model's own output, not measurements)` : ''}`);
    // Each row named by its line column, else as the file's row k (a replay's CSV has no line: its rows were all named by the file alone).
    const rowOf = new Map(all.map((x, k) => [x, k + 1]));
    return { rows: r, setups: r.map(() => null), labels: r.map((x) => `${file}: ${x.line ?? `row ${rowOf.get(x)}`}`), reports: [{ file, rows: r.length, ...(modelRows ? { modelRowsLeftOut: modelRows } : {}) }], ok: true, notModelled: r.map(() => []), othersOom: r.map(() => null) };
  }
  let runs;
  try {
    runs = parseMegatronLogs(text, sourceName(file)); // a path names the points (two runs' r00.log apart)
  } catch (e) {
    throw refusal(e, file);
  }
  const out: FileResult = { rows: [], setups: [], labels: [], reports: [], ok: true, notModelled: [], othersOom: [] };
  for (const [k, res] of runs.entries()) {
    const timeNote = notTimeData(res);
    const name = runs.length > 1 ? `${file}#${k + 1}` : file;
    const row = measuredRow(res.point, hbmGib ?? undefined);
    const prediction = withIterMs(predictFromLog(res, hbmGib), res); // + the time model's iterMs (src/memory/time)
    const p = res.point;
    say(`${name}: s=${p.seqLength ?? '?'} TP=${p.tp ?? '?'} CP=${p.cp ?? '?'} PP=${p.pp ?? '?'} SP=${p.sp ?? '?'} recompute=${p.recompute ?? '?'}` +
      ` | iter ${iterText(res)} | ${p.tflopsPerGpu === null ? '?' : p.tflopsPerGpu.toFixed(1)} TFLOP/s/GPU` +
      ` | peak max allocated ${p.peakMaxAllocatedGiB === null ? '?' : p.peakMaxAllocatedGiB.toFixed(2) + ' GiB'}${p.outOfMemory ? ` | OUT OF MEMORY${p.outOfMemoryOthers ? ` (other processes held ${p.outOfMemoryOthers.otherGiB.toFixed(2)} GiB: not a verdict)` : ''}` : ''}` +
      ('error' in prediction ? '' : ` | model ${(prediction.totalBytes / GIB).toFixed(2)} GiB${prediction.totalError === null ? '' : ` (${pct(prediction.totalError)})`}`));
    const c = configFromLog(res), why = 'error' in c ? null : untrainable(c.model, c.par);
    // Where the point's line goes to stdout (apart), its notes on stderr are headed by its name, once.
    let headed = !apart;
    const note = (n: string) => { if (!headed) console.error(`${name}:`); headed = true; console.error(`  note: ${n}`); };
    for (const w of [...res.warnings, ...(why ? [why] : [])]) note(w);
    for (const n of 'error' in prediction ? [`no prediction: ${prediction.error}`] : prediction.notes) note(n);
    if (!('error' in prediction)) say(`  ${stepTimeLine(res, prediction)}`);
    if (timeNote && !('error' in prediction)) note(timeNote);
    if (!row) console.error(`  ${name}: no point (${p.seqLength === null ? 'no sequence length: not a Megatron-LM log with an argument dump, nor a .csv' : 'nothing measured: no memory line, no iteration after warm-up, no out-of-memory'})`);
    if (row) {
      out.rows.push(row);
      out.labels.push(name);
      out.setups.push('error' in c ? null : { model: c.model, parallel: c.par });
      out.notModelled.push(unmodelledArgs(res.args));
      out.othersOom.push(p.outOfMemoryOthers);
    } else out.ok = false;
    out.reports.push({ file, ...(runs.length > 1 ? { run: k + 1, startLine: res.startLine } : {}), point: p, warnings: res.warnings, untrainable: why, notTimeData: timeNote, prediction });
  }
  return out;
}

export async function replayCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand('replay', joinModuleArgs(argv), MODEL_OPTS, true);
  if (!values.help && !positionals.length)
    throw new InputError('at least one Megatron-LM log or activation_memory.csv is required (see flashring replay --help)');
  if (values.help) {
    console.log('usage: flashring replay LOG_OR_CSV... [--csv out.csv [--force]] [--json] [--hbm-gib G]\n' +
      '       flashring replay FILE... --compare <model flags of flashring memory, or --preset NAME>\n' +
      '  Megatron-LM training logs (or activation_memory.csv files) → measured points. Each log with an\n' +
      '  argument dump is also predicted by the model from its own arguments (--json: "prediction").\n' +
      '  --compare puts the model next to each point (its seq_len, TP, CP, SP and recompute over the\n' +
      '  given model flags): error of the total and of the activations, and the OOM verdict.\n' +
      '  --csv writes the points; an existing file only when it is a points CSV of flashring\'s (its\n' +
      '  header line), any file with --force.');
    return 0;
  }
  const hbm = values['hbm-gib'] === undefined ? null : numberArg('hbm-gib', values['hbm-gib'], { above: 0, max: 1e6, what: 'a positive number of GiB' });
  refuseOthers(values, 'replay', ['sweep', 'seq-lengths', 'lines']);
  // Model flags mean something only next to the model: without --compare they are refused, not ignored.
  forceNeedsCsv(values);
  const REPLAY_OWN = ['csv', 'force', 'json', 'hbm-gib', 'help', 'compare'];
  const stray = !values.compare && Object.keys(values).find((k) => !REPLAY_OWN.includes(k) && values[k as keyof typeof values] !== undefined);
  if (stray) throw new InputError(`--${stray} is a model flag: it applies only with --compare (the model next to each point); add --compare or leave it out`);
  const cfg = values.compare ? configFromFlags(values) : null;
  for (const n of cfg?.notes ?? []) console.error(`note: ${n}`);
  const own = POINT_FLAGS.filter((f) => values[f as keyof typeof values] !== undefined);
  if (cfg && own.length) console.error(`note: ${own.map((f) => `--${f}`).join(', ')}: each point is compared at what it measured (its sequence, TP, CP, PP, SP, recompute, micro batch); the given value is used only where a point does not say it`);
  // Every file looked at before any is read (a missing file, a folder, a pipe or device refused), and --csv checked against them.
  for (const file of positionals) await checkInputFile('input file', file, MAX_TEXT_BYTES);
  await refuseTwice(positionals);
  const csv = values.csv === undefined ? null : await OutputPlan.make(positionals.map((path) => ({ flag: 'input file', path })), [{ flag: 'csv', path: values.csv, kind: 'file', ...OUTPUT_KINDS.replayCsv }], { force: !!values.force });
  // The report goes to stdout unless stdout carries the points as CSV (no --csv, no --compare) or the JSON; held
  // back until --csv is written, so that a reader who stops early (`| head`, which ends the run) loses no file.
  const report: string[] = [];
  const toStdout = !values.json && (!!cfg || values.csv !== undefined);
  const say: Say = toStdout ? (l) => report.push(l) : (l) => console.error(l);
  const results: FileResult[] = [];
  for (const file of positionals) results.push(await readPoints(file, hbm, say, toStdout));
  const rows = results.flatMap((r) => r.rows), labels = results.flatMap((r) => r.labels);
  const bad = results.filter((r) => !r.ok).length;
  // A point whose log sets what the model does not take (FP8, grouped GEMM, …) keeps its model figures, not an error.
  // A point whose log ran out of memory because other processes held the GPU: no verdict, counted apart.
  const notModelled = results.flatMap((r) => r.notModelled), othersOom = results.flatMap((r) => r.othersOom);
  const comparison = cfg ? comparePoints(rows, cfg.model, cfg.par, hbm ?? cfg.hbmGib).map((c, i) => withoutVerdict(c, { notModelled: notModelled[i], othersOom: othersOom[i] })) : null;
  // Where a point measured another setup than the compared one: said with the table (in the JSON: `notes`).
  const caveats = cfg ? otherModelNotes(rows, { model: cfg.model, parallel: cfg.par }, results.flatMap((r) => r.setups), labels) : [];
  if (cfg && !values.json) report.push([comparisonTable(comparison!, labels), ...caveats.map((n) => `note: ${n}`)].join('\n'));
  // With --compare too: the points are written, the table printed. A run where a file gave no point
  // fails (exit 2) and, as every failed run, writes nothing.
  // The CSV leaves out a point whose out-of-memory other processes caused: it measured nothing of its configuration, and
  // a row with neither a peak nor fits would not read back (one with fits=false would read as its own out-of-memory).
  const csvRows = rows.filter((_, i) => !othersOom[i]), apart = labels.filter((_, i) => othersOom[i]);
  if (apart.length && (values.csv !== undefined || (!cfg && !values.json)))
    console.error(`${counted(apart.length, 'point')} left out of the CSV, out of memory because other processes held the GPU (no measurement of ${apart.length === 1 ? 'its' : 'their'} configuration): ${apart.join(', ')}`);
  if (values.csv !== undefined && !bad) {
    await csv!.write([{ path: values.csv, data: toCsv(csvRows) }]);
    say(`wrote ${counted(csvRows.length, 'point')} to ${values.csv}`);
  } else if (values.csv !== undefined) console.error(`${values.csv} not written: a file gave no point`);
  for (const l of report) console.log(l);
  if (values.json) console.log(JSON.stringify({ points: rows, reports: results.flatMap((r) => r.reports), ...(comparison ? { comparison, notes: caveats } : {}) }, null, 1));
  else if (!cfg && values.csv === undefined && csvRows.length) process.stdout.write(toCsv(csvRows)); // nothing at all when no file gave a point
  if (bad) console.error(`flashring replay: ${bad} of ${counted(positionals.length, 'file')} gave no point`);
  return bad ? 2 : 0;
}
