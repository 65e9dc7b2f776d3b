/**
 * `flashring attention --cp R --cp-mode processes` where one rank's adapter has no shader-f16 (lavapipe has it:
 * test/fixtures/rank-limits.mjs hides it from rank 1's process). float16 inputs with --precision auto run in f32
 * on every rank, with the note the other modes print, written as float32, and the room for the outputs is checked
 * at f32 before any GPU work; --precision f16 there is refused, naming the rank.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { encodeNpy, parseNpy } from '../src/cli/npy.js';
import { RUN_RECORD } from '../src/cli/outputs.js';
import { attentionCommand } from '../src/cli/attention.js';
import { referenceForward, referenceBackward } from '../src/reference/attention.js';
import { relErr, referenceInput, TOL } from '../src/reference/compare.js';
import { toHalfArray } from '../src/f16.js';
import { BIN } from './cli-run.js';
import { makeInputs, SEED } from './cases.js';

// 40 KiB free (4 KiB blocks) under any folder named 'roomfs' (as test/attention-inputs.test.ts).
vi.mock('node:fs/promises', async (importOriginal) => {
  const fsp = await importOriginal<typeof import('node:fs/promises')>();
  const statfs = (async (path: string, ...rest: unknown[]) => {
    const st = await (fsp.statfs as (...a: unknown[]) => Promise<import('node:fs').StatsFs>)(path, ...rest);
    return /roomfs/.test(String(path)) ? { ...st, bsize: 4096, bavail: 10, bfree: 10 } : st;
  }) as typeof fsp.statfs;
  return { ...fsp, statfs, default: { ...fsp, statfs } };
});

const preload = pathToFileURL(fileURLToPath(new URL('./fixtures/rank-limits.mjs', import.meta.url))).href;
/** The environment that hides shader-f16 from rank 1's process (its rank from its init message) and logs every rank's GPU work into `log`. */
const rank1WithoutF16 = (log: string) => ({
  NODE_OPTIONS: `--import=${preload}`, FLASHRING_TEST_GPU_LOG: log, FLASHRING_TEST_HIDE_FEATURES: 'shader-f16', FLASHRING_TEST_LIMITS_RANKS: '1',
});

describe("attention --cp-mode processes with float16 inputs, rank 1's adapter without shader-f16", () => {
  const dir = mkdtempSync(join(tmpdir(), 'flashring-cli-procs-f16-'));
  const f = (n: string) => join(dir, n);
  const log = f('gpu.log');
  const s = { B: 1, Hq: 2, Hkv: 2, Nq: 40, Nk: 40, D: 16 };
  const x = makeInputs(s, SEED + 408);
  for (const n of ['q', 'k', 'v', 'dout'] as const) writeFileSync(f(`${n}.npy`), encodeNpy({ dtype: 'f2', shape: [1, 2, 40, 16], data: toHalfArray(x[n]) }));
  const run = (args: string[]) => promisify(execFile)(process.execPath, [BIN, 'attention', ...args], { timeout: 180_000, env: { ...process.env, ...rank1WithoutF16(log) } })
    .then((r) => ({ code: 0, out: r.stdout, err: r.stderr }), (e) => ({ code: e.code as number, out: e.stdout as string, err: e.stderr as string }));
  const inputs = ['--q', f('q.npy'), '--k', f('k.npy'), '--v', f('v.npy'), '--do', f('dout.npy'), '--causal', '--cp', '2', '--cp-mode', 'processes'];

  it('--precision auto: every rank computes in f32, with a note naming rank 1; float32 outputs matching float64', async () => {
    const r = await run([...inputs, '--out', f('auto')]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/^note: the inputs are float16 but rank 1 \(.+\) has no shader-f16; computing in f32 and writing float32$/m);
    expect(r.out).toMatch(/^attention .* causal=true, CP R=2 p2p .* f32 processes on /m);
    const npy = (n: string) => parseNpy(new Uint8Array(readFileSync(join(f('auto'), `${n}.npy`))));
    expect(['o', 'lse', 'dq', 'dk', 'dv'].map((n) => npy(n).dtype)).toEqual(['f4', 'f4', 'f4', 'f4', 'f4']);
    expect(JSON.parse(readFileSync(join(f('auto'), RUN_RECORD), 'utf8')).precision).toBe('f32');
    const ref = (n: 'q' | 'k' | 'v' | 'dout') => referenceInput(x[n], 'f16');   // the float16 inputs' values, exactly
    const rf = referenceForward(s, ref('q'), ref('k'), ref('v'), { causal: true });
    const rb = referenceBackward(s, ref('q'), ref('k'), ref('v'), ref('dout'), { causal: true });
    const got = (n: string) => Float64Array.from(npy(n).data as Float32Array);
    expect(relErr(got('o'), rf.o)).toBeLessThanOrEqual(TOL.f32.out);
    expect(relErr(got('lse'), rf.lse)).toBeLessThanOrEqual(TOL.f32.out);
    for (const g of ['dq', 'dk', 'dv'] as const) expect(relErr(got(g), rb[g]), g).toBeLessThanOrEqual(TOL.f32.grad);
  }, 240_000);

  it('--precision f16: refused naming rank 1 and what to do, exit 2, before any GPU work and with nothing written', async () => {
    writeFileSync(log, '');
    const r = await run([...inputs, '--precision', 'f16', '--out', f('f16')]);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(/rank 1: precision f16 needs the 'shader-f16' feature, which its adapter \(.+\) does not offer; use f32, or auto/);
    expect(readFileSync(log, 'utf8')).toBe('');
    expect(existsSync(f('f16'))).toBe(false);
  }, 240_000);
});

