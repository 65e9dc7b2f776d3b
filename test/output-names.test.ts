/**
 * Output names with room for their temporaries (src/cli/files.ts checkNameRoom): a write goes through names
 * beside its target up to 27 bytes longer, so a name that fits the file system but not with those is refused
 * before any work (it failed after the work, ENAMETOOLONG on a temporary the user never named).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutputPlan } from '../src/cli/files.js';
import { InputError } from '../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'flashring-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const named = (bytes: number) => join(dir, 't'.repeat(bytes - 5) + '.json');
const target = (path: string) => ({ flag: 'timeline', path, kind: 'file' as const, what: 'a timeline', looks: () => true });

describe('output names and their temporaries', () => {
  it('a file name of 229 to 255 bytes is refused before any work, saying how long a name may be', async () => {
    for (const bytes of [229, 240, 255]) {
      const plan = OutputPlan.make([], [target(named(bytes))]);
      await expect(plan, String(bytes)).rejects.toThrow(InputError);
      await expect(plan, String(bytes)).rejects.toThrow(`: its name is ${bytes} bytes, and it is written through a temporary whose name is up to 27 bytes longer, beyond the 255 bytes a file name may have: give a name of at most 228 bytes`);
    }
    // Multi-byte characters count as bytes: 114 of 'é' are 228 bytes (fits), 115 are 230 (refused).
    await expect(OutputPlan.make([], [target(join(dir, 'é'.repeat(115)))])).rejects.toThrow('its name is 230 bytes');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a name of 228 bytes is written', async () => {
    for (const path of [named(228), join(dir, 'é'.repeat(114))]) {
      const plan = await OutputPlan.make([], [target(path)]);
      await plan.write([{ path, data: '{}' }]);
      expect(readFileSync(path, 'utf8')).toBe('{}');
    }
    expect(existsSync(named(228))).toBe(true);
  });
});
