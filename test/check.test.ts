/**
 * The correctness gate (src/kernels/check.ts checkAgainstReference) that `flashring selftest`, the
 * bench's spot check and the autotuner's keep-or-not decision rest on, shown to refuse wrong results.
 * The kernels here are the real ones, on this file's device; the library's entry points are wrapped
 * (vi.mock) so that a test can spoil one output by a known factor after the kernels computed it, and
 * so that the gate's inputs and outputs can be read back and its errors recomputed here. Tests that
 * only read what the gate reports about correct kernels could not tell a gate that passes anything.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HostTensor } from '../src/kernels/attention.js';
import { checkAgainstReference } from '../src/kernels/check.js';
import { spotCheck } from '../src/bench/kernels.js';
import { autotune, type TuneEntry } from '../src/bench/tune.js';
import { selftest } from '../src/cli/info.js';
import { referenceBackward, referenceForward } from '../src/reference/attention.js';
import { fromHalfArray, roundToHalf } from '../src/f16.js';
import { TOL, relErr } from '../src/reference/compare.js';
import { testDevice } from './gpu.js';

type Output = 'o' | 'lse' | 'dq' | 'dk' | 'dv';

/** What the wrapped entry points do: spoil one output (times `factor`) on the devices `when` picks; and what they last saw. */
const ctl = vi.hoisted(() => ({
  spoil: null as null | { what: 'o' | 'lse' | 'dq' | 'dk' | 'dv'; factor: number; when?: (dev: { tuning: object }) => boolean },
  seen: { fwdIn: null as null | Record<string, unknown>, fwd: null as null | Record<string, unknown>, bwdIn: null as null | Record<string, unknown>, bwd: null as null | Record<string, unknown> },
  /** Timings the autotune test hands the search: pins of a kernel 10× faster than its defaults. */
  fakeTimes: false,
}));

vi.mock('../src/kernels/attention.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../src/kernels/attention.js')>();
  const f16 = await import('../src/f16.js');
  const times = (x: HostTensor, f: number): HostTensor =>
    x instanceof Float32Array ? x.map((v) => v * f) : f16.toHalfArray(Array.from(f16.fromHalfArray(x), (v) => v * f));
  const spoil = <T extends object>(dev: { tuning: object }, r: T, names: string[]): T => {
    const s = ctl.spoil;
    if (!s || !names.includes(s.what) || (s.when && !s.when(dev))) return r;
    return { ...r, [s.what]: times((r as Record<string, unknown>)[s.what] as HostTensor, s.factor) };
  };
  return {
    ...m,
    attentionForward: async (...a: Parameters<typeof m.attentionForward>) => {
      const r = spoil(a[0], await m.attentionForward(...a), ['o', 'lse']);
      ctl.seen.fwdIn = a[2] as unknown as Record<string, unknown>;
      ctl.seen.fwd = r as unknown as Record<string, unknown>;
      return r;
    },
    attentionBackward: async (...a: Parameters<typeof m.attentionBackward>) => {
      const r = spoil(a[0], await m.attentionBackward(...a), ['dq', 'dk', 'dv']);
      ctl.seen.bwdIn = a[2] as unknown as Record<string, unknown>;
      ctl.seen.bwd = r as unknown as Record<string, unknown>;
      return r;
    },
  };
});

vi.mock('../src/bench/kernels.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../src/bench/kernels.js')>();
  return {
    ...m,
    timeForwardBackward: async (...a: Parameters<typeof m.timeForwardBackward>) => {
      if (!ctl.fakeTimes) return m.timeForwardBackward(...a);
      const t = a[0].tuning as { portableForward?: unknown; portableBackward?: unknown };
      const ms: [number, number] = [t.portableForward ? 1 : 10, t.portableBackward ? 1 : 10];
      // Plans that differ where pinned (autotune keeps no pins whose plan is the defaults' own).
      const plans: [string, string] = [t.portableForward ? 'pinned' : 'default', t.portableBackward ? 'pinned' : 'default'];
      return { gpu: null, host: ms, path: 'scalar' as const, bwdPath: 'scalar' as const, plans };
    },
  };
});

afterEach(() => {
  ctl.spoil = null;
  ctl.fakeTimes = false;
});

const s = { B: 1, Hq: 2, Hkv: 1, Nq: 24, Nk: 24, D: 16 };
const f64 = (x: unknown) => Float64Array.from(x instanceof Uint16Array ? fromHalfArray(x) : (x as Float32Array));

