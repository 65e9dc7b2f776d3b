/**
 * Steps are counted from 1 wherever a person reads them: the CLI's timeline table (as its progress
 * line, "forward step 1/4") and the page's timelines (test/page-live.test.ts); a timeline file's
 * `step` field counts from 0, as the data always has.
 */
import { describe, expect, it } from 'vitest';
import { formatTimeline, timelineHeader } from '../src/cli/ringCli.js';
import { plannedTimeline } from './cases.js';

describe('step numbers people read', () => {
  it('the CLI timeline table counts steps from 1 (the data from 0)', async () => {
    const { timeline } = await plannedTimeline(32, 4, 'contiguous', { causal: false, window: [-1, -1], docs: null });
    const rows = formatTimeline(timeline).split('\n').filter((l) => /^\s+\d+\s+\d+\s/.test(l));
    expect(rows.length).toBe(16); // 4 steps × 4 ranks
    const shown = [...new Set(rows.map((l) => Number(l.trim().split(/\s+/)[0])))].sort((a, b) => a - b);
    expect(shown).toEqual([1, 2, 3, 4]);
    expect([...new Set(timeline.phases[0].steps.map((st) => st.step))].sort()).toEqual([0, 1, 2, 3]);
  });

  it("the table's one header says the run as a single device's does, with the ring's settings and the whole mask", async () => {
    const plain = (await plannedTimeline(32, 4, 'contiguous', { causal: false, window: [-1, -1], docs: null })).timeline;
    expect(timelineHeader(plain)).toBe('attention {"B":1,"Hq":1,"Hkv":1,"Nq":32,"Nk":32,"D":8} causal=false, CP R=4 p2p layout=contiguous f32 one-device on ');
    expect(formatTimeline(plain).split('\n')[0]).toBe(timelineHeader(plain));
    const docs = { cuQ: Int32Array.from([0, 16, 32]), cuK: Int32Array.from([0, 16, 32]) };
    const masked = (await plannedTimeline(32, 2, 'zigzag', { causal: true, window: [4, 0], docs })).timeline;
    expect(timelineHeader({ ...masked, adapters: ['gpu a', 'gpu a'], mode: 'processes' }, true))
      .toBe('attention {"B":1,"Hq":1,"Hkv":1,"Nq":32,"Nk":32,"D":8} causal=true window=4,0 documents=2, CP R=2 p2p layout=zigzag f32 processes (rank r on GPU r) on gpu a');
  });
});
