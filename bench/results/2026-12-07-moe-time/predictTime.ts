/**
 * The time model's step time for each run of this draw, written before any of it ran (the model as committed with this
 * folder): each run's flags (runs.json's common_flags and flags) read as Megatron-LM's argument dump
 * (../2026-12-07-moe-extras/predict.ts argsFromFlags), PyTorch's AdamW as every run here has it, the data loader's
 * attention mask on (Megatron-LM's default, as the runs have it), then predictTimeFromLog. The vocabulary is the flags'
 * (the log's dump pads it), so a run's figure can differ a little from what timeTable.ts --fresh gives from its log: this
 * orders the runs (gpu-call-h200.sh runs the pairs shortest first) and records the frozen model's figures; the
 * judgment is the time table's, on the logs.
 *
 *   npx tsx bench/results/2026-12-07-moe-time/predictTime.ts > bench/results/2026-12-07-moe-time/predicted.csv
 */
import { readFileSync } from 'node:fs';
import { parseMegatronLog, type MegatronArgs } from '../../../src/memory/megatron.js';
import { predictTimeFromLog } from '../../../src/memory/time/fromLog.js';
import { argsFromFlags } from '../2026-12-07-moe-extras/predict.js';

const DIR = 'bench/results/2026-12-07-moe-time';
interface Runs { common_flags: string[]; kept: { id: string; flags: string[] }[] }

function main(): void {
  const runs = JSON.parse(readFileSync(`${DIR}/runs.json`, 'utf8')) as Runs;
  const out = ['run,micro_batches,model_ms,model_gpu_ms,model_host_ms,kernels,host_serial'];
  for (const k of runs.kept) {
    const args: MegatronArgs = { ...argsFromFlags([...runs.common_flags, ...k.flags]), create_attention_mask_in_dataloader: 'True' };
    const res = { ...parseMegatronLog('', k.id), args, torchOptimizer: true };
    const t = predictTimeFromLog(res);
    if ('error' in t) throw new Error(`${k.id}: ${t.error}`);
    const mb = Number(args.global_batch_size) / Number(args.micro_batch_size);
    out.push([k.id, mb, t.iterMs.toFixed(1), t.gpuMs.toFixed(1), t.hostMs.toFixed(1), Math.round(t.kernels), t.hostSerial].join(','));
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

if (process.argv[1]?.endsWith('predictTime.ts')) main();
