/**
 * `flashring cp-plan`: what a context-parallel node would show, without tensors. The schemes'
 * steps and each rank's peak come from a dry run of their rank programs (src/cp/launch/dry.ts), compute comes from `--compute-tflops` or from timing the kernels briefly on the local
 * adapter (one rank, forward + backward), and the link model composes the timeline.
 */
import { InputError } from '../errors.js';
import { aligned, sig3 } from '../table.js';
import { POS_MAX } from '../mask.js';
import { acquireDevices, adapterName } from '../gpu/device.js';
import { nodeGPU } from '../gpu/node.js';
import { Precision } from '../kernels/precision.js';
import { randn } from '../reference/compare.js';
import { numberArg, parseCommand } from './args.js';
import { MAX_RANKS, computeTflopsArg } from './ringArgs.js';
import { formatBytes } from '../bytes.js';
import { LINK_NAMES, Link, Rate, resolveLink } from '../cp/plan/linkModel.js';
import { SchemePlan, planScheme } from '../cp/launch/planSchemes.js';
import { ringAttention } from '../cp/launch/ringAttention.js';
import { LAYOUTS, Layout, validateRing } from '../cp/plan/schedule.js';
import { Scheme, chosenSizesNote, resolveScheme, schemeDef, schemeDefs, schemeNames, schemeSizes } from '../cp/schemes/registry.js';
import { AttentionShape, numel, validateShape } from '../shape.js';

/** Query heads a GPU that cp-plan plans at most (the largest models hold 128 or fewer). */
const MAX_PLAN_HEADS = 4096;

/** The help (a function: it lists the registry's schemes as they are when asked). */
const help = () => `usage: flashring cp-plan --context-parallel-size R --seq-length N (--num-attention-heads H --hidden-size E | --heads H --head-dim D) [options]
  --cp-comm-type T        ${schemeNames().join('|')} (default: every scheme the shape allows)
${schemeDefs().map((d) => `                            ${d.name.padEnd(11)} ${d.about}`).join('\n')}
  --hierarchical-context-parallel-sizes A,P   a2a+p2p: a2a groups of A, a ring of P groups (A·P = R;
                          default: the largest A below R that divides R and the heads)
  --layout L              ${LAYOUTS.join('|')} (default zigzag)
  --num-query-groups G    key/value heads (GQA; default H)    --micro-batch-size B (default 1)
  --tensor-model-parallel-size T   heads and K/V heads per GPU are H/T and G/T (as the page; default 1; H/T at most ${MAX_PLAN_HEADS})
  --causal | --no-causal  causal attention (default causal, as the page and a GPT's training)
  --precision f16|f32 (default f16)
  --link NAME             ${LINK_NAMES.join('|')} (default nvlink-h200)
  --link-gbps G --link-latency-us U   the custom link: bandwidth per direction (1e-6 to 1e6 Gbit/s) and latency (0 to 1e9 µs)
  --compute-tflops X      compute at X TFLOP/s, up to 1e7 (default: time the kernels briefly on this adapter)
  --json                  machine-readable output`;

const OPTS = {
  'context-parallel-size': { type: 'string' }, 'cp-comm-type': { type: 'string' }, 'hierarchical-context-parallel-sizes': { type: 'string' },
  layout: { type: 'string' }, 'seq-length': { type: 'string' }, 'num-attention-heads': { type: 'string' }, 'hidden-size': { type: 'string' },
  'num-query-groups': { type: 'string' }, heads: { type: 'string' }, 'head-dim': { type: 'string' }, 'micro-batch-size': { type: 'string' },
  causal: { type: 'boolean' }, 'no-causal': { type: 'boolean' }, 'tensor-model-parallel-size': { type: 'string' }, precision: { type: 'string' }, link: { type: 'string' }, 'link-gbps': { type: 'string' },
  'link-latency-us': { type: 'string' }, 'compute-tflops': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
} as const;

type Values = Record<string, string | boolean | undefined>;

/** A required positive integer flag (default `d`), at most 2^31. */
function int(v: Values, name: string, d?: number): number {
  const s = v[name];
  if (s === undefined && d === undefined) throw new InputError(`--${name} is required (see flashring cp-plan --help)`);
  return s === undefined ? d! : numberArg(name, String(s), { integer: true, min: 1, max: 2 ** 31, what: 'a positive integer up to 2^31' });
}

