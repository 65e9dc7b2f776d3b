/**
 * The memory model's prediction of each run of this draw, written before any of it ran, from the model's own code:
 * each run's Megatron-LM flags (draw.json's common_flags and flags) read as the argument dump Megatron-LM would print
 * (a flag's name with '_' for '-'; add_bias_linear, bias_swiglu_fusion and bias_gelu_fusion True unless turned off, the last
 * off without linear biases as Megatron-LM's validation turns it; `--no-X` X False, `--disable-bias-linear` add_bias_linear False, a flag alone True,
 * several values a Python list), then configFromArgs, with PyTorch's AdamW as every run here had it (no Transformer
 * Engine or Apex on the host: "Falling back to Torch optimizers"), memoryBreakdown and untrainable. The reading is checked
 * first on two earlier draws that ran: each of their logs' dumps gives the model and layout their flags give here.
 *
 *   npx tsx bench/results/2026-12-07-moe-extras/predict.ts > bench/results/2026-12-07-moe-extras/predicted.csv
 *
 * Columns: run; config (as campaignTable.ts describes it, with the extras); linear_biases; expert_bias; the predicted
 * peak (max allocated) in bytes and in GiB; untrainable (empty, or the reason Megatron-LM is expected not to train it).
 */
import { readFileSync } from 'node:fs';
import { configFromArgs, configFromLog, parseMegatronLog, unmodelledArgs, type MegatronArgs } from '../../../src/memory/megatron.js';
import { memoryBreakdown, recomputeSpec } from '../../../src/memory/model.js';
import { untrainable } from '../../../src/memory/untrainable.js';
import { describe } from '../../megatron/campaignTable.js';

const DIR = 'bench/results/2026-12-07-moe-extras';
interface Kept { id: string; config: Record<string, unknown> & { bias: boolean; moe?: { experts: number; topk: number; expert_bias?: boolean } }; flags: string[] }
interface Draw { common_flags: string[]; kept: Kept[] }

/**
 * A flag list as Megatron-LM's argument dump names and prints it (the arguments the memory model reads), from the dump's
 * defaults for the switches the model reads that are on unless a flag turns them off.
 */
export function argsFromFlags(flags: string[]): MegatronArgs {
  const args: MegatronArgs = { add_bias_linear: 'True', bias_swiglu_fusion: 'True', bias_gelu_fusion: 'True' };
  for (let i = 0; i < flags.length; i++) {
    if (!flags[i].startsWith('--')) throw new Error(`${flags[i]}: a value without its flag`);
    const name = flags[i].slice(2).replace(/-/g, '_'), vals: string[] = [];
    while (i + 1 < flags.length && !flags[i + 1].startsWith('--')) vals.push(flags[++i]);
    if (vals.length) args[name] = vals.length === 1 && name !== 'recompute_modules' ? vals[0] : `[${vals.map((v) => `'${v}'`).join(', ')}]`;
    else if (name === 'disable_bias_linear') args.add_bias_linear = 'False';
    else if (name.startsWith('no_')) args[name.slice(3)] = 'False';
    else args[name] = 'True';
  }
  // Megatron-LM turns the bias-GeLU fusion off without linear biases (training/arguments.py:1604-1606), as its dump shows.
  if (args.add_bias_linear === 'False') args.bias_gelu_fusion = 'False';
  return args;
}

export function config(flags: string[]) {
  const args = argsFromFlags(flags), c = configFromArgs(args);
  if ('error' in c) throw new Error(c.error);
  const unmodelled = unmodelledArgs(args);
  if (unmodelled.length) throw new Error(`not modelled: ${unmodelled.join(' ')}`);
  return { model: c.model, par: { ...c.par, torchOptimizer: true } };
}

/** Each logged run of an earlier draw: its flags read here give the model and layout its own dump gives. */
export function checkReading(dir: string): void {
  const draw = JSON.parse(readFileSync(`${dir}/draw.json`, 'utf8')) as Draw;
  for (const k of draw.kept) {
    const res = parseMegatronLog(readFileSync(`${dir}/runs/${k.id}.log`, 'utf8'), k.id), fromLog = configFromLog(res);
    if ('error' in fromLog) throw new Error(`${dir} ${k.id}: ${fromLog.error}`);
    const fromFlags = config([...draw.common_flags, ...k.flags]);
    const { vocabSize: _v, ...logModel } = fromLog.model, { vocabSize: _w, ...flagModel } = fromFlags.model; // the dump's is padded
    if (JSON.stringify(logModel) !== JSON.stringify(flagModel) || JSON.stringify(fromLog.par) !== JSON.stringify(fromFlags.par))
      throw new Error(`${dir} ${k.id}: the flags read here give another configuration than the log's dump`);
    if (memoryBreakdown(fromLog.model, fromLog.par).totalBytes !== memoryBreakdown(fromFlags.model, fromFlags.par).totalBytes)
      throw new Error(`${dir} ${k.id}: the flags read here predict another peak than the log's dump`);
  }
}

function main(): void {
  for (const d of ['bench/results/2026-12-06-time-heldout7', 'bench/results/2026-12-06-time-heldout8']) checkReading(d);
  const draw = JSON.parse(readFileSync(`${DIR}/draw.json`, 'utf8')) as Draw;
  const out = ['run,config,linear_biases,expert_bias,predicted_peak_bytes,predicted_peak_gib,untrainable'];
  for (const k of draw.kept) {
    const c = config([...draw.common_flags, ...k.flags]), b = memoryBreakdown(c.model, c.par);
    const why = untrainable(c.model, c.par);
    out.push([k.id, describe(k.config, recomputeSpec(c.par)), k.config.bias, !!k.config.moe?.expert_bias, b.totalBytes, (b.totalBytes / 2 ** 30).toFixed(3),
      why === null ? '' : `"${why.replace(/"/g, '""')}"`].join(','));
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

if (process.argv[1]?.endsWith('2026-12-07-moe-extras/predict.ts')) main();
