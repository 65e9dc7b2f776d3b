/**
 * Megatron-LM training logs → measured points. Reads, from whatever else the log holds:
 *  - the argument dump ("---- arguments ----" … "---- end of arguments ----", lines
 *    `  name ........ value`): seq_length, TP, CP, PP, SP, recomputation, layers, hidden, heads,
 *    micro batch, flash attention, world size;
 *  - iteration lines: `iteration K/ N | … elapsed time per iteration (ms): X | throughput per
 *    GPU (TFLOP/s/GPU): Y | …` (the timestamp prefix of newer releases is optional);
 *  - memory lines: `[Rank R] (after K iterations) memory (MB) | allocated: … | max allocated: …
 *    | reserved: … | max reserved: …` (MB means MiB; unrounded floats before core 0.16);
 *  - `Theoretical memory footprints: weight and optimizer=… MB[, activation=… MB, total=… MB]`.
 * One run → one point: median iteration time and TFLOP/s over the last 10 iterations after 10
 * warm-up iterations; peak "max allocated" over ranks. What is missing is listed, never invented.
 * A log of several runs (several argument dumps) gives one point per run (parseMegatronLogs), or is
 * refused by name (parseMegatronLog); what cannot be read right is refused with its line number.
 */
import { InputError } from '../errors.js';
import { median } from '../stats.js';
import { decimalNumber, nonDecimal } from '../decimal.js';
import { DEFAULT_VOCAB_SIZE, MOE_SCORE_FUNCTIONS, RECOMPUTE_MODULES, type ModelConfig, type MoeScoreFunction, type ParallelConfig, type RecomputeModule } from './model.js';
import { counted, plural } from '../plural.js';

export interface MegatronArgs {
  [name: string]: string;
}

export interface IterationRecord {
  iteration: number;
  totalIterations: number;
  elapsedMs: number | null;
  tflopsPerGpu: number | null;
  loss: number | null;
}

export interface MemoryRecord {
  rank: number;
  afterIterations: number;
  allocatedMiB: number;
  maxAllocatedMiB: number;
  reservedMiB: number;
  maxReservedMiB: number;
}

export interface MeasuredPoint {
  source: string;
  seqLength: number | null;
  tp: number | null;
  cp: number | null;
  pp: number | null;
  sp: boolean | null;
  recompute: string | null;
  microBatch: number | null;
  numLayers: number | null;
  hiddenSize: number | null;
  numHeads: number | null;
  /** The vocabulary (padded_vocab_size, else vocab_size). */
  vocabSize: number | null;
  worldSize: number | null;
  flashAttention: boolean | null;
  /** Median over the measured window (null if the log has no iteration after warm-up). */
  iterMs: number | null;
  tflopsPerGpu: number | null;
  /** Iterations in the window the medians were taken over. */
  window: number[];
  peakMaxAllocatedGiB: number | null;
  peakMaxReservedGiB: number | null;
  theoretical: { weightAndOptimizerMiB: number | null; activationMiB: number | null; totalMiB: number | null } | null;
  outOfMemory: boolean;
  /**
   * Where the log's out-of-memory came of other processes on the GPU (outOfMemoryByOthers), what its message says; null
   * otherwise: the out-of-memory is then the run's own, a verdict on its configuration.
   */
  outOfMemoryOthers: OthersOom | null;
}

/**
 * An out-of-memory that other processes caused, from PyTorch's message (2.1 and later: "Tried to allocate 2.00 GiB.
 * GPU 0 has a total capacity of 139.80 GiB of which 1.05 GiB is free. … Including non-PyTorch memory, this process
 * has 60.12 GiB memory in use."): the other processes' share is capacity − free − this process's use. GiB each; the
 * log's line (1-based) it was read from.
 */
export interface OthersOom { otherGiB: number; capacityGiB: number; freeGiB: number; processGiB: number; requestedGiB: number; line: number }

export interface ParseResult {
  point: MeasuredPoint;
  args: MegatronArgs;
  iterations: IterationRecord[];
  memory: MemoryRecord[];
  /** What was looked for and not found, and other things a reader should know. */
  warnings: string[];
  /** The run's own command lines ('# …', as bench/megatron's scripts open a log with the command that ran it). */
  commands: string[];
  /** Megatron-LM said it fell back to PyTorch's optimizers (no Transformer Engine or Apex: torch.optim.AdamW). */
  torchOptimizer?: boolean;
}

/** A log's number: decimal or scientific only (a log never prints hex; '0x1000' is no number here), null where there is none. */
const num = (s: string | undefined): number | null => {
  if (s === undefined) return null;
  const n = decimalNumber(s.trim());
  return Number.isFinite(n) ? n : null;
};

/**
 * The line that opens an argument dump (each one starts a run), and the line that closes it:
 * '---- arguments ----' and '---- end of arguments ----' anywhere in a line. Three dashes each side
 * match what any longer run matches, in time linear in the line (`-{3,}` retried at every dash of
 * a long line of dashes was quadratic), and a line without the word is not searched at all.
 */
const DUMP_START_RE = /---\s*arguments\s*---/;
const DUMP_END_RE = /---\s*end of arguments\s*---/;
const DUMP_START = { test: (line: string) => line.includes('arguments') && DUMP_START_RE.test(line) };
const DUMP_END = { test: (line: string) => line.includes('end of arguments') && DUMP_END_RE.test(line) };
/** Arguments of the point and of the model's prediction that are sizes: when given (not None), positive (safe) integers. */
const SIZE_ARGS = ['seq_length', 'tensor_model_parallel_size', 'context_parallel_size', 'pipeline_model_parallel_size', 'micro_batch_size',
  'num_layers', 'hidden_size', 'num_attention_heads', 'world_size', 'data_parallel_size', 'expert_model_parallel_size', 'expert_tensor_parallel_size',
  'virtual_pipeline_model_parallel_size', 'num_query_groups', 'ffn_hidden_size', 'vocab_size', 'padded_vocab_size', 'num_experts', 'moe_router_topk',
  'moe_ffn_hidden_size', 'moe_shared_expert_intermediate_size', 'recompute_num_layers', 'global_batch_size', 'max_position_embeddings'];
