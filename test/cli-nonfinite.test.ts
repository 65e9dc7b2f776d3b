/**
 * NaN and ±Inf in `flashring attention`'s inputs and outputs are said, not passed silently (a newcomer's run: a
 * q.npy with one NaN exited 0 with NaN in o.npy and lse.npy and no word; a k with one Inf gave all-NaN rows): a
 * note on stderr names the input and its count, another each output and its rows, for one device and the ring
 * alike; the run goes on (exit 0), as the contract says (docs/numerics.md). An LSE of −Inf (a row that sees no
 * key) is no such row.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeNpy, parseNpy } from '../src/cli/npy.js';
import { countNonFinite, nonFiniteRows } from '../src/cli/nonFinite.js';
import { makeInputs, SEED } from './cases.js';
import { flashring } from './cli-run.js';

const attention = flashring('attention');

/** The rows of an output file holding NaN or ±Inf (lse.npy: NaN or +Inf), counted here from the file. */
function badRows(out: string, name: string, D: number): number {
  const a = parseNpy(new Uint8Array(readFileSync(join(out, name)))).data as Float32Array;
  if (name === 'lse.npy') return a.filter((x) => Number.isNaN(x) || x === Infinity).length;
  let n = 0;
  for (let r = 0; r < a.length; r += D) if (a.subarray(r, r + D).some((x) => !Number.isFinite(x))) n++;
  return n;
}

describe('flashring attention: NaN and ±Inf said on stderr, exit 0', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flashring-nonfinite-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const s = { B: 1, Hq: 2, Hkv: 2, Nq: 40, Nk: 40, D: 16 };
  const x = makeInputs(s, SEED + 5), q48 = makeInputs({ ...s, Nq: 48 }, SEED + 6).q;
  const save = (name: string, data: Float32Array, N: number) => writeFileSync(join(dir, name), encodeNpy({ dtype: 'f4', shape: [1, 2, N, 16], data }));
  const qNan = x.q.slice(), kInf = x.k.slice();
  qNan[1 * 40 * 16 + 30 * 16 + 3] = NaN;                     // head 1, query 30
  kInf[0 * 40 * 16 + 10 * 16 + 2] = Infinity;                // head 0, key 10
  save('q.npy', x.q, 40); save('q48.npy', q48, 48); save('qnan.npy', qNan, 40); save('k.npy', x.k, 40); save('kinf.npy', kInf, 40); save('v.npy', x.v, 40); save('do.npy', x.dout, 40);
  const f = (n: string) => join(dir, n);
  const args = (q: string, k: string, out: string, extra: string[] = []) => ['--q', f(q), '--k', f(k), '--v', f('v.npy'), '--out', f(out), '--causal', ...extra];

  it('a clean run, with rows that see no key (LSE −Inf), has no such note', async () => {
    // Causal with Nq = 48 > Nk = 40 (bottom-right aligned): the first 8 query rows of each head see no key (O = 0, LSE = −Inf).
    const r = await attention(args('q48.npy', 'k.npy', 'clean'));
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toMatch(/NaN|Inf/);
    const lse = parseNpy(new Uint8Array(readFileSync(f('clean/lse.npy')))).data as Float32Array;
    expect(lse.filter((v) => v === -Infinity).length).toBe(2 * 8);
  }, 120_000);

  it('a NaN in Q: the input note names Q, its file and the count; the output note each file with its rows (the backward too)', async () => {
    const r = await attention(args('qnan.npy', 'k.npy', 'qnan', ['--do', f('do.npy')]));
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`note: Q (${f('qnan.npy')}) holds 1 NaN of its ${2 * 40 * 16} values; a NaN or ±Inf reaches every output it touches, as in PyTorch (docs/numerics.md)`);
    const rows = ['o', 'lse', 'dq', 'dk', 'dv'].map((n) => [`${n}.npy`, badRows(f('qnan'), `${n}.npy`, 16)] as const);
    expect(rows[0][1]).toBe(1);
    const said = rows.filter(([, n]) => n > 0).map(([name, n], i) => `${name}${i ? ' in' : ' has NaN or ±Inf in'} ${n} of 80 rows`).join(', ');
    expect(r.err).toContain(`note: ${said} (lse.npy: NaN or +Inf; −Inf is a row that sees no key); docs/numerics.md says where NaN and Inf come from`);
  }, 120_000);

  for (const ring of [[], ['--cp', '2']]) {
    it(`an Inf in K (${ring.length ? 'the ring, --cp 2' : 'one device'}): the rows it makes NaN are counted as the files hold them`, async () => {
      const out = `kinf${ring.length ? '-ring' : ''}`;
      const r = await attention(args('q.npy', 'kinf.npy', out, ring));
      expect(r.code, r.err).toBe(0);
      expect(r.err).toContain(`note: K (${f('kinf.npy')}) holds 1 ±Inf of its ${2 * 40 * 16} values;`);
      const o = badRows(f(out), 'o.npy', 16), lse = badRows(f(out), 'lse.npy', 16);
      expect(o).toBeGreaterThan(0);
      expect(r.err).toContain(`note: o.npy has NaN or ±Inf in ${o} of 80 rows, lse.npy in ${lse} of 80 rows`);
    }, 120_000);
  }

  it('the counts: f16 bits (Inf, NaN, the largest half) and f32 and rows', () => {
    expect(countNonFinite(Uint16Array.from([0x7c00, 0xfc00, 0x7e00, 0x7bff, 0x3c00]))).toEqual({ nan: 1, inf: 2 });
    expect(countNonFinite(Float32Array.from([NaN, -Infinity, 3.4e38, 0]))).toEqual({ nan: 1, inf: 1 });
    expect(nonFiniteRows(Float32Array.from([1, NaN, Infinity, 2, 3, 4]), 2)).toBe(2);
    expect(nonFiniteRows(Uint16Array.from([0x3c00, 0x3c00, 0x7c01, 0x7c01]), 2)).toBe(1);
  });
});
