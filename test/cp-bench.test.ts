/**
 * The CP bench (bench/cp.ts) at small sizes. The scale run: it generates each rank's shard from
 * global positions itself (no host tensor), so it must place a zigzag shard's two runs where the
 * ring does; its sampled rows (the middle of the sequence, the last rows: rank 0's second run)
 * are checked against the single-device kernel. The steps bench: its step kinds, counts and
 * visible work, which turn its times into the split of p2p's ratio to R = 1.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpBench } from '../bench/cp.js';
import { testDevices } from './gpu.js';
import { StepsResult } from '../bench/cpSteps.js';

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

describe('bench/cp.ts steps', () => {
  it('times each kind of zigzag step beside a plain call of the same visible work, and sums them over the ring', async () => {
    const [dev] = await testDevices(1);
    if (!dev.hasF16) return expect(process.env.CI).not.toBe('true'); // the steps are f16
    const out = mkdtempSync(join(tmpdir(), 'flashring-cp-'));
    try {
      expect(await cpBench(['steps', '--N', '256', '--H', '2', '--D', '16', '--R', '2,4', '--reps', '2', '--out', out])).toBe(0);
      const res = JSON.parse(readFileSync(join(out, 'cp-steps-256.json'), 'utf8')) as StepsResult;
      expect(res.rows.map((r) => `${r.R} ${r.kind} ${r.count}`)).toEqual(['1 R=1 1', '2 diagonal 2', '2 j<r 1', '2 j>r 1', '4 diagonal 4', '4 j<r 6', '4 j>r 6']);
      // Visible pairs: chunks of c = N/2R tokens; a shard's own chunk pair sees two triangles and a square, other pairs one shard × one chunk.
      for (const r of res.rows) {
        const c = 256 / (2 * r.R);
        expect(r.visible, `${r.R} ${r.kind}`).toBe(r.kind === 'R=1' ? (256 * 257) / 2 : r.kind === 'diagonal' ? c * (2 * c + 1) : 2 * c * c);
        for (const ms of [...Object.values(r.ring), ...Object.values(r.plain)]) expect(ms, `${r.R} ${r.kind}`).toBeGreaterThan(0);
      }
      // Every step of the ring counted once: R² steps per R.
      for (const R of [2, 4]) expect(res.rows.filter((r) => r.R === R).reduce((a, r) => a + r.count, 0)).toBe(R * R);
      expect(res.totals.map((t) => t.R)).toEqual([2, 4]);
      for (const t of res.totals) expect(t.ringMs).toBeGreaterThan(0);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
