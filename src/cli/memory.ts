/** `flashring memory` (the model, flags named like Megatron-LM's) and `flashring replay` (logs → points). */
import { parseArgs } from 'node:util';
import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { InputError } from '../errors.js';
import {
  DEFAULT_PARALLEL, DEFAULT_SEQ_LENGTHS, GIB, ModelConfig, PRESETS, ParallelConfig, Recompute,
  memoryBreakdown, oomPoints, parseLines, sweep,
} from '../memory/model.js';
import { parseMegatronLog } from '../memory/megatron.js';
import { CsvRow, measuredRow, parseCsv, sweepRows, toCsv } from '../memory/csv.js';

const HELP = `usage: flashring memory [options]            per-GPU memory of one configuration
       flashring memory --sweep [options]    the plot's lines over sequence length
Model (or --preset ${Object.keys(PRESETS).join('|')}):
  --num-layers L --hidden-size H --num-attention-heads A [--num-query-groups G]
  [--ffn-hidden-size F] [--swiglu] [--vocab-size V] [--untie-embeddings-and-output-weights]
  [--attention-dropout P] [--hidden-dropout P] [--position-embedding-type learned_absolute|rope|none]
  [--fp32-params]   parameters, gradients and Adam in fp32 (PyTorch AMP: 16 B/param; default Megatron's 18)
Parallelism and training:
  --seq-length S --micro-batch-size B --tensor-model-parallel-size T --context-parallel-size C
  --pipeline-model-parallel-size P [--num-layers-per-virtual-pipeline-stage K]
  [--data-parallel-size D] [--sequence-parallel] [--recompute-granularity selective|full]
  [--use-flash-attn (default) | --no-use-flash-attn] [--use-distributed-optimizer]
  --hbm-gib G         GPU memory to compare with (default 80; an H200 has 141)
Output:
  --json              machine-readable breakdown
  --sweep             lines CP=1, CP=1+recompute, CP=2, CP=4, CP=4+recompute over 4K…1M
  --seq-lengths LIST  sweep lengths (default ${DEFAULT_SEQ_LENGTHS.join(',')})
  --lines LIST        sweep lines as cp[:recompute] items, e.g. 1,1:selective,2,4,4:selective,8
  --csv FILE          write the sweep as activation_memory.csv`;

