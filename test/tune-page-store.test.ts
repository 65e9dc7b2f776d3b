/**
 * The page's tune store as Run and Tune use it (web/tuneStore.ts keptOrSaid): an entry read back from IndexedDB is
 * checked as the Node store checks its file's (src/bench/tuneEntry.ts), and a browser that keeps no data is said.
 */
import { describe, expect, it } from 'vitest';
import { keptOrSaid } from '../web/tuneStore.js';
import type { TuneEntry, TuneStore } from '../src/bench/tune.js';

const KEY = 'adapter|hash|scalar|64|f32|causal';
const GOOD: TuneEntry = {
  key: KEY, path: 'scalar', tuning: {}, defaultMs: [1.5, 4.25], tunedMs: [1.5, 4.25], N: 256, heads: 2, checkErr: 1e-7,
  date: '2026-12-06T15:00:00Z', trials: [],
} as unknown as TuneEntry;
const holding = (entry: unknown): TuneStore => ({ get: async () => entry as TuneEntry, set: async () => 0 });

describe('keptOrSaid', () => {
  it('passes a sound entry through, and none as none', async () => {
    const s = keptOrSaid(holding(GOOD));
    expect(await s.get(KEY)).toEqual(GOOD);
    expect(s.damaged).toBeUndefined();
    expect(await keptOrSaid(holding(undefined)).get(KEY)).toBeUndefined();
  });
  it('reads a damaged entry, or one of another flashring, as none and says why (its pins were taken unchecked)', async () => {
    for (const [entry, why] of [
      [{ ...GOOD, tuning: { FLASHRING_NO_SUCH_PIN: 1 } }, /FLASHRING_NO_SUCH_PIN', which is no pin/],
      [{ ...GOOD, tunedMs: 'fast' }, /tunedMs is not \[forward ms, backward ms\]/],
      // A time of 0, below 0 or not finite is no measurement (IndexedDB keeps Infinity and NaN, which JSON cannot).
      ...[[0, 4.25], [1.5, 0], [-1, 4.25], [Infinity, 4.25], [1.5, NaN]].map((ms) => [{ ...GOOD, tunedMs: ms }, /^tunedMs is not \[forward ms, backward ms\], each a time above 0$/] as const),
      [{ ...GOOD, defaultMs: [0, 0] }, /^defaultMs is not \[forward ms, backward ms\], each a time above 0$/],
      [{ ...GOOD, key: 'another' }, /key field is not the key/],
      [null, /not an object/],
    ] as const) {
      const s = keptOrSaid(holding(entry));
      expect(await s.get(KEY)).toBeUndefined();
      expect(s.damaged).toMatch(why);
      expect(s.failure).toBeUndefined();
    }
  });
  it('a store that refuses (IndexedDB blocked): nothing read, nothing kept, and failure says why', async () => {
    const refused: TuneStore = { get: async () => { throw new DOMException('denied', 'UnknownError'); }, set: async () => { throw new DOMException('denied', 'UnknownError'); } };
    const s = keptOrSaid(refused);
    expect(await s.get(KEY)).toBeUndefined();
    await s.set(GOOD);
    expect(s.failure).toBe('UnknownError: denied');
  });
});
