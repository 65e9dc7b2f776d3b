/**
 * Autotune refuses, at write time, a search whose defaults' or tuned time is no measurement (0, negative or not
 * finite): such an entry would be read back as absent (tuneEntryProblem) and searched again forever. A candidate whose
 * own timing gave no time is no candidate (a broken one ranked first at 0 ms). The timer, the device and the float64
 * check are fakes: no GPU work.
 */
import { describe, expect, it, vi } from 'vitest';
import { autotune, showPins, type TuneEntry, type TuneStore } from '../src/bench/tune.js';
import { MeasurementError } from '../src/errors.js';
import type { FlashDevice } from '../src/gpu/device.js';
import type { KernelTuning } from '../src/kernels/tuning.js';

/**
 * The fake timer, set per test: [forward, backward] ms of the defaults and of the chosen pins timed beside them, and
 * (`trial`) of each candidate timed alone in its own pass, by its pins (1 ms where not named; the other pass NaN: not timed).
 */
const times: { defaults: readonly number[]; pinned: readonly number[]; trial: Record<string, number> } = { defaults: [2, 4], pinned: [1, 2], trial: {} };
/** Candidates whose build throws, by their pins, with the message it throws. */
const built: { fails: Record<string, string> } = { fails: {} };
function fakeHost(d: FlashDevice, passes: string): readonly number[] {
  if (passes === 'both') return d.tuning.portableForward ? times.pinned : times.defaults;
  const pin = passes === 'fwd' ? { portableForward: d.tuning.portableForward } : { portableBackward: d.tuning.portableBackward };
  const fails = built.fails[showPins(pin)];
  if (fails !== undefined) throw new Error(fails);
  const ms = times.trial[showPins(pin)] ?? 1;
  return passes === 'fwd' ? [ms, NaN] : [NaN, ms];
}

vi.mock('../src/bench/kernels.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../src/bench/kernels.js')>()),
  benchBuffers: () => ({}),
  tensorFits: () => true,
  spotCheck: async () => ({ ok: true, err: 1e-7 }),
  // Plans named by the pins (autotune keeps no pins whose plan is the defaults' own).
  timeForwardBackward: async (d: FlashDevice, ...rest: unknown[]) => ({
    gpu: null, host: fakeHost(d, (rest[7] as string | undefined) ?? 'both'), path: 'scalar',
    plans: [JSON.stringify(d.tuning.portableForward ?? null), JSON.stringify(d.tuning.portableBackward ?? null)],
  }),
}));
vi.mock('../src/kernels/flashForward.js', async (importOriginal) => {
  const mod = await importOriginal<typeof import('../src/kernels/flashForward.js')>();
  return { ...mod, FlashForward: { create: async () => ({ path: 'scalar' }) } };
});

const dev = {
  adapter: { vendor: 'fake', architecture: 'fake', device: 'fake', description: 'a fake timer' }, tuning: {},
  device: { limits: { maxStorageBufferBindingSize: 2 ** 30 } }, tracker: { destroy: () => {} },
} as unknown as FlashDevice;
const request = { robust: false, D: 16, precision: 'f32' as const, causal: false, N: 32, heads: 1, reps: 1 };
const candidates = (_path: string, kind: 'fwd' | 'bwd'): KernelTuning[] => [kind === 'fwd' ? { portableForward: { rows: 16, cols: 8 } } : { portableBackward: { rows: 8, cols: 8 } }];

function memoryStore(): TuneStore & { entries: TuneEntry[] } {
  const entries: TuneEntry[] = [];
  return { entries, get: async () => undefined, set: async (e) => (entries.push(e), 0) };
}

