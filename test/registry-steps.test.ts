/**
 * Each scheme's step counts (the registry's `steps`, which the progress total and the timeline's
 * step count read) against the steps its rank program records in a dry run: the registry states them
 * beside the program, so this is what keeps the two from drifting (a program that gains a step would
 * otherwise report progress past 100%).
 */
import { describe, expect, it } from 'vitest';
import { dryRun } from '../src/cp/launch/dry.js';
import { resolveScheme, schemeDefs } from '../src/cp/schemes/registry.js';
import { MaskOptions } from '../src/mask.js';

const shape = { B: 1, Hq: 8, Hkv: 8, Nq: 512, Nk: 512, D: 16 };
const CASES: { scheme: string; R: number; sizes?: string }[] = [
  ...[2, 4, 8].flatMap((R) => ['p2p', 'all_gather', 'a2a'].map((scheme) => ({ scheme, R }))),
  { scheme: 'a2a+p2p', R: 4, sizes: '2,2' }, { scheme: 'a2a+p2p', R: 8, sizes: '2,4' }, { scheme: 'a2a+p2p', R: 8, sizes: '4,2' },
];
const MASKS: MaskOptions[] = [{}, { causal: true }, { causal: true, window: [64, 0] }];

describe("the registry's step counts are the steps the programs take", () => {
  it('every built-in scheme is covered', () => {
    expect(new Set(CASES.map((c) => c.scheme))).toEqual(new Set(schemeDefs().map((d) => d.name)));
  });
  for (const c of CASES) {
    it(`${c.scheme} at R = ${c.R}${c.sizes ? ` (${c.sizes})` : ''}: steps 0 … n−1 each phase, on every rank`, async () => {
      const want = resolveScheme(c.scheme, c.R, shape, c.sizes).steps;
      for (const mask of MASKS) {
        const run = await dryRun({ shape, R: c.R, scheme: c.scheme, sizes: c.sizes, precision: 'f32', mask });
        for (const phase of ['forward', 'backward'] as const) {
          const steps = run.steps.filter((s) => s.phase === phase);
          const n = want[phase];
          expect(new Set(steps.map((s) => s.step)), `${phase} ${JSON.stringify(mask)}`).toEqual(new Set(Array.from({ length: n }, (_, i) => i)));
          expect(steps.length, `${phase}: every rank records every step`).toBe(n * c.R);
        }
      }
    });
  }
});
