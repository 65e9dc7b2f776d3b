/**
 * docs/cli.md's "A first run", as a newcomer copies it: its shell block's flashring lines run as
 * written (in a folder of their own, on inputs of the shapes its python line saves), and each file
 * its paragraph names is there, the outputs matching the float64 reference.
 */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { encodeNpy, parseNpy } from '../src/cli/npy.js';
import { referenceBackward, referenceForward } from '../src/reference/attention.js';
import { relErr, TOL } from '../src/reference/compare.js';
import { makeInputs, SEED } from './cases.js';

const REPO = join(__dirname, '..');
const BIN = join(REPO, 'bin', 'flashring.mjs');
const doc = readFileSync(join(REPO, 'docs', 'cli.md'), 'utf8');

/** The section "A first run": its shell block's lines, and its prose (the files it says are written). */
function firstRun(): { lines: string[]; prose: string } {
  const section = /^## A first run\n([\s\S]*?)^## /m.exec(doc)?.[1] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return { lines: block.trim().split('\n'), prose: section.replace(/```sh[\s\S]*?```/, '') };
}

/** Splits a flashring line into its arguments (the block's lines are plain words, no quoting). */
const words = (line: string) => line.trim().split(/\s+/);

describe("docs/cli.md's first run", () => {
  it('runs as written: its files are written and match the float64 reference', async () => {
    const { lines, prose } = firstRun();
    const saves = lines.find((l) => l.startsWith('python3 '));
    // The inputs its python line saves: Q and dO of 4 heads, K and V of 2, (1, h, 256, 64) float32.
    expect(saves).toMatch(/\(\(1, h, 256, 64\), dtype=np\.float32\)\) for n, h in \(\('q', 4\), \('k', 2\), \('v', 2\), \('do', 4\)\)/);
    const s = { B: 1, Hq: 4, Hkv: 2, Nq: 256, Nk: 256, D: 64 };
    const x = makeInputs(s, SEED + 5);
    const dir = mkdtempSync(join(tmpdir(), 'flashring-first-run-'));
    for (const [n, data, h] of [['q', x.q, 4], ['k', x.k, 2], ['v', x.v, 2], ['do', x.dout, 4]] as const)
      writeFileSync(join(dir, `${n}.npy`), encodeNpy({ dtype: 'f4', shape: [1, h, 256, 64], data }));

    const runs = lines.filter((l) => l.startsWith('npx flashring '));
    expect(runs).toHaveLength(2);
    for (const line of runs) {
      const r = await promisify(execFile)(process.execPath, [BIN, ...words(line).slice(2)], { cwd: dir, timeout: 120_000 }).then(
        (o) => ({ code: 0, err: o.stderr }),
        (e) => ({ code: e.code as number, err: e.stderr as string }),
      );
      expect(r.code, `${line}\n${r.err}`).toBe(0);
    }

    const named = [...prose.matchAll(/`((?:run\d\/)?[\w-]+\.(?:npy|json))`/g)].map((m) => m[1]);
    expect(named).toEqual(expect.arrayContaining(['run1/o.npy', 'run1/dv.npy', 'run1/flashring-run.json', 'ring.json']));
    for (const f of named) expect(existsSync(join(dir, f)), f).toBe(true);
    for (const f of named.filter((n) => n.startsWith('run1/')).map((n) => n.replace('run1/', 'run2/')))
      expect(existsSync(join(dir, f)), `${f} (the second run writes "the same into run2")`).toBe(true);

    const ref = referenceForward(s, x.q, x.k, x.v, { causal: true });
    const refB = referenceBackward(s, x.q, x.k, x.v, x.dout, { causal: true });
    const load = (f: string) => Float64Array.from(parseNpy(new Uint8Array(readFileSync(join(dir, f)))).data as Float32Array);
    for (const run of ['run1', 'run2']) {
      expect(relErr(load(`${run}/o.npy`), ref.o), run).toBeLessThanOrEqual(TOL.f32.out);
      for (const g of ['dq', 'dk', 'dv'] as const) expect(relErr(load(`${run}/${g}.npy`), refB[g]), `${run} ${g}`).toBeLessThanOrEqual(TOL.f32.grad);
    }
    expect(JSON.parse(readFileSync(join(dir, 'ring.json'), 'utf8'))).toMatchObject({ kind: 'flashring.timeline', R: 2 });
  }, 240_000);
});