describe('autotune with a timer that gives no time', () => {
  it('stores a search whose times are all above 0 (the fake timer works)', async () => {
    Object.assign(times, { defaults: [2, 4], pinned: [1, 2], trial: {} });
    const store = memoryStore();
    const e = await autotune(dev, request, store, { candidates });
    expect(e.tunedMs).toEqual([1, 2]);
    expect(store.entries).toEqual([expect.objectContaining({ defaultMs: [2, 4], tunedMs: [1, 2] })]);
  });

  it.each([
    ['the defaults\' forward 0', [0, 4], [1, 2]],
    ['the defaults\' backward not finite', [2, NaN], [1, 2]],
    ['the kept pins\' forward 0', [2, 4], [0, 2]],
    ['a negative time kept', [2, 4], [1, -1]],
  ] as const)('%s: stores nothing and says why in one line, with what to do', async (_, defaults, pinned) => {
    Object.assign(times, { defaults, pinned, trial: {} });
    const store = memoryStore(), lines: string[] = [];
    const run = autotune(dev, request, store, { candidates, progress: (l) => lines.push(l) });
    await expect(run).rejects.toThrow(MeasurementError);
    await expect(run).rejects.toThrow(/^tune: D=16 f32 not causal at N=32, 1 head: the timer gave the defaults [^\n]* ms and the tuned pins [^\n]* ms \(forward \/ backward\), and only a finite time above 0 is a measurement: nothing stored; time a larger N or more heads, so that each run lasts longer than the timer's resolution$/);
    expect(store.entries).toEqual([]);
  });
});

describe('autotune with a timer that gives a candidate no time', () => {
  const [A, B] = [{ portableForward: { rows: 16, cols: 8 } }, { portableForward: { rows: 8, cols: 8 } }];
  const two = (_path: string, kind: 'fwd' | 'bwd'): KernelTuning[] => (kind === 'fwd' ? [A, B] : [{ portableBackward: { rows: 8, cols: 8 } }]);

  it.each([0, -1, NaN, Infinity])('a candidate timed %s ms is no candidate: never ranked nor kept, its trial says why, and a whole line says so', async (bad) => {
    // A's own timing failed (it would rank first at 0, or poison the order); B's is a time. Timed beside the defaults, both run at `pinned`.
    Object.assign(times, { defaults: [2, 4], pinned: [1, 2], trial: { [showPins(A)]: bad, [showPins(B)]: 1.5 } });
    const store = memoryStore(), lines: string[] = [];
    const e = await autotune(dev, request, store, { candidates: two, progress: (l) => lines.push(l) });
    expect(e.tuning.portableForward).toEqual(B.portableForward);
    expect(e.trials.slice(0, 2)).toEqual([
      { kind: 'fwd', pins: showPins(A), ms: null, error: `time ${bad} ms: not timed` },
      { kind: 'fwd', pins: showPins(B), ms: 1.5 },
    ]);
    // It ran (a timer that gave no time), so its line says the seconds it took; a build that failed did not (below).
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^  fwd 1/2 ${showPins(A)}: skipped \\(time ${bad} ms: not timed, \\d+\\.\\d s with its build and runs\\)$`)));
    expect(lines).toContain(`  1 of 2 fwd candidates gave no time (time ${bad} ms): not ranked`);
    expect(store.entries).toHaveLength(1);
  });

  it('where no candidate of a kernel gives a time: a MeasurementError saying what to do, nothing stored, the next kernel not timed', async () => {
    Object.assign(times, { defaults: [2, 4], pinned: [1, 2], trial: { [showPins(A)]: 0, [showPins(B)]: NaN } });
    const store = memoryStore(), lines: string[] = [];
    const run = autotune(dev, request, store, { candidates: two, progress: (l) => lines.push(l) });
    await expect(run).rejects.toThrow(MeasurementError);
    await expect(run).rejects.toThrow(/^tune: D=16 f32 not causal at N=32, 1 head: 2 of 2 fwd candidates gave no time \(time 0 ms, time NaN ms\) and none gave one, so no forward candidate can be ranked: nothing stored; time a larger N or more heads, so that each run lasts longer than the timer's resolution$/);
    expect(store.entries).toEqual([]);
    expect(lines.some((l) => l.includes('bwd'))).toBe(false);
  });

  it('a candidate whose build error ends in the untimed words is no timer failure: no line says it gave no time', async () => {
    // The reason is data, not read back from the trial's text: a build error of any wording stays a build error.
    Object.assign(times, { defaults: [2, 4], pinned: [1, 2], trial: { [showPins(A)]: 1.5 } });
    built.fails = { [showPins(B)]: 'the driver said: not timed' };
    const lines: string[] = [];
    try {
      const e = await autotune(dev, request, memoryStore(), { candidates: two, progress: (l) => lines.push(l) });
      expect(e.trials[1]).toEqual({ kind: 'fwd', pins: showPins(B), ms: null, error: 'the driver said: not timed' });
      expect(lines).toContain(`  fwd 2/2 ${showPins(B)}: skipped (the driver said: not timed)`);
      expect(lines.filter((l) => l.includes('gave no time'))).toEqual([]);
    } finally {
      built.fails = {};
    }
  });

  it('candidates that did not build are no timer failure: the defaults are kept, as before', async () => {
    Object.assign(times, { defaults: [2, 4], pinned: [1, 2], trial: {} });
    const e = await autotune(dev, request, memoryStore(), { candidates: () => [{ portableForward: { rows: 3, cols: 3 } } as KernelTuning] });
    expect(e.keptDefaults).toBe('no candidate ran');
    expect(e.trials[0]).toMatchObject({ ms: null, error: expect.not.stringContaining('not timed') });
  });
});