describe('checkAgainstReference', () => {
  for (const precision of ['f32', 'f16'] as const)
    it(`${precision}: reports the errors of what the kernels returned, as computed again here from its inputs and outputs`, async (ctx) => {
      const dev = await testDevice();
      if (precision === 'f16' && !dev.hasF16) return ctx.skip();
      const r = await checkAgainstReference(dev, s, { causal: true, precision, seed: 4242 });
      const x = ctl.seen.fwdIn!, fw = ctl.seen.fwd!, bw = ctl.seen.bwd!, dout = ctl.seen.bwdIn!.dout;
      // The reference on the values the kernels read: f16 inputs rounded to half.
      const ref = (a: unknown) => (precision === 'f16' ? roundToHalf(a as Float32Array) : f64(a));
      const rf = referenceForward(s, ref(x.q), ref(x.k), ref(x.v), { causal: true });
      // The backward's reference of its own inputs: O as the forward returned it among them (Δ from that O).
      const rb = referenceBackward(s, ref(x.q), ref(x.k), ref(x.v), ref(dout), { causal: true }, f64(fw.o));
      const mine = {
        errO: relErr(f64(fw.o), rf.o), errLSE: relErr(f64(fw.lse), rf.lse),
        errDQ: relErr(f64(bw.dq), rb.dq), errDK: relErr(f64(bw.dk), rb.dk), errDV: relErr(f64(bw.dv), rb.dv),
      };
      for (const [k, v] of Object.entries(mine)) {
        expect(r[k as keyof typeof mine], k).toBeCloseTo(v, 12);
        expect(v, k).toBeGreaterThan(0); // rounding shows: an error of exactly 0 would be no check
      }
      expect(Math.max(mine.errO, mine.errLSE)).toBeLessThanOrEqual(TOL[precision].out);
      expect(Math.max(mine.errDQ, mine.errDK, mine.errDV)).toBeLessThanOrEqual(TOL[precision].grad);
      expect(r.ok).toBe(true);
    }, 120_000);

  it('f32: refuses each output off by 3× its tolerance, and passes it off by 0.3× (the line is the contract\'s)', async () => {
    const dev = await testDevice();
    const key: Record<Output, 'errO' | 'errLSE' | 'errDQ' | 'errDK' | 'errDV'> = { o: 'errO', lse: 'errLSE', dq: 'errDQ', dk: 'errDK', dv: 'errDV' };
    for (const what of ['o', 'lse', 'dq', 'dk', 'dv'] as const) {
      const tol = what === 'o' || what === 'lse' ? TOL.f32.out : TOL.f32.grad;
      ctl.spoil = { what, factor: 1 + 3 * tol };
      const bad = await checkAgainstReference(dev, s, { causal: false, precision: 'f32', seed: 99 });
      expect(bad.ok, `${what} × (1 + 3·tol)`).toBe(false);
      expect(bad[key[what]], what).toBeGreaterThan(2 * tol);
      expect(bad[key[what]], what).toBeLessThan(4 * tol);
      ctl.spoil = { what, factor: 1 + 0.3 * tol };
      const near = await checkAgainstReference(dev, s, { causal: false, precision: 'f32', seed: 99 });
      expect(near.ok, `${what} × (1 + 0.3·tol)`).toBe(true);
      expect(near[key[what]], what).toBeGreaterThan(0.2 * tol);
    }
  }, 300_000);

  it('f16: refuses an O or a dK 10% off', async (ctx) => {
    const dev = await testDevice();
    if (!dev.hasF16) return ctx.skip();
    for (const what of ['o', 'dk'] as const) {
      ctl.spoil = { what, factor: 1.1 };
      const r = await checkAgainstReference(dev, s, { causal: true, precision: 'f16', seed: 7 });
      expect(r.ok, what).toBe(false);
      expect(what === 'o' ? r.errO : r.errDK).toBeGreaterThan(0.05);
    }
  }, 120_000);
});

describe('the gate where it is used', () => {
  it("the bench's spot check (and the autotuner's) says not ok, with the error, when a gradient is 1% off", async () => {
    const dev = await testDevice();
    ctl.spoil = { what: 'dv', factor: 1.01 };
    const r = await spotCheck(dev, 16, 'f32', true);
    expect(r.ok).toBe(false);
    expect(r.err).toBeGreaterThan(0.005);
    ctl.spoil = null;
    expect((await spotCheck(dev, 16, 'f32', true)).ok).toBe(true);
  }, 120_000);

  it('autotune keeps the defaults when the faster pins fail the float64 check, says so, and reports the defaults\' error', async () => {
    const dev = await testDevice({ tuning: { path: 'scalar' } });
    // Every candidate's pins time 10× faster than the defaults (fake timings), but the kernels they give are wrong (dQ 1% off).
    ctl.fakeTimes = true;
    ctl.spoil = { what: 'dq', factor: 1.01, when: (d) => { const t = d.tuning as { portableForward?: unknown; portableBackward?: unknown }; return !!(t.portableForward || t.portableBackward); } };
    const entries: TuneEntry[] = [], lines: string[] = [];
    const few = (_p: unknown, kind: 'fwd' | 'bwd') => (kind === 'fwd' ? [{ portableForward: { rows: 16, cols: 8 } }] : [{ portableBackward: { rows: 8, cols: 8 } }]);
    const e = await autotune(dev, { robust: false, D: 16, precision: 'f32', causal: true, N: 48, heads: 1, reps: 1 },
      { get: async () => undefined, set: async (x) => (entries.push(x), 0) }, { candidates: few, fresh: true, progress: (l) => lines.push(l) });
    expect(e.keptDefaults).toMatch(/^the kept pins failed the float64 check \(\d\.\d\de-\d+\)$/);
    expect(e.tuning).toEqual({});
    expect(lines.at(-1)).toBe(`  kept the defaults: ${e.keptDefaults}`);
    expect(e.checkErr).toBeLessThan(TOL.f32.grad); // the defaults' own spot check, unspoiled
    expect(entries.map((x) => x.tuning)).toEqual([{}]);
  }, 300_000);

  it('flashring selftest exits 1 and prints FAIL rows when the kernels are wrong', async () => {
    ctl.spoil = { what: 'o', factor: 1.01 };
    const out: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...a) => void out.push(a.join(' ')));
    let code: number;
    try {
      code = await selftest(['--seed', '7']);
    } finally {
      log.mockRestore();
    }
    expect(code).toBe(1);
    const rows = out.filter((l) => /^f(32|16) /.test(l));
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) expect(row).toMatch(/ FAIL$/);
    expect(out.at(-1)).toBe('repeat this run with: flashring selftest --seed 7');
  }, 600_000);
});
