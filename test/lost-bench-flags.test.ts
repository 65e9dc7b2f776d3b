/**
 * Flags checked before any device, store or folder (review "nothing lost", items 3, 4 and 13):
 * bench's --peer file (a `results` array of peer rows) and --memory-preset, and tune's --precision,
 * each refused in one line (an InputError) with nothing created.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchCommand } from '../src/bench/run.js';
import { tuneCommand } from '../src/cli/tune.js';
import { InputError } from '../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'lost-bench-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const refusal = (p: Promise<unknown>) => p.then(() => { throw new Error('not refused'); }, (e: unknown) => e as Error);

describe('bench --peer: a file without peer rows is refused before the sweep', () => {
  const row = { pass: 'fwd', N: 16, D: 16, H: 1, B: 1, causal: false, dtype: 'float32', backend: 'efficient', ms: 1, tflops: 1 };
  const cases: [string, unknown, RegExp][] = [
    ['empty', {}, /no "results" array/], ['number', { results: 5 }, /no "results" array/], ['list', [row], /no "results" array/],
    ['rows', { results: [5] }, /results\[0\] is not an object/], ['field', { results: [row, { ...row, N: '16' }] }, /results\[1\]\.N is "16", not a number/],
    ['missing', { results: [{ ...row, causal: undefined }] }, /results\[0\]\.causal is missing, not a boolean/],
  ];
  for (const [name, data, why] of cases)
    it(name, async () => {
      const peer = join(dir, `peer-${name}.json`), out = join(dir, `out-${name}`);
      writeFileSync(peer, JSON.stringify(data));
      const e = await refusal(benchCommand(['--N', '16', '--D', '16', '--heads', '1', '--reps', '1', '--causal', 'false', '--precision', 'f32', '--no-ring', '--no-memory', '--peer', peer, '--out', out]));
      expect(e).toBeInstanceOf(InputError);
      expect(e.message).toMatch(why);
      expect(e.message).toMatch(/^--peer .*: .*bench\/peers\/torch_sdpa\.py writes$/);
      expect(existsSync(out)).toBe(false);
    });
});

describe('bench --memory-preset: an unknown name is refused with the flags', () => {
  for (const name of ['bogus', 'constructor'])
    it(name, async () => {
      const out = join(dir, `out-preset-${name}`);
      const e = await refusal(benchCommand(['--no-kernels', '--no-ring', '--memory-preset', name, '--out', out]));
      expect(e).toBeInstanceOf(InputError);
      expect(e.message).toMatch(new RegExp(`^--memory-preset '${name}' is not a preset: use .*seed-32L-4096h`));
      expect(existsSync(out)).toBe(false);
    });
});

describe('tune --precision: checked before the store and its folders', () => {
  it('bogus', async () => {
    const e = await refusal(tuneCommand(['--store', join(dir, 'nd1', 'nd2', 't.json'), '--precision', 'bogus', '--D', '16', '--N', '16']));
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toBe("--precision: 'bogus' is not one of f32, f16");
    expect(existsSync(join(dir, 'nd1'))).toBe(false);
  });
  it('a value given twice (--D 64,64, --causal true,true, --precision f32,f32): searched twice before, now refused', async () => {
    for (const [flag, v] of [['--D', '16,16'], ['--causal', 'true,true'], ['--precision', 'f32,f32']]) {
      const args = ['--store', join(dir, 'nd1', 't.json'), '--D', '16', '--N', '16', '--precision', 'f32'];
      const e = await refusal(tuneCommand([...args.filter((x, i, a) => x !== flag && a[i - 1] !== flag), flag, v]));
      expect(e).toBeInstanceOf(InputError);
      expect(e.message).toBe(`${flag}: ${v.split(',')[0]} is given twice: give each value once`);
    }
    expect(existsSync(join(dir, 'nd1'))).toBe(false);
  });
});

describe('an empty file name: refused up front, as --out \'\' is (a search would be lost at the store\'s rename)', () => {
  it("tune --store ''", async () => {
    const e = await refusal(tuneCommand(['--store', '', '--D', '16', '--N', '16', '--precision', 'f32']));
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toBe("--store must name a file, got ''");
  });
  for (const flag of ['tuned', 'peer', 'measured'])
    it(`bench --${flag} ''`, async () => {
      const out = join(dir, `out-empty-${flag}`);
      const e = await refusal(benchCommand([`--${flag}`, '', '--out', out]));
      expect(e).toBeInstanceOf(InputError);
      expect(e.message).toBe(`--${flag} must name a file, got ''`);
      expect(existsSync(out)).toBe(false);
    });
});

describe('bench skipping every sweep', () => {
  it('--no-kernels --no-ring --no-memory: a usage error, no folder', async () => {
    const out = join(dir, 'out-nothing');
    const e = await refusal(benchCommand(['--no-kernels', '--no-ring', '--no-memory', '--out', out]));
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toBe('--no-kernels, --no-ring and --no-memory skip every sweep: leave out at least one of them');
    expect(existsSync(out)).toBe(false);
  });
});
