/**
 * Output names with room for their temporaries (src/cli/files.ts checkNameRoom): a write goes through a name beside
 * its target (`.NAME.PID.STAMP.tmp`), and where it replaces a file keeps that file aside (`.NAME.PID.STAMP.kept.tmp`),
 * so a name that fits the file system but not with those is refused before any work (it failed after the work,
 * ENAMETOOLONG on a temporary the user never named). The room is this process's own: its pid's digits, a stamp of 8.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutputPlan } from '../src/cli/files.js';
import { InputError } from '../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'flashring-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const named = (bytes: number, c = 't') => join(dir, c.repeat(bytes - 5) + '.json');
const target = (path: string) => ({ flag: 'timeline', path, kind: 'file' as const, what: 'a timeline', looks: () => true });
/** What a temporary adds: '.', '.PID', '.STAMP' (8) and '.tmp'; the kept file '.kept' more. */
const TEMP = 1 + 1 + String(process.pid).length + 1 + 8 + '.tmp'.length, KEPT = TEMP + '.kept'.length;

describe('output names and their temporaries', () => {
  it('a new file: a name up to 255 bytes less its temporary\'s room is written; one byte more is refused before any work', async () => {
    const most = 255 - TEMP;
    for (const bytes of [most + 1, 240, 255]) {
      const plan = OutputPlan.make([], [target(named(bytes))]);
      await expect(plan, String(bytes)).rejects.toThrow(InputError);
      await expect(plan, String(bytes)).rejects.toThrow(`: its name is ${bytes} bytes, and it is written through a temporary whose name is ${TEMP} bytes longer, beyond the 255 bytes a file name may have: give a name of at most ${most} bytes`);
    }
    // Multi-byte characters count as bytes ('é' is 2).
    await expect(OutputPlan.make([], [target(join(dir, 'é'.repeat(Math.floor(most / 2) + 1)))])).rejects.toThrow(`its name is ${2 * Math.floor(most / 2) + 2} bytes`);
    expect(readdirSync(dir)).toEqual([]);
    for (const path of [named(most), join(dir, 'é'.repeat(Math.floor(most / 2)))]) {
      const plan = await OutputPlan.make([], [target(path)]);
      await plan.write([{ path, data: '{}' }]);
      expect(readFileSync(path, 'utf8')).toBe('{}');
    }
  });

  it('a file there to replace: its kept file takes 5 bytes more room, and a name at that bound is written over', async () => {
    const most = 255 - KEPT;
    const over = named(most + 1, 'k');
    writeFileSync(over, 'old');
    await expect(OutputPlan.make([], [target(over)])).rejects.toThrow(`: its name is ${most + 1} bytes, and the file it replaces is kept aside until the write is done under a name ${KEPT} bytes longer, beyond the 255 bytes a file name may have: give a name of at most ${most} bytes`);
    expect(readFileSync(over, 'utf8')).toBe('old');
    const path = named(most, 'k');
    writeFileSync(path, 'old');
    const plan = await OutputPlan.make([], [target(path)]);
    await plan.write([{ path, data: '{}' }]);
    expect(readFileSync(path, 'utf8')).toBe('{}');
  });
});