/** Arguments read as True/False: anything else (a damaged 'True') is refused, never read as False. */
const BOOL_ARGS = ['sequence_parallel', 'use_flash_attn', 'group_query_attention', 'swiglu', 'untie_embeddings_and_output_weights', 'add_bias_linear',
  'bias_swiglu_fusion', 'bias_gelu_fusion', 'use_distributed_optimizer', 'fp32_residual_connection', 'use_rotary_position_embeddings', 'add_position_embedding',
  'moe_router_enable_expert_bias'];
/** Arguments read from a few words (None aside). */
const WORD_ARGS: Record<string, string[]> = {
  recompute_granularity: ['None', 'selective', 'full'], recompute_method: ['None', 'uniform', 'block'],
  position_embedding_type: ['learned_absolute', 'rope', 'yarn', 'mrope', 'relative', 'none'],
  moe_router_score_function: [...MOE_SCORE_FUNCTIONS],
};
/** More memory than any GPU holds (1 PiB, in MiB): a memory line or theoretical size above it cannot be. */
const MAX_MIB = 2 ** 30;

/** Text of a log or CSV quoted in a message, on one line: control characters (CR, LF, NUL…) escaped, long text cut. */
export function shown(s: string, max = 70): string {
  const t = s.length > max ? `${s.slice(0, max)}…` : s;
  return t.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Why a dump's argument value cannot be (null: it can): sizes, booleans, probabilities, the recompute words. */
function argProblem(name: string, v: string): string | null {
  if (v === 'None') return null;
  if (SIZE_ARGS.includes(name) && !(/^[1-9]\d*$/.test(v) && Number.isSafeInteger(Number(v)))) return 'is not a positive integer';
  if (BOOL_ARGS.includes(name) && v !== 'True' && v !== 'False') return 'is not True or False';
  if (WORD_ARGS[name] && !WORD_ARGS[name].includes(v)) return `is not one of ${WORD_ARGS[name].join(', ')}`;
  const x = decimalNumber(v);
  if ((name === 'attention_dropout' || name === 'hidden_dropout') && !(v.trim() !== '' && x >= 0 && x <= 1)) return 'is not a probability between 0 and 1';
  if (name === 'recompute_modules' && !/^\[\s*('[a-z_]+'(,\s*'[a-z_]+')*)?\s*\]$/.test(v)) return "is not a list of module names (['core_attn', 'mlp'])";
  if (name === 'moe_expert_capacity_factor' && !(v.trim() !== '' && x > 0 && Number.isFinite(x))) return 'is not a positive number';
  return null;
}

/**
 * A log with exactly one run → its point. A log holding several runs (several argument dumps: runs
 * appended to one file) is refused by name, never merged: read it with parseMegatronLogs.
 */
export function parseMegatronLog(text: string, source: string, opts: { warmup?: number; window?: number } = {}): ParseResult {
  const runs = parseMegatronLogs(text, source, opts);
  if (runs.length > 1)
    throw new InputError(`${source} holds ${runs.length} runs (argument dumps at lines ${runs.map((r) => r.startLine).join(', ')}), not one: split it into one file per run`);
  return runs[0];
}

/**
 * A log → one result per run. A run begins at its argument dump ("---- arguments ----"), or at the
 * command line ('# …') or the optimizer fallback warning that opens it above the dump (runOpening); lines before the first dump belong
 * to the first run. With several runs each point's source is named
 * `source#k` (k from 1). Refused with the line number (InputError): a dump without its
 * "---- end of arguments ----" (cut inside), an argument given twice in one dump with different
 * values, an argument the point or the model reads whose value cannot be (a size that is not a
 * positive integer, a boolean that is not True/False, a dropout outside [0, 1], a recompute setting
 * Megatron-LM does not take), and implausible values (a memory line with a negative, non-finite,
 * zero or above-1-PiB peak, allocated above max allocated or reserved above max reserved; a
 * negative or non-finite iteration time or throughput; a non-finite theoretical size). CR, CRLF and
 * LF all end a line. Reads line by line: no recursion, no spread of a log's values into a call.
 */
export function parseMegatronLogs(text: string, source: string, opts: { warmup?: number; window?: number } = {}): (ParseResult & { startLine: number })[] {
  // CR, CRLF and LF all end a line (as in the CSV reader): a log whose line ends became CRs is not one cut-off line.
  const lines = text.split(/\r\n?|\n/);
  // A log cut off mid-line (a killed run, a partial copy): an unfinished iteration line (they end
  // with '|') or memory line is not read, and said so, rather than read with a truncated number.
  const last = lines.at(-1) ?? '';
  let cut: string | null = null;
  if (last.trim() && cutOff(last)) {
    lines.pop();
    cut = `the log ends mid-line: its last line "${shown(last)}" is cut off and was not used`;
  }
  const starts: number[] = [];
  for (let i = 0; i < lines.length; i++) if (DUMP_START.test(lines[i])) starts.push(i);
  const bounds = starts.length <= 1 ? [0] : [0, ...starts.slice(1).map((s, k) => runOpening(lines, starts[k], s))];
  const out: (ParseResult & { startLine: number })[] = [];
  for (let k = 0; k < bounds.length; k++) {
    const to = k + 1 < bounds.length ? bounds[k + 1] : lines.length;
    const name = bounds.length > 1 ? `${source}#${k + 1}` : source;
    const res = parseRun(lines, bounds[k], to, source, name, opts, k === bounds.length - 1 ? cut : null);
    out.push({ ...res, startLine: (starts.length > 1 ? starts[k] : bounds[k]) + 1 });
  }
  return out;
}

/** A line a launcher writes above a run's output: its command line, '# …' (bench/megatron's scripts open each log with one). */
const COMMAND_LINE = /^#/;

/**
 * Where the run whose argument dump is at line `dump` begins: at the command line ('# …') that opens it, or at the
 * line Megatron-LM writes at import, before its dump, that it fell back to PyTorch's optimizers, whichever of them is
 * first between the previous run's last line read (an iteration, memory, theoretical or out-of-memory line, or the
 * end of its dump opened at `previous`) and this dump, else at the dump. Runs appended to one file each keep their
 * own command line and optimizer, not the run before them.
 */
function runOpening(lines: readonly string[], previous: number, dump: number): number {
  let at = dump;
  for (let i = dump - 1; i > previous; i--) {
    const line = lines[i];
    if (DUMP_END.test(line) || ITERATION_LINE.test(line) || MEMORY_LINE.test(line) || THEORETICAL_LINE.test(line) || OOM_LINE.test(line)) break;
    if (COMMAND_LINE.test(line) || TORCH_OPTIMIZER_LINE.test(line)) at = i;
  }
  return at;
}

/**
 * Whether a log's last line, which has no line end, is cut off: an iteration line without its closing '|', a memory
 * line without a number after 'max reserved:', or with one below its reserved (cut inside it: '61000.00' as '6100').
 */
function cutOff(last: string): boolean {
  if (ITERATION_LINE.test(last)) return !/\|\s*$/.test(last);
  if (!/memory \(MB\)/.test(last)) return false;
  if (!/max reserved:\s*[\d.]+\s*$/.test(last)) return true;
  const mem = MEMORY_LINE.exec(last);
  return mem !== null && decimalNumber(mem[6]) < decimalNumber(mem[5]);
}

/** What a run's lines hold: the dump's arguments, iteration and memory lines, the theoretical footprint, an out-of-memory. */
interface RunLines {
  args: MegatronArgs;
  sawArgs: boolean;
  iterations: IterationRecord[];
  memory: MemoryRecord[];
  theoretical: MeasuredPoint['theoretical'];
  oom: boolean;
  /** The line "… Falling back to Torch optimizers." (megatron/core/optimizer/__init__.py, a warning at import). */
  torchOptimizer: boolean;
  /** Its out-of-memory, where every one of its messages that gives the figures says other processes caused it. */
  othersOom: OthersOom | null;
  /** The run's command lines ('# …'). */
  commands: string[];
}
type Refuse = (i: number, what: string) => never;
/** A number of a line: null when absent; refused when negative, not finite or above max. */
type Field = (i: number, s: string | undefined, what: string, max?: number) => number | null;

const ITERATION_LINE = /iteration\s+(\d+)\/\s*(\d+)\s*\|/;
const MEMORY_LINE = /\[Rank (\d+)\] \(after (\d+) iterations\) memory \(MB\)\s*\|\s*allocated:\s*([^\s|]+)\s*\|\s*max allocated:\s*([^\s|]+)\s*\|\s*reserved:\s*([^\s|]+)\s*\|\s*max reserved:\s*([^\s|]+)/;
const OOM_LINE = /CUDA out of memory|OutOfMemoryError/;
const TORCH_OPTIMIZER_LINE = /Falling back to Torch optimizers/;
const THEORETICAL_LINE = /Theoretical memory footprints: weight and optimizer=([^\s,]+) MB(?:, activation=([^\s,]+) MB)?(?:, total=([^\s,]+) MB)?/;

/** The iterations a point's iteration time and throughput skip as warm-up, and the most after them it takes the median of (the last ones). */
export const POINT_WARMUP = 10, POINT_WINDOW = 10;

/** The last iteration a run's lines report and the run's own total (`iteration K/ N`: --train-iters), or null without iteration lines. */
export function lastIteration(iterations: readonly IterationRecord[]): { iteration: number; total: number } | null {
  if (!iterations.length) return null;
  const last = iterations.reduce((a, r) => (r.iteration > a.iteration ? r : a));
  return { iteration: last.iteration, total: last.totalIterations };
}

/**
 * A point's window short of `windowSize` iterations after the warm-up (`taken` of them) as a warning, where it is an
 * anomaly: the log stops before the run's own total (a killed or failed run, a partial copy). A run that ran all it
 * was asked for is short by design (the memory runs: --train-iters 3 or 6), no warning: replay's line says what its
 * point took, and its step time takes the iterations after the time model's shorter warm-up.
 */
function shortWindow(iterations: readonly IterationRecord[], taken: number, warmup: number, windowSize: number): string | null {
  const end = lastIteration(iterations);
  if (!end || end.iteration >= end.total || taken >= windowSize) return null;
  const stops = `the log stops at iteration ${end.iteration} of the run's ${end.total}`;
  return taken ? `${stops}: only ${counted(taken, 'iteration')} after the ${warmup} warm-up (wanted ${windowSize})`
    : `${stops}, within the ${warmup} warm-up iterations: the point has no iter time`;
}

/** One run: lines[from, to) of a log; errors name `file line N` (N counted in the whole file). */
function parseRun(lines: string[], from: number, to: number, file: string, source: string, opts: { warmup?: number; window?: number }, cut: string | null): ParseResult {
  const warmup = opts.warmup ?? POINT_WARMUP, windowSize = opts.window ?? POINT_WINDOW;
  const run = readRun(lines, from, to, file);
  const { args, iterations, memory } = run;
  const warnings: string[] = cut ? [cut] : [];
  warnings.push(...missing(run.sawArgs ? args : null, iterations.length > 0, memory.length > 0, run.theoretical !== null, run.oom, run.othersOom));
  const win = iterations.filter((r) => r.iteration > warmup).slice(-windowSize);
  const short = shortWindow(iterations, win.length, warmup, windowSize);
  if (short) warnings.push(short);
  const iterMs = median(win.map((r) => r.elapsedMs).filter((x): x is number => x !== null));
  const tflops = median(win.map((r) => r.tflopsPerGpu).filter((x): x is number => x !== null));
  if (win.length && tflops === null) warnings.push('no "throughput per GPU" in the iteration lines (run with --log-throughput)');
  warnings.push(...worldSizeNotes(args), ...zeroTimeNotes(iterations));
  const int = (k: string) => num(args[k]);
  const bool = (k: string) => (k in args ? args[k] === 'True' : null);
  const rc = args.recompute_granularity;
  const point: MeasuredPoint = {
    source,
    seqLength: int('seq_length'), tp: int('tensor_model_parallel_size'), cp: run.sawArgs ? (int('context_parallel_size') ?? 1) : null,
    pp: int('pipeline_model_parallel_size'), sp: bool('sequence_parallel'),
    recompute: rc === undefined ? null : rc === 'None' ? 'none' : recomputeSpecFromArgs(args),
    microBatch: int('micro_batch_size'), numLayers: int('num_layers'), hiddenSize: int('hidden_size'),
    numHeads: int('num_attention_heads'), vocabSize: int('padded_vocab_size') ?? int('vocab_size'), worldSize: int('world_size'), flashAttention: bool('use_flash_attn'),
    iterMs, tflopsPerGpu: tflops, window: win.map((r) => r.iteration),
    // A loop, not Math.max(...xs): a long log has more memory lines than the call stack takes arguments.
    peakMaxAllocatedGiB: memory.length ? memory.reduce((x, m) => Math.max(x, m.maxAllocatedMiB), 0) / 1024 : null,
    peakMaxReservedGiB: memory.length ? memory.reduce((x, m) => Math.max(x, m.maxReservedMiB), 0) / 1024 : null,
    theoretical: run.theoretical, outOfMemory: run.oom, outOfMemoryOthers: run.othersOom,
  };
  return { point, args, iterations, memory, warnings, commands: run.commands, torchOptimizer: run.torchOptimizer };
}

/** The lines of one run read, each kind of line by its pattern; what cannot be is refused with its line number. */
function readRun(lines: string[], from: number, to: number, file: string): RunLines {
  const refuse: Refuse = (i, what) => { throw new InputError(`${file} line ${i + 1}: ${what}`); };
  const field: Field = (i, s, what, max = Infinity) => {
    if (s === undefined) return null;
    const x = decimalNumber(s); // a log prints decimal: a hex token is no number
    if (nonDecimal(s)) refuse(i, `${what} '${shown(s)}' is not a decimal number`);
    if (!Number.isFinite(x) || x < 0) refuse(i, `${what} '${shown(s)}' is not a non-negative finite number`);
    if (x > max) refuse(i, `${what} ${s} MB is more than any GPU holds (1 PiB)`);
    return x;
  };
  const run: RunLines = { args: {}, sawArgs: false, iterations: [], memory: [], theoretical: null, oom: false, othersOom: null, commands: [], torchOptimizer: false };
  const argLine = new Map<string, number>();
  let dumpAt = -1, ownOom = false;
  for (let i = from; i < to; i++) {
    const line = lines[i];
    if (DUMP_START.test(line)) {
      if (dumpAt >= 0) refuse(dumpAt, 'the argument dump opened here has no \'---- end of arguments ----\' before the next dump: it is cut off');
      dumpAt = i; run.sawArgs = true; continue;
    }
    if (DUMP_END.test(line)) { dumpAt = -1; continue; }
    if (dumpAt >= 0) { readArg(line, i, run.args, argLine, refuse); continue; }
    const it = ITERATION_LINE.exec(line);
    if (it) {
      run.iterations.push({
        iteration: Number(it[1]), totalIterations: Number(it[2]),
        elapsedMs: field(i, /elapsed time per iteration \(ms\):\s*([^\s|]+)/.exec(line)?.[1], 'elapsed time per iteration (ms)'),
        tflopsPerGpu: field(i, /throughput per GPU \(TFLOP\/s\/GPU\):\s*([^\s|]+)/.exec(line)?.[1], 'throughput per GPU (TFLOP/s/GPU)'),
        loss: num(/lm loss:\s*([^\s|]+)/.exec(line)?.[1]),
      });
      continue;
    }
    const mem = MEMORY_LINE.exec(line);
    if (mem) { run.memory.push(memoryRecord(mem, i, field, refuse)); continue; }
    const th = THEORETICAL_LINE.exec(line);
    if (th) {
      run.theoretical = {
        weightAndOptimizerMiB: field(i, th[1], 'theoretical weight and optimizer', MAX_MIB), activationMiB: field(i, th[2], 'theoretical activation', MAX_MIB),
        totalMiB: field(i, th[3], 'theoretical total', MAX_MIB),
      };
      continue;
    }
    if (OOM_LINE.test(line)) {
      run.oom = true;
      const cause = oomCause(line, i);
      if (cause === 'own') ownOom = true;
      else if (cause) run.othersOom ??= cause;
    } else if (COMMAND_LINE.test(line)) run.commands.push(line);
    else if (TORCH_OPTIMIZER_LINE.test(line)) run.torchOptimizer = true;
  }
  if (ownOom) run.othersOom = null; // one rank (or one retry) out of memory on its own: the run's verdict
  if (dumpAt >= 0) refuse(dumpAt, `the argument dump opened here has no '---- end of arguments ----' (the ${to < lines.length ? 'run' : 'file'} ends at line ${to}): it is cut off`);
  const a = run.args;
  if (a.recompute_granularity === 'full' && !(['uniform', 'block'].includes(a.recompute_method) && /^[1-9]\d*$/.test(a.recompute_num_layers ?? '')))
    refuse(argLine.get('recompute_granularity')!, `recompute_granularity full without a recompute_method (uniform or block) and a recompute_num_layers (got ${a.recompute_method ?? 'none'} and ${a.recompute_num_layers ?? 'none'}): Megatron-LM refuses that`);
  return run;
}

/**
 * One `  name ....... value` line of a dump into args: refused when it repeats an argument with another value or its value
 * cannot be. The name is found after whatever a launcher or logger puts before each line ('[default0]:' of torchrun --tee,
 * '0: ' of srun --label, a time stamp): the first word after a blank, or at the line's start, followed by its dots.
 */
function readArg(line: string, i: number, args: MegatronArgs, argLine: Map<string, number>, refuse: Refuse): void {
  const m = /(?:^|\s)([A-Za-z_]\w*) \.+ ?(.*)$/.exec(line);
  if (!m) return;
  const v = m[2].trim(), first = argLine.get(m[1]);
  if (first !== undefined && args[m[1]] !== v)
    refuse(i, `argument ${m[1]} is given twice in one argument dump with different values ('${shown(args[m[1]])}' at line ${first + 1}, '${shown(v)}' here)`);
  const bad = argProblem(m[1], v);
  if (bad) refuse(i, `argument ${m[1]} '${shown(v)}' ${bad}`);
  args[m[1]] = v;
  if (first === undefined) argLine.set(m[1], i);
}

/** A memory line's values, refused where they cannot be: a peak below the value it is the peak of, or no memory at all once training ran. */
function memoryRecord(mem: RegExpExecArray, i: number, field: Field, refuse: Refuse): MemoryRecord {
  const [a, ma, r, mr] = ['allocated', 'max allocated', 'reserved', 'max reserved'].map((what, j) => field(i, mem[3 + j], `memory ${what}`, MAX_MIB)!);
  if (a > ma) refuse(i, `memory allocated ${mem[3]} MB exceeds max allocated ${mem[4]} MB (the peak of allocated)`);
  if (r > mr) refuse(i, `memory reserved ${mem[5]} MB exceeds max reserved ${mem[6]} MB (the peak of reserved)`);
  if (ma === 0) refuse(i, 'memory max allocated is 0 MB: a rank that trained holds at least its weights');
  return { rank: Number(mem[1]), afterIterations: Number(mem[2]), allocatedMiB: a, maxAllocatedMiB: ma, reservedMiB: r, maxReservedMiB: mr };
}

/**
 * A dump whose world_size is not TP × CP × PP × DP (Megatron-LM sets data_parallel_size = world_size /
 * (TP·CP·PP), so a log it wrote always agrees): a dump edited, or pieced from two runs. Said, not refused:
 * the point and the prediction take the sizes as the dump gives them.
 */
function worldSizeNotes(args: MegatronArgs): string[] {
  const world = num(args.world_size);
  if (world === null) return [];
  const size = (k: string) => num(args[k]) ?? 1, dpGiven = num(args.data_parallel_size) !== null;
  const sizes = [size('tensor_model_parallel_size'), size('context_parallel_size'), size('pipeline_model_parallel_size'), size('data_parallel_size')];
  const product = sizes.reduce((a, b) => a * b, 1);
  if (product === world) return [];
  return [`world_size ${world} is not TP × CP × PP × DP = ${sizes.join(' × ')} = ${product}${dpGiven ? '' : ' (no data_parallel_size in the dump: DP taken as 1)'}: ` +
    'Megatron-LM runs exactly that many ranks, so the dump was edited or is of two runs; the point and the prediction use its TP, CP, PP and DP as given (check the log)'];
}

/**
 * Other processes' memory at and above which an out-of-memory is theirs: more than a CUDA context of an idle process
 * (about 0.5 GiB), and enough that, free, it would have covered the allocation that failed.
 */
export const OTHERS_OOM_MIN_GIB = 1;

/** A size as PyTorch's format_size prints it ("2.00 GiB", "512.00 KiB", "1000 bytes") in GiB. */
const sizeGiB = (x: string, unit: string) => decimalNumber(x) / { bytes: 2 ** 30, KiB: 2 ** 20, MiB: 2 ** 10, GiB: 1 }[unit]!;
const SIZE = String.raw`([\d.]+) (bytes|KiB|MiB|GiB)`;
const OOM_FIGURES = new RegExp(String.raw`Tried to allocate ${SIZE}\. GPU \d+ has a total capacity of ${SIZE} of which ${SIZE} is free\..*?` +
  String.raw`Including non-PyTorch memory, this process has ${SIZE} memory in use`);

/**
 * What caused the out-of-memory a line reports: other processes (their share, from PyTorch 2.1's message, at least
 * OTHERS_OOM_MIN_GIB and enough to have covered the allocation), 'own' (the message gives the allocation and no such
 * share: PyTorch's older "(GPU 0; 79.15 GiB total capacity; …)", which does not give this process's memory outside
 * PyTorch's (its CUDA context, NCCL's buffers), is taken as the run's own), or null (no figures: a traceback's echo).
 */
function oomCause(line: string, i: number): OthersOom | 'own' | null {
  if (!line.includes('Tried to allocate')) return null;
  const m = OOM_FIGURES.exec(line);
  if (!m) return 'own';
  const [requestedGiB, capacityGiB, freeGiB, processGiB] = [1, 3, 5, 7].map((k) => sizeGiB(m[k], m[k + 1]));
  const otherGiB = capacityGiB - freeGiB - processGiB;
  if (!(otherGiB >= OTHERS_OOM_MIN_GIB && freeGiB + otherGiB >= requestedGiB)) return 'own';
  return { otherGiB, capacityGiB, freeGiB, processGiB, requestedGiB, line: i + 1 };
}

/** "with other processes holding 120.65 GiB of the GPU's 139.80 GiB (…)": why such an out-of-memory is no verdict on the model. */
export function othersOomText(o: OthersOom): string {
  return `with other processes holding ${o.otherGiB.toFixed(2)} GiB of the GPU's ${o.capacityGiB.toFixed(2)} GiB (this process ${o.processGiB.toFixed(2)} GiB, ` +
    `${o.requestedGiB.toFixed(2)} GiB asked for, line ${o.line}): not a verdict on the run's configuration, which is not compared on it`;
}

/** Iteration lines that report 0.0 ms per iteration: no step takes no time (a timer that did not run, an edited log), yet a median may count them. */
function zeroTimeNotes(iterations: IterationRecord[]): string[] {
  const zero = iterations.filter((r) => r.elapsedMs === 0).map((r) => r.iteration);
  if (!zero.length) return [];
  const listed = zero.length > 5 ? `${zero.slice(0, 5).join(', ')} and ${zero.length - 5} more` : zero.join(', ');
  return [`elapsed time per iteration 0.0 ms at ${plural(zero.length, 'iteration')} ${listed}: no step takes no time (a timer that did not run, or an edited log?), ` +
    `and a median that counts ${plural(zero.length, 'it', 'them')} reads low: check the log before trusting its times`];
}

/** What a log lacks (args null: no argument dump), and whether it ran out of memory (and of what), as warnings. */
function missing(args: MegatronArgs | null, iterations: boolean, memory: boolean, theoretical: boolean, oom: boolean, others: OthersOom | null): string[] {
  const w: string[] = [];
  if (!args) w.push('no argument dump ("---- arguments ----") found: the run configuration is unknown');
  const want: [string, string][] = [
    ['seq_length', 'sequence length'], ['tensor_model_parallel_size', 'tensor-parallel size'], ['micro_batch_size', 'micro batch size'],
    ['num_layers', 'layers'], ['hidden_size', 'hidden size'], ['num_attention_heads', 'heads'],
  ];
  const none = args !== null && !Object.keys(args).length;
  if (none) w.push('the argument dump ("---- arguments ----") holds no line read as "  name ....... value": the run configuration is unknown');
  else if (args) for (const [k, what] of want) if (!(k in args)) w.push(`argument ${k} (${what}) not found in the argument dump`);
  if (args && !none && !('context_parallel_size' in args)) w.push('argument context_parallel_size not found: a release without context parallelism, taken as CP=1');
  if (!iterations) w.push('no iteration lines found: no iteration time or throughput');
  if (!memory) w.push('no "[Rank N] (after K iterations) memory (MB)" lines found: no measured memory (Megatron prints them with --log-memory-to-tensorboard or at the first log interval)');
  if (!theoretical) w.push('no "Theoretical memory footprints" line found');
  if (others) w.push(`the log reports CUDA out of memory ${othersOomText(others)}`);
  else if (oom) w.push('the log reports CUDA out of memory');
  return w;
}

/** The recompute setting of a dump as the CSV writes it: none | selective[:mod+mod] | full:method/N. */
function recomputeSpecFromArgs(args: MegatronArgs): string {
  const rc = args.recompute_granularity;
  if (rc === 'selective') {
    const mods = argList(args.recompute_modules);
    return mods.length && mods.join() !== 'core_attn' ? `selective:${mods.join('+')}` : 'selective';
  }
  if (rc === 'full') return `full:${args.recompute_method}/${args.recompute_num_layers}`;
  return rc;
}

/** A Megatron-LM argument as a list (`['core_attn', 'mlp']` → [core_attn, mlp]); plain values as one item. */
function argList(v: string | undefined): string[] {
  if (v === undefined || v === 'None') return [];
  const m = /^\[(.*)\]$/.exec(v.trim());
  return (m ? m[1].split(',') : [v]).map((x) => x.trim().replace(/^'|'$/g, '')).filter(Boolean);
}

/**
 * Arguments of a dump that change memory and that the model does not take, each as the flag and its
 * value (`--moe-layer-freq 2`): a prediction from such a log is not comparable with its measurement.
 * Each entry: the dump's name, the value(s) the model handles, and the flag.
 */
const UNMODELLED: [string, (v: string, args: MegatronArgs) => boolean, string][] = [
  ['moe_layer_freq', (v) => v === '1', '--moe-layer-freq'],
  ['moe_grouped_gemm', (v) => v === 'False', '--moe-grouped-gemm'],
  ['moe_pad_expert_input_to_capacity', (v) => v === 'False', '--moe-pad-expert-input-to-capacity'],
  ['multi_latent_attention', (v) => v === 'False', '--multi-latent-attention'],
  ['position_embedding_type', (v) => v !== 'relative' && v !== 'mrope', '--position-embedding-type'],
  ['mtp_num_layers', (v) => v === 'None' || v === '0', '--mtp-num-layers'],
  ['fp8', (v) => v === 'None', '--fp8-format'],
  ['fp4', (v) => v === 'None', '--fp4-format'],
  ['attention_softmax_in_fp32', (v) => v === 'False', '--attention-softmax-in-fp32'],
  ['cpu_offloading', (v) => v === 'False', '--cpu-offloading'],
  ['decoder_first_pipeline_num_layers', (v) => v === 'None', '--decoder-first-pipeline-num-layers'],
  ['decoder_last_pipeline_num_layers', (v) => v === 'None', '--decoder-last-pipeline-num-layers'],
  ['num_layers_per_virtual_pipeline_stage', (v) => v === 'None', '--num-layers-per-virtual-pipeline-stage'],
  ['account_for_embedding_in_pipeline_split', (v) => v === 'False', '--account-for-embedding-in-pipeline-split'],
  ['account_for_loss_in_pipeline_split', (v) => v === 'False', '--account-for-loss-in-pipeline-split'],
  ['recompute_modules', (v) => argList(v).every((x) => RECOMPUTE_MODULES.includes(x as RecomputeModule)), '--recompute-modules'],
  ['fine_grained_activation_offloading', (v) => v === 'False', '--fine-grained-activation-offloading'],
  ['expert_tensor_parallel_size', (v, a) => v === 'None' || v === (a.tensor_model_parallel_size ?? '1'), '--expert-tensor-parallel-size'],
  ['hybrid_override_pattern', (v) => v === 'None', '--hybrid-override-pattern'],
  ['heterogeneous_layers_config_path', (v) => v === 'None', '--heterogeneous-layers-config-path'],
  // RoPE's cached table is counted at the whole head (4·s·h/a: ropeTableTerm), the token dispatcher's kept probabilities
  // in the logits' dtype and its permutation unfused (dispatcherKeepsTerm): 1.0, None and False in every stored run.
  ['rotary_percent', (v) => decimalNumber(v) === 1, '--rotary-percent'],
  ['moe_router_dtype', (v) => v === 'None', '--moe-router-dtype'],
  ['moe_permute_fusion', (v) => v === 'False', '--moe-permute-fusion'],
  // The optimizer and number formats: the model holds Adam's two fp32 moments and fp32 master weights and
  // gradients, bf16 or fp16 parameters and activations, and heads of h/a channels.
  ['optimizer', (v) => v === 'adam', '--optimizer'],
  ['use_precision_aware_optimizer', (v) => v === 'False', '--use-precision-aware-optimizer'],
  ...(['main_grads_dtype', 'main_params_dtype', 'exp_avg_dtype', 'exp_avg_sq_dtype'] as const).map((n): [string, (v: string) => boolean, string] =>
    [n, (v) => v === 'torch.float32' || v === 'fp32', `--${n.replace(/_/g, '-')}`]),
  ['bf16', (v, a) => v === 'True' || a.fp16 === 'True', 'fp32 training (neither --bf16 nor --fp16)'],
  ['kv_channels', (v, a) => v === 'None' || decimalNumber(v) * Number(a.num_attention_heads) === Number(a.hidden_size), '--kv-channels'],
  ['distribute_saved_activations', (v) => v === 'False', '--distribute-saved-activations'],
  // Sharded data parallelism and more optimizer instances change what a GPU holds of the weights and state.
  ['use_torch_fsdp2', (v) => v === 'False', '--use-torch-fsdp2'],
  ['use_megatron_fsdp', (v) => v === 'False', '--use-megatron-fsdp'],
  ['use_custom_fsdp', (v) => v === 'False', '--use-custom-fsdp'],
  ['num_distributed_optimizer_instances', (v) => v === '1', '--num-distributed-optimizer-instances'],
];

/** What in a dump changes memory and is not modelled, as one flag-and-value string each (empty: everything is). */
export function unmodelledArgs(args: MegatronArgs): string[] {
  const out: string[] = [];
  for (const [name, handled, flag] of UNMODELLED) {
    const v = args[name];
    if (v === undefined || handled(v, args)) continue;
    out.push(v === 'True' || v === 'False' ? flag : `${flag} ${argList(v).join(' ') || v}`);
  }
  return out;
}

/**
 * The position embedding a dump ran, as Megatron-LM reads its arguments (never the model's own default, which follows
 * SwiGLU): position_embedding_type (its default learned_absolute; YaRN is RoPE of other frequencies; mrope and
 * relative are not modelled (unmodelledArgs), taken as rope and none, neither with a table); in a release before it (2023), use_rotary_position_embeddings and
 * add_position_embedding (--no-position-embedding), whose learned table with rotary embeddings too is taken as learned
 * (the table is what weighs), said; neither: learned_absolute, Megatron-LM's default, said in `notes`.
 */
function positionFromArgs(args: MegatronArgs, notes: string[]): NonNullable<ModelConfig['positionEmbedding']> {
  const type = args.position_embedding_type;
  if (type !== undefined && type !== 'None') return type === 'yarn' || type === 'mrope' ? 'rope' : type === 'relative' ? 'none' : (type as 'learned_absolute' | 'rope' | 'none');
  const rotary = args.use_rotary_position_embeddings === 'True', table = args.add_position_embedding !== 'False';
  if (args.use_rotary_position_embeddings === undefined && args.add_position_embedding === undefined) {
    notes.push("no position_embedding_type in the dump: learned_absolute assumed (Megatron-LM's default, whatever --swiglu)");
    return 'learned_absolute';
  }
  if (rotary && table) notes.push('use_rotary_position_embeddings True with add_position_embedding True: this release keeps a learned position table beside the rotary embeddings; taken as learned_absolute');
  return table ? 'learned_absolute' : rotary ? 'rope' : 'none';
}

/**
 * The position table's rows a dump gives: max_position_embeddings (Megatron-LM sizes the learned table by it, and
 * requires it). Below seq_length, which Megatron-LM refuses (arguments.py), the dump was edited: said, and the
 * table taken as the sequence's rows, as for a dump without it.
 */
function positionRowsFromArgs(args: MegatronArgs, notes: string[]): number | undefined {
  const max = num(args.max_position_embeddings), seq = num(args.seq_length)!;
  if (max === null || max >= seq) return max ?? undefined;
  notes.push(`max_position_embeddings ${max} is less than seq_length ${seq}: Megatron-LM refuses that, so the dump was edited or is of two runs; ` +
    `the position table is taken as ${seq} rows, the least Megatron-LM runs (check the log)`);
  return undefined;
}

/**
 * Megatron-LM's bias_activation_fusion from a dump, as argument_utils.py sets it: bias_swiglu_fusion with SwiGLU,
 * bias_gelu_fusion with GeLU (as the dump prints it: arguments.py has turned it off where linear biases are); undefined
 * where the dump lacks it.
 */
export function activationFusionFromArgs(args: MegatronArgs): boolean | undefined {
  const v = args.swiglu === 'True' ? args.bias_swiglu_fusion : args.bias_gelu_fusion;
  return v === undefined ? undefined : v === 'True';
}

/**
 * A run's model and parallel setup from its log: its argument dump (configFromArgs), and what the dump does not say
 * but the log does: the optimizer PyTorch's (torchOptimizer) where Megatron-LM fell back to it.
 */
export function configFromLog(res: Pick<ParseResult, 'args' | 'torchOptimizer'>): ReturnType<typeof configFromArgs> {
  const c = configFromArgs(res.args);
  return 'error' in c || !res.torchOptimizer ? c : { ...c, par: { ...c.par, torchOptimizer: true } };
}

/**
 * The memory model's configuration from a log's argument dump (stack megatron), so a log predicts
 * itself. Returns null with the reason when the dump lacks what the model needs.
 */
export function configFromArgs(args: MegatronArgs): { model: ModelConfig; par: ParallelConfig; notes: string[] } | { error: string } {
  /** A numeric argument (integer or not), undefined when absent or None. */
  const int = (k: string) => (args[k] === undefined || args[k] === 'None' ? undefined : decimalNumber(args[k]));
  const bool = (k: string) => args[k] === 'True';
  if (!Object.keys(args).length) return { error: 'no argument of the log was read: no argument dump, or none of its lines read (the model and its layout are unknown)' };
  for (const k of ['num_layers', 'hidden_size', 'num_attention_heads', 'seq_length'])
    if (!Number.isInteger(int(k))) return { error: `the argument dump has no ${k}` };
  const notes: string[] = [];
  const model: ModelConfig = {
    numLayers: int('num_layers')!, hiddenSize: int('hidden_size')!, numAttentionHeads: int('num_attention_heads')!,
    numQueryGroups: bool('group_query_attention') ? int('num_query_groups') : undefined, ffnHiddenSize: int('ffn_hidden_size'),
    swiglu: bool('swiglu'), vocabSize: int('padded_vocab_size') ?? int('vocab_size'), untieEmbeddings: bool('untie_embeddings_and_output_weights'),
    attentionDropout: args.attention_dropout === undefined ? undefined : decimalNumber(args.attention_dropout),
    hiddenDropout: args.hidden_dropout === undefined ? undefined : decimalNumber(args.hidden_dropout),
    positionEmbedding: positionFromArgs(args, notes), maxPositionEmbeddings: positionRowsFromArgs(args, notes),
    biasLinear: args.add_bias_linear === undefined ? undefined : bool('add_bias_linear'), rmsNorm: args.normalization === 'RMSNorm',
    biasActivationFusion: activationFusionFromArgs(args),
  };
  const experts = int('num_experts');
  if (experts) {
    model.moe = {
      numExperts: experts, routerTopk: int('moe_router_topk') ?? 2, ffnHiddenSize: int('moe_ffn_hidden_size'),
      sharedExpertSize: int('moe_shared_expert_intermediate_size'), capacityFactor: int('moe_expert_capacity_factor'),
      dispatcher: (args.moe_token_dispatcher_type ?? 'allgather') as NonNullable<ModelConfig['moe']>['dispatcher'],
      // the score function where it is not the default (softmax), for the expert bias's requirement (validate)
      ...(args.moe_router_score_function && args.moe_router_score_function !== 'softmax' ? { scoreFunction: args.moe_router_score_function as MoeScoreFunction } : {}),
      ...(bool('moe_router_enable_expert_bias') ? { expertBias: true } : {}),
    };
  }
  if (model.vocabSize === undefined) notes.push(`no vocab_size in the dump: ${DEFAULT_VOCAB_SIZE} assumed`);
  const rc = args.recompute_granularity === undefined || args.recompute_granularity === 'None' ? 'none' : args.recompute_granularity;
  const impl = args.transformer_impl ?? 'transformer_engine';
  const backend = (args.attention_backend ?? '').replace('AttnBackend.', '');
  // The local implementation's attention is unfused (stores the s² scores); TE's auto/flash/fused backends are fused.
  const flash = bool('use_flash_attn') || (impl === 'transformer_engine' && ['', 'auto', 'flash', 'fused'].includes(backend));
  if (!('transformer_impl' in args)) notes.push('no transformer_impl in the dump: transformer_engine assumed');
  const vpp = int('virtual_pipeline_model_parallel_size');
  const par: ParallelConfig = {
    seqLength: int('seq_length')!, microBatchSize: int('micro_batch_size') ?? 1, tensorParallel: int('tensor_model_parallel_size') ?? 1,
    contextParallel: int('context_parallel_size') ?? 1, pipelineParallel: int('pipeline_model_parallel_size') ?? 1, virtualStages: vpp ?? 1,
    dataParallel: int('data_parallel_size') ?? 1, sequenceParallel: bool('sequence_parallel'), recompute: rc as ParallelConfig['recompute'],
    flashAttention: flash, distributedOptimizer: bool('use_distributed_optimizer'), stack: 'megatron', fp32Residual: bool('fp32_residual_connection'),
    cpCommType: (argList(args.cp_comm_type)[0] ?? 'p2p') as ParallelConfig['cpCommType'],
    expertParallel: int('expert_model_parallel_size') ?? 1,
  };
  const gbs = int('global_batch_size');
  if (gbs !== undefined && Number.isInteger(gbs / (par.microBatchSize * par.dataParallel))) par.numMicrobatches = gbs / (par.microBatchSize * par.dataParallel);
  if (rc === 'selective') par.recomputeModules = (argList(args.recompute_modules).length ? argList(args.recompute_modules) : ['core_attn']) as ParallelConfig['recomputeModules'];
  if (rc === 'full') {
    par.recomputeMethod = args.recompute_method as ParallelConfig['recomputeMethod'];
    par.recomputeNumLayers = int('recompute_num_layers');
  }
  return { model, par, notes };
}
