/**
 * `flashring advise`: the flags (a model as `flashring memory` takes it, or a preset; a sequence
 * length; the GPUs: count, HBM, link) and the printing. The search itself (every TP × CP
 * (× --cp-comm-type) × PP × recompute × distributed optimizer layout that fits, ranked by predicted
 * step time, and why) is src/memory/advise.ts, which the page's advisor panel runs too.
 */
import { InputError } from '../errors.js';
import { CP_COMM_TYPES, DEFAULT_VOCAB_SIZE, EP_GROUPS, GIB, parseRecomputeSpec } from '../memory/model.js';
import { H200, timeCheckedLines } from '../memory/time/devices.js';
import { GPUS_PER_NODE, INTER_NODE_LINK } from '../memory/time/iteration.js';
import { candidates, fitsText, layoutLabel, leftOutText, nothingFits, reasons, sameStepTime, setupText, skippedLines, skipText, tokensPerSecondText, wholeMs, type AdviseRequest, type AdviseResult, type AdviseWords, type Candidate, type Evaluated } from '../memory/advise.js';
import { DEFAULT_MARGIN } from '../memory/headroom.js';
import { LINKS, LINK_NAMES, resolveLink } from '../cp/plan/linkModel.js';
import { numberArg, parseCommand } from './args.js';
import { MODEL_OPTS, configFromFlags, joinModuleArgs, refuseOthers } from './memory.js';
import { counted } from '../plural.js';
import { MAX_BETWEEN, MAX_GPUS, gpusRefusal, wouldFit, wouldFitLines, type GpusRefusal, type Remedy, type WouldFit } from '../memory/adviseForward.js';

export { layoutConfig } from '../memory/advise.js';

const HELP = `usage: flashring advise <model flags of flashring memory> --seq-length S --gpus N [options]
  Searches TP × CP (× --cp-comm-type ${CP_COMM_TYPES.join('|')}) × PP (× virtual stages 1, 2) × recompute
  (none, selective, selective:core_attn+mlp, full:uniform/1, full:block/N for a quarter, half and
  three quarters of a model chunk's layers: a stage's, or half of it with 2 virtual stages) ×
  distributed optimizer over N GPUs (TP with sequence parallelism, without it only where s/CP does
  not split over the TP ranks); keeps what fits the HBM with a margin (with a pipeline, its first and
  its last stage); ranks by predicted step time for the same global batch (a tie, as host-bound steps often are:
  the smaller peak first, said "(ties with N.)"). When nothing fits it names the
  smallest layout, then what would fit, each by the same search run again: the HBM a GPU the smallest needs,
  more GPUs (six doublings, each rounded up to a count advise takes, at most 65536, then the fewest that fits of the counts advise takes between the last
  doubling that does not fit and the first that does: every one where there are at most ${MAX_BETWEEN}, else up to ${MAX_BETWEEN} of
  them, evenly spaced, then narrowed around the first that fits), a shorter sequence on these GPUs (halving, down to 1/64).
  --gpus N                GPUs (TP up to --gpus-per-node; DP = N / (TP·CP·PP)); TP groups, in Megatron-LM's rank order,
                          may span nodes (TP=4 with 6 GPUs a node): such a group runs at the inter-node link
  --hbm-gib G             GPU memory in GiB (default 80; the H200 whose rates these are has ${H200.hbmGib} as PyTorch reports it)
  --margin F              keep a fraction of the HBM free (default ${DEFAULT_MARGIN}: ${fitsText(DEFAULT_MARGIN)})
  --global-batch-size B   sequences per step (default N: one per GPU's share)
  --link NAME             the link within a node: ${LINK_NAMES.join('|')} (default nvlink-h200); --link-gbps G (1e-6 to 1e6 Gbit/s) --link-latency-us U (0 to 1e9 µs) for custom
  --gpus-per-node G       GPUs a node (default 8): a group of ranks (TP, CP, EP, the gradients' DP × CP, the pipeline)
                          whose GPUs span nodes, in Megatron-LM's rank order, runs at the link between them;
                          beyond one node --gpus is a multiple of it (whole nodes, as torchrun launches them)
  --inter-node-link NAME  the link between nodes: ${Object.keys(LINKS).join('|')} (default ${INTER_NODE_LINK.name})
  --top K                 how many to print (default 5)
  --json                  every fitting candidate: tp, sp, cp, cpCommType, pp, vp, dp, recompute, iterMs, totalBytes, …;
                          the layouts left out (untrainable) and skipped (what the model, the sequence or the batch does not divide, or Megatron-LM refuses), each with why; timeChecked;
                          when none fits (exit 3) nothingFits, the verdict line, smallest, that layout, and wouldFit (else all null):
                          hbmGib, gpus, seqLength, each {tried, at, layouts, globalBatch, fastest}, and the text's lines of them;
                          gpus also between {from, to, counts, searched, notSearched}: the counts advise takes between the
                          last doubling that does not fit and the first that does, those searched, and those below at not searched;
                          each layout's memoryArgs: the flashring memory arguments that give its totalBytes
Rates: the H200 profile (src/memory/time/devices.ts); --hbm-gib changes the memory only.
TFLOP/s/GPU counts the model's FLOPs as Megatron-LM logs them (every product 3× its forward, attention over the causal
half; not what recompute or FlashAttention's backward run again), so it compares with a real run's log.`;

