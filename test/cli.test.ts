/** The `flashring` command end to end, as a user runs it (a child process, .npy files in and out). */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { encodeNpy, parseNpy } from '../src/cli/npy.js';
import { referenceForward, referenceBackward } from '../src/reference/attention.js';
import { relErr, TOL } from '../src/reference/compare.js';
import { makeInputs, SEED } from './cases.js';

const run = promisify(execFile);
const BIN = join(__dirname, '..', 'bin', 'flashring.mjs');
const cli = (args: string[]) =>
  run(process.execPath, [BIN, ...args], { timeout: 120_000 }).then(
    (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
    (e) => ({ code: e.code as number, out: e.stdout as string, err: e.stderr as string }),
  );

describe('flashring attention', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flashring-cli-'));
  const s = { B: 1, Hq: 2, Hkv: 1, Nq: 40, Nk: 40, D: 16 };
  const x = makeInputs(s, SEED + 77);
  const save = (name: string, data: Float32Array, H: number) => writeFileSync(join(dir, name), encodeNpy({ dtype: 'f4', shape: [1, H, 40, 16], data }));
  save('q.npy', x.q, 2); save('k.npy', x.k, 1); save('v.npy', x.v, 1); save('do.npy', x.dout, 2);
  const ref = referenceForward(s, x.q, x.k, x.v, { causal: true });
  const refB = referenceBackward(s, x.q, x.k, x.v, x.dout, { causal: true });
  const load = (out: string, n: string) => Float64Array.from(parseNpy(new Uint8Array(readFileSync(join(out, `${n}.npy`)))).data as Float32Array);

  for (const extra of [[], ['--cp', '3', '--layout', 'striped', '--timeline', join(dir, 't.json')]]) {
    it(`writes O, LSE and gradients matching the reference ${extra.length ? '(ring of 3)' : '(one device)'}`, async () => {
      const out = join(dir, extra.length ? 'ring' : 'single');
      const r = await cli(['attention', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy'), '--do', join(dir, 'do.npy'),
        '--causal', '--precision', 'f32', '--out', out, ...extra]);
      expect(r.code, r.err).toBe(0);
      expect(relErr(load(out, 'o'), ref.o)).toBeLessThanOrEqual(TOL.f32.out);
      expect(relErr(load(out, 'lse'), ref.lse)).toBeLessThanOrEqual(TOL.f32.out);
      for (const g of ['dq', 'dk', 'dv'] as const) expect(relErr(load(out, g), refB[g]), g).toBeLessThanOrEqual(TOL.f32.grad);
      expect(parseNpy(new Uint8Array(readFileSync(join(out, 'dk.npy')))).shape).toEqual([1, 1, 40, 16]);
      if (extra.length) expect(JSON.parse(readFileSync(join(dir, 't.json'), 'utf8')).kind).toBe('flashring.timeline');
    });
  }

  it('bad input: one line naming the problem, exit code 2, nothing written', async () => {
    writeFileSync(join(dir, 'k8.npy'), encodeNpy({ dtype: 'f4', shape: [1, 1, 40, 8], data: new Float32Array(320) }));
    const r = await cli(['attention', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k8.npy'), '--v', join(dir, 'k8.npy'), '--out', join(dir, 'bad')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/flashring attention: head dim mismatch: Q has D=16, K\/V have D=8/);
    expect(existsSync(join(dir, 'bad', 'o.npy'))).toBe(false);
    const r2 = await cli(['attention', '--q', join(dir, 'q.npy'), '--k', join(dir, 'k.npy'), '--v', join(dir, 'v.npy'), '--out', join(dir, 'bad'), '--cp', '0']);
    expect(r2.code).toBe(2);
    expect(r2.err).toMatch(/--cp must be an integer >= 1/);
    const r3 = await cli(['attention', '--bogus']);
    expect(r3.code).toBe(2);
    expect(r3.err).toMatch(/Unknown option '--bogus'/);
  });
});

describe('flashring memory and replay', () => {
  it('memory --json gives the breakdown of the model', async () => {
    const r = await cli(['memory', '--preset', 'seed-32L-4096h', '--seq-length', '32768', '--tensor-model-parallel-size', '8', '--sequence-parallel', '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.perLayerBytes).toBe(34 * 32768 * 4096 / 8 + 4 * 32 * 32768 / 8); // sbh·34/t + LSE/t
    expect(j.fits).toBe(true);
  });

  it('replay turns fixture logs into points and names what a log lacks', async () => {
    const r = await cli(['replay', join(__dirname, 'fixtures/megatron/core_0.16_tp4_cp2_sp_selective.log'), join(__dirname, 'fixtures/megatron/core_0.4_tp8.log')]);
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^seq_len,tp,cp,pp,sp,recompute/);
    expect(r.out.trim().split('\n')).toHaveLength(3);
    expect(r.err).toMatch(/core_0.4_tp8.log.*\n.*context_parallel_size not found/);
  });
});

describe('flashring bench options', () => {
  it('--help documents the ceiling probe; a bad --ceiling-size is a one-line error (exit 2)', async () => {
    const help = await cli(['bench', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/--ceiling\b/);
    const bad = await cli(['bench', '--ceiling', '--ceiling-size', '1000', '--no-memory']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--ceiling-size must be a multiple of 256, got 1000/);
  });
});
