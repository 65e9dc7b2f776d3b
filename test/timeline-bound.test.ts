/**
 * The --timeline room check's bound (src/cli/timelineBound.ts) against the timelines real rings write: every
 * scheme, with and without the backward and the link model's prediction, on this file's device. The file is
 * what ringCli writes: JSON.stringify(timeline, null, 1) as UTF-8.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { testDevices } from './gpu.js';
import { makeInputs, SEED } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { ringAttention, RingOptions } from '../src/cp/launch/ringAttention.js';
import { resolveScheme } from '../src/cp/schemes/registry.js';
import { LINKS } from '../src/cp/plan/linkModel.js';
import { RingTimeline } from '../src/cp/rank/timeline.js';
import { timelineBound, TimelinePlan } from '../src/cli/timelineBound.js';

let dev: FlashDevice;
beforeAll(async () => {
  [dev] = await testDevices(1);
});

const fileBytes = (tl: RingTimeline) => new TextEncoder().encode(JSON.stringify(tl, null, 1)).length;

/** The bound for the run that wrote `tl`, from what the CLI knows before it (and the adapter names the file lists). */
function boundFor(tl: RingTimeline, opts: RingOptions & { ranks: number }, backward: boolean): { bound: number; plan: TimelinePlan } {
  const { scheme, steps } = resolveScheme(opts.scheme ?? 'p2p', opts.ranks, tl.shape, opts.hierarchicalSizes);
  const plan: TimelinePlan = {
    R: opts.ranks, mode: 'one-device', pipelined: false, scheme, layout: opts.layout ?? 'zigzag', precision: 'f32', shape: tl.shape, steps, backward,
    adapters: tl.adapters, ...(opts.link ? { link: opts.link } : {}), ...(typeof opts.computeTflops === 'number' ? { computeTflops: opts.computeTflops } : {}),
  };
  return { bound: timelineBound(plan), plan };
}

describe('the --timeline bound', () => {
  const s = { B: 1, Hq: 4, Hkv: 4, Nq: 37, Nk: 37, D: 16 };
  const runs: (RingOptions & { ranks: number })[] = [
    { ranks: 3, scheme: 'p2p', link: LINKS['nvlink-h200'] },
    { ranks: 4, scheme: 'p2p', layout: 'striped', window: [5, 0] },
    { ranks: 4, scheme: 'all_gather', link: LINKS['ib-ndr'], computeTflops: 50 },
    { ranks: 4, scheme: 'a2a', causal: true },
    { ranks: 4, scheme: 'a2a+p2p', hierarchicalSizes: '2,2', link: { name: 'custom', gbps: 123.456, latencyUs: 7.5 } },
  ];

  it('is at least the file each scheme writes, forward and backward, with and without a prediction; a step record a rank and step each', async () => {
    const x = makeInputs(s, SEED + 5);
    for (const opts of runs)
      for (const backward of [false, true]) {
        const tag = `${JSON.stringify(opts)} backward=${backward}`;
        const { q, k, v, dout } = x;
        const res = await ringAttention([dev], s, { q, k, v, ...(backward ? { dout } : {}) }, { ...opts, precision: 'f32' });
        const { bound, plan } = boundFor(res.timeline, opts, backward);
        // The structure the bound takes: R records of each step of each phase run, no others.
        expect(res.timeline.phases.map((ph) => [ph.phase, ph.steps.length]), tag)
          .toEqual([['forward', opts.ranks * plan.steps.forward], ...(backward ? [['backward', opts.ranks * plan.steps.backward]] : [])]);
        const bytes = fileBytes(res.timeline);
        expect(bytes, tag).toBeLessThanOrEqual(bound);
        // A bound, not a guess far off: every figure at 25 characters is under twice the file here.
        expect(bound, tag).toBeLessThan(2 * bytes);
      }
  });
});