export interface CpPlanRequest {
  /** One GPU's attention: its heads are the model's over `tensorParallel`. */
  shape: AttentionShape;
  /** --tensor-model-parallel-size (1 unless given): the heads the shape holds are the model's divided by it. */
  tensorParallel: number;
  R: number;
  causal: boolean;
  layout: Layout;
  precision: Precision;
  schemes: Scheme[];
  /** Schemes the shape cannot take (when none was asked for), each with the reason. */
  skipped: { scheme: Scheme; reason: string }[];
  sizes?: string;
  /** The sizes were not given: chosen as the page chooses them (defaultSizes). */
  sizesChosen: boolean;
  link: Link;
  computeTflops?: number;
}

export function parseCpPlan(v: Values): CpPlanRequest {
  const R = int(v, 'context-parallel-size');
  // The plan walks every rank's steps over every pair of chunks: 64 ranks plan in seconds, 512 took over a minute.
  if (R > MAX_RANKS) throw new InputError(`--context-parallel-size ${R}: cp-plan plans at most ${MAX_RANKS} ranks (as attention --cp runs at most ${MAX_RANKS})`);
  const N = int(v, 'seq-length');
  // The kernels hold token positions in i32 below POS_MAX (src/mask.ts): said here, not as the ranks' positions.
  if (N > POS_MAX) throw new InputError(`--seq-length ${N}: at most ${POS_MAX} tokens (2^29: the kernels hold token positions in 32-bit integers)`);
  const { H, D } = headsAndDim(v);
  const G = int(v, 'num-query-groups', H), T = int(v, 'tensor-model-parallel-size', 1);
  if (H % G) throw new InputError(`--num-query-groups ${G} must divide the heads (${H}): each K/V head serves a whole group of query heads`);
  // One GPU's attention under tensor parallelism: H/T heads and G/T K/V heads (Megatron-LM requires T to divide both).
  if (H % T || G % T) throw new InputError(`--tensor-model-parallel-size ${T} must divide the heads (${H}) and the K/V heads (${G}), as Megatron-LM requires`);
  if (v.causal && v['no-causal']) throw new InputError('--causal and --no-causal contradict each other: give one');
  const shape: AttentionShape = { B: int(v, 'micro-batch-size', 1), Hq: H / T, Hkv: G / T, Nq: N, Nk: N, D };
  validateShape(shape);
  // A plan's cost grows with the heads a GPU holds (its transfers list their row ranges; the micro batch is scaled).
  if (shape.Hq > MAX_PLAN_HEADS)
    throw new InputError(`cp-plan plans at most ${MAX_PLAN_HEADS} query heads a GPU (heads / --tensor-model-parallel-size), got ${shape.Hq}: give fewer heads or a larger --tensor-model-parallel-size`);
  const layout = (v.layout ?? 'zigzag') as string;
  validateRing(N, R, layout);
  const precision = (v.precision ?? 'f16') as Precision;
  if (precision !== 'f16' && precision !== 'f32') throw new InputError(`--precision must be f16 or f32, got '${precision}'`);
  const link = resolveLink((v.link as string | undefined) ?? 'nvlink-h200', v['link-gbps'] as string | undefined, v['link-latency-us'] as string | undefined);
  const computeTflops = computeTflopsArg(v['compute-tflops'] as string | undefined);
  const asked = v['cp-comm-type'] as string | undefined;
  const given = v['hierarchical-context-parallel-sizes'] as string | undefined;
  // Each scheme the shape takes, with its sizes where it takes sizes (given, or its default: the
  // largest a2a group below R that divides the heads, as the page); why not where it does not.
  let sizes = given, sizesChosen = false;
  const why = new Map<Scheme, string | null>();
  for (const name of asked !== undefined ? [asked] : schemeNames()) {
    try {
      const takes = !!schemeDef(name).defaultSizes;
      const r = schemeSizes(name, R, shape, asked !== undefined || takes ? given : undefined);
      if (takes) [sizes, sizesChosen] = [r.sizes, r.chosen];
      resolveScheme(name, R, shape, r.sizes);
      why.set(name, null);
    } catch (e) {
      if (asked !== undefined || !(e instanceof InputError)) throw e;   // one line naming what is wrong
      why.set(name, e.message);
    }
  }
  const schemes = [...why].filter(([, w]) => w === null).map(([n]) => n);
  const skipped = [...why].filter(([, w]) => w !== null).map(([scheme, reason]) => ({ scheme, reason: reason! }));
  return { shape, tensorParallel: T, R, causal: !v['no-causal'], layout: layout as Layout, precision, schemes, skipped, sizes, sizesChosen, link, computeTflops };
}

