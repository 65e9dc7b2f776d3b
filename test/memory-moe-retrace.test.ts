/**
 * The MoE held-out draw's four runs of two micro batches a step, traced again with bench/megatron/trace.py as fixed
 * (saved tensors of the first micro batch only; bench/results/2026-12-07-moe-held/retrace-h100, an H100): the traces
 * are one micro batch's, the runs are the first runs' to the byte, every part within the criterion at the frozen model
 * and today's, and the draw's README states the figures bench/results/2026-12-07-moe-held/retrace.ts computes.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { campaignRows } from '../bench/megatron/campaignTable.js';
import { PEAK_PARTS, compareTrace, savedIsOneMicroBatch, tracedMicroBatches } from '../src/memory/trace.js';
import { DRAW, Judged, RETRACE, RETRACED, allSix, frozen, judge, rangeText, savedMove, tableRow, tracedRun } from '../bench/results/2026-12-07-moe-held/retrace.js';

const MiB = 2 ** 20;
const flat = (f: string) => readFileSync(f, 'utf8').replace(/\s+/g, ' ');
/** The cross-entropy's saved fp32 logits: one entry a micro batch the trace recorded. */
const logits = (t: ReturnType<typeof tracedRun>['trace']) => t.saved.find((x) => x.site.includes('cross_entropy.py:233') && x.dtype === 'float32')!;

describe('the re-traces are of the first micro batch only (saved_scope; savedIsOneMicroBatch)', () => {
  it('two micro batches a step, the same flags as the first runs; the re-traces say so and list the logits once, the first traces twice', () => {
    for (const id of RETRACED) {
      const first = tracedRun('runs', id).trace, again = tracedRun('retrace-h100/runs', id).trace;
      expect(again.args, id).toEqual(first.args);
      expect([tracedMicroBatches(first), tracedMicroBatches(again)], id).toEqual([2, 2]);
      expect([first.saved_scope, again.saved_scope], id).toEqual([undefined, 'first micro batch']);
      expect([savedIsOneMicroBatch(first), savedIsOneMicroBatch(again)], id).toEqual([false, true]);
      expect([logits(first).count, logits(again).count], id).toEqual([2, 1]);
      expect(again.saved_bytes, id).toBeLessThan(first.saved_bytes);
    }
  });
  it("r04 (no recompute, 6 layers): each layer's saved inputs once a layer, where the first trace had 12 of 6", () => {
    const norm = (sub: string) => tracedRun(sub, 'r04').trace.saved.find((x) => x.module === 'decoder.layers.*.input_layernorm' && x.dtype === 'bfloat16')!;
    expect([norm('runs').count, norm('retrace-h100/runs').count]).toEqual([12, 6]);
  });
});

describe('the re-runs are the first runs to the byte (same configurations, the same H100 model)', () => {
  type Live = { site: string; bytes: number; count: number };
  const live = (t: ReturnType<typeof tracedRun>['trace'], site: string) => (t.history as { live_at_peak: Live[] }).live_at_peak.find((x) => x.site === site);
  it("live at the peak, the batch (schedules.py:515) and the loss's scalars (:333) read as trace.py's first-micro-batch wrapper: the same bytes, the rest alike", () => {
    const BATCH = 'megatron/core/pipeline_parallel/schedules.py:515 forward_step', LOSS = 'megatron/core/pipeline_parallel/schedules.py:333 forward_step_calc_loss', WRAP = 'megatron/trace.py:199 run';
    for (const id of RETRACED) {
      const a = tracedRun('runs', id).trace, b = tracedRun('retrace-h100/runs', id).trace;
      expect([live(b, BATCH), live(b, LOSS), live(a, WRAP)], id).toEqual([undefined, undefined, undefined]);
      const moved = [live(a, BATCH)!, live(a, LOSS)!];
      expect(live(b, WRAP), id).toEqual({ site: WRAP, bytes: moved[0].bytes + moved[1].bytes, count: moved[0].count + moved[1].count });
      const rest = (t: typeof a) => (t.history as { live_at_peak: Live[] }).live_at_peak.filter((x) => ![BATCH, LOSS, WRAP].includes(x.site));
      expect(rest(b), id).toEqual(rest(a));
    }
  });
  it("max allocated (the log's and the trace's), the allocator history's peak and what is allocated between steps", () => {
    for (const id of RETRACED) {
      const a = tracedRun('runs', id), b = tracedRun('retrace-h100/runs', id);
      expect(b.peak, id).toBe(a.peak);
      expect(b.trace.max_allocated_bytes, id).toBe(a.trace.max_allocated_bytes);
      expect((b.trace.history as { peak_bytes: number }).peak_bytes, id).toBe((a.trace.history as { peak_bytes: number }).peak_bytes);
      const between = (t: typeof a.trace) => t.iterations.find((i) => i.iteration === t.history_iterations - 1)!.allocated_bytes;
      expect(between(b.trace), id).toBe(between(a.trace));
    }
  });
});