const MODEL_OPTS = {
  preset: { type: 'string' }, 'num-layers': { type: 'string' }, 'hidden-size': { type: 'string' }, 'num-attention-heads': { type: 'string' },
  'num-query-groups': { type: 'string' }, 'ffn-hidden-size': { type: 'string' }, swiglu: { type: 'boolean' }, 'vocab-size': { type: 'string' },
  'untie-embeddings-and-output-weights': { type: 'boolean' }, 'attention-dropout': { type: 'string' }, 'hidden-dropout': { type: 'string' },
  'position-embedding-type': { type: 'string' }, 'fp32-params': { type: 'boolean' }, compare: { type: 'boolean' },
  'seq-length': { type: 'string' }, 'micro-batch-size': { type: 'string' }, 'tensor-model-parallel-size': { type: 'string' },
  'context-parallel-size': { type: 'string' }, 'pipeline-model-parallel-size': { type: 'string' },
  'num-layers-per-virtual-pipeline-stage': { type: 'string' }, 'data-parallel-size': { type: 'string' },
  'sequence-parallel': { type: 'boolean' }, 'recompute-granularity': { type: 'string' }, 'use-flash-attn': { type: 'boolean' },
  'no-use-flash-attn': { type: 'boolean' }, 'use-distributed-optimizer': { type: 'boolean' }, 'hbm-gib': { type: 'string' },
  json: { type: 'boolean' }, sweep: { type: 'boolean' }, 'seq-lengths': { type: 'string' }, lines: { type: 'string' }, csv: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = Record<string, string | boolean | undefined>;

function numFlag(v: Values, name: string, d?: number): number | undefined {
  const s = v[name];
  if (s === undefined) return d;
  const n = Number(s);
  if (!Number.isFinite(n)) throw new InputError(`--${name} must be a number, got '${s}'`);
  return n;
}

export function configFromFlags(v: Values): { model: ModelConfig; par: ParallelConfig; hbmGib: number } {
  let model: ModelConfig;
  if (v.preset) {
    const p = PRESETS[v.preset as string];
    if (!p) throw new InputError(`unknown --preset '${v.preset}': use ${Object.keys(PRESETS).join(', ')}`);
    model = { ...p.model };
  } else {
    for (const k of ['num-layers', 'hidden-size', 'num-attention-heads'])
      if (v[k] === undefined) throw new InputError(`--${k} is required (or use --preset ${Object.keys(PRESETS).join('|')})`);
    model = { numLayers: 0, hiddenSize: 0, numAttentionHeads: 0 };
  }
  const over: [keyof ModelConfig, string][] = [['numLayers', 'num-layers'], ['hiddenSize', 'hidden-size'], ['numAttentionHeads', 'num-attention-heads'],
    ['numQueryGroups', 'num-query-groups'], ['ffnHiddenSize', 'ffn-hidden-size'], ['vocabSize', 'vocab-size'],
    ['attentionDropout', 'attention-dropout'], ['hiddenDropout', 'hidden-dropout']];
  for (const [k, f] of over) if (v[f] !== undefined) (model as unknown as Record<string, number>)[k] = numFlag(v, f)!;
  if (v.swiglu) model.swiglu = true;
  if (v['position-embedding-type'] !== undefined) {
    const pe = v['position-embedding-type'] as string;
    if (!['learned_absolute', 'rope', 'none'].includes(pe)) throw new InputError(`--position-embedding-type must be learned_absolute, rope or none, got '${pe}'`);
    model.positionEmbedding = pe as ModelConfig['positionEmbedding'];
  }
  if (v['fp32-params']) model.paramPrecision = 'amp';
  if (v['untie-embeddings-and-output-weights']) model.untieEmbeddings = true;
  const rc = (v['recompute-granularity'] as string | undefined) ?? 'none';
  if (!['none', 'selective', 'full'].includes(rc)) throw new InputError(`--recompute-granularity must be selective or full, got '${rc}'`);
  const pp = numFlag(v, 'pipeline-model-parallel-size', 1)!;
  const perVirtual = numFlag(v, 'num-layers-per-virtual-pipeline-stage');
  const virtualStages = perVirtual ? model.numLayers / (pp * perVirtual) : 1;
  if (!Number.isInteger(virtualStages) || virtualStages < 1)
    throw new InputError(`--num-layers-per-virtual-pipeline-stage ${perVirtual} does not divide ${model.numLayers} layers over ${pp} stages`);
  if (v['use-flash-attn'] && v['no-use-flash-attn']) throw new InputError('--use-flash-attn and --no-use-flash-attn contradict each other');
  const par: ParallelConfig = {
    ...DEFAULT_PARALLEL,
    seqLength: numFlag(v, 'seq-length', DEFAULT_PARALLEL.seqLength)!, microBatchSize: numFlag(v, 'micro-batch-size', 1)!,
    tensorParallel: numFlag(v, 'tensor-model-parallel-size', 1)!, contextParallel: numFlag(v, 'context-parallel-size', 1)!,
    pipelineParallel: pp, virtualStages, dataParallel: numFlag(v, 'data-parallel-size', 1)!,
    sequenceParallel: !!v['sequence-parallel'], recompute: rc as Recompute, flashAttention: !v['no-use-flash-attn'],
    distributedOptimizer: !!v['use-distributed-optimizer'],
  };
  return { model, par, hbmGib: numFlag(v, 'hbm-gib', 80)! };
}

const gib = (b: number) => `${(b / GIB).toFixed(2).padStart(9)} GiB`;

export async function memoryCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: MODEL_OPTS });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const { model, par, hbmGib } = configFromFlags(values);
  if (values.sweep || values.csv) {
    const lens = values['seq-lengths'] ? values['seq-lengths'].split(',').map(Number) : DEFAULT_SEQ_LENGTHS;
    if (lens.some((x) => !Number.isInteger(x) || x < 1)) throw new InputError(`--seq-lengths must be positive integers, got '${values['seq-lengths']}'`);
    const lines = parseLines(values.lines);
    const pts = sweep(model, par, lens, lines, hbmGib);
    if (values.csv) await writeFile(values.csv, toCsv(sweepRows(pts, hbmGib)));
    if (values.json) console.log(JSON.stringify({ model, base: par, hbmGib, points: pts.map((p) => ({ line: p.line, seqLength: p.config.seqLength, totalGib: p.totalGib, activationGib: p.activationGib, fits: p.fits })) }, null, 1));
    else {
      console.log(`per-GPU peak memory (GiB), HBM ${hbmGib} GiB; '!' = does not fit`);
      console.log(['seq_len'.padStart(8), ...lines.map((l) => l.label.padStart(18))].join(' '));
      for (const s of lens)
        console.log([String(s).padStart(8), ...lines.map((l) => {
          const p = pts.find((x) => x.line === l.label && x.config.seqLength === s);
          return (p ? `${p.totalGib.toFixed(1)}${p.fits ? ' ' : '!'}` : '-').padStart(18);
        })].join(' '));
      const oom = oomPoints(pts);
      console.log(`longest fitting sequence: ${Object.entries(oom).map(([k, v]) => `${k}: ${v ?? 'none'}`).join('; ')}`);
      if (values.csv) console.log(`wrote ${values.csv}`);
    }
    return 0;
  }
  const r = memoryBreakdown(model, par);
  if (values.json) {
    console.log(JSON.stringify({ model, parallel: par, hbmGib, ...r, fits: r.totalBytes / GIB <= hbmGib }, null, 1));
    return 0;
  }
  console.log(`per-GPU memory: s=${par.seqLength} b=${par.microBatchSize} TP=${par.tensorParallel} CP=${par.contextParallel} PP=${par.pipelineParallel} SP=${par.sequenceParallel} recompute=${par.recompute} flash=${par.flashAttention}`);
  console.log(`  parameters ${(r.parameters / 1e9).toFixed(2)} B total, ${(r.parametersPerGpu / 1e9).toFixed(3)} B per GPU`);
  console.log(`  weights (bf16)        ${gib(r.weightBytes)}`);
  console.log(`  gradients (fp32)      ${gib(r.gradientBytes)}`);
  console.log(`  optimizer (Adam fp32) ${gib(r.optimizerBytes)}`);
  console.log(`  activations           ${gib(r.activationBytes)}  (${r.layersHeld.toFixed(2)} layers × ${gib(r.perLayerBytes).trim()})`);
  for (const t of r.perLayer) console.log(`    ${t.part.padEnd(9)} ${t.name.padEnd(36)} ${gib(t.bytes * r.layersHeld)}`);
  if (r.ringBufferBytes) console.log(`  ring K/V buffers      ${gib(r.ringBufferBytes)}`);
  console.log(`  total                 ${gib(r.totalBytes)}  ${r.totalBytes / GIB <= hbmGib ? 'fits' : 'DOES NOT FIT'} in ${hbmGib} GiB`);
  return 0;
}

