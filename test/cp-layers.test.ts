/**
 * src/cp's folders import one way (no arrow running back up, no cycle): transport/ and plan/ at the
 * bottom, then rank/ (a rank's context, its chunks, its shard and the timeline it records), then
 * schemes/ (the rank programs and their registry), then launch/ (runs, the dry run and the plans).
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '../src/cp');
const LEVEL: Record<string, number> = { transport: 0, plan: 0, rank: 1, schemes: 2, launch: 3 };

describe("src/cp's layers", () => {
  it('every folder is placed, and imports only folders below it (or itself)', () => {
    const folders = readdirSync(ROOT, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(folders.sort()).toEqual(Object.keys(LEVEL).sort());
    const up: string[] = [];
    for (const folder of folders)
      for (const file of readdirSync(join(ROOT, folder)).filter((f) => f.endsWith('.ts'))) {
        const text = readFileSync(join(ROOT, folder, file), 'utf8');
        for (const m of text.matchAll(/from '\.\.\/([a-z]+)\/[^']+'/g))
          if (m[1] in LEVEL && m[1] !== folder && LEVEL[m[1]] >= LEVEL[folder]) up.push(`${folder}/${file} imports ${m[1]}/`);
      }
    expect(up).toEqual([]);
  });
});