describe("judged as the draw's README says: each part within 0.5% of the peak, at the frozen model and at today's", () => {
  const js = RETRACED.map((id) => judge(id));
  it("the frozen model's parts are predicted.csv's (to its 0.1 MiB); the terms counted since are static only", () => {
    for (const j of js) {
      const f = frozen(j.id), mib = (part: string) => j.frozen.find((p) => p.part === part)!.model / MiB;
      expect(Math.abs(mib('static') - f.staticMib), j.id).toBeLessThanOrEqual(0.05);
      expect(Math.abs(mib('stored') - f.storedMib), j.id).toBeLessThanOrEqual(0.05);
      expect(Math.abs(mib('transient') - f.transientMib), j.id).toBeLessThanOrEqual(0.05);
      expect(j.since, j.id).toBeGreaterThan(0);
    }
  });
  it('every part of every re-trace within 0.5% of the peak at both models; totals within 2%', () => {
    for (const j of js) {
      expect(j.today.map((p) => p.part), j.id).toEqual([...PEAK_PARTS]);
      for (const p of [...j.today, ...j.frozen]) expect(Math.abs(p.ofPeak), `${j.id} ${p.part}`).toBeLessThan(0.005);
      for (const e of [j.errorFrozen, j.errorToday]) expect(Math.abs(e), j.id).toBeLessThan(0.02);
    }
  });
  it('campaignTable reads the sub-folder as the draw\'s runs again: its four rows are these parts, the two not re-run read "not run"', () => {
    const rows = campaignRows(RETRACE);
    expect(rows.filter((r) => r.failure === 'not run').map((r) => r.id)).toEqual(['r02', 'r05']);
    for (const j of js) expect(rows.find((r) => r.id === j.id)!.parts, j.id).toEqual(j.today);
  });
  it('the stored part group by group (compareTrace) within 2 MiB; the MoE group of the runs that store their MoE layers within 0.05% of the peak', () => {
    for (const j of js) expect(j.worstGroup, j.id).toBeLessThan(2 * MiB);
    for (const id of ['r03', 'r04']) {
      const r = tracedRun('retrace-h100/runs', id), mlp = compareTrace(r.b, r.trace, r.peak).find((g) => g.group === 'mlp')!;
      expect(r.par.recompute, id).toBe('none');
      expect(Math.abs(mlp.ofPeak), id).toBeLessThan(0.0005);
    }
  });
  it("each total is short by the allocator's blocks and 0.4–2 MiB more: the model against the bytes the live tensors asked for at the peak", () => {
    for (const j of js) {
      for (const p of [...j.today, ...j.frozen]) expect(p.ofPeak, `${j.id} ${p.part}`).toBeLessThan(0);   // under the trace in every part
      expect(j.requestedShort, j.id).toBeGreaterThan(0.4 * MiB);
      expect(j.requestedShort, j.id).toBeLessThan(2 * MiB);
    }
  });
});

describe("the draw's README states the re-traces' figures as retrace.ts computes them", () => {
  const readme = flat(`${DRAW}/README.md`);
  const stated = (s: string) => expect(readme.includes(s.replace(/\s+/g, ' ')), `README should state: ${s}`).toBe(true);
  it('the table, row by row', () => {
    for (const id of RETRACED) stated(tableRow(judge(id)));
  });
  it("the ranges: totals and parts of the four at both models, and each part of all six at the model as predicted", () => {
    const js = RETRACED.map((id) => judge(id));
    const over = (f: (j: Judged) => number) => rangeText([Math.min(...js.map(f)), Math.max(...js.map(f))]);
    const part = (which: 'frozen' | 'today', p: string) => (j: Judged) => j[which].find((x) => x.part === p)!.ofPeak;
    stated(`**Totals: 4 of 4 within 2%** (${over((j) => j.errorFrozen)}; today ${over((j) => j.errorToday)})`);
    stated(`static ${over(part('frozen', 'static'))} (today ${over(part('today', 'static'))}), stored ${over(part('today', 'stored'))}, transient ${over(part('today', 'transient'))}`);
    const six = allSix();
    stated(`every part of all six runs is within 0.5% at the model as predicted: static ${rangeText(six.static)}, stored ${rangeText(six.stored)}, transient ${rangeText(six.transient)}`);
    for (const r of Object.values(six)) for (const x of r) expect(Math.abs(x)).toBeLessThan(0.005);
  });
  it('the saved bytes, first trace → re-trace, the largest stored group off, and the bytes asked for at the peak', () => {
    stated(`saved bytes (MiB, first trace → re-trace): ${RETRACED.map((id) => `${id} ${savedMove(id)}`).join(', ')}`);
    const js = RETRACED.map((id) => judge(id));
    stated(`no group more than ${(Math.max(...js.map((j) => j.worstGroup)) / MiB).toFixed(2)} MiB off`);
    const short = js.map((j) => j.requestedShort / MiB);
    stated(`short of what the live tensors asked for at the peak by ${Math.min(...short).toFixed(1)}–${Math.max(...short).toFixed(1)} MiB`);
  });
});

describe("README and docs/memory.md state the re-traces' figures as retrace.ts computes them", () => {
  const six = allSix(), js = RETRACED.map((id) => judge(id));
  const over = (p: string) => { const xs = js.map((j) => j.today.find((x) => x.part === p)!.ofPeak); return rangeText([Math.min(...xs), Math.max(...xs)]); };
  const has = (f: string, s: string) => expect(flat(f).includes(s), `${f} should state: ${s}`).toBe(true);
  it("README: each part of all six within 0.5% of every peak", () => {
    has('README.md', `part by part within 0.5% of every peak: the memory held between steps (${rangeText(six.static)})`);
    has('README.md', `the stored activations (${rangeText(six.stored)}) and the transient (${rangeText(six.transient)}) of all six`);
  });
  it('docs/memory.md: the four re-traced, and all six as predicted', () => {
    has('docs/memory.md', `at the model as predicted and at today's: stored ${over('stored')}, transient ${over('transient')} (each re-trace's`);
    has('docs/memory.md', `Over all six, as predicted: static ${rangeText(six.static)}, stored ${rangeText(six.stored)}, transient ${rangeText(six.transient)};`);
    const short = js.map((j) => j.requestedShort / MiB);
    has('docs/memory.md', `at the re-traced peaks by ${Math.min(...short).toFixed(1)}–${Math.max(...short).toFixed(1)} MiB`);
  });
});
