/**
 * The disk-room refusal (src/cli/files.ts checkRooms) gives the two sizes so that they differ: where sizeOf
 * would write both alike (1.02 GiB needed, 1023.75 MiB free: both '1.0 GiB' since sizes just under a unit
 * take the unit above), it gives them in bytes, as the input-size message does.
 */
import { describe, expect, it, vi } from 'vitest';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkRoom } from '../src/cli/files.js';

// `free.blocks` 4 KiB blocks free under any folder named 'roomfs2'.
const free = vi.hoisted(() => ({ blocks: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const fsp = await importOriginal<typeof import('node:fs/promises')>();
  const statfs = (async (path: string, ...rest: unknown[]) => {
    const st = await (fsp.statfs as (...a: unknown[]) => Promise<import('node:fs').StatsFs>)(path, ...rest);
    return /roomfs2/.test(String(path)) ? { ...st, bsize: 4096, bavail: free.blocks, bfree: free.blocks } : st;
  }) as typeof fsp.statfs;
  return { ...fsp, statfs, default: { ...fsp, statfs } };
});

describe('the room refusal', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'flashring-room-')), 'roomfs2');
  mkdirSync(dir);

  it('gives bytes where the two sizes would read the same', async () => {
    free.blocks = 262_080;   // 1023.75 MiB
    const need = 1_095_216_660;   // 1.02 GiB, whole blocks
    await expect(checkRoom('out', dir, [Math.ceil(need / 4096) * 4096])).rejects.toThrow(
      `--out ${dir}: this run writes ${Math.ceil(need / 4096) * 4096} bytes there and its file system has ${262_080 * 4096} bytes free`);
  });

  it('gives the sizes in units where they differ', async () => {
    free.blocks = 2560;   // 10 MiB
    await expect(checkRoom('out', dir, [20 * 2 ** 20])).rejects.toThrow(`--out ${dir}: this run writes 20 MiB there and its file system has 10 MiB free`);
  });
});