/**
 * `attention` in-process with `setup`'s arguments and environment (which its rank processes inherit), as a user
 * (root's reserved blocks not counted), an --out under a 'roomfs' folder of 40 KiB free: refused with `refusal`
 * before any GPU work (no buffer or submission logged) and with nothing written.
 */
async function refusedBeforeGpuWork(setup: (dir: string, out: string, log: string) => { env: Record<string, string>; args: string[]; refusal: string }) {
  vi.spyOn(process, 'getuid').mockReturnValue(1000);
  const dir = mkdtempSync(join(tmpdir(), 'flashring-procs-room-'));
  const saved = { ...process.env };
  try {
    const log = join(dir, 'gpu.log'), out = join(dir, 'roomfs', 'o');
    mkdirSync(join(dir, 'roomfs'));
    writeFileSync(log, '');
    const { env, args, refusal } = setup(dir, out, log);
    Object.assign(process.env, env);
    await expect(attentionCommand(args)).rejects.toThrow(refusal);
    expect(readFileSync(log, 'utf8')).toBe('');
    expect(existsSync(out)).toBe(false);
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('attention --cp-mode processes: the room for the outputs at the precision the ranks agree on', () => {
  afterEach(() => void vi.restoreAllMocks());

  // [1, 2, 512, 8] float16: O 16 KiB (5 blocks with its header), LSE 4 KiB (2), the record (1): 32 KiB, in 40 KiB
  // free; in float32 O takes 9 blocks: 48 KiB (as test/attention-inputs.test.ts, in the other modes).
  it("float16 inputs computed in f32 (rank 1 without shader-f16) are checked at float32, after the ranks' agreement and before any GPU work", async () => {
    await refusedBeforeGpuWork((dir, out, log) => {
      const h = join(dir, 'h.npy');
      writeFileSync(h, encodeNpy({ dtype: 'f2', shape: [1, 2, 512, 8], data: toHalfArray(Float64Array.from({ length: 8192 }, (_, i) => Math.cos(i))) }));
      return {
        env: rank1WithoutF16(log), args: ['--q', h, '--k', h, '--v', h, '--out', out, '--cp', '2', '--cp-mode', 'processes'],
        refusal: `--out ${out}: this run writes 48 KiB there and its file system has 40 KiB free`,
      };
    });
  }, 240_000);

  it("a --timeline is checked again with the adapter names the rank processes report, before any GPU work", async () => {
    await refusedBeforeGpuWork((dir, out, log) => {
      // float32 [1, 2, 16, 8]: O, LSE and the record a block each; the timeline without its names 2 blocks: 20 KiB of 40 free.
      const k = join(dir, 'k.npy'), tl = join(dir, 'roomfs', 'tl.json');
      writeFileSync(k, encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 8], data: Float32Array.from({ length: 256 }, (_, i) => Math.cos(i)) }));
      return {
        // Every rank's adapter named 12000 bytes: twice in the file (one a rank), 6 blocks more.
        env: { NODE_OPTIONS: `--import=${preload}`, FLASHRING_TEST_GPU_LOG: log, FLASHRING_TEST_ADAPTER_NAME: 'an adapter whose name runs on '.repeat(400) },
        args: ['--q', k, '--k', k, '--v', k, '--out', out, '--cp', '2', '--cp-mode', 'processes', '--timeline', tl],
        refusal: `--out ${out} and --timeline ${tl}: this run writes 44 KiB on their file system, which has 40 KiB free`,
      };
    });
  }, 240_000);
});