/** The heads and head dim: --heads/--head-dim or Megatron-LM's --num-attention-heads/--hidden-size, consistent where both are given. */
function headsAndDim(v: Values): { H: number; D: number } {
  if (v.heads === undefined && v['num-attention-heads'] === undefined)
    throw new InputError('give the heads: --heads H with --head-dim D, or --num-attention-heads H with --hidden-size E');
  const H = int(v, v.heads !== undefined ? 'heads' : 'num-attention-heads');
  if (v.heads !== undefined && v['num-attention-heads'] !== undefined && int(v, 'num-attention-heads') !== H)
    throw new InputError(`--heads ${H} and --num-attention-heads ${v['num-attention-heads']} disagree: give one of them`);
  if (v['head-dim'] === undefined && v['hidden-size'] === undefined)
    throw new InputError(`give the head dim: --head-dim D, or --hidden-size E (E = ${H} heads × D)`);
  if (v['head-dim'] === undefined) {
    const E = int(v, 'hidden-size');
    if (E % H) throw new InputError(`--hidden-size (${E}) must be a multiple of the heads (${H})`);
    return { H, D: E / H };
  }
  const D = int(v, 'head-dim');
  if (v['hidden-size'] !== undefined && int(v, 'hidden-size') !== H * D)
    throw new InputError(`--hidden-size ${v['hidden-size']} is not ${H} heads × --head-dim ${D} (= ${H * D}): give one of them, or make them agree`);
  return { H, D };
}

/** Most query heads the rate is measured on: a rate per FLOP needs a few heads, not all (100000 would fill the host). */
const MEASURE_HEADS = 16;

/** The heads of the measuring run: at most MEASURE_HEADS query heads, the GQA group kept where it fits. */
function measuredHeads(s: AttentionShape): { Hq: number; Hkv: number } {
  const g = s.Hq / s.Hkv;
  if (g >= MEASURE_HEADS) return { Hq: MEASURE_HEADS, Hkv: 1 };
  const Hkv = Math.min(s.Hkv, Math.floor(MEASURE_HEADS / g));
  return { Hq: Hkv * g, Hkv };
}

/** Forward and backward TFLOP/s of the kernels on the local adapter: one rank, a short run (causal or not, as asked). */
async function measureRate(req: CpPlanRequest): Promise<{ rate: { forward: number; backward: number }; adapter: string; N: number; cpu: boolean }> {
  const [dev] = await acquireDevices(await nodeGPU(), 1);
  try {
    const N = Math.min(req.shape.Nq, dev.isCPU ? 256 : 4096);
    const s = { ...req.shape, ...measuredHeads(req.shape), B: 1, Nq: N, Nk: N };
    const x = { q: randn(numel(s, 'q'), 1), k: randn(numel(s, 'kv'), 2), v: randn(numel(s, 'kv'), 3), dout: randn(numel(s, 'q'), 4) };
    // Pipelined where GPU timestamps time the steps: the GPU's clock stays up between them.
    const run = () => ringAttention([dev], s, x, { causal: req.causal, precision: req.precision, ranks: 1, pipelined: dev.hasTimestamps });
    await run(); // pipelines compile on first use
    const tl = (await run()).timeline;
    const rate = (ph: 'forward' | 'backward') => {
      const steps = tl.phases.find((p) => p.phase === ph)!.steps;
      const ms = steps.reduce((a, st) => a + (st.gpuComputeMs ?? st.computeMs), 0);
      return steps.reduce((a, st) => a + st.flops, 0) / (ms / 1e3) / 1e12;
    };
    return { rate: { forward: rate('forward'), backward: rate('backward') }, adapter: adapterName(dev.adapter), N, cpu: dev.isCPU };
  } finally {
    dev.destroy();
  }
}

/** Said under the header where the rate was measured on a CPU adapter, whose times read as a GPU's would be thousands of times off. */
export const CPU_RATE_NOTE = 'note: that adapter is a CPU (lavapipe or the like), so the times below are its own; to plan for a GPU, give --compute-tflops X (its attention TFLOP/s)';

