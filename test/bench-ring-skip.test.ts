/** bench's ring sweep: the lengths it skips after a shorter one ran out of memory are said, not dropped (review). */
import { describe, expect, it, vi } from 'vitest';
import { GPUOutOfMemoryError } from '../src/errors.js';

vi.mock('../src/bench/ring.js', () => ({
  ringPoint: async (_devs: unknown[], s: { Nq: number }) => {
    if (s.Nq >= 128) throw new GPUOutOfMemoryError('ring', 'Out of memory', 0);
    return { R: 1, N: s.Nq };
  },
}));
const { ringSweep } = await import('../src/bench/run.js');

describe("bench's ring sweep after an out-of-memory length", () => {
  it('each longer point skipped is a failure naming why (it vanished from the results and the summary)', async () => {
    const state = { kernelRows: [], ringRows: [] as unknown[], failures: [] as string[] };
    const cfg = { H: 1, B: 1, Ds: [16], ringNs: [64, 128, 256], ringRs: [1], layouts: ['zigzag'], outDir: '/nonexistent' } as unknown as Parameters<typeof ringSweep>[1];
    const plan = { write: async () => {} } as unknown as Parameters<typeof ringSweep>[5];
    await ringSweep([{}] as never, cfg, ['f32'], state as never, async () => {}, plan, 'stamp');
    expect(state.ringRows).toHaveLength(1);
    expect(state.failures).toHaveLength(2);
    expect(state.failures[0]).toMatch(/^ring N=128 R=1 zigzag: the GPU ran out of memory/);
    expect(state.failures[1]).toBe('ring N=256 R=1 zigzag: skipped: N=128 ran out of memory, so no longer length was run');
  });
});