/** advise's shared lines in the CLI's words: its flags, and step times in whole ms (as every step time it prints). */
export const CLI_WORDS: AdviseWords = {
  hints: { 'global-batch': '--global-batch-size sets it' },
  allSkipped: "--json lists every skipped layout's",
  advisor: 'advise',
  gpusAtMost: (gpus) => `--gpus ${gpus} is as many as advise takes`,
  time: wholeMs,
};

const OPTS = {
  ...MODEL_OPTS, gpus: { type: 'string' }, margin: { type: 'string' }, 'global-batch-size': { type: 'string' }, link: { type: 'string' },
  'link-gbps': { type: 'string' }, 'link-latency-us': { type: 'string' }, top: { type: 'string' }, 'gpus-per-node': { type: 'string' }, 'inter-node-link': { type: 'string' },
} as const;

/** Flags of `memory` that the advisor chooses itself, or that mean nothing here: refused, not ignored. */
const SEARCHED = ['tensor-model-parallel-size', 'context-parallel-size', 'pipeline-model-parallel-size', 'data-parallel-size', 'sequence-parallel',
  'cp-comm-type', 'recompute-granularity', 'recompute-modules', 'recompute-method', 'recompute-num-layers', 'use-distributed-optimizer',
  'num-layers-per-virtual-pipeline-stage'];
/** Flags of the other commands that share advise's flag table (refuseOthers names where each belongs). */
const NOT_HERE = ['sweep', 'seq-lengths', 'lines', 'csv', 'force', 'compare'];

/** batchPerGpu: --global-batch-size not given (one sequence a GPU), so a search on more GPUs takes more. */
interface Request extends AdviseRequest { top: number; json: boolean; modelArgs: string[]; batchPerGpu: boolean }

/** Flags of advise's own, which `flashring memory` does not take (--global-batch-size is given per candidate, as advise used it). */
const ADVISE_ONLY = new Set(['gpus', 'margin', 'link', 'link-gbps', 'link-latency-us', 'top', 'gpus-per-node', 'inter-node-link', 'global-batch-size', 'json', 'help']);

/** The model's flags as given (`--recompute-modules`-style lists are refused by advise): `flashring memory` takes them as they are. */
function modelArgs(values: Record<string, string | boolean | undefined>): string[] {
  return Object.entries(values).filter(([k, v]) => v !== undefined && v !== false && !ADVISE_ONLY.has(k)).flatMap(([k, v]) => (v === true ? [`--${k}`] : [`--${k}`, String(v)]));
}

/**
 * The `flashring memory` arguments of a candidate: the model's flags as given, then the layout's (TP, SP, CP and its
 * type, PP and virtual stages, DP, recompute, distributed optimizer) and the global batch advise used; their total is the candidate's.
 */
export function memoryArgs(r: Pick<Request, 'modelArgs' | 'gbs' | 'model'>, c: Omit<Candidate, 'time'>): string[] {
  const rc = parseRecomputeSpec(c.recompute), a = [...r.modelArgs];
  a.push('--tensor-model-parallel-size', `${c.tp}`, '--context-parallel-size', `${c.cp}`, '--pipeline-model-parallel-size', `${c.pp}`, '--data-parallel-size', `${c.dp}`);
  if (c.sp) a.push('--sequence-parallel');
  if (c.cpCommType) a.push('--cp-comm-type', c.cpCommType);
  if (c.vp > 1) a.push('--num-layers-per-virtual-pipeline-stage', `${r.model.numLayers / (c.pp * c.vp)}`);
  if (c.distributedOptimizer) a.push('--use-distributed-optimizer');
  if (rc.recompute !== 'none') a.push('--recompute-granularity', rc.recompute);
  if (rc.recomputeModules) a.push('--recompute-modules', ...rc.recomputeModules);
  if (rc.recomputeMethod) a.push('--recompute-method', rc.recomputeMethod, '--recompute-num-layers', `${rc.recomputeNumLayers}`);
  return [...a, '--global-batch-size', `${r.gbs}`];
}

