/**
 * `flashring attention --cp R`'s printed timeline (src/cli/ringCli.ts formatTimeline): what a reader sees when the data
 * lacks a value. A step's GPU time is null on an adapter without timestamp queries (or where a compute found no timer
 * interval left), and a collective's step computes with no rank's K/V (kvFrom −1): the table says '-', never NaN or −1.
 * The table says what its columns are; a one-device run's overlap is said not to be R GPUs'; the link model's line
 * gives each phase's time, as cp-plan's table does, and where its compute came from (measured, or --compute-tflops).
 */
import { describe, expect, it } from 'vitest';
import { formatTimeline } from '../src/cli/ringCli.js';
import { dryRun } from '../src/cp/launch/dry.js';
import { LINKS, predict } from '../src/cp/plan/linkModel.js';
import { shardLayout } from '../src/cp/plan/schedule.js';
import { RingTimeline, makeTimeline } from '../src/cp/rank/timeline.js';
import { plannedTimeline } from './cases.js';

const causal = { causal: true, window: [-1, -1] as [number, number], docs: null };
const rows = (text: string) => text.split('\n').filter((l) => /^\s+\d+\s+\d+\s/.test(l));

describe('the timeline table', () => {
  it("a step without GPU time or without a K/V source reads '-', never NaN or -1", async () => {
    const { timeline } = await plannedTimeline(32, 2, 'zigzag', causal, 'all_gather');
    const steps = timeline.phases[0].steps;
    expect(steps.some((st) => st.gpuComputeMs === null) && steps.some((st) => st.kvFrom === -1)).toBe(true);
    const text = formatTimeline(timeline);
    expect(text).not.toMatch(/NaN|undefined|\[object/);
    const gather = rows(text).filter((l) => / gather /.test(l));
    expect(gather.length).toBe(2);
    for (const l of gather) expect(l.trim().split(/\s+/).slice(3, 6)).toEqual(['-', '0.00', '-']);
    // A step with both keeps its numbers.
    const attend = rows(formatTimeline({ ...timeline, phases: [{ ...timeline.phases[0], steps: steps.map((st) => ({ ...st, gpuComputeMs: 1.5 })) }] }))
      .filter((l) => / attend /.test(l));
    expect(attend.map((l) => l.trim().split(/\s+/).slice(3, 6))).toEqual([['0', '0.00', '1.50'], ['1', '0.00', '1.50']]);
  });

  /** A forward and backward timeline of a p2p ring on no device (the dry run), as a run in `mode` would carry it. */
  async function twoPhases(mode: RingTimeline['mode']): Promise<RingTimeline> {
    const shape = { B: 1, Hq: 2, Hkv: 2, Nq: 64, Nk: 64, D: 16 };
    const dry = await dryRun({ shape, R: 4, layout: 'zigzag', scheme: 'p2p', mask: causal, precision: 'f32', backward: true });
    const phases = (['forward', 'backward'] as const).map((phase) => ({ phase, wallMs: 1, steps: dry.steps.filter((st) => st.phase === phase) }));
    const facts = { adapters: ['gpu a'], mode, scheme: 'p2p', hierarchy: dry.hierarchy, R: 4, layout: 'zigzag' as const, precision: 'f32' as const, shape, ranks: [] };
    return makeTimeline(facts, causal, shardLayout(64, 4, 'zigzag'), phases);
  }

  it('says what its columns are, and that a one-device overlap is not what R GPUs would show', async () => {
    const one = formatTimeline(await twoPhases('one-device'));
    expect(one).toMatch(/\n {2}columns \(measured on this run's adapter\): from = the rank whose K\/V the step computes with/);
    for (const col of ['compute = ', 'gpu = ', 'transfer = ', 'bytes = bytes this rank sent', 'idle = ']) expect(one).toContain(col);
    expect(one).toMatch(/bytes moved\n {2}\(one-device: the 4 ranks take turns on one GPU .* not what 4 GPUs would show; add --link for a prediction\)\n/);
    const procs = formatTimeline(await twoPhases('processes'));
    expect(procs).toMatch(/bytes moved\n {2}peak bytes per rank/);
  });

  it("the predicted line gives forward + backward = total and the compute's source, as cp-plan's table splits them", async () => {
    const tl = await twoPhases('one-device');
    const steps = tl.phases.flatMap((ph) => ph.steps);
    const given = predict(steps, 4, LINKS.pcie5, 100);
    const [fwd, bwd] = given.phases.map((ph) => ph.stepMs.reduce((a, b) => a + b, 0).toFixed(3));
    const text = formatTimeline({ ...tl, predicted: given });
    expect(text).toContain(`  predicted on pcie5 (512 Gbit/s, 3 µs; the link model from compute at 100 TFLOP/s): forward ${fwd} ms + backward ${bwd} ms = ${given.totalMs.toFixed(3)} ms, comm `);
    expect(text).toMatch(/the predicted line below models them\)\n/);
    const measured = formatTimeline({ ...tl, predicted: predict(steps, 4, LINKS.pcie5) });
    expect(measured).toMatch(/predicted on pcie5 \(512 Gbit\/s, 3 µs; the link model from the measured step compute\): forward [\d.]+ ms \+ backward [\d.]+ ms = [\d.]+ ms, comm [\d.]+%, \S+ TFLOP\/s per GPU$/);
    expect(measured).not.toMatch(/NaN|undefined/);
  });

  it('a pipelined run says so in its header and phases, where compute is submission time', async () => {
    const tl = await twoPhases('one-device');
    const text = formatTimeline({ ...tl, pipelined: true });
    expect(text.split('\n')[0]).toMatch(/ CP R=4 p2p layout=zigzag f32 one-device pipelined on gpu a$/);
    expect(text).toMatch(/\n {2}forward: [\d.]+ ms wall \(pipelined: compute spans each step's encoding and submission, not its GPU time, which gpu is\)\n/);
    expect(formatTimeline(tl)).not.toMatch(/pipelined/);
  });
});
