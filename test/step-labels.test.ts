/**
 * The timeline's step labels (src/cp/rank/timeline.ts STEP_LABELS) say what each scheme's steps do. The rank programs run
 * dry (src/cp/launch/dry.ts: the real programs, no device), so these are the labels a run on any device records.
 * 'ring' is a step of a ring of more than one rank (K/V arriving from the previous rank behind the compute), 'home' the
 * dK/dV sums' last hop to the ranks whose K/V they are; a2a attends its head shard with nothing sent (no ring: 'attend'),
 * and a2a+p2p's ring hands its sums back to the head shards they started on ('dkv-back'), which a2a-out then takes home.
 * Every label is explained under the CLI's table (TIMELINE_COLUMNS) and in docs/ring.md.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TIMELINE_COLUMNS, formatTimeline } from '../src/cli/ringCli.js';
import { dryRun } from '../src/cp/launch/dry.js';
import { shardLayout } from '../src/cp/plan/schedule.js';
import { STEP_LABELS, makeTimeline } from '../src/cp/rank/timeline.js';

const shape = { B: 1, Hq: 8, Hkv: 4, Nq: 64, Nk: 64, D: 16 };

/** Each rank's labels per phase, in step order, and the bytes each step sent (summed over its ranks). */
async function labels(scheme: string, R: number, sizes?: string) {
  const run = await dryRun({ shape, R, scheme, sizes, precision: 'f32', mask: { causal: true } });
  const phase = (ph: 'forward' | 'backward') => {
    const steps = run.steps.filter((st) => st.phase === ph);
    const perRank = Array.from({ length: R }, (_, r) => steps.filter((st) => st.rank === r).sort((a, b) => a.step - b.step).map((st) => st.label));
    for (const l of perRank) expect(l, `${scheme} R=${R} ${ph}: every rank the same labels`).toEqual(perRank[0]);
    const ids = [...new Set(steps.map((st) => st.step))].sort((a, b) => a - b);
    return { labels: perRank[0], bytes: ids.map((id) => steps.filter((st) => st.step === id).reduce((a, st) => a + st.transferBytes, 0)) };
  };
  return { forward: phase('forward'), backward: phase('backward') };
}

describe('step labels say what the step does', () => {
  it("a2a: no ring and no hop home, so its attention is 'attend' between a2a-in and a2a-out, forward and backward", async () => {
    for (const R of [2, 4]) {
      const got = await labels('a2a', R);
      expect(got.forward.labels).toEqual(['a2a-in', 'attend', 'a2a-out']);
      expect(got.backward.labels).toEqual(['a2a-in', 'attend', 'a2a-out']);
      // The attention sends nothing; the two all-to-alls carry every byte.
      expect(got.forward.bytes[1]).toBe(0);
      expect(got.backward.bytes[1]).toBe(0);
    }
  });

  it("a2a+p2p: a ring of P groups, then the sums' last hop back to their head shards ('dkv-back'), not home", async () => {
    const got = await labels('a2a+p2p', 4, '2,2');
    expect(got.forward.labels).toEqual(['a2a-in', 'ring', 'ring', 'a2a-out']);
    expect(got.backward.labels).toEqual(['a2a-in', 'ring', 'ring', 'dkv-back', 'a2a-out']);
    expect(got.backward.bytes[3]).toBeGreaterThan(0);
    const wide = await labels('a2a+p2p', 8, '2,4');
    expect(wide.backward.labels).toEqual(['a2a-in', 'ring', 'ring', 'ring', 'ring', 'dkv-back', 'a2a-out']);
  });

  it("p2p keeps 'ring' and 'home'; one rank has no ring: one 'attend' a phase", async () => {
    const four = await labels('p2p', 4);
    expect(four.forward.labels).toEqual(['ring', 'ring', 'ring', 'ring']);
    expect(four.backward.labels).toEqual(['ring', 'ring', 'ring', 'ring', 'home']);
    const one = await labels('p2p', 1);
    expect(one.forward.labels).toEqual(['attend']);
    expect(one.backward.labels).toEqual(['attend']);
  });

  it('every label is explained under the CLI table and in docs/ring.md; a run\'s table explains the labels it shows', async () => {
    const said = (text: string, l: string) => new RegExp(`\\n {4}${l} = \\S`).test(text);
    const under = TIMELINE_COLUMNS.join('\n');
    const doc = readFileSync(new URL('../docs/ring.md', import.meta.url), 'utf8');
    for (const l of STEP_LABELS) {
      expect(said(under, l), l).toBe(true);
      expect(doc, l).toContain(`\`${l}\``);
    }
    const run = await dryRun({ shape, R: 2, scheme: 'a2a', precision: 'f32', mask: { causal: true } });
    const phases = (['forward', 'backward'] as const).map((phase) => ({ phase, wallMs: 1, steps: run.steps.filter((st) => st.phase === phase) }));
    const facts = { adapters: ['gpu a'], mode: 'one-device' as const, scheme: 'a2a', hierarchy: run.hierarchy, R: 2, layout: 'zigzag' as const, precision: 'f32' as const, shape, ranks: [] };
    const text = formatTimeline(makeTimeline(facts, { causal: true, window: [-1, -1], docs: null }, shardLayout(64, 2, 'zigzag'), phases));
    expect(STEP_LABELS.filter((l) => said(text, l))).toEqual(['attend', 'a2a-in', 'a2a-out']);
    expect(text).toMatch(/idle = ms it waited for the step's slowest rank;\n {2}what = the step, by its label:\n {4}attend = attention on K\/V this rank holds, nothing sent/);
  });
});
