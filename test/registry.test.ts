/**
 * One registry entry is all a new scheme needs: registered here (a test-only scheme that runs the
 * p2p ring program over the ranks in reverse order), it appears in the dry run, in cp-plan's plans
 * and help, and in the ring flags' checks; unregistered, it is gone from all of them.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dryRun } from '../src/cp/launch/dry.js';
import { RankProgram } from '../src/cp/rank/chunks.js';
import { p2p } from '../src/cp/schemes/p2p.js';
import { registerScheme, schemeNames } from '../src/cp/schemes/registry.js';
import { cpPlanCommand, parseCpPlan, planSchemes } from '../src/cli/cpPlan.js';
import { parseRingArgs } from '../src/cli/ringArgs.js';

const NAME = 'test-ring';
let unregister: (() => void) | null = null;
afterEach(() => {
  unregister?.();
  unregister = null;
  vi.restoreAllMocks();
});

const register = () =>
  (unregister = registerScheme({
    name: NAME, about: 'a test-only scheme (the p2p ring program)',
    hierarchy: (R) => [1, R], program: () => p2p as RankProgram<unknown>, steps: ([, P]) => ({ forward: P, backward: P + 1 }),
  }));

const base = { 'context-parallel-size': '4', 'seq-length': '4096', heads: '8', 'head-dim': '64', 'compute-tflops': '100' };

describe('the scheme registry', () => {
  it('a registered scheme is dry-run, planned by cp-plan, listed in its help and taken by --cp-comm-type', async () => {
    expect(schemeNames()).not.toContain(NAME);
    register();
    expect(schemeNames()).toEqual(['p2p', 'all_gather', 'a2a', 'a2a+p2p', NAME]);
    // the dry run: the same steps as p2p's program (it is p2p's program), under the new name
    const shape = { B: 1, Hq: 8, Hkv: 8, Nq: 256, Nk: 256, D: 64 };
    const mine = await dryRun({ shape, R: 4, scheme: NAME, precision: 'f16', mask: { causal: true } });
    const ref = await dryRun({ shape, R: 4, scheme: 'p2p', precision: 'f16', mask: { causal: true } });
    expect(mine.scheme).toBe(NAME);
    expect(mine.steps.length).toBe(4 * (4 + 5));
    expect(mine.steps.map((s) => [s.flops, s.transferBytes])).toEqual(ref.steps.map((s) => [s.flops, s.transferBytes]));
    expect(mine.ranks).toEqual(ref.ranks);
    // cp-plan plans every scheme the shape allows: the new one among them
    const req = parseCpPlan(base);
    expect(req.schemes).toContain(NAME);
    const plans = await planSchemes(req, 100);
    const plan = plans.find((p) => p.scheme === NAME)!;
    expect(plan.predicted.totalMs).toBeGreaterThan(0);
    expect(plan.rankPeakBytes).toBe(plans.find((p) => p.scheme === 'p2p')!.rankPeakBytes);
    expect(parseCpPlan({ ...base, 'cp-comm-type': NAME }).schemes).toEqual([NAME]);
    // the help lists it with its line
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(await cpPlanCommand(['--help'])).toBe(0);
    expect(log.mock.calls.flat().join('\n')).toMatch(new RegExp(`${NAME}.*a test-only scheme`));
    // attention --cp takes it
    expect(parseRingArgs({ cp: '4', 'cp-comm-type': NAME })?.scheme).toBe(NAME);
  });

  it('an unregistered scheme is refused everywhere, naming the schemes there are', async () => {
    register();
    unregister!();
    unregister = null;
    expect(schemeNames()).not.toContain(NAME);
    const shape = { B: 1, Hq: 8, Hkv: 8, Nq: 256, Nk: 256, D: 64 };
    await expect(dryRun({ shape, R: 4, scheme: NAME, precision: 'f16' })).rejects.toThrow(/unknown cp-comm-type 'test-ring': use p2p, all_gather, a2a, a2a\+p2p/);
    expect(() => parseCpPlan({ ...base, 'cp-comm-type': NAME })).toThrow(/unknown cp-comm-type/);
    expect(() => parseRingArgs({ cp: '4', 'cp-comm-type': NAME })).toThrow(/must be one of p2p, all_gather, a2a, a2a\+p2p/);
    expect(() => registerScheme({ name: 'p2p', about: '', hierarchy: (R) => [1, R], program: () => p2p as RankProgram<unknown>, steps: () => ({ forward: 1, backward: 1 }) })).toThrow(/registered already/);
  });
});
