/**
 * Context parallelism with one rank per process (src/cp/launch/processRanks.ts): the mode two
 * identical GPUs need. On CPU adapters each process gets its own lavapipe device; the results
 * must match the float64 reference and the in-process ring, and the timeline account for every
 * rank's steps.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape } from './cases.js';
import { referenceForward, referenceBackward } from '../src/reference/attention.js';
import { RankDevice, agreedPrecision, gpuPerRankWrapper, ringAttentionProcesses } from '../src/cp/launch/processRanks.js';
import { Precision } from '../src/kernels/precision.js';
import { toHalfArray } from '../src/f16.js';
import { InputError } from '../src/errors.js';

describe('ranks in separate processes (ProcessCommunicator)', () => {
  const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 40, Nk: 40, D: 16 };
  const x = makeInputs(s, SEED + 404);
  const r = refInputs(x, 'f32');
  const rf = referenceForward(s, r.q, r.k, r.v, { causal: true });
  const rb = referenceBackward(s, r.q, r.k, r.v, r.dout, { causal: true });
  for (const scheme of ['p2p', 'all_gather', 'a2a'] as const)
    it(`R=2 ${scheme}, causal zigzag, forward and backward against float64`, async () => {
      const seen: string[] = [];
      const got = await ringAttentionProcesses(s, x, { ranks: 2, scheme, causal: true, layout: 'zigzag', precision: 'f32', onStep: ({ phase, step }) => seen.push(`${phase}:${step}`) });
      expect(err(got.o, rf.o)).toBeLessThanOrEqual(TOL.f32.out);
      expect(err(got.lse, rf.lse)).toBeLessThanOrEqual(TOL.f32.out);
      for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k]!, rb[k]), k).toBeLessThanOrEqual(TOL.f32.grad);
      const tl = got.timeline;
      expect(tl.mode).toBe('processes');
      // Progress: every step of every phase once, when both ranks have ended it.
      expect(seen).toEqual(tl.phases.flatMap((ph) => [...new Set(ph.steps.map((st) => `${ph.phase}:${st.step}`))]));
      expect(tl.adapters).toHaveLength(2);
      // Every rank freed what it allocated; peak bytes counted as in-process.
      expect(tl.ranks.map((x) => x.liveBytesAfter)).toEqual([0, 0]);
      expect(tl.ranks.every((x) => x.peakBytes > 0)).toBe(true);
      for (const ph of tl.phases) {
        expect(new Set(ph.steps.map((st) => st.rank))).toEqual(new Set([0, 1]));
        for (const st of ph.steps) expect(st.end).toBeGreaterThanOrEqual(st.start);
      }
      if (scheme === 'p2p') expect(tl.summary.bytesMoved).toBeGreaterThan(0);
    }, 240_000);
});

describe('ranks in separate processes: more ranks, layouts, the wrapper, failures', () => {
  it('R=3 contiguous, uneven N, not causal; a2a+p2p at R=4 (2,2) with each rank behind scripts/only-gpu.sh', async () => {
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 41, Nk: 41, D: 16 };
    const x = makeInputs(s, SEED + 405);
    const r = refInputs(x, 'f32');
    // Behind the wrapper where every rank has its GPU (or there are none to hide: CPU adapters).
    let wrapper: string[] | undefined;
    try {
      wrapper = gpuPerRankWrapper(4);
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      console.log(`R=4 without scripts/only-gpu.sh: ${(e as Error).message}`);
    }
    for (const [causal, opts] of [[false, { ranks: 3, layout: 'contiguous' as const }], [true, { ranks: 4, scheme: 'a2a+p2p' as const, hierarchicalSizes: '2,2', ...(wrapper ? { wrapper } : {}) }]] as const) {
      const rf = referenceForward(s, r.q, r.k, r.v, { causal });
      const rb = referenceBackward(s, r.q, r.k, r.v, r.dout, { causal });
      const got = await ringAttentionProcesses(s, x, { causal, precision: 'f32', ...opts });
      expect(err(got.o, rf.o)).toBeLessThanOrEqual(TOL.f32.out);
      expect(err(got.lse, rf.lse)).toBeLessThanOrEqual(TOL.f32.out);
      for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k]!, rb[k]), k).toBeLessThanOrEqual(TOL.f32.grad);
      expect(got.timeline.R).toBe(opts.ranks);
    }
  }, 240_000);

  it("the caller's kernel pins reach every rank's device (as the in-process ring's devices carry theirs), checked before any rank starts", async () => {
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 16, Nk: 16, D: 16 };
    const x = makeInputs(s, 2);
    // Pinned to the portable path: every rank reports it (on a GPU with subgroup matrices the default would be those).
    const scalar = await ringAttentionProcesses(s, x, { ranks: 2, precision: 'f32', tuning: { path: 'scalar' } });
    expect(scalar.kernels.forward).toBe('scalar');
    // Pinned to subgroup matrices: they run, or (lavapipe) the ranks refuse; never the default path in silence.
    const sgmm = await ringAttentionProcesses(s, x, { ranks: 2, precision: 'f32', tuning: { path: 'subgroup-matrix' } }).then((res) => res.kernels.forward, (e: Error) => e.message);
    expect(sgmm).toMatch(/^subgroup-matrix$|^rank \d: the subgroup-matrix .* cannot run/);
    await expect(ringAttentionProcesses(s, x, { ranks: 2, tuning: { headGroup: 0 } })).rejects.toThrow(/FLASHRING_HEAD_GROUP='0': give a number of heads/);
  }, 60_000);

  it('a rank process that cannot start rejects naming the rank; bad requests reject before any starts', async () => {
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 16, Nk: 16, D: 16 };
    const x = makeInputs(s, 1);
    await expect(ringAttentionProcesses(s, x, { ranks: 2, wrapper: ['false'] })).rejects.toThrow(/rank \d's process exited \(code 1\) before it finished/);
    await expect(ringAttentionProcesses(s, x, { ranks: 3, scheme: 'a2a' })).rejects.toThrow(/a2a splits heads over 3 ranks/);
    await expect(ringAttentionProcesses(s, x, { ranks: 0 })).rejects.toThrow(/integer >= 1/);
    // One GPU per rank: every rank needs its /dev/nvidiaR (a host without NVIDIA nodes hides nothing).
    expect(gpuPerRankWrapper(2, [0, 1])).toEqual(['bash', expect.stringMatching(/scripts\/only-gpu\.sh$/), '{rank}']);
    expect(gpuPerRankWrapper(2, [])).toHaveLength(3);
    expect(() => gpuPerRankWrapper(2, [0])).toThrow(/2 ranks need \/dev\/nvidia0 … \/dev\/nvidia1, but this host has \/dev\/nvidia0; use --cp 1/);
    expect(() => gpuPerRankWrapper(2, [1, 2])).toThrow(/has \/dev\/nvidia1, \/dev\/nvidia2; leave out --gpu-per-rank/);
    expect(() => gpuPerRankWrapper(1, [3])).toThrow(/1 rank needs \/dev\/nvidia0, but/);
    // A caller's onStep that throws (a Cancel) rejects the run with its error, as in-process
    // (it was an uncaught exception in the parent, and the run went on to succeed).
    class Cancelled extends Error {}
    await expect(ringAttentionProcesses(s, x, { ranks: 2, causal: true, onStep: () => { throw new Cancelled('cancelled'); } })).rejects.toBeInstanceOf(Cancelled);
    // So does its signal (RingOptions.signal), aborted at the first step's end.
    const ac = new AbortController();
    await expect(ringAttentionProcesses(s, x, { ranks: 2, causal: true, signal: ac.signal, onStep: () => ac.abort(new Cancelled('by signal')) })).rejects.toThrow('by signal');
  }, 60_000);
});

describe('a rank process checks its own rank against its device\'s limits, and no process does GPU work before every rank has (rankProcess.ts: checkedRankKernels, then proceed)', () => {
  const preload = pathToFileURL(fileURLToPath(new URL('./fixtures/rank-limits.mjs', import.meta.url))).href;
  /**
   * Each rank behind `env`, which preloads test/fixtures/rank-limits.mjs: its devices report `limits` and lack the features
   * `hide` (only those of `ranks`, where given), its GPU work is logged.
   */
  const lowered = (limits: object, log: string, ranks?: string, hide?: string) =>
    ['env', `FLASHRING_TEST_LIMITS=${JSON.stringify(limits)}`, `FLASHRING_TEST_GPU_LOG=${log}`, `NODE_OPTIONS=--import=${preload}`,
      'FLASHRING_TEST_RANK={rank}', ...(ranks !== undefined ? [`FLASHRING_TEST_LIMITS_RANKS=${ranks}`] : []), ...(hide ? [`FLASHRING_TEST_HIDE_FEATURES=${hide}`] : [])];

  it('row blocks beyond the grid limit, and a buffer beyond the binding size: a LimitError naming the rank, and no rank makes a buffer or submits', async () => {
    // As test/extremes.test.ts in-process: 2 heads, zigzag over 2 ranks (a segment of 512 rows a rank).
    // Each rank process checks its own rank's program on its own device, so either may refuse first, naming its own Q.
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 1024, Nk: 1024, D: 8 };
    const x = makeInputs(s, SEED + 406);
    const dir = mkdtempSync(join(tmpdir(), 'flashring-rank-limits-'));
    try {
      const log = join(dir, 'gpu.log');
      // The preload logs a rank's GPU work: at the device's own limits the run makes buffers and submits.
      writeFileSync(log, '');
      await ringAttentionProcesses(s, x, { ranks: 2, precision: 'f32', wrapper: lowered({}, log) });
      expect(readFileSync(log, 'utf8')).toMatch(/^buffer rank0\.q0$(.|\n)*^submit$/m);
      const cases = [
        [{ maxComputeWorkgroupsPerDimension: 2 }, /^rank [01]: blocks of \d+ query rows \(Nq = \d+\) need \d+ workgroups.*allows 2 \(maxComputeWorkgroupsPerDimension\)/],
        [{ maxStorageBufferBindingSize: 2 * 512 * 8 * 4 - 4 }, /^rank ([01]): the ring's buffer rank\1\.q0 needs 32768 bytes in one binding; .* allows 32764 \(maxStorageBufferBindingSize\)/],
      ] as const;
      for (const [limits, refusal] of cases) {
        writeFileSync(log, '');
        await expect(ringAttentionProcesses(s, x, { ranks: 2, precision: 'f32', wrapper: lowered(limits, log) })).rejects.toThrow(refusal);
        expect(readFileSync(log, 'utf8'), JSON.stringify(limits)).toBe('');
      }
      // One GPU lower than the other: the refusal is of the rank on it, about its own buffer (it read 'rank 1: … rank0.q0',
      // rank 1's process checking rank 0's program on its own GPU), and the other rank, whose GPU takes its program,
      // waits for every rank's check: no buffer, no submission in either process.
      for (const rank of ['0', '1']) {
        writeFileSync(log, '');
        const wrapper = lowered({ maxStorageBufferBindingSize: 32764 }, log, rank);
        await expect(ringAttentionProcesses(s, x, { ranks: 2, precision: 'f32', wrapper })).rejects.toThrow(new RegExp(`^rank ${rank}: the ring's buffer rank${rank}\\.q0 needs 32768 bytes in one binding`));
        expect(readFileSync(log, 'utf8'), `rank ${rank} lower`).toBe('');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it("float16 inputs with precision auto where rank 1's adapter lacks shader-f16: every rank runs in f32, as in-process; f16 asked for there is refused, naming rank 1, before any GPU work", async () => {
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 40, Nk: 40, D: 16 };
    const x = makeInputs(s, SEED + 407);
    const h = { q: toHalfArray(x.q), k: toHalfArray(x.k), v: toHalfArray(x.v), dout: toHalfArray(x.dout) };
    const r = refInputs(x, 'f16');   // the float16 inputs' values, exactly
    const rf = referenceForward(s, r.q, r.k, r.v, { causal: true });
    const rb = referenceBackward(s, r.q, r.k, r.v, r.dout, { causal: true });
    const dir = mkdtempSync(join(tmpdir(), 'flashring-rank-f16-'));
    try {
      const log = join(dir, 'gpu.log'), wrapper = lowered({}, log, '1', 'shader-f16');
      writeFileSync(log, '');
      const agreed: [Precision, boolean[]][] = [];
      const got = await ringAttentionProcesses(s, h, { ranks: 2, causal: true, wrapper, onPrecision: (p, devs) => void agreed.push([p, devs.map((d) => d.hasF16)]) });
      expect(agreed).toEqual([['f32', [true, false]]]);
      expect([got.precision, got.timeline.precision]).toEqual(['f32', 'f32']);
      expect(got.o).toBeInstanceOf(Float32Array);
      expect(err(got.o, rf.o)).toBeLessThanOrEqual(TOL.f32.out);
      expect(err(got.lse, rf.lse)).toBeLessThanOrEqual(TOL.f32.out);
      for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k]!, rb[k]), k).toBeLessThanOrEqual(TOL.f32.grad);
      // Asked for f16: refused in the parent once both ranks have said what their adapters offer; neither made a buffer.
      writeFileSync(log, '');
      await expect(ringAttentionProcesses(s, h, { ranks: 2, causal: true, precision: 'f16', wrapper }))
        .rejects.toThrow(/^rank 1: precision f16 needs the 'shader-f16' feature, which its adapter \(.+\) does not offer; use f32, or auto/);
      expect(readFileSync(log, 'utf8')).toBe('');
      // Where every rank's adapter has it (lavapipe does), auto still runs the float16 inputs in f16.
      const all = await ringAttentionProcesses(s, { q: h.q, k: h.k, v: h.v }, { ranks: 2, causal: true, onPrecision: (p, devs) => void agreed.push([p, devs.map((d) => d.hasF16)]) });
      const f16 = agreed[1][1].every(Boolean);
      if (!f16) expect(process.env.CI).not.toBe('true');
      expect(all.precision).toBe(f16 ? 'f16' : 'f32');
      expect(err(all.o, rf.o)).toBeLessThanOrEqual(f16 ? TOL.f16.out : TOL.f32.out);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it('agreedPrecision: one precision for every rank from what each adapter offers', () => {
    const dev = (rank: number, hasF16: boolean): RankDevice => ({ type: 'device', rank, adapter: `gpu${rank}`, hasF16 });
    const mixed = [dev(0, true), dev(1, false), dev(2, false)];
    expect(agreedPrecision('auto', true, [dev(0, true), dev(1, true)])).toBe('f16');
    expect(agreedPrecision('auto', true, mixed)).toBe('f32');
    expect(agreedPrecision('auto', false, [dev(0, true)])).toBe('f32');
    expect(agreedPrecision('f32', true, mixed)).toBe('f32');
    expect(agreedPrecision('f16', false, [dev(0, true)])).toBe('f16');
    expect(() => agreedPrecision('f16', true, mixed)).toThrow(InputError);
    expect(() => agreedPrecision('f16', true, mixed)).toThrow(/^ranks 1, 2: precision f16 needs the 'shader-f16' feature, which their adapters \(gpu1, gpu2\) do not offer; use f32/);
  });
});
