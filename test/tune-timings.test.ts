/**
 * Autotune refuses, at write time, a search whose defaults' or tuned time is no measurement (0, negative or not
 * finite): such an entry would be read back as absent (tuneEntryProblem) and searched again forever. The timer,
 * the device and the float64 check are fakes: no GPU work.
 */
import { describe, expect, it, vi } from 'vitest';
import { autotune, type TuneEntry, type TuneStore } from '../src/bench/tune.js';
import { MeasurementError } from '../src/errors.js';
import type { FlashDevice } from '../src/gpu/device.js';
import type { KernelTuning } from '../src/kernels/tuning.js';

/** [forward, backward] ms the fake timer gives the defaults and the candidates (set per test). */
const times: { defaults: [number, number]; pinned: [number, number] } = { defaults: [2, 4], pinned: [1, 2] };

vi.mock('../src/bench/kernels.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../src/bench/kernels.js')>()),
  benchBuffers: () => ({}),
  tensorFits: () => true,
  spotCheck: async () => ({ ok: true, err: 1e-7 }),
  timeForwardBackward: async (d: FlashDevice) => ({ gpu: null, host: d.tuning.portableForward ? times.pinned : times.defaults, path: 'scalar' }),
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
    Object.assign(times, { defaults: [2, 4], pinned: [1, 2] });
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
    Object.assign(times, { defaults, pinned });
    const store = memoryStore(), lines: string[] = [];
    const run = autotune(dev, request, store, { candidates, progress: (l) => lines.push(l) });
    await expect(run).rejects.toThrow(MeasurementError);
    await expect(run).rejects.toThrow(/^tune: D=16 f32 not causal at N=32, 1 head: the timer gave the defaults [^\n]* ms and the tuned pins [^\n]* ms \(forward \/ backward\), and only a finite time above 0 is a measurement: nothing stored; time a larger N or more heads, so that each run lasts longer than the timer's resolution$/);
    expect(store.entries).toEqual([]);
  });
});
