/** `flashring attention --cp R`: the same outputs as a single device, through the ring. */
import { writeFile } from 'node:fs/promises';
import { InputError } from '../errors.js';
import { acquireDevices, adapterName } from '../gpu/device.js';
import { nodeGPU } from '../gpu/node.js';
import { HostTensor } from '../kernels/attention.js';
import { PrecisionRequest } from '../kernels/common.js';
import { ringAttention, RingTimeline } from '../ring/ringAttention.js';
import { LAYOUTS, Layout } from '../ring/schedule.js';
import { AttentionShape } from '../shape.js';
import { writeOutputs } from './attention.js';

export function formatTimeline(tl: RingTimeline): string {
  const lines = [`ring R=${tl.R} layout=${tl.layout} causal=${tl.causal} ${tl.precision} on ${[...new Set(tl.adapters)].join(', ')}`];
  lines.push(`  causal work per rank (visible scores): ${tl.schedule.workPerRank.join(', ')}  (imbalance ${tl.schedule.imbalance.toFixed(3)})`);
  for (const ph of tl.phases) {
    lines.push(`  ${ph.phase}: ${ph.wallMs.toFixed(1)} ms wall`);
    lines.push('    step rank from  compute(ms)  gpu(ms)  transfer(ms)  bytes       idle(ms)');
    for (const st of ph.steps)
      lines.push(`    ${String(st.step).padStart(4)} ${String(st.rank).padStart(4)} ${String(st.kvFrom).padStart(4)}  ${st.computeMs.toFixed(2).padStart(11)}  ${(st.gpuComputeMs ?? NaN).toFixed(2).padStart(7)}  ${st.transferMs.toFixed(2).padStart(12)}  ${String(st.transferBytes).padStart(10)}  ${st.idleMs.toFixed(2).padStart(8)}`);
  }
  const sm = tl.summary;
  lines.push(`  overlap efficiency ${(100 * sm.overlapEfficiency).toFixed(1)}%, unhidden transfer ${(100 * sm.unhiddenFraction).toFixed(1)}% of step time, ${sm.bytesMoved} bytes moved`);
  lines.push(`  peak bytes per rank: ${tl.ranks.map((r) => r.peakBytes).join(', ')}`);
  return lines.join('\n');
}

export async function ringCommand(
  s: AttentionShape, t: { q: HostTensor; k: HostTensor; v: HostTensor }, dout: HostTensor | null,
  opts: { causal: boolean; scale?: number; precision: PrecisionRequest },
  values: { cp?: string; layout?: string; timeline?: string; out?: string },
): Promise<number> {
  const R = Number(values.cp);
  if (!Number.isInteger(R) || R < 1) throw new InputError(`--cp must be an integer >= 1, got '${values.cp}'`);
  const layout = (values.layout ?? 'zigzag') as Layout;
  if (!LAYOUTS.includes(layout)) throw new InputError(`--layout must be one of ${LAYOUTS.join(', ')}, got '${values.layout}'`);
  const devs = await acquireDevices(await nodeGPU(), R);
  try {
    console.error(`ring attention ${JSON.stringify(s)} on ${R} device(s): ${adapterName(devs[0].adapter)}`);
    const res = await ringAttention(devs, s, { ...t, ...(dout ? { dout } : {}) }, {
      ...opts, layout,
      onStep: ({ phase, step, steps }) => process.stderr.write(`\r  ${phase} step ${step + 1}/${steps}   `),
    });
    process.stderr.write('\n');
    await writeOutputs(values.out!, s, res.precision, { o: res.o, ...(res.dq ? { dq: res.dq, dk: res.dk!, dv: res.dv! } : {}) }, res.lse);
    if (values.timeline) await writeFile(values.timeline, JSON.stringify(res.timeline, null, 1));
    console.error(formatTimeline(res.timeline));
    return 0;
  } finally {
    for (const d of devs) d.destroy();
  }
}
