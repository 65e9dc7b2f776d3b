/** `flashring attention --cp R`: the same outputs as a single device, through the ring. */
import { InputError } from '../errors.js';
import { acquireDevices, adapterName } from '../gpu/device.js';
import { nodeGPU } from '../gpu/node.js';
import { HostTensor } from '../kernels/attention.js';
import { Precision, PrecisionRequest } from '../kernels/common.js';
import { ringAttention, RingTimeline } from '../ring/ringAttention.js';
import { LAYOUTS, Layout, ringSchedule } from '../ring/schedule.js';
import { AttentionShape } from '../shape.js';
import { devicePrecision, outputFiles } from './attention.js';
import { numberArg, writeFilesAtomically } from './args.js';

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

/** The ring's flags, checked (the sequence length is checked once the tensors are read). */
export interface RingArgs {
  R: number;
  layout: Layout;
  timeline?: string;
}

/** Most ranks a ring may have: each rank is a device, acquired one by one. */
export const MAX_RANKS = 64;

/** `--cp`, `--layout`, `--timeline`: null without --cp (and then the other two are errors). */
export function parseRingArgs(values: { cp?: string; layout?: string; timeline?: string }): RingArgs | null {
  if (values.cp === undefined) {
    for (const f of ['layout', 'timeline'] as const)
      if (values[f] !== undefined) throw new InputError(`--${f} only applies to a ring run: add --cp R (e.g. --cp 2)`);
    return null;
  }
  const R = numberArg('cp', values.cp, { integer: true, min: 1, max: MAX_RANKS, what: `an integer from 1 to ${MAX_RANKS} (ranks of the ring)` });
  const layout = (values.layout ?? 'zigzag') as Layout;
  if (!LAYOUTS.includes(layout)) throw new InputError(`--layout must be one of ${LAYOUTS.join(', ')}, got '${values.layout}'`);
  return { R, layout, ...(values.timeline !== undefined ? { timeline: values.timeline } : {}) };
}

/** What the ring needs of the shape, checked before any device is acquired. */
export function checkRingArgs(ring: RingArgs, s: AttentionShape, causal: boolean): void {
  if (s.Nq !== s.Nk) throw new InputError(`--cp splits one sequence: Q has ${s.Nq} tokens but K/V have ${s.Nk}; they must be equal`);
  if (ring.R > s.Nq) throw new InputError(`--cp ${ring.R} is more ranks than the ${s.Nq} tokens of the sequence: every rank needs at least one token`);
  ringSchedule(s.Nq, ring.R, ring.layout, causal);
}

export async function ringCommand(
  s: AttentionShape, t: { q: HostTensor; k: HostTensor; v: HostTensor }, dout: HostTensor | null,
  opts: { causal: boolean; scale?: number; precision: Precision; request: PrecisionRequest },
  ring: RingArgs & { out: string },
): Promise<number> {
  const { R, layout } = ring;
  const devs = await acquireDevices(await nodeGPU(), R);
  try {
    const precision = devicePrecision(opts.precision, opts.request, devs[0]);
    console.error(`ring attention ${JSON.stringify(s)} on ${R} device(s): ${adapterName(devs[0].adapter)}`);
    const res = await ringAttention(devs, s, { ...t, ...(dout ? { dout } : {}) }, {
      causal: opts.causal, scale: opts.scale, precision, layout,
      onStep: ({ phase, step, steps }) => process.stderr.write(`\r  ${phase} step ${step + 1}/${steps}   `),
    });
    process.stderr.write('\n');
    const files = outputFiles(ring.out, s, res.precision, { o: res.o, ...(res.dq ? { dq: res.dq, dk: res.dk!, dv: res.dv! } : {}) }, res.lse);
    if (ring.timeline !== undefined) files.push({ path: ring.timeline, data: new TextEncoder().encode(JSON.stringify(res.timeline, null, 1)) });
    await writeFilesAtomically(files, [ring.out]);
    console.error(formatTimeline(res.timeline));
    return 0;
  } finally {
    for (const d of devs) d.destroy();
  }
}
