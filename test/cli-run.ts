/**
 * The flashring command as a test runs it: a child process of this Node, its exit code and
 * output (a file importing this is in the suite's cli project: vitest.config.ts projectOf).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const BIN = join(__dirname, '..', 'bin', 'flashring.mjs');

/** `flashring <command> …args`, resolved with { code, out, err } whatever the exit code. */
export const flashring = (command: string, timeout = 120_000) => (args: string[]) =>
  promisify(execFile)(process.execPath, [BIN, command, ...args], { timeout }).then(
    (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
    (e) => ({ code: e.code as number, out: e.stdout as string, err: e.stderr as string }),
  );
