/**
 * The page's data lives under web/data/ (the page imports nothing from bench/): each file there is
 * a copy of a committed results file, and must stay byte-identical to it so the two cannot drift.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
/** Each file of web/data/ and the results file it copies. */
const COPIES: Record<string, string> = {
  'web/data/activation_memory_measured.csv': 'bench/results/torchcp-2xh200-2026-11-30/activation_memory_measured.csv',
};

describe('the page data (web/data/)', () => {
  it.each(Object.entries(COPIES))('%s is byte-identical to %s', (copy, source) => {
    expect(readFileSync(join(ROOT, copy)).equals(readFileSync(join(ROOT, source)))).toBe(true);
  });

  it('every file in web/data/ is listed with its source, and the page imports its data from there, not from bench/', () => {
    expect(readdirSync(join(ROOT, 'web/data')).map((f) => `web/data/${f}`).sort()).toEqual(Object.keys(COPIES).sort());
    for (const f of readdirSync(join(ROOT, 'web')).filter((x) => x.endsWith('.ts')))
      expect(readFileSync(join(ROOT, 'web', f), 'utf8')).not.toMatch(/from '\.\.\/bench\//);
  });
});
