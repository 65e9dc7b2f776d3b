/**
 * Steps are counted from 1 wherever a person reads them: the CLI's timeline table (as its progress
 * line, "forward step 1/4") and the page's timelines (test/page-live.test.ts); a timeline file's
 * `step` field counts from 0, as the data always has.
 */
import { describe, expect, it } from 'vitest';
import { formatTimeline } from '../src/cli/ringCli.js';
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
});