function request(argv: string[]): Request | null {
  const { values } = parseCommand('advise', joinModuleArgs(argv), OPTS);
  if (values.help) return null;
  for (const f of SEARCHED) if (values[f as keyof typeof values] !== undefined) throw new InputError(`--${f} is what advise searches: leave it out`);
  refuseOthers(values, 'advise', NOT_HERE);
  if (values['seq-length'] === undefined) throw new InputError('--seq-length is required (the sequence length to train at)');
  if (values.gpus === undefined) throw new InputError('--gpus is required (how many GPUs to spread the model over)');
  const gpus = numberArg('gpus', values.gpus, { integer: true, min: 1, max: MAX_GPUS, what: `a positive integer up to ${MAX_GPUS}` });
  const { model, par, hbmGib } = configFromFlags(values, true);
  const margin = values.margin === undefined ? DEFAULT_MARGIN : numberArg('margin', values.margin, { min: 0, max: 0.9, what: 'a fraction in [0, 0.9]' });
  const gbs = values['global-batch-size'] === undefined ? gpus : numberArg('global-batch-size', values['global-batch-size'], { integer: true, min: 1, max: 1e7, what: 'a positive integer' });
  const link = resolveLink(values.link ?? 'nvlink-h200', values['link-gbps'], values['link-latency-us']);
  const top = values.top === undefined ? 5 : numberArg('top', values.top, { integer: true, min: 1, max: 1000, what: 'an integer from 1 to 1000' });
  const gpusPerNode = values['gpus-per-node'] === undefined ? GPUS_PER_NODE : numberArg('gpus-per-node', values['gpus-per-node'], { integer: true, min: 1, max: 1024, what: 'a positive integer up to 1024' });
  const refused = gpusRefusal({ gpus, gpusPerNode, gbs, base: par });
  if (refused) throw new InputError(refusalText(refused, gpus, values['global-batch-size'] !== undefined));
  const inter = values['inter-node-link'] ?? INTER_NODE_LINK.name;
  if (!(inter in LINKS)) throw new InputError(`--inter-node-link must be ${Object.keys(LINKS).join(', ')}, got '${inter}'`);
  return { model, base: par, gpus, hbmGib, margin, gbs, link, interNodeLink: LINKS[inter as keyof typeof LINKS], gpusPerNode, top, json: !!values.json, modelArgs: modelArgs(values), batchPerGpu: values['global-batch-size'] === undefined };
}

/**
 * Why advise does not take --gpus (gpusRefusal), refused as a mistake (exit 2) rather than searched and called nothing
 * fitting (exit 3): a partial last node (Megatron-LM runs under torchrun, which launches the same number of ranks on every
 * node), a global batch that is no whole number of micro batches (Megatron-LM needs global batch = micro batch × DP ×
 * micro batches a step), and an EP that does not divide the GPUs (EP divides DP × CP, which divide them). `given`: the
 * global batch is --global-batch-size's, not advise's default.
 */
function refusalText(x: GpusRefusal, gpus: number, given: boolean): string {
  switch (x.why) {
    case 'too-many':   // numberArg refuses it first, in its own words
      return `--gpus ${gpus} is past the most: ${CLI_WORDS.gpusAtMost(x.most)}`;
    case 'whole-nodes':
      return `--gpus ${gpus} is not a multiple of --gpus-per-node ${x.perNode}: Megatron-LM (torchrun) runs whole nodes; give --gpus ${x.below} or ${x.above}, or the GPUs a node really has`;
    case 'micro-batch': {
      const what = given ? `--global-batch-size ${x.gbs}` : `the global batch ${x.gbs} (advise's default: --gpus, one sequence a GPU)`;
      return `${what} is not a multiple of --micro-batch-size ${x.micro}, so no data-parallel size divides it into whole micro batches: give --global-batch-size a multiple of ${x.micro} (e.g. ${gpus * x.micro}, --gpus × --micro-batch-size)`;
    }
    case 'expert-parallel':
      return `--expert-model-parallel-size ${x.ep} does not divide --gpus ${gpus}: ${EP_GROUPS}, which divide the GPUs; give an EP that divides ${gpus}, or more GPUs`;
  }
}

