/**
 * The memory model's prediction of each run of this draw, written before any of it ran, from the model's own code, as
 * the MoE-extras draw's (its predict.ts: the flags read as Megatron-LM's argument dump, checked on two earlier draws'
 * logs; PyTorch's AdamW as on every host here). Besides the total, the parts a trace measures (src/memory/trace.ts
 * modelPeakParts): static (allocated between steps, with what MoE checkpoints hold from backward to the next forward:
 * `held`), stored and transient.
 *
 *   npx tsx bench/results/2026-12-07-moe-held/predict.ts > bench/results/2026-12-07-moe-held/predicted.csv
 *
 * Columns: run; config (campaignTable.ts describe); the predicted peak (max allocated) in bytes and GiB; the model's
 * static, stored and transient parts and its held bytes (MiB); untrainable (empty, or why not).
 */
import { readFileSync } from 'node:fs';
import { memoryBreakdown, recomputeSpec } from '../../../src/memory/model.js';
import { modelPeakParts } from '../../../src/memory/trace.js';
import { untrainable } from '../../../src/memory/untrainable.js';
import { describe } from '../../megatron/campaignTable.js';
import { checkReading, config } from '../2026-12-07-moe-extras/predict.js';

const DIR = 'bench/results/2026-12-07-moe-held';
interface Draw { common_flags: string[]; kept: { id: string; config: Record<string, unknown>; flags: string[] }[] }
const mib = (b: number) => (b / 2 ** 20).toFixed(1);

function main(): void {
  for (const d of ['bench/results/2026-12-06-time-heldout7', 'bench/results/2026-12-06-time-heldout8']) checkReading(d);
  const draw = JSON.parse(readFileSync(`${DIR}/draw.json`, 'utf8')) as Draw;
  const out = ['run,config,predicted_peak_bytes,predicted_peak_gib,static_mib,stored_mib,transient_mib,held_mib,untrainable'];
  for (const k of draw.kept) {
    const c = config([...draw.common_flags, ...k.flags]), b = memoryBreakdown(c.model, c.par), parts = modelPeakParts(b);
    const why = untrainable(c.model, c.par);
    out.push([k.id, `"${describe(k.config, recomputeSpec(c.par))}"`, b.totalBytes, (b.totalBytes / 2 ** 30).toFixed(3), mib(parts.static), mib(parts.stored),
      mib(parts.transient), mib(b.heldAfterBackward?.bytes ?? 0), why === null ? '' : `"${why.replace(/"/g, '""')}"`].join(','));
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

if (process.argv[1]?.endsWith('2026-12-07-moe-held/predict.ts')) main();
