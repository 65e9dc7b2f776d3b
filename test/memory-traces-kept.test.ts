/**
 * What Megatron-LM keeps from one step to the next beside the weights, the gradients and the optimizer, and that no
 * saved tensor of autograd accounts for: RoPE's cached table (src/memory/model.ts ropeTableTerm), by hand and against
 * every traced run (bench/results/<draw>/runs/*.trace.json): live at the run's peak at its Megatron-LM line, and the
 * static part of every run (allocated between steps) short of the model's by that much less than before, never over.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { configFromLog, parseMegatronLog } from '../src/memory/megatron.js';
import { DEFAULT_PARALLEL, ModelConfig, ParallelConfig, ROPE_TABLE, memoryBreakdown, positionEmbedding, stageMemory } from '../src/memory/model.js';
import { MegatronTrace, comparePeakParts } from '../src/memory/trace.js';

const MiB = 2 ** 20;
const block = (x: number) => Math.ceil(x / 512) * 512;
const TRACED = ['2026-12-02-megatron-campaign', '2026-12-06-heldout8-followup', '2026-12-07-moe-extras', '2026-12-07-moe-held'];

/** Every traced run that measured a peak: its configuration from its own log, its breakdown, its trace and its peak (bytes). */
const runs = TRACED.flatMap((dir) => readdirSync(`bench/results/${dir}/runs`).filter((f) => f.endsWith('.trace.json')).sort()
  .map((f) => `bench/results/${dir}/runs/${f.slice(0, -'.trace.json'.length)}`)).flatMap((path) => {
  const res = parseMegatronLog(readFileSync(`${path}.log`, 'utf8'), path);
  if (res.point.peakMaxAllocatedGiB === null) return [];
  const c = configFromLog(res);
  if ('error' in c) throw new Error(`${path}: ${c.error}`);
  const trace = JSON.parse(readFileSync(`${path}.trace.json`, 'utf8')) as MegatronTrace;
  const b = memoryBreakdown(c.model, c.par);
  const kept = b.outside.filter((t) => t.name === ROPE_TABLE);
  return [{ path, ...c, b, trace, kept, peak: res.point.peakMaxAllocatedGiB * 2 ** 30 }];
});
const shortId = (path: string) => `${path.split('/')[2].replace(/^\d{4}-\d\d-\d\d-/, '')} ${path.split('/').at(-1)}`;
/** What the trace lists live at its peak as allocated at `site` (a Megatron-LM line), or undefined. */
const live = (t: MegatronTrace, site: string) => (t.history as { live_at_peak: { site: string; bytes: number; count: number }[] }).live_at_peak.find((x) => x.site.startsWith(site));
const term = (b: ReturnType<typeof memoryBreakdown>, name: string) => b.outside.find((t) => t.name.startsWith(name));

