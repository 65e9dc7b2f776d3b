/** Output folders: /dev, /proc and /sys are refused as system folders; /dev/shm, an ordinary tmpfs, is not; a symbolic link to nothing on the way is refused. */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

describe('a symbolic link to nothing on the way to an output folder', () => {
  const base = mkdtempSync(join(tmpdir(), 'flashring-dangling-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  symlinkSync(join(base, 'gone'), join(base, 'link'));
  // It passed the checks, and the run did all its work before mkdir failed with a bare EEXIST.
  it('is refused up front, naming the link and its target, whether it is the folder or a part above it', async () => {
    for (const out of [join(base, 'link'), join(base, 'link', 'a', 'b')]) {
      await expect(checkOutputDir('out', out), out).rejects.toThrow(`--out ${out}: ${join(base, 'link')} is a symbolic link to ${join(base, 'gone')}, which does not exist`);
      await expect(OutputPlan.make([], [{ flag: 'out', path: out, kind: 'dir', names: ['o.npy'] }]), out).rejects.toThrow(/is a symbolic link to .*gone, which does not exist/);
    }
    expect(existsSync(join(base, 'gone'))).toBe(false);
  });
  it('a link to an existing folder is an ordinary output folder', async () => {
    symlinkSync(base, join(base, 'here'));
    await expect(checkOutputDir('out', join(base, 'here', 'new'))).resolves.toBeUndefined();
  });
});
