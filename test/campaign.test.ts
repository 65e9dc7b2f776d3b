/**
 * The memory model against the randomized Megatron-LM campaign (bench/results/2026-12-02-megatron-campaign:
 * 48 configurations drawn with seed 33, split build / held-out before any ran): each half's largest
 * and median error as docs/memory.md states them; every stored-activation group within 2% of the
 * run's peak against its saved-tensor trace; the results README's table is this computation.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { CAMPAIGN_DIR, campaignRows, campaignTable, partsTable, summary, summaryLine } from '../bench/megatron/campaignTable.js';
import { expectRounded, expectWithin } from './stated.js';
import { parseMegatronLog } from '../src/memory/megatron.js';
import { predictFromLog } from '../src/memory/compare.js';

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
  // Q/K/V terms having seen both halves; the frozen model's held-out figures, 1.12% and 0.26%, are history).
  const STATED = { heldout: { within: '0.6', median: '0.11' }, build: { within: '2.31', median: '0.10' } } as const;
  it('the published figures, recomputed: held-out within 0.6%, median 0.11%; build within 2.31%, median 0.10%', () => {
    for (const split of ['build', 'heldout'] as const) {
      const s = summary(rows, split);
      expect(s.runs).toBe(split === 'build' ? 25 : 22);
      expectWithin(s.maxAbs, STATED[split].within, `${split} largest |error|`);
      expectRounded(s.median, STATED[split].median, `${split} median |error|`);
    }
    const h = STATED.heldout, b = STATED.build;
    expect(readFileSync('docs/memory.md', 'utf8').replace(/\s+/g, ' ')).toContain(`held-out within ${h.within}%, median ${h.median}%; build within ${b.within}%, median ${b.median}%`);
    expect(readFileSync('README.md', 'utf8').replace(/\s+/g, ' ')).toContain(`(${h.within}% after a change made having seen both halves)`);
    const readme = readFileSync(`${CAMPAIGN_DIR}/README.md`, 'utf8');
    for (const split of ['build', 'heldout'] as const) expect(readme).toContain(summaryLine(rows, split));
  });

  it('term by term: each stored group within 2% of the run\'s peak against its trace (r02: token dropping, counted at its bound)', () => {
    let compared = 0;
    for (const r of rows) {
      if (!r.groups) continue;
      compared++;
      for (const g of r.groups) {
        // r02 drops tokens (capacity factor 1.0): the model counts every routed token, the bound; the run kept about half
        if (r.id === 'r02' && g.group === 'mlp') {
          expect(g.model).toBeGreaterThan(g.traced);
          expect(g.ofPeak).toBeLessThan(0.03);
          continue;
        }
        expect(Math.abs(g.ofPeak), `${r.id} ${g.group}: model ${g.model} traced ${g.traced}`).toBeLessThan(0.02);
      }
      expect(r.groups.find((g) => g.group === 'other')?.traced ?? 0, `${r.id}: traced tensors no group takes`).toBe(0);
    }
    expect(compared).toBe(47);
  });

  it('the peak in parts, every traced run: static, stored and transient each within the bounds docs/memory.md states (dense 0.5% of the peak; MoE static 1.8%, stored 0.5% but r02 2.6%, transient 1.4%)', () => {
    const traced = rows.filter((r) => r.parts);
    expect(traced).toHaveLength(47);
    for (const r of traced) {
      const [st, sd, tr] = r.parts!.map((p) => Math.abs(p.ofPeak));
      const why = `${r.id} ${r.config}: ${r.parts!.map((p) => `${p.part} ${(p.ofPeak * 100).toFixed(2)}%`).join(', ')}`;
      // The parts are of the same peak as the total: they add up to its error.
      expect(r.parts!.reduce((s, p) => s + p.ofPeak, 0), why).toBeCloseTo(r.error!, 4);
      expect(st, why).toBeLessThan(r.moe ? 0.018 : 0.005);
      expect(sd, why).toBeLessThan(r.id === 'r02' ? 0.026 : 0.005);
      expect(tr, why).toBeLessThan(r.moe ? 0.014 : 0.005);
    }
    // r03: a static 1.71% short and a transient 1.36% over cancel to a total of −0.36%
    const r03 = rows.find((r) => r.id === 'r03')!;
    expectRounded(r03.parts![0].ofPeak, '-1.71', 'r03 static');
    expectRounded(r03.parts![2].ofPeak, '1.36', 'r03 transient');
    expectRounded(r03.error!, '-0.36', 'r03 total');
    const doc = readFileSync('docs/memory.md', 'utf8');
    for (const line of partsTable(rows).split('\n')) expect(doc).toContain(`  ${line}\n`);
  });

  it('the held-out MoE runs each no further off than now (|error| rounded up at a tenth of a point)', () => {
    const NOW: Record<string, number> = { r11: 0.2, r27: 0.1, r40: 0.6, r44: 0.4 };
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
