/**
 * bench as an ML engineer runs it (review): flags refused before any device in one line, the results files saying
 * what they are (complete or cut short, the adapter a CPU's, robustness), the tables without NaN, progress in a log.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchCommand } from '../src/bench/run.js';
import { InputError } from '../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'bench-review-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const refusal = (p: Promise<unknown>) => p.then(() => { throw new Error('not refused'); }, (e: unknown) => e as Error);
const TINY = ['--N', '16', '--D', '16', '--heads', '1', '--causal', 'false', '--precision', 'f32', '--no-ring', '--no-memory'];

describe('bench flags refused before any device, in one line', () => {
  const cases: [string, string[], RegExp][] = [
    // 4 timestamps a repeat (forward and backward): a query set past WebGPU's 4096 crashed the process (exit 139).
    ['--reps beyond the timer', [...TINY, '--reps', '100000'], /^--reps: '100000' is not a positive integer up to 1000$/],
    // TP 3 splits none of the sweep's lengths: the memory sweep wrote files with no rows, and refused the next run's.
    ['--memory-tp that splits no length', ['--no-kernels', '--no-ring', '--memory-tp', '3'], /^--memory-tp 3: .*/],
    ['--memory-tp beyond the heads', ['--no-kernels', '--no-ring', '--memory-tp', '64'], /^--memory-tp 64: --num-attention-heads 32 .*is not divisible by --tensor-model-parallel-size 64/],
    // A value given twice measured the point twice (memory --seq-lengths refuses it).
    ['--N twice', [...TINY.slice(2), '--N', '16,32,16'], /^--N: 16 is given twice: give each value once$/],
    ['--layouts twice', ['--no-kernels', '--no-memory', '--layouts', 'zigzag,zigzag'], /^--layouts: zigzag is given twice: give each value once$/],
  ];
  for (const [name, argv, why] of cases)
    it(name, async () => {
      const out = join(dir, name.replace(/\W+/g, '-'));
      const e = await refusal(benchCommand([...argv, '--out', out]));
      expect(e).toBeInstanceOf(InputError);
      expect(e.message).toMatch(why);
      expect(existsSync(out)).toBe(false);
    });
});
