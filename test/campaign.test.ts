/**
 * The memory model against the randomized Megatron-LM campaign (bench/results/2026-12-02-megatron-campaign:
 * 48 configurations drawn with seed 33, split build / held-out before any ran): each half's largest
 * and median error as docs/memory.md states them; every stored-activation group within 2% of the
 * run's peak against its saved-tensor trace; the results README's table is this computation.
 */
import { describe, expect, it } from 'vitest';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { InputError } from '../src/errors.js';
import { CAMPAIGN_DIR, campaignRows, campaignTable, partsTable, summary, summaryLine } from '../bench/megatron/campaignTable.js';
import { expectRounded, expectWithin } from './stated.js';
import { parseMegatronLog } from '../src/memory/megatron.js';
import { predictFromLog } from '../src/memory/compare.js';
import { median } from '../src/stats.js';

const rows = campaignRows();

describe('the Megatron-LM campaign', () => {
  it('the draw: 48 runs, both halves, 47 measured and one failed run named (not counted)', () => {
    expect(rows).toHaveLength(48);
    expect(rows.filter((r) => r.split === 'heldout').length).toBeGreaterThanOrEqual(20);
    expect(rows.filter((r) => r.split === 'build').length).toBeGreaterThanOrEqual(20);
    const failed = rows.filter((r) => r.measuredGib === null);
    expect(failed.map((r) => r.id)).toEqual(['r25']);
    expect(failed[0].failure).toMatch(/recursed \d+ deep/);
  });

  // The figures docs/memory.md and the results README publish (after 430083b, which changed the GQA
  // Q/K/V terms having seen both halves, the padded vocabulary's parameters (2026-12-06), a recomputed core's Q copy with
  // GQA and no RoPE (2026-12-07, from another draw's trace), a MoE layer's input counted once (2026-12-07, from
  // Megatron-LM's source: r40's −0.5% → −0.7% is now the held-out largest, r02's +2.3% → +1.5% the build's) and what a
  // recomputed MoE layer holds from backward to its next forward (2026-12-07, Megatron-LM's source; r03 −0.36% → −0.09%,
  // the build median 0.11% → 0.10%), and RoPE's cached table and what the token dispatcher keeps on itself between steps
  // (2026-12-07, Megatron-LM's source and every trace: r40 −0.71% → −0.66%, r02 +1.54% → +1.59%, the medians 0.08% → 0.07%
  // held out and 0.10% → 0.09% build); the frozen
  // model's figures, 1.12% and 0.26% held out, are the recorded predictions of dd5e3bb, checked in 'the frozen model' below).
  const STATED = { heldout: { within: '0.7', median: '0.07' }, build: { within: '1.59', median: '0.09' } } as const;
  it('the published figures, recomputed: held-out within 0.7%, median 0.07%; build within 1.59%, median 0.09%', () => {
    for (const split of ['build', 'heldout'] as const) {
      const s = summary(rows, split);
      expect(s.runs).toBe(split === 'build' ? 25 : 22);
      expectWithin(s.maxAbs!, STATED[split].within, `${split} largest |error|`);
      expectRounded(s.median!, STATED[split].median, `${split} median |error|`);
    }
    const h = STATED.heldout, b = STATED.build;
    expect(readFileSync('docs/memory.md', 'utf8').replace(/\s+/g, ' ')).toContain(`held-out within ${h.within}%, median ${h.median}%; build within ${b.within}%, median ${b.median}%`);
    expect(readFileSync('README.md', 'utf8').replace(/\s+/g, ' ')).toContain(`(${h.within}% after seven changes made having seen both halves)`);
    const readme = readFileSync(`${CAMPAIGN_DIR}/README.md`, 'utf8');
    for (const split of ['build', 'heldout'] as const) expect(readme).toContain(summaryLine(rows, split));
  });

  it('term by term: each stored group within 2% of the run\'s peak against its trace (r02: token dropping, counted at its bound)', () => {
    let compared = 0;
    for (const r of rows) {
      if (!r.groups) continue;
      compared++;
      for (const g of r.groups) expect(Math.abs(g.ofPeak), `${r.id} ${g.group}: model ${g.model} traced ${g.traced}`).toBeLessThan(0.02);
      expect(r.groups.find((g) => g.group === 'other')?.traced ?? 0, `${r.id}: traced tensors no group takes`).toBe(0);
    }
    expect(compared).toBe(47);
    // r02 drops tokens (capacity factor 1.0): the model counts every routed token, the bound; the run kept about half
    const r02 = rows.find((r) => r.id === 'r02')!.groups!.find((g) => g.group === 'mlp')!;
    expect(r02.model).toBeGreaterThan(r02.traced);
  });

  it('the peak in parts, every traced run: static, stored and transient each within the bounds docs/memory.md states (dense 0.5% of the peak; MoE static 0.8%, stored 0.5% but r02 1.8%, transient 0.35%)', () => {
    const traced = rows.filter((r) => r.parts);
    expect(traced).toHaveLength(47);
    for (const r of traced) {
      const [st, sd, tr] = r.parts!.map((p) => Math.abs(p.ofPeak));
      const why = `${r.id} ${r.config}: ${r.parts!.map((p) => `${p.part} ${(p.ofPeak * 100).toFixed(2)}%`).join(', ')}`;
      // The parts are of the same peak as the total: they add up to its error.
      expect(r.parts!.reduce((s, p) => s + p.ofPeak, 0), why).toBeCloseTo(r.error!, 4);
      expect(st, why).toBeLessThan(r.moe ? 0.008 : 0.005);
      expect(sd, why).toBeLessThan(r.id === 'r02' ? 0.018 : 0.005);
      expect(tr, why).toBeLessThan(r.moe ? 0.0035 : 0.005);
    }
    // r03: until the model counted what its MoE checkpoints hold from backward to the next forward (2026-12-07), a static
    // 1.70% short and a transient 1.36% over cancelled to a total of −0.36%; now each part is the trace's (static −0.08%
    // until RoPE's table and what the dispatcher keeps were counted, 2026-12-07: 10.6 MiB of its 18 MiB shortfall)
    const r03 = rows.find((r) => r.id === 'r03')!;
    expectRounded(r03.parts![0].ofPeak, '-0.03', 'r03 static');
    expectRounded(r03.parts![2].ofPeak, '0.00', 'r03 transient');
    expectRounded(r03.error!, '-0.04', 'r03 total');
    const doc = readFileSync('docs/memory.md', 'utf8');
    for (const line of partsTable(rows).split('\n')) expect(doc).toContain(`  ${line}\n`);
  });

  it('the held-out MoE runs each no further off than now (|error| rounded up at a tenth of a point)', () => {
    // Since a MoE layer's input is counted once (2026-12-07, moe_utils.py:1382): r11 +0.11% → −0.07%, r44 +0.36% → +0.15%;
    // r27 +0.04% → −0.15% and r40 −0.50% → −0.71%: their stored MoE groups are now the traces' and what is left is their
    // memory between steps (r40's 15 MiB short of a 1.8 GiB peak, as the dense runs are short by up to 22 MiB; 14 MiB
    // since RoPE's table and the dispatcher's tensors are counted, −0.71% → −0.66%, and r44 +0.15% → +0.19%).
    const NOW: Record<string, number> = { r11: 0.1, r27: 0.2, r40: 0.7, r44: 0.2 };
    const moe = rows.filter((r) => r.moe && r.split === 'heldout');
    expect(moe.map((r) => r.id)).toEqual(Object.keys(NOW));
    for (const r of moe) expect(Math.abs(r.error!) * 100, `${r.id} ${r.config}`).toBeLessThanOrEqual(NOW[r.id]);
  });

  it("the results README's table is this computation", () => {
    const readme = readFileSync(`${CAMPAIGN_DIR}/README.md`, 'utf8');
    for (const line of campaignTable(rows).split('\n')) expect(readme).toContain(line);
  });

  it('a log with an option the model does not handle names it and gives no error figure', () => {
    const text = readFileSync(`${CAMPAIGN_DIR}/runs/r11.log`, 'utf8');
    const ok = predictFromLog(parseMegatronLog(text, 'r11'), null);
    if ('error' in ok) throw new Error(ok.error);
    expect(ok.notModelled).toEqual([]);
    expect(Math.abs(ok.totalError!)).toBeLessThan(0.05); // an MoE log replays within 5%
    const changed = text.replace(/^(\s*moe_layer_freq \.+ )1$/m, '$12').replace(/^(\s*moe_grouped_gemm \.+ )False$/m, '$1True');
    expect(changed).not.toBe(text);
    const p = predictFromLog(parseMegatronLog(changed, 'r11-changed'), null);
    if ('error' in p) throw new Error(p.error);
    expect(p.notModelled).toEqual(['--moe-layer-freq 2', '--moe-grouped-gemm']);
    expect(p.totalError).toBeNull();
    expect(p.notes.join('\n')).toContain('not modelled: --moe-layer-freq 2 --moe-grouped-gemm');
    // The optimizer and number formats too (an adversarial review found these replayed as if modelled).
    const formats: [RegExp, string, string][] = [
      [/^(\s*optimizer \.+ )adam$/m, '$1sgd', '--optimizer sgd'],
      [/^(\s*kv_channels \.+ )\d+$/m, '$1256', '--kv-channels 256'],
      [/^(\s*use_precision_aware_optimizer \.+ )False$/m, '$1True', '--use-precision-aware-optimizer'],
      [/^(\s*exp_avg_dtype \.+ )torch\.float32$/m, '$1torch.bfloat16', '--exp-avg-dtype torch.bfloat16'],
      [/^(\s*main_grads_dtype \.+ )torch\.float32$/m, '$1torch.bfloat16', '--main-grads-dtype torch.bfloat16'],
      [/^(\s*bf16 \.+ )True$/m, '$1False', 'fp32 training (neither --bf16 nor --fp16)'],
      [/^(\s*distribute_saved_activations \.+ )False$/m, '$1True', '--distribute-saved-activations'],
    ];
    for (const [re, to, flag] of formats) {
      const t = text.replace(re, to);
      expect(t, flag).not.toBe(text);
      const q = predictFromLog(parseMegatronLog(t, 'r11-format'), null);
      if ('error' in q) throw new Error(q.error);
      expect(q.notModelled, flag).toEqual([flag]);
      expect(q.totalError, flag).toBeNull();
    }
  });
});

