/**
 * The memory model's refusals carry the flags their messages name (InputError.flags), as data: the page marks the
 * control of a refusal's first flag it has (web/main.ts onModelField) from them, never from the message's words. Each
 * case below reaches one throw site of src/memory/model.ts by calling the model with a bad input; every refusal's flags
 * are the --flags its message names, each once, in its order.
 */
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/errors.js';
import {
  DEFAULT_PARALLEL, ModelConfig, MoeConfig, NoLengthError, ParallelConfig, memoryBreakdown, parseLines, parseRecomputeSpec, positionTableRefusal, sweepGaps,
} from '../src/memory/model.js';
import { thrown } from './thrown.js';

const gpt: ModelConfig = { numLayers: 8, hiddenSize: 1024, numAttentionHeads: 16, vocabSize: 32000 };
const base: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 8192 };
const moe: MoeConfig = { numExperts: 8, routerTopk: 2 };
/** A bias-free MoE model (a shared expert needs that) at TP 2 with sequence parallelism, which MoE needs with TP. */
const moeModel = (e: Partial<MoeConfig> = {}, m: Partial<ModelConfig> = {}): ModelConfig => ({ ...gpt, biasLinear: false, moe: { ...moe, ...e }, ...m });
const moePar = (p: Partial<ParallelConfig> = {}): ParallelConfig => ({ ...base, tensorParallel: 2, sequenceParallel: true, ...p });

/** The --flags a message names, each once, in its order: what its flags must be. */
const named = (message: string) => [...new Set([...message.matchAll(/--([a-z][a-z0-9-]*)/g)].map((x) => `--${x[1]}`))];


const breakdown = (m: Partial<ModelConfig>, p: Partial<ParallelConfig> = {}) => () => memoryBreakdown({ ...gpt, ...m }, { ...base, ...p });
const moeBreakdown = (e: Partial<MoeConfig>, p: Partial<ParallelConfig> = {}, m: Partial<ModelConfig> = {}) => () => memoryBreakdown(moeModel(e, m), moePar(p));

