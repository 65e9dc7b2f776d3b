/**
 * What the command's parent process (bin/dawn-noise.mjs) tells its child about the stderr it reads: whether it is a
 * terminal (progress drawn over with \r only there) and how wide (a line drawn over is cut to it: src/cli/progress.ts),
 * told again on each resize.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'flashring-stderr-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the child of withoutDawnNoise is told, where the parent's stderr is a terminal `columns` wide (null: a pipe). */
function toldChild(columns: number | null): { tty?: string; columns?: string } {
  const script = join(dir, `child-${columns}.mjs`);
  writeFileSync(script, [
    `import { withoutDawnNoise } from ${JSON.stringify(join(__dirname, '..', 'bin', 'dawn-noise.mjs'))};`,
    // The parent's stderr made to look like a terminal (the child, already marked, returns before this matters).
    columns === null ? '' : `if (process.env.STDERR_TEST_CHILD !== '1') Object.defineProperties(process.stderr, { isTTY: { value: true }, columns: { value: ${columns} } });`,
    `await withoutDawnNoise(import.meta.url, 'STDERR_TEST_CHILD', async () => {`,
    `  console.log(JSON.stringify({ tty: process.env.FLASHRING_STDERR_TTY, columns: process.env.FLASHRING_STDERR_COLUMNS }));`,
    `});`,
  ].join('\n'));
  // An inherited width is no width of this stderr: the parent sets its own either way.
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', env: { ...process.env, FLASHRING_STDERR_COLUMNS: '999' } });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/**
 * What the child of withoutDawnNoise reads as its width when it starts and once the parent's terminal, 57 wide, has been
 * resized to 83 (the parent resizes every 20 ms until the child ends: a resize before the child listens is not told).
 */
function widthAfterResize(): { first?: string; then?: string } {
  const script = join(dir, 'child-resize.mjs');
  writeFileSync(script, [
    `import { withoutDawnNoise } from ${JSON.stringify(join(__dirname, '..', 'bin', 'dawn-noise.mjs'))};`,
    `const parent = process.env.STDERR_TEST_CHILD !== '1';`,
    `if (parent) Object.defineProperties(process.stderr, { isTTY: { value: true }, columns: { value: 57, writable: true } });`,
    `await withoutDawnNoise(import.meta.url, 'STDERR_TEST_CHILD', async () => {`,
    `  const first = process.env.FLASHRING_STDERR_COLUMNS, t0 = Date.now();`,
    `  while (process.env.FLASHRING_STDERR_COLUMNS === first && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 10));`,
    `  console.log(JSON.stringify({ first, then: process.env.FLASHRING_STDERR_COLUMNS }));`,
    `});`,
    `if (parent) setInterval(() => { process.stderr.columns = 83; process.stderr.emit('resize'); }, 20).unref();`,
  ].join('\n'));
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 30_000 });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe('the parent tells its child about its stderr', () => {
  it("on a terminal resized during the run: its new width (the child's lines drawn over follow it, src/cli/progress.ts)", () => {
    expect(widthAfterResize()).toEqual({ first: '57', then: '83' });
  });


  it('on a terminal: that it is one, and its width', () => {
    expect(toldChild(57)).toEqual({ tty: '1', columns: '57' });
  });

  it('a pipe: not a terminal, and no width', () => {
    expect(toldChild(null)).toEqual({ tty: '0', columns: '' });
  });
});
