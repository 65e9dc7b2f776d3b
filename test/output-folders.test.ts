/** Output folders: /dev, /proc and /sys are refused as system folders; /dev/shm, an ordinary tmpfs, is not. */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { checkOutputDir, OutputPlan } from '../src/cli/files.js';

const shm = join('/dev/shm', `flashring-folders-${process.pid}`);
afterAll(() => rmSync(shm, { recursive: true, force: true }));

describe('system folders', () => {
  it.skipIf(!existsSync('/dev/shm'))('/dev/shm and folders under it are ordinary output folders', async () => {
    await expect(checkOutputDir('out', '/dev/shm')).resolves.toBeUndefined();
    await expect(checkOutputDir('out', join(shm, 'deeper'))).resolves.toBeUndefined();
    const plan = await OutputPlan.make([], [{ flag: 'out', path: join(shm, 'run'), kind: 'dir', names: ['o.npy'] }]);
    await plan.write([{ path: join(shm, 'run', 'o.npy'), data: 'x' }]);
    expect(readFileSync(join(shm, 'run', 'o.npy'), 'utf8')).toBe('x');
  });
  it('the rest of /dev, /proc and /sys are refused', async () => {
    for (const d of ['/dev', '/dev/flashring-x', '/proc/flashring-x', '/sys/flashring-x', '/dev/shmother'])
      await expect(checkOutputDir('out', d), d).rejects.toThrow(/--out .*: \/(dev|proc|sys)\S* is a system folder; choose an ordinary folder/);
  });
});