describe("the folder campaignTable is given: a draw's, or a folder of its runs run again (runs/ of its own)", () => {
  const HELD = 'bench/results/2026-12-07-moe-held';
  it("a draw's runs/ itself, or a folder that is not there: refused, naming both kinds of folder, not six rows of 'not run'", () => {
    for (const dir of [`${HELD}/runs`, `${HELD}/retrace-h10`]) {
      expect(() => campaignRows(dir), dir).toThrow(InputError);
      expect(() => campaignRows(dir), dir).toThrow(`${dir}: neither a draw.json nor a runs/ folder there; pass a draw's folder`);
    }
  });
  it('the fallback to the draw above only where runs/ is a folder; runs/ with no draw.json above is refused', () => {
    const root = mkdtempSync(`${tmpdir()}/campaign-`);
    try {
      copyFileSync(`${HELD}/draw.json`, `${root}/draw.json`);
      mkdirSync(`${root}/file`);
      writeFileSync(`${root}/file/runs`, '');   // runs, but a file
      expect(() => campaignRows(`${root}/file`)).toThrow('neither a draw.json nor a runs/ folder');
      mkdirSync(`${root}/again/runs`, { recursive: true });
      const rows = campaignRows(`${root}/again`);
      expect(rows.map((r) => r.failure)).toEqual(Array(6).fill('not run'));
      mkdirSync(`${root}/again/deeper/runs`, { recursive: true });   // the folder above has no draw.json
      expect(() => campaignRows(`${root}/again/deeper`)).toThrow(`${root}/again/deeper: runs/ but no draw.json there nor in the folder above`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
  it("a half with no run measured says so: no -Infinity or NaN (the re-traces are two of each half; an empty runs/ none)", () => {
    const none = campaignRows(HELD).map((r) => ({ ...r, error: null, measuredGib: null, failure: 'not run' }));
    for (const split of ['build', 'heldout'] as const) {
      expect(summary(none, split)).toEqual({ runs: 0, maxAbs: null, median: null });
      expect(summaryLine(none, split)).toBe(`${split}: 0 runs, no run measured`);
    }
    const some = campaignRows(`${HELD}/retrace-h100`);
    for (const split of ['build', 'heldout'] as const) expect(summaryLine(some, split)).toMatch(new RegExp(`^${split}: 2 runs, largest \\|error\\| \\d+\\.\\d%, median \\|error\\| \\d+\\.\\d\\d%$`));
  });
  it('the command line: a refused folder is one line on stderr and exit status 1, no stack and no table', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/megatron/campaignTable.ts', `${HELD}/runs`], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(`InputError: ${HELD}/runs: neither a draw.json nor a runs/ folder there; pass a draw's folder (its draw.json and runs/, e.g. ${HELD}) or a folder of its runs run again inside it (runs/ of its own, e.g. ${HELD}/retrace-h100)`);
  });
});

/**
 * The frozen model (dd5e3bb, written from the build half's traces): its predictions are recorded in
 * frozen-dd5e3bb.csv, computed by that commit's own code from its own copy of the logs
 * (frozen-dd5e3bb.ts, run on a worktree of dd5e3bb). Here the held-out and build figures the docs state
 * are recomputed from that file, and each run's measured peak in it is what today's parser reads
 * from the same log, so the file cannot drift from the logs. What this cannot check: that the model
 * was fixed before the held-out logs were read (they were first committed together, in dd5e3bb).
 */
describe('the frozen model (dd5e3bb), from its recorded predictions', () => {
  const lines = readFileSync(`${CAMPAIGN_DIR}/frozen-dd5e3bb.csv`, 'utf8').trimEnd().split('\n');
  const num = (s: string) => (s === '' ? null : Number(s));
  const frozen = lines.slice(1).map((l) => {
    const [id, split, measured, predicted, error] = l.split(',');
    return { id, split, measured: num(measured), predicted: num(predicted)!, error: num(error) };
  });

  it('one row per run of the draw, in its half; the error is (predicted − measured) / measured of the recorded bytes', () => {
    expect(lines[0]).toBe('run,half,measured_peak_bytes,predicted_peak_bytes,error');
    expect(frozen.map((f) => `${f.id} ${f.split}`)).toEqual(rows.map((r) => `${r.id} ${r.split}`));
    for (const f of frozen) {
      expect(Number.isInteger(f.predicted) && f.predicted > 0, f.id).toBe(true);
      if (f.measured === null) { expect(f.error, f.id).toBeNull(); continue; }
      expect(f.error, f.id).not.toBeNull();
      expect(Math.abs(f.error! - (f.predicted - f.measured) / f.measured), f.id).toBeLessThan(1e-12);
    }
    expect(frozen.filter((f) => f.measured === null).map((f) => f.id)).toEqual(['r25']);
  });

  it("each run's measured peak is what today's parser reads from the same log, to the byte", () => {
    for (const f of frozen) {
      const gib = parseMegatronLog(readFileSync(`${CAMPAIGN_DIR}/runs/${f.id}.log`, 'utf8'), f.id).point.peakMaxAllocatedGiB;
      expect(gib === null ? null : gib * 2 ** 30, f.id).toBe(f.measured);
    }
  });

  // "largest 1.12%" is a value, not a "within": rounded, as the medians (by the 'within' rule, rounded
  // up, the held-out largest, 1.121%, would be 1.13%).
  const FROZEN = { heldout: { runs: 22, largest: '1.12', worst: 'r46', median: '0.26' }, build: { runs: 25, largest: '2.30', worst: 'r02', median: '0.21' } } as const;
  it('the figures the docs state, recomputed: held-out 22 runs, largest 1.12% (r46), median 0.26%; build 25, largest 2.30%, median 0.21%', () => {
    for (const split of ['build', 'heldout'] as const) {
      const e = frozen.filter((f) => f.split === split && f.error !== null);
      const worst = e.reduce((w, f) => (Math.abs(f.error!) > Math.abs(w.error!) ? f : w));
      expect(e.length, split).toBe(FROZEN[split].runs);
      expect(worst.id, split).toBe(FROZEN[split].worst);
      expectRounded(Math.abs(worst.error!), FROZEN[split].largest, `${split} largest |error| at dd5e3bb`);
      expectRounded(median(e.map((f) => Math.abs(f.error!)))!, FROZEN[split].median, `${split} median |error| at dd5e3bb`);
    }
    const h = FROZEN.heldout, b = FROZEN.build;
    const flat = (p: string) => readFileSync(p, 'utf8').replace(/\s+/g, ' ');
    expect(flat('docs/memory.md')).toContain(`**at that frozen model, ${h.runs} held-out runs, the largest error ${h.largest}% of the measured peak (${h.worst}), median ${h.median}%** (build half ${b.runs} runs, largest ${b.largest}%, median ${b.median}%;`);
    expect(flat('README.md')).toContain(`${h.runs} held-out runs, the largest error ${h.largest}% of the measured peak at the model frozen before they were read`);
    expect(flat(`${CAMPAIGN_DIR}/README.md`)).toContain(`**held-out ${h.runs} runs, largest |error| ${h.largest}% (${h.worst}), median |error| ${h.median}%**; build ${b.runs} runs, largest ${b.largest}%, median ${b.median}%`);
  });
});
