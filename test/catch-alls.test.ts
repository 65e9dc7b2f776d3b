/**
 * The memory model's callers that take "the model cannot take this layout" as an answer catch only
 * that (InputError): a bug in the model (here a TypeError put into memoryBreakdown) is thrown, not
 * said as an invalid layout.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InputError } from '../src/errors.js';
import { DEFAULT_PARALLEL, ModelConfig, ParallelConfig } from '../src/memory/model.js';
import { compareOne, memoryDiff } from '../src/memory/compare.js';
import { reasons, type AdviseRequest, type Candidate } from '../src/memory/advise.js';

/** What memoryBreakdown throws instead of answering (null: it answers). */
const sabotage = vi.hoisted(() => ({ error: null as Error | null }));
vi.mock('../src/memory/model.js', async (original) => {
  const m = await original<typeof import('../src/memory/model.js')>();
  return { ...m, memoryBreakdown: (...a: Parameters<typeof m.memoryBreakdown>) => { if (sabotage.error) throw sabotage.error; return m.memoryBreakdown(...a); } };
});
afterEach(() => void (sabotage.error = null));

const gpt: ModelConfig = { numLayers: 8, hiddenSize: 1024, numAttentionHeads: 16, vocabSize: 32000 };
const bug = () => new TypeError("Cannot read properties of undefined (reading 'layers')");

describe('memoryDiff (compare.ts totalUnder)', () => {
  const row = { seq_len: 8192, tp: 1, cp: 1, pp: 1, sp: false, recompute: 'none', micro_batch: 1, activation_gib: null, total_gib: 50, fits: true, source: 'measured: x' };
  const setup = (p: Partial<ParallelConfig> = {}) => ({ model: gpt, parallel: { ...DEFAULT_PARALLEL, ...p } });
  it('a bug in the model is thrown', () => {
    sabotage.error = bug();
    expect(() => memoryDiff(row, setup({ fp32Residual: true }), setup(), 'compared')).toThrow(TypeError);
  });
  it('a layout the model refuses (InputError) is no total, as before', () => {
    sabotage.error = new InputError('--tensor-model-parallel-size 3 does not divide the heads');
    expect(memoryDiff(row, setup({ fp32Residual: true }), setup(), 'compared')).toEqual([]);
  });
});

describe('compareOne: a measured point against the model', () => {
  const row = { seq_len: 8192, tp: 1, cp: 1, pp: 1, sp: false, recompute: 'none', micro_batch: 1, activation_gib: null, total_gib: 50, fits: true, source: 'measured: x' };
  it('a bug in the model is thrown, not said as the row\'s error', () => {
    sabotage.error = bug();
    expect(() => compareOne(row, gpt, DEFAULT_PARALLEL, 80)).toThrow(TypeError);
  });
  it('a point the model refuses (InputError) is the row\'s error, as before', () => {
    sabotage.error = new InputError('--tensor-model-parallel-size 3 does not divide the heads');
    expect(compareOne(row, gpt, DEFAULT_PARALLEL, 80)).toMatchObject({ error: '--tensor-model-parallel-size 3 does not divide the heads', verdict: 'unknown' });
  });
});

describe('reasons (advise.ts): what CP = 1 would need', () => {
  const r = { model: gpt, base: { ...DEFAULT_PARALLEL, seqLength: 8192 }, gpus: 2, hbmGib: 80, margin: 0.1, gbs: 2 } as AdviseRequest;
  const c = { tp: 1, sp: false, cp: 2, cpCommType: 'p2p', pp: 1, vp: 1, dp: 1, recompute: 'none', distributedOptimizer: false, iterMs: 100, time: { terms: [] } } as unknown as Candidate;
  it('a bug in the model is thrown, not said as "CP=1 is not a valid layout here"', () => {
    sabotage.error = bug();
    expect(() => reasons(r, c)).toThrow(TypeError);
  });
  it('a layout the model refuses (InputError) is said so', () => {
    sabotage.error = new InputError('no');
    expect(reasons(r, c)[0]).toBe('CP=2: CP=1 is not a valid layout here');
    sabotage.error = null;
    expect(reasons(r, c)[0]).toMatch(/^CP=2 is (faster|slower) than CP=1 here|^CP=2: at CP=1 the same layout needs/);
  });
});
