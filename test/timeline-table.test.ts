/**
 * `flashring attention --cp R`'s printed timeline (src/cli/ringCli.ts formatTimeline): what a reader sees when the data
 * lacks a value. A step's GPU time is null on an adapter without timestamp queries (or where a compute found no timer
 * interval left), and a collective's step computes with no rank's K/V (kvFrom −1): the table says '-', never NaN or −1.
 * The table says what its columns are; a one-device run's overlap is said not to be R GPUs'; the link model's line
 * gives each phase's time, as cp-plan's table does, and where its compute came from (measured, or --compute-tflops).
 */
import { describe, expect, it } from 'vitest';
import { addingUp, formatTimeline } from '../src/cli/ringCli.js';
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
    // The figures as addingUp writes them (the two tests below hold it to its word).
    const w = addingUp(given.phases.map((ph) => ph.stepMs.reduce((a, b) => a + b, 0)), given.totalMs);
    const text = formatTimeline({ ...tl, predicted: given });
    expect(text).toContain(`  predicted on pcie5 (512 Gbit/s, 3 µs; the link model from compute at 100 TFLOP/s): forward ${w.parts[0]} ms + backward ${w.parts[1]} ms = ${w.total} ms, comm `);
    expect(text).toMatch(/the predicted line below models them\)\n/);
    const measured = formatTimeline({ ...tl, predicted: predict(steps, 4, LINKS.pcie5) });
    expect(measured).toMatch(/predicted on pcie5 \(512 Gbit\/s, 3 µs; the link model from the measured step compute\): forward [\d.]+ ms \+ backward [\d.]+ ms = [\d.]+ ms, comm [\d.]+%, \S+ TFLOP\/s per GPU$/);
    expect(measured).not.toMatch(/NaN|undefined/);
  });

  /** The predicted line's forward and backward and its total as written, and what follows the total. */
  const written = (text: string) => {
    const m = text.match(/: forward ([\d.]+) ms \+ backward ([\d.]+) ms = ([\d.]+) ms(.*?), comm /);
    expect(m, text).not.toBeNull();
    return { parts: [m![1], m![2]], total: m![3], after: m![4] };
  };
  /** Decimal strings of one number of decimals as whole units of their last digit (exact: no float sums). */
  const units = (xs: string[]) => {
    const d = new Set(xs.map((x) => x.split('.')[1]?.length ?? 0));
    expect(d.size, xs.join(', ')).toBe(1);
    return xs.map((x) => BigInt(x.replace('.', '')));
  };

  it("the predicted line's parts add up to its total as written (it read 'forward 0.003 ms + backward 0.009 ms = 0.013 ms')", async () => {
    const tl = await twoPhases('one-device');
    const base = predict(tl.phases.flatMap((ph) => ph.steps), 4, LINKS.pcie5, 100);
    // Phase times whose parts, each rounded to 3 decimals apart, missed the rounded total: 0.0034 + 0.0094 = 0.0128, and the a2a+p2p run's
    // 1.1094 + 1.0004 = 2.1098 (it read 1.109 + 1.000 = 2.110).
    for (const [f, b] of [[0.0034, 0.0094], [1.1094, 1.0004], [0.5, 0.25], [12.3456, 0.0001]]) {
      const pr = { ...base, phases: [{ phase: 'forward' as const, stepMs: [f / 2, f / 2], exposedCommMs: 0 }, { phase: 'backward' as const, stepMs: [b], exposedCommMs: 0 }], totalMs: f + b };
      const w = written(formatTimeline({ ...tl, predicted: pr }));
      const [pf, pb, pt] = units([...w.parts, w.total]);
      expect(pf + pb, `${f} + ${b}: ${w.parts.join(' + ')} = ${w.total}`).toBe(pt);
      // Each figure is its value rounded (half a unit of the last digit), with at least 3 significant digits.
      const unit = 10 ** -(w.total.split('.')[1].length);
      [f, b, f + b].forEach((x, i) => expect(Math.abs(Number([...w.parts, w.total][i]) - x)).toBeLessThanOrEqual(unit / 2 + 1e-12));
      for (const x of [...w.parts, w.total]) expect(x.replace(/^[0.]+/, '').replace('.', '').length).toBeGreaterThanOrEqual(3);
      expect(w.after).toBe('');
    }
  });

  it('where no number of decimals makes the rounded parts add to the rounded total, the total written is their sum and the unrounded one is said', async () => {
    const tl = await twoPhases('one-device');
    const base = predict(tl.phases.flatMap((ph) => ph.steps), 4, LINKS.pcie5, 100);
    // 1.000444… twice: at 3 to 6 decimals each part rounds down while their sum rounds up.
    const x = 1 + 4 / 9000;
    const pr = { ...base, phases: [{ phase: 'forward' as const, stepMs: [x], exposedCommMs: 0 }, { phase: 'backward' as const, stepMs: [x], exposedCommMs: 0 }], totalMs: 2 * x };
    const w = written(formatTimeline({ ...tl, predicted: pr }));
    expect(w).toEqual({ parts: ['1.000', '1.000'], total: '2.000', after: ' (the sum of the parts as written; 2.000889 ms before rounding)' });
  });

  it('a pipelined run says so in its header and phases, where compute is submission time', async () => {
    const tl = await twoPhases('one-device');
    const text = formatTimeline({ ...tl, pipelined: true });
    expect(text.split('\n')[0]).toMatch(/ CP R=4 p2p layout=zigzag f32 one-device pipelined on gpu a$/);
    expect(text).toMatch(/\n {2}forward: [\d.]+ ms wall \(pipelined: compute spans each step's encoding and submission, not its GPU time, which gpu is\)\n/);
    expect(formatTimeline(tl)).not.toMatch(/pipelined/);
  });
});