describe("RoPE's table, which RotaryEmbedding.forward's lru_cache keeps for the whole run (rotary_pos_embedding.py:168, :177)", () => {
  const m: ModelConfig = { numLayers: 4, hiddenSize: 2048, numAttentionHeads: 16, vocabSize: 32000, swiglu: true, positionEmbedding: 'rope' };
  const p: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 32768 };
  const rope = (mm: ModelConfig, pp: ParallelConfig) => term(memoryBreakdown(mm, pp), ROPE_TABLE);
  it('fp32 s × h/a (its positions by the inverse frequencies, twice), and the h/(2a) inverse frequencies in a 512-byte block; between steps, so static', () => {
    const t = rope(m, p)!;
    expect([t.bytes, t.formula, t.betweenSteps]).toEqual([4 * 32768 * 128 + 512, '4·s·(h/a) + 512 (a block for the inverse frequencies)', true]); // 16 MiB + 512 B
    expect(rope({ ...m, numAttentionHeads: 128 }, { ...p, seqLength: 100 })!.formula).toBe('⌈4·s·(h/a)/512⌉·512 + 512 (a block for the inverse frequencies)');
    expect(rope(m, { ...p, flashAttention: false, recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1 })!.bytes).toBe(t.bytes); // the same table whatever the core and recompute
  });
  it('the whole sequence with SP (get_rotary_seq_len undoes its split), the rank\'s s/CP rows with CP, one a model chunk interleaved, on every pipeline stage', () => {
    const t = rope(m, p)!.bytes, table = t - 512;
    expect(rope(m, { ...p, tensorParallel: 2, sequenceParallel: true })!.bytes).toBe(t);
    expect(rope(m, { ...p, contextParallel: 2, dataParallel: 1 })!.bytes).toBe(table / 2 + 512);
    const pp = { ...p, pipelineParallel: 2, virtualStages: 2 };
    for (const stage of ['first', 'last'] as const) expect(term(stageMemory(m, pp, stage), ROPE_TABLE)!.bytes, stage).toBe(2 * t);
  });
  it('none without RoPE (learned positions, none) or in the PyTorch harness (no RotaryEmbedding)', () => {
    expect(rope({ ...m, positionEmbedding: 'learned_absolute' }, p)).toBeUndefined();
    expect(rope({ ...m, positionEmbedding: 'none' }, p)).toBeUndefined();
    expect(rope(m, { ...p, stack: 'torch-amp', distributedOptimizer: false })).toBeUndefined();
  });
  it("every traced RoPE run has it live at its peak, one fp32 tensor of 4·s·(h/a) at :168 and the inverse frequencies at :79: the model's term, in 512-byte blocks; no run without RoPE has either", () => {
    let n = 0;
    for (const r of runs) {
      const table = live(r.trace, 'megatron/core/models/common/embeddings/rotary_pos_embedding.py:168 get_emb');
      const inv = live(r.trace, 'megatron/core/models/common/embeddings/rotary_pos_embedding.py:79 __init__');
      const t = term(r.b, ROPE_TABLE);
      if (positionEmbedding(r.model) !== 'rope') {
        expect([table, inv, t], r.path).toEqual([undefined, undefined, undefined]);
        continue;
      }
      n++;
      const dh = r.model.hiddenSize / r.model.numAttentionHeads;
      expect(table, r.path).toEqual({ site: expect.any(String), bytes: 4 * r.par.seqLength * dh, count: 1 });
      expect(inv, r.path).toEqual({ site: expect.any(String), bytes: 2 * dh, count: 1 });
      expect(t?.bytes, r.path).toBe(block(table!.bytes) + block(inv!.bytes));
    }
    expect(n).toBe(26); // 23 of the campaign's 47, the MoE-extras r01, the MoE held-out r00 and r05
  });
});

describe('the static part of every traced run (allocated between steps, comparePeakParts): short of the model\'s by less, never over', () => {
  const parts = runs.map((r) => {
    const s = comparePeakParts(r.b, r.trace, r.peak)[0];
    const kept = r.kept.reduce((x, t) => x + t.bytes, 0);
    return { ...r, short: (s.measured - s.model) / MiB, before: (s.measured - s.model + kept) / MiB, kept: kept / MiB };
  });
  it('each run\'s shortfall down by RoPE\'s table, none below 0 (the least 0.76 MiB, the MoE held-out r04, without RoPE)', () => {
    expect(parts.length).toBe(58);
    for (const r of parts) expect(r.short, r.path).toBeGreaterThanOrEqual(0);
    const least = parts.reduce((x, y) => (y.short < x.short ? y : x));
    expect([shortId(least.path), least.short.toFixed(2)]).toEqual(['moe-held r04', '0.76']);
    expect(parts.filter((r) => r.kept > 0).length).toBe(26);
  });
  it('the RoPE runs at 32K (r09, r14, r24, r19, r44): 18–24 MiB short before, 2–8 MiB now', () => {
    const long = parts.filter((r) => r.par.seqLength === 32768 && positionEmbedding(r.model) === 'rope');
    expect(long.map((r) => shortId(r.path))).toEqual(['megatron-campaign r09', 'megatron-campaign r14', 'megatron-campaign r19', 'megatron-campaign r24', 'megatron-campaign r44']);
    for (const r of long) {
      expect(r.before, r.path).toBeGreaterThan(17.9);
      expect(r.before, r.path).toBeLessThan(24);
      expect(r.short, r.path).toBeGreaterThan(1.9);
      expect(r.short, r.path).toBeLessThan(8);
    }
  });
});
