/**
 * Configurations Megatron-LM cannot train whatever their memory (src/memory/untrainable.ts), against
 * every real Megatron-LM run stored (each log under bench/results with an argument dump, 314 of them): the rule names exactly the runs whose checkpoint
 * backward recursed until the GPU was full, and none that trained. The tools that plan with the model
 * say so: advise leaves such layouts out (counted, with the reason), memory and replay add a note.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { configFromArgs, parseMegatronLog } from '../src/memory/megatron.js';
import { MLP_RECOMPUTE_WITH_BIAS, MOE_EXPERT_BIASES, mlpRecomputeWithBias, untrainable } from '../src/memory/untrainable.js';
import { DEFAULT_PARALLEL, PRESETS, defaultLines, parseLines, recomputeSpec, sweep } from '../src/memory/model.js';
import { chartNotes } from '../src/memory/chart.js';
import { candidates } from '../src/memory/advise.js';
import { LINKS } from '../src/cp/plan/linkModel.js';

/** Every stored Megatron-LM run: each log under bench/results with an argument dump (campaign, timing, fresh draws, repeats, terms, phases, launch counts, the first round). */
const RESULTS = 'bench/results';
const MEGATRON_LOGS = (readdirSync(RESULTS, { recursive: true }) as string[]).filter((f) => f.endsWith('.log')).sort()
  .filter((f) => readFileSync(`${RESULTS}/${f}`, 'utf8').includes('---- arguments ----'));

