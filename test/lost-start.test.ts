/**
 * `flashring start` outside the package (review "nothing lost", item 1): the page built is
 * flashring's own (the package's root and vite.config.ts), into a folder of the package's, never
 * the working folder's index.html into its dist/.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildPage, pageViteConfig } from '../src/cli/info.js';

const dir = mkdtempSync(join(tmpdir(), 'lost-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const REPO = resolve(__dirname, '..');

describe('start: the page of the package, whatever the working folder', () => {
  it("Vite's root, config and build folder are the package's", () => {
    const c = pageViteConfig();
    expect([resolve(c.root), c.configFile, c.build.outDir]).toEqual([REPO, join(REPO, 'vite.config.ts'), join(REPO, 'dist')]);
  });

  it("built from a folder with an index.html and a dist/ of its own: flashring's page, the folder untouched", async () => {
    const work = join(dir, 'work'), out = join(dir, 'page');
    mkdirSync(join(work, 'dist'), { recursive: true });
    writeFileSync(join(work, 'dist', 'keep.txt'), 'keep');
    writeFileSync(join(work, 'index.html'), '<!doctype html><p>mine</p>');
    const cwd = process.cwd();
    process.chdir(work);
    try {
      await buildPage(out); // the package's build folder, elsewhere (the page test may be building dist/ meanwhile)
    } finally {
      process.chdir(cwd);
    }
    expect(readdirSync(join(work, 'dist'))).toEqual(['keep.txt']);
    expect(readFileSync(join(work, 'index.html'), 'utf8')).toBe('<!doctype html><p>mine</p>');
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toMatch(/<title>flashring/);
  });
});
