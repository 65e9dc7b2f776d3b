/**
 * `flashring attention --window L,R --cu-seqlens …` end to end: packed documents and a window
 * against the float64 reference (one device and the ring), and every bad mask input as one
 * line, exit 2, nothing written.
 */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
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

/** A .npy of integers: int32 ('<i4') or another integer dtype (int64 '<i8', the NumPy default). */
function intNpy(values: number[], dtype: 'i4' | 'i8' = 'i4', shape = [values.length]): Uint8Array {
  const f = encodeNpy({ dtype: 'f4', shape, data: new Float32Array(values.length) });
  const header = Buffer.from(f).toString('latin1').replace("'descr': '<f4'", `'descr': '<${dtype}'`);
  const headLen = header.indexOf('\n') + 1;
  const data = dtype === 'i4' ? new Uint8Array(Int32Array.from(values).buffer) : new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer);
  return new Uint8Array([...Buffer.from(header.slice(0, headLen), 'latin1'), ...data]);
}

describe('flashring attention with a window and packed documents', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flashring-mask-'));
  const f = (n: string) => join(dir, n);
  const N = 40;
  const s = { B: 1, Hq: 2, Hkv: 1, Nq: N, Nk: N, D: 16 };
  const x = makeInputs(s, SEED + 21);
  const save = (name: string, data: Float32Array, H: number) => writeFileSync(f(name), encodeNpy({ dtype: 'f4', shape: [1, H, N, 16], data }));
  save('q.npy', x.q, 2); save('k.npy', x.k, 1); save('v.npy', x.v, 1); save('do.npy', x.dout, 2);
  const cu = [0, 1, 1, 17, 30, 40];
  writeFileSync(f('cu.npy'), intNpy(cu));
  const docs = { cuQ: Int32Array.from(cu), cuK: Int32Array.from(cu) };
  const opts = { causal: true, window: [5, 0] as [number, number], docs };
  const ref = referenceForward(s, x.q, x.k, x.v, opts);
  const refB = referenceBackward(s, x.q, x.k, x.v, x.dout, opts);
  const load = (out: string, n: string) => Float64Array.from(parseNpy(new Uint8Array(readFileSync(join(out, `${n}.npy`)))).data as Float32Array);
  const base = (out: string) => ['attention', '--q', f('q.npy'), '--k', f('k.npy'), '--v', f('v.npy'), '--out', out];

  for (const extra of [[], ['--cp', '3', '--layout', 'zigzag']])
    it(`--causal --window 5,0 --cu-seqlens: outputs match the reference ${extra.length ? '(ring of 3)' : '(one device)'}`, async () => {
      const out = f(extra.length ? 'ring' : 'single');
      const r = await cli([...base(out), '--do', f('do.npy'), '--causal', '--window', '5,0', '--cu-seqlens', f('cu.npy'), '--precision', 'f32', ...extra]);
      expect(r.code, r.err).toBe(0);
      expect(relErr(load(out, 'o'), ref.o)).toBeLessThanOrEqual(TOL.f32.out);
      expect(relErr(load(out, 'lse'), ref.lse)).toBeLessThanOrEqual(TOL.f32.out);
      for (const g of ['dq', 'dk', 'dv'] as const) expect(relErr(load(out, g), refB[g]), g).toBeLessThanOrEqual(TOL.f32.grad);
    });

  it('int64 cu_seqlens (np.cumsum\'s default) within int32\'s range: the same outputs as int32', async () => {
    writeFileSync(f('cu64.npy'), intNpy(cu, 'i8'));
    const runs = [];
    for (const c of ['cu.npy', 'cu64.npy']) {
      const out = f(`fwd-${c}`);
      const r = await cli([...base(out), '--causal', '--cu-seqlens', f(c), '--precision', 'f32']);
      expect(r.code, r.err).toBe(0);
      runs.push(['o', 'lse'].map((n) => readFileSync(join(out, `${n}.npy`))));
    }
    expect(runs[1]).toEqual(runs[0]);
  });

  it('bad window and cu_seqlens: one line naming it, exit 2, nothing written', async () => {
    writeFileSync(f('cubig.npy'), intNpy([0, 2 ** 31, 40], 'i8'));
    writeFileSync(f('cu1.npy'), intNpy([1, 17, 30, 40]));
    writeFileSync(f('cudec.npy'), intNpy([0, 17, 10, 40]));
    writeFileSync(f('cushort.npy'), intNpy([0, 17, 39]));
    writeFileSync(f('cu3.npy'), intNpy([0, 17, 40]));
    writeFileSync(f('cu2d.npy'), intNpy([0, 20, 20, 40], 'i4', [2, 2]));
    const before = readdirSync(dir).sort();
    const o = f('bad');
    const cases: [string[], RegExp][] = [
      [[...base(o), '--window', '-2,0'], /--window left value -2 is below -1/],
      [[...base(o), '--window', '3,-5'], /--window right value -5 is below -1/],
      [[...base(o), '--window', '3'], /--window must be two integers L,R .*got '3'/],
      [[...base(o), '--window', '1.5,2'], /--window must be two integers L,R .*got '1\.5,2'/],
      [[...base(o), '--cu-seqlens', f('cubig.npy')], /cubig\.npy: int64 value 2147483648 \(element 1\) is outside int32's range/],
      // One --cu-seqlens for both: named as given, not as cu_seqlens_q (a flag the user did not pass).
      [[...base(o), '--cu-seqlens', f('cu1.npy')], /--cu-seqlens .*cu1\.npy: cu_seqlens must start at 0, got 1\n/],
      [[...base(o), '--cu-seqlens', f('cudec.npy')], /--cu-seqlens .*cudec\.npy: cu_seqlens decreases at entry 2 \(17 then 10\)\n/],
      [[...base(o), '--cu-seqlens', f('cushort.npy')], /--cu-seqlens .*cushort\.npy: cu_seqlens ends at 39 but the sequence has 40 tokens/],
      [[...base(o), '--cu-seqlens-q', f('cu3.npy'), '--cu-seqlens-k', f('cushort.npy')], /--cu-seqlens-k .*cushort\.npy: cu_seqlens_k ends at 39 but the sequence has 40 tokens/],
      [[...base(o), '--cu-seqlens-q', f('cushort.npy'), '--cu-seqlens-k', f('cu3.npy')], /--cu-seqlens-q .*cushort\.npy: cu_seqlens_q ends at 39 but the sequence has 40 tokens/],
      [[...base(o), '--cu-seqlens-q', f('cu.npy'), '--cu-seqlens-k', f('cu3.npy')], /cu_seqlens_q has 5 documents but cu_seqlens_k 2/],
      [[...base(o), '--cu-seqlens-q', f('cu.npy')], /--cu-seqlens-k is missing/],
      [[...base(o), '--cu-seqlens', f('cu.npy'), '--cu-seqlens-k', f('cu.npy')], /do not also give --cu-seqlens-q\/--cu-seqlens-k/],
      [[...base(o), '--cu-seqlens', f('cu2d.npy')], /cu2d\.npy has shape \(2, 2\); cu_seqlens is 1-D/],
      [[...base(o), '--cu-seqlens', f('nope.npy')], /--cu-seqlens .*nope\.npy: no such file/],
    ];
    for (const [args, re] of cases) {
      const r = await cli(args);
      const what = `flashring ${args.join(' ')}\n${r.err}`;
      expect(r.code, what).toBe(2);
      expect(r.err.trim().split('\n'), what).toHaveLength(1);
      expect(r.err, what).toMatch(new RegExp(`^flashring attention: .*${re.source}`));
    }
    expect(readdirSync(dir).sort()).toEqual(before);
  });
});