export async function replayCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: MODEL_OPTS });
  if (values.help || !positionals.length) {
    console.log('usage: flashring replay LOG_OR_CSV... [--csv out.csv] [--json] [--hbm-gib G]\n' +
      '       flashring replay FILE... --compare <model flags of flashring memory>\n' +
      '  Megatron-LM training logs (or activation_memory.csv files) → measured points; --compare puts the\n' +
      '  memory model next to each measured point (its seq_len, TP, CP, SP and recomputation).');
    return values.help ? 0 : 2;
  }
  const rows: CsvRow[] = [];
  const reports: unknown[] = [];
  let bad = 0;
  for (const file of positionals) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      console.error(`${file}: cannot read (${(e as Error).message})`);
      bad++;
      continue;
    }
    if (/\.csv$/i.test(file)) {
      try {
        const r = parseCsv(text, basename(file));
        rows.push(...r);
        reports.push({ file, rows: r.length });
        console.error(`${file}: ${r.length} row(s)`);
      } catch (e) {
        console.error(`${file}: ${(e as Error).message}`);
        bad++;
      }
      continue;
    }
    const res = parseMegatronLog(text, basename(file));
    const row = measuredRow(res.point, values['hbm-gib'] ? Number(values['hbm-gib']) : undefined);
    reports.push({ file, point: res.point, warnings: res.warnings });
    const p = res.point;
    console.error(`${file}: s=${p.seqLength ?? '?'} TP=${p.tp ?? '?'} CP=${p.cp ?? '?'} PP=${p.pp ?? '?'} SP=${p.sp ?? '?'} recompute=${p.recompute ?? '?'}` +
      ` | iter ${p.iterMs === null ? '?' : p.iterMs.toFixed(1)} ms | ${p.tflopsPerGpu === null ? '?' : p.tflopsPerGpu.toFixed(1)} TFLOP/s/GPU` +
      ` | peak max allocated ${p.peakMaxAllocatedGiB === null ? '?' : p.peakMaxAllocatedGiB.toFixed(2) + ' GiB'}${p.outOfMemory ? ' | OUT OF MEMORY' : ''}`);
    for (const w of res.warnings) console.error(`  note: ${w}`);
    if (row) rows.push(row);
    else { console.error(`  ${file}: no point (the sequence length is unknown)`); bad++; }
  }
  if (values.compare) {
    console.log(compareTable(rows, values));
    return bad ? 1 : 0;
  }
  if (values.csv) {
    await writeFile(values.csv, toCsv(rows));
    console.error(`wrote ${rows.length} point(s) to ${values.csv}`);
  }
  if (values.json) console.log(JSON.stringify({ points: rows, reports }, null, 1));
  else if (!values.csv) process.stdout.write(toCsv(rows));
  return bad ? 1 : 0;
}