function logs() {
  return MEGATRON_LOGS.map((f) => {
    const text = readFileSync(`${RESULTS}/${f}`, 'utf8'), res = parseMegatronLog(text, f), c = configFromArgs(res.args);
    if ('error' in c) throw new Error(`${RESULTS}/${f}: ${c.error}`);
    return { name: f.replace(/\/(runs|megatron-failed)\//, '/'), trained: res.iterations.length > 0, recursed: (text.match(/random\.py", line 668, in backward/g) ?? []).length, why: untrainable(c.model, c.par),
      mlpWithoutBias: !!c.par.recomputeModules?.includes('mlp') && !c.model.biasLinear };
  });
}

describe('selective recompute of mlp with linear biases', () => {
  const all = logs();
  it('names the ten runs whose checkpoint backward recursed until the GPU was full (246-250 levels on the H200, 220 and 249 on an H100) (A and B at 8K of 2026-12-01 and r24 of the first fresh draw, core_attn + mlp, r00 of the second, r05 of the fifth, r02 of the seventh and r03 of the eighth, named before they ran), and none of the 299 stored runs that trained; no other run recursed', () => {
    const named = all.filter((r) => r.why === MLP_RECOMPUTE_WITH_BIAS);
    expect(named.map((r) => r.name).sort()).toEqual(['2026-12-02-megatron-campaign/r25.log', '2026-12-02-time-heldout/r07.log', '2026-12-02-time-heldout/r21.log', '2026-12-02-time-heldout/r24.log', '2026-12-02-time-heldout2/r00.log', '2026-12-03-time-heldout5/r05.log', 'memory-h200-2026-12-01/A-s8192-sel-core_attn-mlp.log', 'memory-h200-2026-12-01/B-s8192-sel-core_attn-mlp.log', '2026-12-06-time-heldout7/r02.log', '2026-12-06-time-heldout8/r03.log'].sort());
    for (const r of named) {
      expect(r.trained, r.name).toBe(false);
      // As deep as the GPU holds: 246-250 levels on the H200's 139.8 GiB; on the H100's 79.2, 220 (the seventh draw's
      // r02, L7 h2048 at 8K) and 249 (the eighth's r03, L7 h512 at 16K: less a level)
      const [lo, hi] = r.name.startsWith('2026-12-06-time-heldout7/') ? [220, 220] : r.name.startsWith('2026-12-06-time-heldout8/') ? [249, 249] : [246, 250];
      expect(r.recursed, r.name).toBeGreaterThanOrEqual(lo);
      expect(r.recursed, r.name).toBeLessThanOrEqual(hi);
    }
    const trained = all.filter((r) => r.trained);
    expect(trained.length).toBe(299);
    expect(named).toHaveLength(10);
    expect(all.filter((r) => r.recursed > 0 && r.why === null).map((r) => r.name)).toEqual([]);
    // docs/memory.md: "every run recomputing mlp without biases trained"
    const plain = all.filter((r) => r.mlpWithoutBias);
    expect(plain.length).toBeGreaterThan(20);
    for (const r of plain) expect(r.trained, r.name).toBe(true);
    // the count the tools' note, the notes, the page and the docs state
    for (const [what, text] of [['MLP_RECOMPUTE_WITH_BIAS', MLP_RECOMPUTE_WITH_BIAS], ['src/memory/untrainable.ts', readFileSync('src/memory/untrainable.ts', 'utf8')], ['notes_attention.md', readFileSync('notes_attention.md', 'utf8')], ['index.html', readFileSync('index.html', 'utf8')], ['docs/memory.md', readFileSync('docs/memory.md', 'utf8')]])
      expect(text.replace(/\s+/g, ' '), what).toContain(`${named.length} of ${named.length}`);
    expect(readFileSync('docs/memory.md', 'utf8').replace(/\s+/g, ' ')).toContain(`(${named.length} of ${named.length} such runs recursed until they filled the GPU, 8 on the H200 246-250 levels deep and two on an H100, r02 of the seventh fresh draw 220 levels deep and r03 of the eighth 249`);
    for (const r of trained) expect(r.why, r.name).toBeNull();
  });

  it('only with linear biases, only for dense MLPs, only on the Megatron-LM stack', () => {
    const m = PRESETS['seed-32L-4096h'].model, p = { ...DEFAULT_PARALLEL, seqLength: 8192, recompute: 'selective' as const, recomputeModules: ['core_attn' as const, 'mlp' as const] };
    expect(untrainable({ ...m, biasLinear: true }, p)).toBe(MLP_RECOMPUTE_WITH_BIAS);
    expect(untrainable({ ...m, biasLinear: false }, p)).toBeNull();
    expect(untrainable({ ...m, biasLinear: true }, { ...p, recomputeModules: ['core_attn'] })).toBeNull();
    expect(untrainable({ ...m, biasLinear: true }, { ...p, stack: 'torch-amp' })).toBeNull();
    // MoE layers do not recompute their MLP through the checkpoint (recompute_mlp is for a dense MLP only).
    expect(mlpRecomputeWithBias({ ...m, biasLinear: true, moe: { numExperts: 8, routerTopk: 2 } }, p)).toBeNull();
    expect(untrainable({ ...m, biasLinear: true }, { ...p, recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1, recomputeModules: undefined })).toBeNull();
  });

  it('routed experts with linear biases: untrainable but at EP > 1, TP 1 with SwiGLU unfused (read from mlp.py, fused_bias_swiglu.py, mappings.py; not run)', () => {
    const m = { ...PRESETS['seed-32L-4096h'].model, biasLinear: true, moe: { numExperts: 8, routerTopk: 2 } }, p = { ...DEFAULT_PARALLEL, seqLength: 8192 };
    const swiglu = { ...m, swiglu: true };
    expect(untrainable(m, p)).toBe(MOE_EXPERT_BIASES);                                                    // one GPU: fc2's bias added in place
    expect(untrainable({ ...swiglu, biasActivationFusion: false }, p)).toBe(MOE_EXPERT_BIASES);           // unfused, still EP = 1
    expect(untrainable(swiglu, { ...p, expertParallel: 2 })).toBe(MOE_EXPERT_BIASES);                     // fused SwiGLU refuses a bias
    expect(untrainable({ ...swiglu, biasActivationFusion: false }, { ...p, expertParallel: 2, tensorParallel: 2 })).toBe(MOE_EXPERT_BIASES); // ETP must be 1
    expect(untrainable({ ...swiglu, biasActivationFusion: false }, { ...p, expertParallel: 2 })).toBeNull();
    expect(untrainable({ ...m, biasLinear: false }, p)).toBeNull();
    expect(untrainable(m, { ...p, stack: 'torch-amp' })).toBeNull();
    // Run: the MoE-extras draw's r00 and r02 (one GPU, unfused, named before they ran) stopped in their first forward with
    // PyTorch's in-place-view error from mlp.py; no other stored log is named, and every one named stopped so
    const named = logs().filter((r) => r.why === MOE_EXPERT_BIASES);
    expect(named.map((r) => r.name)).toEqual(['2026-12-07-moe-extras/r00.log', '2026-12-07-moe-extras/r02.log']);
    for (const r of named) {
      expect(r.trained, r.name).toBe(false);
      const text = readFileSync(`${RESULTS}/${r.name.replace('/', '/runs/')}`, 'utf8');
      expect(text, r.name).toMatch(/mlp\.py", line \d+, in forward\\n    output \+= output_bias[^\n]*RuntimeError: Output 0 of _ReduceFromModelParallelRegionBackward is a view and is being modified inplace/);
    }
  });

  it("GeLU follows its own fusion flag (bias_gelu_fusion, as argument_utils.py gives it to the experts): fused, mlp.py's per_token_scale path raises ValueError at any EP; unfused, EP > 1 at TP 1 trains as SwiGLU's does", () => {
    const m = { ...PRESETS['seed-32L-4096h'].model, biasLinear: true, moe: { numExperts: 8, routerTopk: 2 } }, ep2 = { ...DEFAULT_PARALLEL, seqLength: 8192, expertParallel: 2 };
    expect(untrainable(m, ep2)).toBe(MOE_EXPERT_BIASES);                                        // fused, the default
    expect(untrainable({ ...m, biasActivationFusion: false }, ep2)).toBeNull();                 // --no-bias-gelu-fusion
    expect(untrainable({ ...m, biasActivationFusion: false }, { ...ep2, expertParallel: 1 })).toBe(MOE_EXPERT_BIASES);
    // replay reads the GeLU flag from the dump: the MoE-extras r00 (GeLU, linear biases, --no-bias-gelu-fusion, bias_swiglu_fusion True)
    // at EP 2 has the path; with bias_gelu_fusion True it has none
    const log = readFileSync(`${RESULTS}/2026-12-07-moe-extras/runs/r00.log`, 'utf8');
    const at = (text: string) => {
      const c = configFromArgs(parseMegatronLog(text, 'r00').args);
      if ('error' in c) throw new Error(c.error);
      return { fused: c.model.biasActivationFusion, why: untrainable(c.model, { ...c.par, expertParallel: 2, dataParallel: 2 }) };
    };
    expect(log).toMatch(/^ {2}bias_swiglu_fusion \.+ True$/m);
    expect(at(log)).toEqual({ fused: false, why: null });
    const fused = log.replace(/^( {2}bias_gelu_fusion \.+) False$/m, '$1 True');
    expect(fused).not.toBe(log);
    expect(at(fused)).toEqual({ fused: true, why: MOE_EXPERT_BIASES });
  });

  it('advise leaves those layouts out and counts them; memory --json and replay say why', () => {
    const model = { ...PRESETS['seed-32L-4096h'].model, biasLinear: true };
    const req = { model, base: { ...DEFAULT_PARALLEL, seqLength: 32768 }, gpus: 8, hbmGib: 80, margin: 0.1, gbs: 8, link: LINKS['nvlink-h200'] };
    const res = candidates(req), without = candidates({ ...req, model: { ...model, biasLinear: false } });
    expect(res.untrainable).toHaveLength(1);
    expect(res.untrainable[0].why).toBe(MLP_RECOMPUTE_WITH_BIAS);
    expect(res.fitting.some((c) => c.recompute.includes('mlp'))).toBe(false);
    expect(without.untrainable).toEqual([]);
    expect(without.all).toBe(res.all + res.untrainable[0].layouts);
    const mem = spawnSync('node', ['bin/flashring.mjs', 'memory', '--num-layers', '4', '--hidden-size', '512', '--num-attention-heads', '8', '--seq-length', '8192',
      '--recompute-granularity', 'selective', '--recompute-modules', 'mlp', '--json'], { encoding: 'utf8' });
    expect(mem.status).toBe(0);
    expect(JSON.parse(mem.stdout).untrainable).toBe(MLP_RECOMPUTE_WITH_BIAS);
    const rep = spawnSync('node', ['bin/flashring.mjs', 'replay', 'bench/results/2026-12-02-time-heldout/runs/r07.log', '--json'], { encoding: 'utf8' });
    expect(rep.stderr).toContain(`note: ${MLP_RECOMPUTE_WITH_BIAS}`);
    expect(JSON.parse(rep.stdout).reports[0].untrainable).toBe(MLP_RECOMPUTE_WITH_BIAS);
  });

  it("the plot's \"+ recompute\" is core_attn + mlp where Megatron-LM trains it, full layers on a model with linear biases; core_attn + mlp there is named under the chart and the sweep's table", () => {
    const seed = PRESETS['seed-32L-4096h'].model, plain = { ...seed, biasLinear: false }, par = { ...DEFAULT_PARALLEL, seqLength: 8192 };
    const specs = (m: typeof seed, stack?: 'torch-amp') => defaultLines(m, stack).map((l) => recomputeSpec({ recompute: 'none', ...l.overrides }));
    expect(specs(seed)).toEqual(['none', 'full:uniform/1', 'none', 'none', 'full:uniform/1']);
    expect(specs(plain)).toEqual(['none', 'selective:core_attn+mlp', 'none', 'none', 'selective:core_attn+mlp']);
    expect(specs(seed, 'torch-amp')[1]).toBe('selective:core_attn+mlp'); // the PyTorch harness recomputes the MLP with its bias
    expect(specs({ ...seed, moe: { numExperts: 8, routerTopk: 2 } })[1]).toBe('selective:core_attn+mlp'); // MoE layers do not take that path
    expect(chartNotes(seed, sweep(seed, par, [8192], defaultLines(seed), 80), defaultLines(seed))).not.toContain('the memory such a step would need');
    const mlp = parseLines('1,4:selective:core_attn+mlp', seed);
    expect(chartNotes(seed, sweep(seed, par, [8192], mlp, 80), mlp)).toContain(`CP=4 + selective core_attn, mlp: the memory such a step would need; ${MLP_RECOMPUTE_WITH_BIAS}`);
    const out = spawnSync('node', ['bin/flashring.mjs', 'memory', '--preset', 'seed-32L-4096h', '--sweep', '--seq-lengths', '8192', '--lines', '1,1:recompute,4:selective:core_attn+mlp'], { encoding: 'utf8' });
    expect(out.status).toBe(0);
    expect(out.stdout).toMatch(/CP=1 \+ recompute +CP=4 \+ selective core_attn, mlp †\n/);
    expect(out.stdout).toContain(`† CP=4 + selective core_attn, mlp: the memory such a step would need; ${MLP_RECOMPUTE_WITH_BIAS}`);
    expect(out.stdout).toContain('note: "+ recompute" recomputes every layer (full:uniform/1): Megatron-LM cannot train the MLP\'s selective recompute with this model\'s linear biases\n');
    const llama = spawnSync('node', ['bin/flashring.mjs', 'memory', '--preset', 'llama3-8b', '--sweep', '--seq-lengths', '8192'], { encoding: 'utf8' });
    expect(llama.stdout).toContain('note: "+ recompute" is selective recompute of the attention core and the MLP (selective:core_attn+mlp)\n');
    expect(chartNotes(plain, sweep(plain, par, [8192], defaultLines(plain), 80), defaultLines(plain))).toMatch(/^"\+ recompute" is selective recompute/);
  });
});
