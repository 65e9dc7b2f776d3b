/**
 * The flashring command as a test runs it: a child process of this Node, or main() in this one;
 * its exit code and output (a file importing this is in the suite's cli project: vitest.config.ts
 * projectOf).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { vi } from 'vitest';
import { main } from '../src/cli/main.js';

export const BIN = join(__dirname, '..', 'bin', 'flashring.mjs');

/** `flashring <command> …args`, resolved with { code, out, err } whatever the exit code. */
export const flashring = (command: string, timeout = 120_000) => (args: string[]) =>
  promisify(execFile)(process.execPath, [BIN, command, ...args], { timeout }).then(
    (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
    (e) => ({ code: e.code as number, out: e.stdout as string, err: e.stderr as string }),
  );

/** main() in this process: its exit code, what it logged (console.log and stdout) and its errors (console.error). */
export async function runMain(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [], err: string[] = [];
  const o = vi.spyOn(console, 'log').mockImplementation((...a) => void out.push(a.join(' ')));
  const e = vi.spyOn(console, 'error').mockImplementation((...a) => void err.push(a.join(' ')));
  const w = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
  try {
    return { code: await main(argv), out: out.join('\n'), err: err.join('\n') };
  } finally {
    o.mockRestore(); e.mockRestore(); w.mockRestore();
  }
}