function print(r: Request, res: AdviseResult, seen: Evaluated, w: WouldFit | null): void {
  console.log(`advise: ${counted(r.model.numLayers, 'layer')}, h=${r.model.hiddenSize}, ${counted(r.model.numAttentionHeads, 'head')}, s=${r.base.seqLength}, ${counted(r.gpus, 'GPU')} × ${r.hbmGib} GiB (${fitsText(r.margin)}), ` +
    setupText(r));
  for (const line of timeCheckedLines(H200)) console.log(line);
  console.log(`${res.all} layouts evaluated, ${res.fitting.length} fit`);
  for (const u of res.untrainable) console.log(leftOutText(u));
  for (const line of skippedLines(res.skipped, CLI_WORDS)) console.log(line);
  if (!res.fitting.length) {
    console.log(nothingFits(res, CLI_WORDS));
    for (const line of w ? wouldFitLines(r, res, w, r.batchPerGpu, CLI_WORDS) : []) console.log(line);
    return;
  }
  for (const [i, c] of res.fitting.slice(0, r.top).entries()) {
    const tie = i > 0 && sameStepTime(c, res.fitting[i - 1]) ? ` (ties with ${i}.)` : '';
    console.log(`${i + 1}. ${layoutLabel(c)}: ` +
      `${CLI_WORDS.time(c.iterMs)}/step${tie}, ${tokensPerSecondText(c.tokensPerSecond)}, ${c.tflopsPerGpu.toFixed(0)} TFLOP/s/GPU, comm ${(100 * c.commFraction).toFixed(0)}%, ${(c.totalBytes / GIB).toFixed(1)} GiB`);
    for (const why of reasons(r, c, seen)) console.log(`     ${why}`);
  }
}

/**
 * What --json prints: the request, the search's counts and every fitting candidate (with why and its time terms);
 * when none fits, what the text says too: `nothingFits` (its line), `smallest` (that layout and its peak) and `wouldFit` (the searches that follow it).
 */
function jsonReport(r: Request, res: AdviseResult, seen: Evaluated, w: WouldFit | null): object {
  const strip = ({ time, ...c }: Candidate) => ({ ...c, why: reasons(r, { ...c, time }, seen), terms: time.terms, memoryArgs: memoryArgs(r, c) });
  const none = !res.fitting.length, s = res.smallest;
  return {
    model: { ...r.model, vocabSize: r.model.vocabSize ?? DEFAULT_VOCAB_SIZE }, seqLength: r.base.seqLength, gpus: r.gpus, hbmGib: r.hbmGib, margin: r.margin,
    globalBatchSize: r.gbs, link: r.link, gpusPerNode: r.gpusPerNode, interNodeLink: r.interNodeLink, profile: H200.name, timeChecked: H200.timeChecked ?? null,
    evaluated: res.all, untrainable: res.untrainable, skipped: res.skipped.map((u) => ({ why: skipText(u, CLI_WORDS), layouts: u.layouts })), candidates: res.fitting.map(strip),
    nothingFits: none ? nothingFits(res, CLI_WORDS) : null, smallest: none && s ? strip(s.c) : null,
    wouldFit: w && { hbmGib: w.hbmGib && remedyJson(w.hbmGib), gpus: remedyJson(w.gpus), seqLength: remedyJson(w.seqLength), lines: wouldFitLines(r, res, w, r.batchPerGpu, CLI_WORDS) },
  };
}

/** A change wouldFit() searched, for --json: the fastest layout's settings and figures (not its terms: they are the changed request's). */
const remedyJson = ({ fastest, ...x }: Remedy) => ({ ...x, fastest: fastest && (({ time: _, ...c }) => c)(fastest) });

export async function adviseCommand(argv: string[]): Promise<number> {
  const r = request(argv);
  if (!r) {
    console.log(HELP);
    return 0;
  }
  const seen: Evaluated = new Map(), res = candidates(r, seen);   // reasons() look up the layouts they compare with
  const w = res.fitting.length ? null : wouldFit(r, res, r.batchPerGpu);
  if (r.json) console.log(JSON.stringify(jsonReport(r, res, seen, w), null, 1));
  else print(r, res, seen, w);
  return res.fitting.length ? 0 : NOTHING_FITS_EXIT;
}

/** advise's exit code when no layout fits (its report is printed all the same): a script can tell it from a fit (0), a mistake (2) or a bug (1). */
export const NOTHING_FITS_EXIT = 3;