/** What cp-plan's columns are, under its table (the JSON's hierarchy, predicted.phases, commFraction, tflopsPerGpu, rankPeakBytes). */
export const CP_PLAN_COLUMNS = [
  'columns (predicted by the link model for R GPUs on the link, the attention alone): sizes = the a2a group A and the ring of P groups (A·P = R);',
  'forward, backward = each phase\'s time in ms; comm% = communication not hidden behind compute, as a share of forward + backward;',
  'TFLOP/s per GPU = the attention\'s FLOPs a GPU over that time; buffers = each rank\'s peak attention bytes (the dry run\'s ledger, exact)',
];

/** Every scheme of the request planned by a dry run of its rank programs and timed by the link model. */
export async function planSchemes(req: CpPlanRequest, rate: Rate): Promise<SchemePlan[]> {
  const x = { shape: req.shape, R: req.R, mask: { causal: req.causal }, layout: req.layout, precision: req.precision, link: req.link, rate };
  const plans: SchemePlan[] = [];
  for (const scheme of req.schemes) plans.push(await planScheme(x, scheme, schemeDef(scheme).defaultSizes ? req.sizes : undefined));
  return plans;
}

export async function cpPlanCommand(argv: string[]): Promise<number> {
  const { values } = parseCommand('cp-plan', argv, OPTS);
  if (values.help) return (console.log(help()), 0);
  const req = parseCpPlan(values);
  const measured = req.computeTflops === undefined ? await measureRate(req) : null;
  const rate: Rate = measured?.rate ?? req.computeTflops!;
  const plans = await planSchemes(req, rate);
  const compute = measured ? { source: 'measured', adapter: measured.adapter, N: measured.N, tflops: measured.rate } : { source: 'given', tflops: rate };
  if (values.json) {
    console.log(JSON.stringify({ kind: 'flashring.cp-plan', version: 1, shape: req.shape, tensorParallel: req.tensorParallel, R: req.R, causal: req.causal, layout: req.layout, precision: req.precision, link: req.link, compute, schemes: plans, skipped: req.skipped, ...(req.sizesChosen ? { sizesChosen: req.sizes } : {}) }, null, 1));
    return 0;
  }
  const s = req.shape;
  const r = typeof rate === 'number' ? `${rate}` : `${rate.forward.toPrecision(3)} fwd / ${rate.backward.toPrecision(3)} bwd`;
  // Under TP the heads are one GPU's: said with the model's, which were given.
  const T = req.tensorParallel, tp = T > 1 ? ` a GPU (${s.Hq * T}${s.Hkv === s.Hq ? '' : `, K/V ${s.Hkv * T}`} over TP=${T})` : '';
  console.log(`cp-plan: B=${s.B} H=${s.Hq}${s.Hkv === s.Hq ? '' : ` (K/V heads ${s.Hkv})`}${tp} N=${s.Nq} D=${s.D} ${req.causal ? 'causal' : 'full'} ${req.precision}, CP=${req.R} ${req.layout}`);
  console.log(`link ${req.link.name}: ${req.link.gbps} Gbit/s, ${req.link.latencyUs} µs; compute ${r} TFLOP/s${measured ? ` (measured on ${measured.adapter} at N=${measured.N})` : ''}`);
  if (measured?.cpu) console.log(CPU_RATE_NOTE);
  // One table whatever the figures' widths (a rate of 1e-6 TFLOP/s pushed its column past the header's).
  const ms = (p: (typeof plans)[number], name: string) => p.predicted.phases.find((x) => x.phase === name)!.stepMs.reduce((a, b) => a + b, 0).toFixed(3);
  const rows = plans.map((p) => [p.scheme, p.hierarchy.join(','), ms(p, 'forward'), ms(p, 'backward'), (100 * p.predicted.commFraction).toFixed(1), sig3(p.predicted.tflopsPerGpu), formatBytes(p.rankPeakBytes)]);
  for (const line of aligned([['scheme', 'sizes', 'forward(ms)', 'backward(ms)', 'comm%', 'TFLOP/s per GPU', 'attention buffers per rank'], ...rows], [0, 1])) console.log(line);
  if (plans.length) console.log(CP_PLAN_COLUMNS.join('\n'));
  for (const x of req.skipped) console.log(`${x.scheme.padEnd(10)} not planned: ${x.reason}`);
  for (const name of req.schemes) if (req.sizesChosen && schemeDef(name).defaultSizes) console.log(chosenSizesNote(name, req.sizes!, req.R));
  return 0;
}
