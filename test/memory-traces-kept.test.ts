/**
 * What Megatron-LM keeps from one step to the next beside the weights, the gradients and the optimizer, and that no
 * saved tensor of autograd accounts for: RoPE's cached table and what the token dispatcher keeps on itself
 * (src/memory/model.ts ropeTableTerm, dispatcherKeepsTerm), by hand and against every traced run
 * (bench/results/<draw>/runs/*.trace.json): each live at the run's peak at its Megatron-LM line, and the static part of
 * every run (allocated between steps) short of the model's by that much less than before, never over.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { configFromLog, parseMegatronLog } from '../src/memory/megatron.js';
import { DEFAULT_PARALLEL, DISPATCHER_KEEPS, ModelConfig, ParallelConfig, ROPE_TABLE, memoryBreakdown, positionEmbedding, stageMemory } from '../src/memory/model.js';
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
  const kept = b.outside.filter((t) => t.name === ROPE_TABLE || t.name.startsWith(DISPATCHER_KEEPS));
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

describe("what the token dispatcher keeps on itself until the layer's next forward (token_dispatcher.py:312-334, :642-671)", () => {
  const s = 4096, b = 2, E = 8, k = 2, L = 4;
  const m: ModelConfig = { numLayers: L, hiddenSize: 1024, numAttentionHeads: 8, vocabSize: 32000, biasLinear: false, moe: { numExperts: E, routerTopk: k } };
  const p: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: s, microBatchSize: b };
  const keeps = (mm: ModelConfig, pp: ParallelConfig) => term(memoryBreakdown(mm, pp), DISPATCHER_KEEPS);
  const T = s * b;
  it('allgather (the default): the routing map (bool T × E), the routed tokens\' probabilities (bf16 T·k) and their int64 source rows, a layer', () => {
    const t = keeps(m, p)!;
    expect([t.name, t.bytes, t.formula, t.betweenSteps]).toEqual([`${DISPATCHER_KEEPS} (allgather), kept until the layer's next forward`, L * (T * E + 2 * T * k + 8 * T * k), '(s·b·E + 2·s·b·k + 8·s·b·k)·L', true]);
  });
  it('alltoall: the probabilities of every expert (bf16 T × E), the map and the source rows; a capacity factor counted at its bound; flex not counted', () => {
    const a2a = { ...m, moe: { ...m.moe!, dispatcher: 'alltoall' as const } };
    expect(keeps(a2a, p)!.bytes).toBe(L * (2 * T * E + T * E + 8 * T * k));
    expect(keeps({ ...a2a, moe: { ...a2a.moe, capacityFactor: 0.5 } }, p)!.bytes).toBe(L * (2 * T * E + T * E + 8 * T * k * 0.5));
    expect(keeps({ ...a2a, moe: { ...a2a.moe, capacityFactor: 1.5 } }, p)!.bytes).toBe(L * (2 * T * E + T * E + 8 * T * k));
    expect(keeps({ ...m, moe: { ...m.moe!, dispatcher: 'flex' } }, p)).toBeUndefined();
    expect(keeps({ ...m, moe: undefined }, p)).toBeUndefined();
    // each tensor its own allocation: 3 tokens of one expert, top-1, are three 512-byte blocks
    expect(keeps({ ...a2a, moe: { numExperts: 1, routerTopk: 1, dispatcher: 'alltoall' } }, { ...p, seqLength: 3, microBatchSize: 1 })!.bytes).toBe(L * 3 * 512);
  });
  it('at TP with SP: allgather keeps the map gathered over the sequence, alltoall its rank\'s s/t tokens; at EP the balanced share; one set a layer of the stage', () => {
    const tp = { ...p, tensorParallel: 2, sequenceParallel: true };
    expect(keeps(m, tp)!.bytes).toBe(keeps(m, p)!.bytes);
    const a2a = { ...m, moe: { ...m.moe!, dispatcher: 'alltoall' as const } };
    expect(keeps(a2a, tp)!.bytes).toBe(keeps(a2a, p)!.bytes / 2);
    expect(keeps(m, { ...p, expertParallel: 2, dataParallel: 2 })!.bytes).toBe(keeps(m, p)!.bytes);
    // a pipeline of 2 (4 micro batches in flight on the first stage): the stage's L/2 layers, once each
    expect(keeps(m, { ...p, pipelineParallel: 2, numMicrobatches: 4 })!.bytes).toBe(keeps(m, p)!.bytes / 2);
  });
  it('every traced MoE run has them live at its peak, one a layer: the map (moe_utils.py:955, or :1079 where a capacity drops tokens) and alltoall\'s probabilities (:954, :1080) to the byte; the indices (:475) to the byte dropless, under the bound with a capacity', () => {
    const moe = runs.filter((r) => r.model.moe);
    expect(moe.length).toBe(18);
    for (const r of moe) {
      const e = r.model.moe!, L = r.model.numLayers, T = r.par.seqLength * r.par.microBatchSize, ag = (e.dispatcher ?? 'allgather') === 'allgather', cf = e.capacityFactor !== undefined;
      const at = (line: string) => live(r.trace, `megatron/core/transformer/moe/${line}`);
      expect(at(cf ? 'moe_utils.py:1079' : 'moe_utils.py:955'), r.path).toMatchObject({ bytes: L * T * e.numExperts, count: L });
      // allgather's local_probs (T·k) share their line with masked_select's saved mask copy: at least the term's there
      const probs = ag ? at('token_dispatcher.py:331')! : at(cf ? 'moe_utils.py:1080' : 'moe_utils.py:954')!;
      if (ag) expect(probs.bytes >= L * 2 * T * e.routerTopk && probs.count >= L, r.path).toBe(true);
      else expect(probs, r.path).toMatchObject({ bytes: L * 2 * T * e.numExperts, count: L });
      const idx = at('moe_utils.py:475')!, bound = L * 8 * T * e.routerTopk;
      expect(idx.count, r.path).toBe(L);
      if (cf) expect(idx.bytes, r.path).toBeLessThan(bound);
      else expect(idx.bytes, r.path).toBe(bound);
      expect(term(r.b, DISPATCHER_KEEPS)!.bytes, r.path).toBe(L * (block(T * e.numExperts) + block(ag ? 2 * T * e.routerTopk : 2 * T * e.numExperts) + block(bound / L)));
    }
  });
});

describe('the static part of every traced run (allocated between steps, comparePeakParts): short of the model\'s by less, never over', () => {
  const parts = runs.map((r) => {
    const s = comparePeakParts(r.b, r.trace, r.peak)[0];
    const kept = r.kept.reduce((x, t) => x + t.bytes, 0);
    return { ...r, short: (s.measured - s.model) / MiB, before: (s.measured - s.model + kept) / MiB, kept: kept / MiB };
  });
  it('each run\'s shortfall down by the two terms, none below 0 (the least 0.34 MiB, the MoE held-out r04)', () => {
    expect(parts.length).toBe(58);
    for (const r of parts) expect(r.short, r.path).toBeGreaterThanOrEqual(0);
    const least = parts.reduce((x, y) => (y.short < x.short ? y : x));
    expect([shortId(least.path), least.short.toFixed(2)]).toEqual(['moe-held r04', '0.34']);
    expect(parts.filter((r) => r.kept > 0).length).toBe(35); // the 26 RoPE runs and the 9 MoE runs without RoPE
  });
  it('the RoPE runs at 32K (r09, r14, r24, r19, r44): 18–24 MiB short before, 2–6 MiB now', () => {
    const long = parts.filter((r) => r.par.seqLength === 32768 && positionEmbedding(r.model) === 'rope');
    expect(long.map((r) => shortId(r.path))).toEqual(['megatron-campaign r09', 'megatron-campaign r14', 'megatron-campaign r19', 'megatron-campaign r24', 'megatron-campaign r44']);
    for (const r of long) {
      expect(r.before, r.path).toBeGreaterThan(17.9);
      expect(r.before, r.path).toBeLessThan(24);
      expect(r.short, r.path).toBeGreaterThan(1.9);
      expect(r.short, r.path).toBeLessThan(6.1);
    }
  });
  it("not what sets the MoE runs apart: three are still short by 30–34 MiB, more than any dense run (22.1 MiB, r20, no RoPE)", () => {
    const dense = Math.max(...parts.filter((r) => !r.model.moe).map((r) => r.short));
    expect(dense).toBeCloseTo(22.13, 2);
    const left = parts.filter((r) => r.model.moe && r.short > dense);
    expect(left.map((r) => shortId(r.path))).toEqual(['megatron-campaign r16', 'moe-held r00', 'moe-held r03']);
    for (const r of left) expect(r.short, r.path).toBeGreaterThan(30);
  });
});