/** Measured points next to the model's prediction for the same configuration (markdown table). */
export function compareTable(rows: CsvRow[], v: Values): string {
  const { model, par } = configFromFlags(v);
  const out = ['| source line | seq_len | CP | recompute | measured total GiB | model total GiB | model − measured | measured activation GiB | model activation GiB | model − measured |',
    '|---|---|---|---|---|---|---|---|---|---|'];
  const pct = (m: number, x: number) => `${(((m - x) / x) * 100).toFixed(1)}%`;
  for (const r of rows) {
    if (r.total_gib === null) {
      out.push(`| ${r.line ?? ''} | ${r.seq_len} | ${r.cp ?? '?'} | ${r.recompute ?? '?'} | OOM | ${(() => { try { return (memoryBreakdown(model, { ...par, seqLength: r.seq_len, tensorParallel: r.tp ?? par.tensorParallel, contextParallel: r.cp ?? 1, sequenceParallel: r.sp ?? par.sequenceParallel, recompute: (r.recompute ?? 'none') as Recompute }).totalBytes / GIB).toFixed(1); } catch { return '-'; } })()} | | | | |`);
      continue;
    }
    const b = memoryBreakdown(model, {
      ...par, seqLength: r.seq_len, tensorParallel: r.tp ?? par.tensorParallel, contextParallel: r.cp ?? 1,
      sequenceParallel: r.sp ?? par.sequenceParallel, recompute: (r.recompute ?? 'none') as Recompute,
      dataParallel: par.dataParallel,
    });
    const mt = b.totalBytes / GIB, ma = (b.activationBytes + b.ringBufferBytes) / GIB;
    out.push(`| ${r.line ?? ''} | ${r.seq_len} | ${r.cp ?? '?'} | ${r.recompute ?? '?'} | ${r.total_gib.toFixed(1)} | ${mt.toFixed(1)} | ${pct(mt, r.total_gib)} | ` +
      `${r.activation_gib === null ? '' : r.activation_gib.toFixed(1)} | ${ma.toFixed(1)} | ${r.activation_gib === null ? '' : pct(ma, r.activation_gib)} |`);
  }
  return out.join('\n');
}