/** One call a throw site: its name, the call. */
const CASES: [string, () => unknown][] = [
  ['layers not positive', breakdown({ numLayers: 0 })],
  ['layers beyond the model', breakdown({ numLayers: 200_000 })],
  ['hidden size', breakdown({ hiddenSize: 0 })],
  ['heads', breakdown({ numAttentionHeads: 1.5 })],
  ['MLP width', breakdown({ ffnHiddenSize: -1 })],
  ['vocabulary', breakdown({ vocabSize: 0 })],
  ['max positions', breakdown({ maxPositionEmbeddings: 0 })],
  ['attention dropout', breakdown({ attentionDropout: 1 })],
  ['hidden dropout', breakdown({ hiddenDropout: -0.1 })],
  ['sequence length', breakdown({}, { seqLength: 0 })],
  ['micro batch', breakdown({}, { microBatchSize: 0 })],
  ['TP', breakdown({}, { tensorParallel: 0 })],
  ['CP', breakdown({}, { contextParallel: 0 })],
  ['PP', breakdown({}, { pipelineParallel: 0 })],
  ['DP', breakdown({}, { dataParallel: 0 })],
  ['virtual stages (no flag)', breakdown({}, { virtualStages: 0 })],
  ['query groups', breakdown({ numQueryGroups: 0 })],
  ['hidden over heads', breakdown({ hiddenSize: 1000 })],
  ['heads over groups', breakdown({ numQueryGroups: 3 })],
  ['heads over TP', breakdown({ numAttentionHeads: 8, hiddenSize: 1024 }, { tensorParallel: 16 })],
  ['groups over TP', breakdown({ numQueryGroups: 2 }, { tensorParallel: 4 })],
  ['layers over PP', breakdown({}, { pipelineParallel: 3 })],
  ['layers over PP × VP', breakdown({}, { pipelineParallel: 2, virtualStages: 3 })],
  ['micro batches (no flag)', breakdown({}, { numMicrobatches: 0 })],
  ['interleaved micro batch groups', breakdown({}, { pipelineParallel: 2, virtualStages: 2, numMicrobatches: 3 })],
  ['2·CP chunks', breakdown({}, { contextParallel: 3 })],
  ['s/CP over TP with SP', breakdown({}, { seqLength: 8191, tensorParallel: 2, sequenceParallel: true })],
  ['position table', breakdown({ maxPositionEmbeddings: 4096 })],
  ['recompute granularity', breakdown({}, { recompute: 'some' as ParallelConfig['recompute'] })],
  ['stack', breakdown({}, { stack: 'jax' as ParallelConfig['stack'] })],
  ['CP comm type', breakdown({}, { cpCommType: 'ring' as ParallelConfig['cpCommType'] })],
  ['torch-amp with TP', breakdown({}, { stack: 'torch-amp', tensorParallel: 2 })],
  ['CP without FlashAttention', breakdown({}, { contextParallel: 2, flashAttention: false })],
  ['a2a over CP', breakdown({ numAttentionHeads: 2, hiddenSize: 1024 }, { contextParallel: 4, cpCommType: 'a2a' })],
  ['unknown recompute module', breakdown({}, { recompute: 'selective', recomputeModules: ['moe_act' as 'mlp'] })],
  ['moe recomputed without MoE', breakdown({ biasLinear: false }, { recompute: 'selective', recomputeModules: ['moe'] })],
  ['shared_experts recomputed without one', moeBreakdown({}, { recompute: 'selective', recomputeModules: ['shared_experts'] })],
  ['experts', moeBreakdown({ numExperts: 0 })],
  ['top-k', moeBreakdown({ routerTopk: 9 })],
  ['expert MLP width', moeBreakdown({ ffnHiddenSize: 0 })],
  ['shared expert width', moeBreakdown({ sharedExpertSize: -2 })],
  ['shared expert with biases', moeBreakdown({ sharedExpertSize: 1024 }, {}, { biasLinear: true })],
  ['capacity factor', moeBreakdown({ capacityFactor: 0 })],
  ['dispatcher', moeBreakdown({ dispatcher: 'ring' as MoeConfig['dispatcher'] })],
  ['score function', moeBreakdown({ scoreFunction: 'tanh' as MoeConfig['scoreFunction'] })],
  ['expert bias with softmax', moeBreakdown({ expertBias: true })],
  ['EP', moeBreakdown({}, { expertParallel: 0 })],
  ['experts over EP', moeBreakdown({}, { expertParallel: 3, dataParallel: 3 })],
  ['EP over DP × CP', moeBreakdown({}, { expertParallel: 4, dataParallel: 2 })],
  ['MLP width over TP', breakdown({ ffnHiddenSize: 4095 }, { tensorParallel: 2 })],
  ['expert MLP width over TP', moeBreakdown({ ffnHiddenSize: 1023 })],
  ['shared expert width over TP', moeBreakdown({ sharedExpertSize: 1023 })],
  ['MoE at TP without SP', moeBreakdown({}, { sequenceParallel: false })],
  ['full recompute without a method', breakdown({}, { recompute: 'full', recomputeNumLayers: 1 })],
  ['recompute method', breakdown({}, { recompute: 'full', recomputeMethod: 'even' as 'block', recomputeNumLayers: 1 })],
  ['full recompute without N', breakdown({}, { recompute: 'full', recomputeMethod: 'uniform' })],
  ['recompute N not positive', breakdown({}, { recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 0 })],
  ['recompute N above a stage', breakdown({}, { recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 9 })],
  ['recompute method without full', breakdown({}, { recompute: 'selective', recomputeMethod: 'block' })],
  ['recompute N without full', breakdown({}, { recompute: 'none', recomputeNumLayers: 1 })],
  ['recompute modules without selective', breakdown({}, { recompute: 'none', recomputeModules: ['mlp'] })],
  ['lines: no CP size', () => parseLines('x', gpt)],
  ['lines: a line twice', () => parseLines('1,1:none', gpt)],
  ['lines: no recompute setting', () => parseLines('1:some', gpt)],
  ['lines: unknown module', () => parseLines('1:selective:qkv', gpt)],
  ['lines: full without a method', () => parseLines('1:full', gpt)],
  ['lines: full with N 0', () => parseLines('1:full:block/0', gpt)],
  ["a field's recompute setting (no flag)", () => parseRecomputeSpec('full', 'Lines')],
  ['a line that splits no length', () => sweepGaps(base, [8190], parseLines('4', gpt))],
  ['a default line that splits no length', () => sweepGaps(base, [8190], parseLines(undefined, gpt), true)],
  ['no line can run', () => sweepGaps({ ...base, flashAttention: false }, [8192], parseLines('2,4', gpt))],
  ["the position table against a sweep's longest length", () => { throw positionTableRefusal({ ...gpt, maxPositionEmbeddings: 4096 }, 8192, { words: 'the longest length, 8192 (--seq-lengths)', flags: ['--seq-lengths'] }); }],
];

describe("the memory model's refusals carry the flags they name", () => {
  it.each(CASES)('%s: an InputError whose flags are the --flags its message names, in its order', (_, call) => {
    const e = thrown(call);
    expect(e).toBeInstanceOf(InputError);
    const { message, flags } = e as InputError;
    expect(flags, message).toEqual(named(message));
  });

  it('each case reaches a throw site of its own (no two refusals alike but for their numbers)', () => {
    const shapes = CASES.map(([, call]) => (thrown(call) as Error).message.replace(/\d+(\.\d+)?/g, 'N'));
    expect(new Set(shapes).size).toBe(CASES.length);
  });

  it("the refusals the page's planner can meet, first flag first: the MLP width over TP, MoE at TP without SP, EP over DP × CP, the expert bias with softmax", () => {
    const first = (call: () => unknown) => (thrown(call) as InputError).flags[0];
    expect(first(breakdown({ ffnHiddenSize: 4095 }, { tensorParallel: 2 }))).toBe('--ffn-hidden-size');
    expect(first(moeBreakdown({}, { sequenceParallel: false }))).toBe('--sequence-parallel');
    expect(first(moeBreakdown({}, { expertParallel: 4, dataParallel: 2 }))).toBe('--expert-model-parallel-size');
    expect(first(moeBreakdown({ expertBias: true }))).toBe('--moe-router-enable-expert-bias');
    expect((thrown(moeBreakdown({ expertBias: true })) as InputError).flags).toEqual(['--moe-router-enable-expert-bias', '--moe-router-score-function']);
    const none = thrown(() => sweepGaps(base, [8190], parseLines(undefined, gpt), true));
    expect(none).toBeInstanceOf(NoLengthError);
    expect((none as NoLengthError).flags).toEqual(['--lines', '--seq-length', '--context-parallel-size']);
  });
});
