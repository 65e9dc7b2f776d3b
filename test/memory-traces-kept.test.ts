/**
 * What Megatron-LM keeps from one step to the next beside the weights, the gradients and the optimizer, and that no
 * saved tensor of autograd accounts for: RoPE's cached table and what the token dispatcher keeps on itself
 * (src/memory/model.ts ropeTableTerm, dispatcherKeepsTerm), by hand and against every traced run
 * (bench/results/<draw>/runs/*.trace.json): each live at the run's peak at its Megatron-LM line, and the static part of
 * every run (allocated between steps) short of the model's by that much less than before, never over; and what it is
 * still short by: not a tensor the model misses (every static tensor live at the peak is the model's to the byte) but the
 * caching allocator's blocks, which memory_allocated counts and the tensors' bytes do not.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { configFromLog, parseMegatronLog } from '../src/memory/megatron.js';
import { DEFAULT_PARALLEL, DISPATCHER_KEEPS, ModelConfig, ParallelConfig, ROPE_TABLE, memoryBreakdown, paddedVocab, positionEmbedding, stageMemory } from '../src/memory/model.js';
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
/** A text flattened, whitespace collapsed (a comment's leading stars too), and a figure as `text` states it. */
const flat = (path: string) => readFileSync(path, 'utf8').replace(/\n\s*\*/g, ' ').replace(/\s+/g, ' ');
const DOC = flat('docs/memory.md');
const stated = (s: string, text = DOC, where = 'docs/memory.md') => expect(text.includes(s), `${where} should state: ${s}`).toBe(true);

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

