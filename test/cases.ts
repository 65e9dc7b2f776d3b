/** Shared helpers for the numeric GPU tests: fresh random inputs and the reference on them. */
import { AttentionShape, AttentionOptions, numel } from '../src/shape.js';
import { randn, referenceInput, relErr, TOL, freshSeed } from '../src/reference/compare.js';
import { Precision } from '../src/kernels/precision.js';
import { HostTensor, toF32 } from '../src/kernels/attention.js';
import { Documents, MaskRules } from '../src/mask.js';
import { dryRun } from '../src/cp/launch/dry.js';
import { Layout, shardLayout } from '../src/cp/plan/schedule.js';
import { RingTimeline, StepRecord, makeTimeline } from '../src/cp/rank/timeline.js';
import { Scheme, schemeDef } from '../src/cp/schemes/registry.js';

/** Fresh each run; FLASHRING_TEST_SEED=<the printed seed> runs a failing draw again. */
export const SEED = seedFromEnv(process.env.FLASHRING_TEST_SEED) ?? freshSeed();
console.log(`numeric tests seed ${SEED} (${process.env.FLASHRING_TEST_SEED ? 'FLASHRING_TEST_SEED' : 'fresh each run; FLASHRING_TEST_SEED=<it> repeats it'})`);

function seedFromEnv(v: string | undefined): number | null {
  if (v === undefined || v === '') return null;
  if (!/^\d+$/.test(v) || Number(v) > 0xffffffff) throw new Error(`FLASHRING_TEST_SEED='${v}': give the seed a run printed (a whole number below 2^32)`);
  return Number(v);
}

export interface Inputs {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  dout: Float32Array;
}

export function makeInputs(s: AttentionShape, seed: number, scale = 1): Inputs {
  return {
    q: randn(numel(s, 'q'), seed, scale),
    k: randn(numel(s, 'kv'), seed + 101, scale),
    v: randn(numel(s, 'kv'), seed + 202),
    dout: randn(numel(s, 'q'), seed + 303),
  };
}

/** The inputs as the reference should see them for a precision (f16: rounded to half). */
export function refInputs(x: Inputs, p: Precision): { q: Float64Array; k: Float64Array; v: Float64Array; dout: Float64Array } {
  const f = (a: Float32Array) => referenceInput(a, p);
  return { q: f(x.q), k: f(x.k), v: f(x.v), dout: f(x.dout) };
}

export function err(x: HostTensor | Float32Array, ref: Float64Array): number {
  return relErr(x instanceof Uint16Array ? toF32(x) : x, ref);
}

export { TOL };

/** A typed array's bytes, to compare two outputs bit for bit. */
export const bits = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
export type { AttentionShape, AttentionOptions };

/**
 * The steps a dry run of the rank programs plans (src/cp/launch/dry.ts), from the fields a test
 * names: the mask, the layout, R, the scheme with its [A, P] (a2a+p2p's sizes), 2- or 4-byte inputs.
 */
export async function plannedSteps(x: {
  shape: AttentionShape; causal: boolean; window?: [number, number]; docs?: Documents | null; layout: Layout; R: number; scheme: Scheme;
  hierarchy: [number, number]; eb: number;
}): Promise<StepRecord[]> {
  const sizes = schemeDef(x.scheme).defaultSizes ? x.hierarchy : undefined;
  const dry = await dryRun({ shape: x.shape, R: x.R, layout: x.layout, scheme: x.scheme, sizes, mask: { causal: x.causal, window: x.window, docs: x.docs }, precision: x.eb === 2 ? 'f16' : 'f32' });
  return dry.steps;
}

/**
 * The timeline a run of the dry-run steps would give (makeTimeline from a dry run's forward steps):
 * each rank's work as its steps did it, the balance, the shards and the mask's facts. One query and
 * one K/V head, D = 8, f32.
 */
export async function plannedTimeline(N: number, R: number, layout: Layout, rules: MaskRules, scheme: Scheme = 'p2p'): Promise<{ timeline: RingTimeline; steps: StepRecord[] }> {
  const shape = { B: 1, Hq: 1, Hkv: 1, Nq: N, Nk: N, D: 8 };
  const dry = await dryRun({ shape, R, layout, scheme, mask: rules, precision: 'f32', backward: false });
  const facts = { adapters: [], mode: 'one-device' as const, scheme, hierarchy: dry.hierarchy, R, layout, precision: 'f32' as const, shape, ranks: [] };
  const timeline = makeTimeline(facts, rules, shardLayout(N, R, layout), [{ phase: 'forward', wallMs: 0, steps: dry.steps }]);
  return { timeline, steps: dry.steps };
}

/**
 * The exact merge of two partial results, row by row in float64, by the rules of common.wgsl
 * lse_merge: a NaN LSE on either side makes the row NaN; a side without mass (LSE −inf: no visible
 * key; +inf: visible keys all scoring −inf, a ring step's partial) adds nothing but its NaN elements; otherwise O = σ(a − b)·O_a + σ(b − a)·O_b and LSE = log(e^a + e^b), a NaN element
 * on either side NaN whatever its weight.
 */
export function mergeRows(D: number, acc: { o: ArrayLike<number>; lse: ArrayLike<number> }, part: { o: ArrayLike<number>; lse: ArrayLike<number> }): { o: Float64Array; lse: Float64Array } {
  const rows = acc.lse.length;
  const out = { o: new Float64Array(rows * D), lse: new Float64Array(rows) };
  for (let r = 0; r < rows; r++) {
    const a = acc.lse[r], b = part.lse[r];
    let wa = 1, wb = 0, lse = a;
    if (Number.isNaN(a) || Number.isNaN(b)) [wa, wb, lse] = [NaN, NaN, NaN];
    // A side without mass (±inf: no visible key, or visible keys all scoring −inf) adds nothing
    // but its NaN elements; two such keep the larger LSE (+inf if either saw keys) and O_a + O_b.
    else if (!Number.isFinite(b)) [wa, wb, lse] = Number.isFinite(a) ? [1, 0, a] : [1, 1, Math.max(a, b)];
    else if (!Number.isFinite(a)) [wa, wb, lse] = [0, 1, b];
    else {
      lse = Math.max(a, b) + Math.log1p(Math.exp(Math.min(a, b) - Math.max(a, b)));
      [wa, wb] = [Math.exp(a - lse), Math.exp(b - lse)];
    }
    out.lse[r] = lse;
    for (let d = 0; d < D; d++) {
      const xa = acc.o[r * D + d], xb = part.o[r * D + d];
      out.o[r * D + d] = Number.isNaN(xa) || Number.isNaN(xb) ? NaN : wa * xa + wb * xb;
    }
  }
  return out;
}
