// src/exit.ts: what a process undoes when it exits before finishing (temporaries, created folders, a ring's
// spool, a store's lock), run in a child process that exits with work registered.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const EXIT_TS = pathToFileURL(join(__dirname, '..', 'src', 'exit.ts')).href;

/** Runs `body` (with `atExit` and `log(text)` in scope) in a Node child through tsx; returns the log's lines. */
function child(body: string): { lines: string[]; status: number | null; stderr: string } {
  const log = join(mkdtempSync(join(tmpdir(), 'flashring-exit-')), 'log');
  const code = `import { appendFileSync } from 'node:fs'; import { atExit } from ${JSON.stringify(EXIT_TS)};
    const log = (t) => appendFileSync(${JSON.stringify(log)}, t + '\\n'); ${body}`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
  let text = '';
  try { text = readFileSync(log, 'utf8'); } catch { /* nothing logged */ }
  return { lines: text.split('\n').filter(Boolean), status: r.status, stderr: r.stderr };
}

describe('atExit', () => {
  it('runs what is registered newest first, once each, skips what was withdrawn, and goes on past a throw', () => {
    const r = child(`
      atExit(() => log('first'));
      const keep = atExit(() => log('withdrawn'));
      atExit(() => { log('throws'); throw new Error('boom'); });
      atExit(() => log('last'));
      keep();
      process.exit(3);`);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(3);
    expect(r.lines).toEqual(['last', 'throws', 'first']);
  });

  it('runs one function registered twice twice, and withdraws only the registration withdrawn', () => {
    expect(child(`const f = () => log('f'); atExit(f); const second = atExit(f); second();`).lines).toEqual(['f']);
    expect(child(`const f = () => log('f'); atExit(f); atExit(f);`).lines).toEqual(['f', 'f']);
  });

  it('runs at a normal end too, and nothing once everything was withdrawn', () => {
    expect(child(`atExit(() => log('ran'));`).lines).toEqual(['ran']);
    expect(child(`const a = atExit(() => log('a')), b = atExit(() => log('b')); b(); a();`).lines).toEqual([]);
  });
});