describe("what the static part is still short by: the caching allocator's blocks, not a tensor the model misses", () => {
  type Live = { site: string; bytes: number; count: number };
  const liveAll = (t: MegatronTrace) => (t.history as { live_at_peak: Live[] }).live_at_peak;
  const sum = (t: MegatronTrace, re: RegExp) => liveAll(t).filter((x) => re.test(x.site)).reduce((s, x) => s + x.bytes, 0);
  /** Tensors under a 512-byte block each (the run's scalars: losses, timers, the optimizer's unit scale, the MoE loss trackers). */
  const scalars = (t: MegatronTrace) => liveAll(t).filter((x) => x.bytes < 512 * x.count);
  /**
   * What the allocator counts beyond what the live tensors asked for, at the peak: its blocks (memory_allocated, every
   * request rounded to 512 bytes, and a large block left whole where splitting it would leave 1 MiB or less,
   * c10/cuda/CUDACachingAllocator.cpp should_split) less the requested bytes the history records (history.peak_bytes).
   */
  const overhead = (t: MegatronTrace) => Math.max(...t.iterations.filter((i) => i.iteration <= t.history_iterations).map((i) => i.max_allocated_bytes))
    - (t.history as { peak_bytes: number }).peak_bytes;
  const parts = runs.map((r) => { const s = comparePeakParts(r.b, r.trace, r.peak)[0]; return { ...r, short: s.measured - s.model, gap: overhead(r.trace) }; });
  type Matrix = { name: string; elements: number };
  /**
   * Each bf16 weight matrix (TP = 1), named, with its elements: the word embedding (and the untied output layer), each
   * layer's QKV, projection and MLP (fc1, fc2; a MoE layer's 'expert fc1', 'expert fc2' each expert and 'shared fc1', 'shared fc2').
   */
  const weightMatrices = (m: ModelConfig, V: number): Matrix[] => {
    const h = m.hiddenSize, a = m.numAttentionHeads, g = m.numQueryGroups ?? a, f = m.ffnHiddenSize ?? 4 * h, sw = m.swiglu ? 2 : 1, e = m.moe;
    const mlp = (w: number, of = ''): Matrix[] => [{ name: `${of}fc1`, elements: sw * w * h }, { name: `${of}fc2`, elements: w * h }];
    const ffn = e ? [...Array<Matrix[]>(e.numExperts).fill(mlp(e.ffnHiddenSize ?? f, 'expert ')).flat(), ...(e.sharedExpertSize ? mlp(e.sharedExpertSize, 'shared ') : [])] : mlp(f);
    const layer = [{ name: 'QKV', elements: (h + (2 * g * h) / a) * h }, { name: 'projection', elements: h * h }, ...ffn];
    const embedding = { name: 'embedding', elements: V * h };
    return [embedding, ...(m.untieEmbeddings ? [{ ...embedding, name: 'output layer' }] : []), ...Array<Matrix[]>(m.numLayers).fill(layer).flat()];
  };
  /** What a bf16 matrix's block holds beyond its bytes where it took a fresh segment: 2 MiB-rounded, not split with 1 MiB or less left (10 MiB or more). */
  const unsplit = (bytes: number) => { const r = Math.ceil(bytes / 2 ** 21) * 2 ** 21 - bytes; return bytes >= 10 * MiB && r <= MiB ? r : 0; };
  /** A run's bf16 matrices left whole in their blocks: each with its bytes and the remainder its block holds. */
  const unsplitOf = (r: (typeof parts)[number]) => weightMatrices(r.model, paddedVocab(r.model, r.par))
    .map((w) => ({ name: w.name, bytes: 2 * w.elements, rem: unsplit(2 * w.elements) })).filter((w) => w.rem > 0);
  const run = (id: string) => parts.find((x) => shortId(x.path) === id)!;
  /** MiB as the doc writes a size: exact (the sizes here are binary fractions: 25.5, 3.875, 1.6875). */
  const exact = (bytes: number) => String(bytes / MiB);
  const mib = (bytes: number, digits = 1) => (bytes / MiB).toFixed(digits);
  const WORDS: Record<number, string> = { 1: 'a', 2: 'two', 3: 'three', 4: 'four', 11: 'eleven' };
  const MOE3 = ['megatron-campaign r16', 'moe-held r00', 'moe-held r03'];
  /** The runs whose shortfall is their unsplit remainders and the scalars' blocks, to the byte. */
  const EXACT_RUNS = ['megatron-campaign r15', 'megatron-campaign r41', 'heldout8-followup r00', 'heldout8-followup r00-mb1', 'moe-extras r01'];

  it('every static tensor live at the peak is the model\'s to the byte: weights, main gradients, master weights with Adam\'s moments, the QKᵀ buffer (the runs whose peak is not in the first optimizer step)', () => {
    const checked = parts.filter((r) => !(r.trace.history as { peak_frames: string[] }).peak_frames[0]?.includes('optimizer.py') && !r.model.moe?.expertBias);
    expect(checked.length).toBe(54); // not the held-out 8 r00 twice (their peak is the first step's Adam moments) nor the two with an expert bias
    stated(`the ${checked.length} runs whose peak is not in the first optimizer step and that have no expert bias`);
    for (const r of checked) {
      const t = r.trace, qk = term(r.b, 'QKᵀ scores buffer')!;
      // the bf16 weights Megatron-LM's layers make (tensor_parallel/layers.py __init__), those Float16Module casts (module.py:472: norms,
      // the position table) and the MoE routers moved to the GPU (training/models/dist_utils.py:190)
      expect(sum(t, /layers\.py:\d+ __init__|module\.py:472 |dist_utils\.py:190 /), r.path).toBe(r.b.weightBytes);
      expect(sum(t, /param_and_grad_buffer\.py:\d+ __init__/), r.path).toBe(r.b.gradientBytes);
      expect(sum(t, /optimizer\.py:(1012 __init__|786 step_with_ready_grads)/), r.path).toBe(r.b.optimizerBytes);
      expect(sum(t, /core\/utils\.py:746 get_tensor/), r.path).toBe(qk.bytes);
    }
  });

  it("the other large tensors at the peaks are the step's own, to the byte: its batch (schedules.py:515), the embedding's dropout output and mask (language_model_embedding.py:156), the final norm's output and statistics (transformer_block.py:756)", () => {
    let batch = 0, drop = 0, norm = 0;
    for (const r of runs) {
      const s = r.par.seqLength, b = r.par.microBatchSize, h = r.model.hiddenSize;
      // pretrain_gpt.py get_batch: tokens, labels, position ids (int64), the loss mask (fp32), the boolean [b, 1, s, s] mask
      const all = 3 * 8 * s * b + 4 * s * b + s * s * b;
      const x = live(r.trace, 'megatron/core/pipeline_parallel/schedules.py:515 forward_step');
      if (x?.count === 5) { batch++; expect(x.bytes, r.path).toBe(all); } else if (x) expect(x.bytes, r.path).toBeLessThan(all); // a backward peak: some freed
      const d = live(r.trace, 'megatron/core/models/common/embeddings/language_model_embedding.py:156 forward');
      if (d) { drop++; expect(d, r.path).toEqual({ site: expect.any(String), bytes: 3 * s * b * h, count: 2 }); }   // bf16 output, bool mask
      const n = live(r.trace, 'megatron/core/transformer/transformer_block.py:756 forward');
      // the bf16 output, with LayerNorm's fp32 mean and inverse deviation (RMSNorm: the inverse root mean square alone)
      if (n) { norm++; expect(n, r.path).toEqual({ site: expect.any(String), bytes: 2 * s * b * h + (r.model.rmsNorm ? 4 : 8) * s * b, count: r.model.rmsNorm ? 2 : 3 }); }
    }
    expect([batch, drop, norm]).toEqual([19, 22, 19]); // where the peak is past the loss (all five of the batch), past the embedding, past the final norm
  });

  it("the shortfall is never more than the allocator's overhead at the peak and the scalars' bytes; in 30 of the 58 it is that overhead, within the scalars' blocks", () => {
    expect(parts.length).toBe(58);
    let within = 0;
    for (const r of parts) {
      const sc = scalars(r.trace), bytes = sc.reduce((s, x) => s + x.bytes, 0), blocks = sc.reduce((s, x) => s + 512 * x.count - x.bytes, 0);
      expect(r.short - r.gap, r.path).toBeLessThanOrEqual(bytes);
      if (r.gap - r.short <= blocks) within++;
    }
    expect(within).toBe(30);
    stated(`in ${within} of the ${parts.length} it is exactly that`);
    // the dense run short by the most, and the three MoE runs short by 30–34 MiB: the peak's overhead is larger still
    for (const id of ['megatron-campaign r20', 'megatron-campaign r16', 'moe-held r00', 'moe-held r03']) {
      const r = parts.find((x) => shortId(x.path) === id)!;
      expect(r.gap, id).toBeGreaterThan(r.short);
    }
  });

  it('where each weight matrix of 10 MiB or more took a fresh segment (2 MiB-rounded, not split with 1 MiB or less left), those remainders and the scalars\' blocks are the whole shortfall, to the byte', () => {
    for (const r of parts) {
      const bf16 = unsplitOf(r).reduce((s, w) => s + w.rem, 0);
      // training.py:1728 (the start time), optimizer.py:702 (the unit loss scale), training.py:3243 (the last step's loss, and this
      // one's, returned), training.py:3308 (the loss summed for the log), timers.py:151 (the barrier's byte); a MoE run also
      // initialize.py:138 (the aux loss scale), moe_logging.py:122 (the per-layer tracker), moe_logging.py:349 (its logged sum)
      const kept = 512 * (r.model.moe ? 9 : 6);
      if (EXACT_RUNS.includes(shortId(r.path))) expect(r.short, r.path).toBe(bf16 + kept);
      else expect(r.short, r.path).toBeGreaterThan(bf16 + kept);
    }
  });
  it("docs/memory.md's shortfalls and overheads, computed: up to 34 MiB static (src/memory/trace.ts too), the three MoE runs', r20's, r40's share of its peak", () => {
    const most = parts.reduce((x, y) => (y.short > x.short ? y : x));
    expect(shortId(most.path)).toBe('moe-held r00');
    stated(`up to ${mib(most.short, 0)} MiB of a traced run's static part`);
    stated(`up to ${mib(most.short, 0)} MiB of a traced run's,`, flat('src/memory/trace.ts'), 'src/memory/trace.ts');
    const [r16, r00, r03] = MOE3.map(run), r20 = run('megatron-campaign r20'), moe = [r16, r00, r03].map((r) => r.short);
    stated(`runs without RoPE are short by up to ${mib(r20.short)} MiB (r20), and three MoE runs by ${mib(Math.min(...moe), 0)}–${mib(Math.max(...moe), 0)} MiB (r16 ${mib(r16.short)}, the MoE held-out r00 ${mib(r00.short)} and r03 ${mib(r03.short)})`);
    // the allocator's overhead at the peak: max allocated (the history's iterations) less the history's peak of requested bytes
    stated(`at its peak the allocator counts ${mib(r20.gap)} MiB beyond the tensors' bytes`);
    stated(`at their peaks the allocator counts ${mib(r16.gap)}, ${mib(r00.gap)} and ${mib(r03.gap)} MiB beyond the tensors' bytes`);
    // the largest share of a peak: the overhead at the peak, and the static part's shortfall (both r40, the smallest peak traced)
    const share = (f: (r: (typeof parts)[number]) => number) => parts.reduce((x, y) => (f(y) / y.peak > f(x) / x.peak ? y : x));
    const atPeak = share((r) => r.gap), inStatic = share((r) => r.short);
    expect([shortId(atPeak.path), shortId(inStatic.path)]).toEqual(['megatron-campaign r40', 'megatron-campaign r40']);
    const r40 = atPeak, pct = (x: number) => (100 * x / r40.peak).toFixed(2);
    stated(`at most ${pct(r40.gap)}% of a traced peak (r40: ${mib(r40.gap)} MiB of ${(r40.peak / 2 ** 30).toFixed(1)} GiB at its peak; ${mib(r40.short)} MiB, ${pct(r40.short)}%, in its static part)`);
  });

  it("docs/memory.md's unsplit remainders, computed from each run's matrices: r15, r41, the held-out 8 r00 (and its copy), the MoE-extras r01, r20", () => {
    /** The run's unsplit matrices by name, each name's matrices of one size: its count, bytes and remainder; and their remainders in all. */
    const groups = (id: string) => {
      const u = unsplitOf(run(id)), names = [...new Set(u.map((w) => w.name))];
      const g = Object.fromEntries(names.map((n) => {
        const ws = u.filter((w) => w.name === n);
        expect(new Set(ws.map((w) => w.bytes)).size, `${id} ${n}`).toBe(1);
        return [n, { count: ws.length, bytes: ws[0].bytes, rem: ws[0].rem }];
      }));
      return { names, g, rem: exact(u.reduce((s, w) => s + w.rem, 0)) };
    };
    const r15 = groups('megatron-campaign r15'), r41 = groups('megatron-campaign r41'), h8 = groups('heldout8-followup r00'), x01 = groups('moe-extras r01');
    expect([r15.names, r41.names, h8.names, x01.names]).toEqual([['fc1'], ['embedding', 'output layer'], ['embedding', 'output layer', 'QKV'], ['embedding']]);
    expect(groups('heldout8-followup r00-mb1')).toEqual(h8);
    const f = r15.g.fc1, e = r41.g.embedding, q = h8.g.QKV;
    expect(r41.g['output layer']).toEqual(e);
    expect(h8.g['output layer']).toEqual(h8.g.embedding);
    stated(`r15 ${r15.rem} MiB (${WORDS[f.count]} ${exact(f.bytes)} MiB fc1 weights in ${exact(f.bytes + f.rem)} MiB blocks)`);
    stated(`r41 ${r41.rem} MiB (the word embedding and output layer, ${exact(e.bytes)} MiB each, in ${exact(e.bytes + e.rem)})`);
    stated(`the held-out 8 r00 (and its one-micro-batch copy) ${h8.rem} MiB (${WORDS[q.count]} ${exact(q.bytes)} MiB QKV weights, ${WORDS[2]} ${exact(h8.g.embedding.bytes)} MiB embeddings)`);
    stated(`the MoE-extras r01 ${x01.rem} MiB (${WORDS[x01.g.embedding.count]} ${exact(x01.g.embedding.bytes)} MiB embedding)`);
    stated(`in the other ${parts.length - EXACT_RUNS.length} those remainders are less than the shortfall`);
    // r20: its fc1 weights left whole, and the sizes of the fp32 copies (4 bytes an element) of its layers' matrices
    const r20 = groups('megatron-campaign r20'), fc1 = r20.g.fc1;
    expect(r20.names).toEqual(['fc1']);
    const m = run('megatron-campaign r20'), w = weightMatrices(m.model, paddedVocab(m.model, m.par)), fp32 = (n: string) => exact(4 * w.find((x) => x.name === n)!.elements);
    expect(fc1.count).toBe(m.model.numLayers);
    stated(`r20's ${mib(m.short)} MiB: its ${WORDS[fc1.count]} ${exact(fc1.bytes)} MiB fc1 weights in ${exact(fc1.bytes + fc1.rem)} MiB blocks (${r20.rem} MiB)`);
    stated(`moments in the first step; QKV ${fp32('QKV')} MiB, fc1 ${fp32('fc1')} MiB, fc2 ${fp32('fc2')} MiB)`);
  });

  it("docs/memory.md's expert weights of the three MoE runs, computed from their configurations: 96–198 of 1.3–6.75 MiB, from the 20 MiB segments; each with three fp32 copies at the peak", () => {
    const of = (id: string) => {
      const r = run(id), w = weightMatrices(r.model, paddedVocab(r.model, r.par));
      const sizes = (p: string) => [...new Set(w.filter((x) => x.name.startsWith(p)).map((x) => 2 * x.elements))].sort((a, b) => a - b);
      return { r, w, experts: w.filter((x) => x.name.startsWith('expert ')).length, shared: w.filter((x) => x.name.startsWith('shared ')).length, sizes: sizes('expert '), sharedSizes: sizes('shared ') };
    };
    const [r16, r00, r03] = MOE3.map(of), say = (s: number[]) => s.map(exact).join(' and ');
    expect(r00.shared).toBe(0);
    stated(`(r16 ${r16.experts} of ${say(r16.sizes)} MiB and ${r16.shared} shared of ${say(r16.sharedSizes)}, the held-out r00 ${r00.experts} of ${say(r00.sizes)}, r03 ${r03.experts} of ${say(r03.sizes)} and ${r03.shared} shared of ${say(r03.sharedSizes)};`);
    const counts = [r16, r00, r03].map((x) => x.experts + x.shared), all = [r16, r00, r03].flatMap((x) => [...x.sizes, ...x.sharedSizes]);
    const lo = Math.min(...all), hi = Math.max(...all);
    // 1–10 MiB requests are carved from 20 MiB segments (CUDACachingAllocator.cpp); the smallest written to a tenth, rounded down
    expect(lo).toBeGreaterThan(MiB);
    expect(hi).toBeLessThanOrEqual(10 * MiB);
    stated(`The three MoE runs hold ${Math.min(...counts)}–${Math.max(...counts)} expert weights of ${(Math.floor((10 * lo) / MiB) / 10).toFixed(1)}–${exact(hi)} MiB each`);
    // with the fp32 copies: at each peak, a parameter's bf16 weight, its master weight (optimizer.py:1012) and Adam's two moments
    // (:786), as the sites' counts say (a count a parameter, not a weight by weight: the experts' among them by their bytes, above)
    const times = [r16, r00, r03].map((x) => {
      const n = (site: string) => live(x.r.trace, `megatron/core/optimizer/optimizer.py:${site}`)!.count, masters = n('1012 __init__');
      expect(masters, x.r.path).toBeGreaterThanOrEqual(x.w.length);
      return 1 + (masters + n('786 step_with_ready_grads')) / masters;
    });
    expect(new Set(times).size).toBe(1);
    stated(`${WORDS[times[0]]} times as many with the fp32 copies`);
  });
});
