/**
 * `flashring attention --cp R`'s printed timeline (src/cli/ringCli.ts formatTimeline): what a reader sees when the data
 * lacks a value. A step's GPU time is null on an adapter without timestamp queries (or where a compute found no timer
 * interval left), and a collective's step computes with no rank's K/V (kvFrom −1): the table says '-', never NaN or −1.
 */
import { describe, expect, it } from 'vitest';
import { formatTimeline } from '../src/cli/ringCli.js';
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
});
