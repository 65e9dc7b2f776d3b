import { describe, expect, it } from 'vitest';
import { easeDawnPolling } from '../src/gpu/dawnPolling.js';

/**
 * Dawn for Node re-queues a native callback with setImmediate for as long as a promise of its is
 * pending (a busy wait: measured 37 s of CPU for a 20 s cold compile on lavapipe, 21 s eased).
 * A bound function stands in for the native callback (its source reads `[native code]`).
 */
describe('easeDawnPolling', () => {
  /**
   * How many times a self-re-queuing callback runs between 20 and 120 ms after its first queuing; `stall`:
   * its poll at 50 ms holds the thread for 40 ms, as a busy machine keeps a process off its core.
   */
  const spin = (native: boolean, stall = false) =>
    new Promise<number>((resolve) => {
      let runs = 0, stalled = !stall;
      const t0 = performance.now();
      const poll = () => {
        const t = performance.now() - t0;
        if (!stalled && t >= 50) for (stalled = true; performance.now() - t0 < t + 40;);
        if (t >= 20) runs++;
        if (t >= 120) resolve(runs);
        else setImmediate(cb);
      };
      const cb = native ? poll.bind(null) : poll;
      setImmediate(cb);
    });

  it('spaces a streak of native polls to about one a millisecond and leaves other callbacks alone', async () => {
    const before = await spin(true);
    easeDawnPolling();
    easeDawnPolling(); // idempotent
    const eased = await spin(true);
    const js = await spin(false);
    // Past its first 4 ms a streak polls once per timer tick (1 ms or more): 100 ms give about 100
    // polls; unpatched, or for JavaScript callbacks, a core re-queues tens of thousands of times.
    // On a busy machine all three shrink; the spacing still holds polls near one a millisecond.
    expect(eased).toBeLessThanOrEqual(150);
    expect(eased).toBeGreaterThan(5);
    expect(js).toBeGreaterThan(5 * eased);
    expect(before).toBeGreaterThan(5 * eased);
    // A poll that runs 40 ms late still continues its streak: no second STREAK_MS of spinning after it.
    expect(await spin(true, true)).toBeLessThanOrEqual(100);
  });
});
