/**
 * The CP bench's scale run (bench/cp.ts) at a small size: it generates each rank's shard from
 * global positions itself (no host tensor), so it must place a zigzag shard's two runs where the
 * ring does; its sampled rows (the middle of the sequence, the last rows: rank 0's second run)
 * are checked against the single-device kernel.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpBench } from '../bench/cp.js';
import { testDevices } from './gpu.js';

describe('bench/cp.ts scale', () => {
  it('a small scale run: sampled rows of both runs of the zigzag shards match the single-device kernel', async () => {
    const [dev] = await testDevices(1);
    if (!dev.hasF16) return expect(process.env.CI).not.toBe('true'); // the scale run is f16
    const out = mkdtempSync(join(tmpdir(), 'flashring-cp-'));
    try {
      expect(await cpBench(['scale', '--N', '1024', '--H', '2', '--D', '16', '--R', '4', '--gpu-gib', '1', '--out', out])).toBe(0);
      const { errors } = JSON.parse(readFileSync(join(out, 'cp-scale.json'), 'utf8')) as { errors: Record<string, number> };
      expect(Object.keys(errors)).toEqual(expect.arrayContaining(['o@960', 'dq@960', 'dk@512.h0']));
      for (const [k, e] of Object.entries(errors)) expect(e, k).toBeLessThanOrEqual(/^(o|lse)@/.test(k) ? 5e-3 : 2e-2);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
