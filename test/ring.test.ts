import { describe, expect, it, beforeAll } from 'vitest';
import { testDevices } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { ringAttention } from '../src/ring/ringAttention.js';
import { LAYOUTS } from '../src/ring/schedule.js';
import { attentionForward, attentionBackward } from '../src/kernels/attention.js';
import { referenceForward, referenceBackward } from '../src/reference/attention.js';
import { DeviceLostError, InputError } from '../src/errors.js';
import { acquireDevices } from '../src/gpu/device.js';
import { nodeGPU } from '../src/gpu/node.js';

let devs: FlashDevice[];
beforeAll(async () => {
  devs = await testDevices(8);
});

describe('context-parallel ring vs float64 reference and the single-device kernel', () => {
  // N = 45 divides evenly by neither R = 2, 4, 8 nor 2R zigzag chunks.
  const s: AttentionShape = { B: 1, Hq: 2, Hkv: 1, Nq: 45, Nk: 45, D: 16 };
  for (const R of [1, 2, 3, 4, 8])
    for (const causal of [false, true])
      it(`R=${R} ${causal ? 'causal' : 'full'}, every layout, forward + backward`, async () => {
        const x = makeInputs(s, SEED + R * 7 + (causal ? 1 : 0));
        const r = refInputs(x, 'f32');
        const rf = referenceForward(s, r.q, r.k, r.v, { causal });
        const rb = referenceBackward(s, r.q, r.k, r.v, r.dout, { causal });
        const single = await attentionForward(devs[0], s, x, { causal, precision: 'f32' });
        const singleB = await attentionBackward(devs[0], s, { ...x, o: single.o, lse: single.lse }, { causal, precision: 'f32' });
        for (const layout of LAYOUTS) {
          const got = await ringAttention(devs.slice(0, R), s, x, { causal, layout, precision: 'f32' });
          const tag = `R=${R} ${layout} causal=${causal}`;
          expect(err(got.o, rf.o), `O ${tag}`).toBeLessThanOrEqual(TOL.f32.out);
          expect(err(got.lse, rf.lse), `LSE ${tag}`).toBeLessThanOrEqual(TOL.f32.out);
          expect(err(got.dq!, rb.dq), `dQ ${tag}`).toBeLessThanOrEqual(TOL.f32.grad);
          expect(err(got.dk!, rb.dk), `dK ${tag}`).toBeLessThanOrEqual(TOL.f32.grad);
          expect(err(got.dv!, rb.dv), `dV ${tag}`).toBeLessThanOrEqual(TOL.f32.grad);
          // Equal to the single-device kernel too (same f32 math, different summation order).
          const vsSingle: [string, Float32Array | Uint16Array, Float32Array | Uint16Array, number][] = [
            ['O', got.o, single.o, TOL.f32.out], ['LSE', got.lse, single.lse, TOL.f32.out],
            ['dQ', got.dq!, singleB.dq, TOL.f32.grad], ['dK', got.dk!, singleB.dk, TOL.f32.grad], ['dV', got.dv!, singleB.dv, TOL.f32.grad],
          ];
          for (const [name, a, b, tol] of vsSingle) expect(err(a, Float64Array.from(b)), `${name} vs single ${tag}`).toBeLessThanOrEqual(tol);
          const tl = got.timeline;
          // Backward: R steps per rank plus the hop that brings dK/dV home.
          expect(tl.phases.map((p) => p.steps.length)).toEqual([R * R, R * (R + 1)]);
          if (R > 1) expect(tl.summary.bytesMoved).toBeGreaterThan(0);
          for (const rk of tl.ranks) expect(rk.peakBytes).toBeGreaterThan(0);
          for (const d of devs.slice(0, R)) expect(d.tracker.snapshot().liveBuffers).toBe(0);
        }
      });

  it('f16 ring with GQA, causal, zigzag', async () => {
    if (!devs[0].hasF16) return expect(process.env.CI).not.toBe('true');
    const g: AttentionShape = { B: 2, Hq: 4, Hkv: 2, Nq: 50, Nk: 50, D: 32 };
    const x = makeInputs(g, SEED + 99);
    const r = refInputs(x, 'f16');
    const rf = referenceForward(g, r.q, r.k, r.v, { causal: true });
    const rb = referenceBackward(g, r.q, r.k, r.v, r.dout, { causal: true });
    const got = await ringAttention(devs.slice(0, 3), g, x, { causal: true, layout: 'zigzag', precision: 'f16' });
    expect(err(got.o, rf.o)).toBeLessThanOrEqual(TOL.f16.out);
    expect(err(got.lse, rf.lse)).toBeLessThanOrEqual(TOL.f16.out);
    for (const k of ['dq', 'dk', 'dv'] as const) expect(err(got[k]!, rb[k]), k).toBeLessThanOrEqual(TOL.f16.grad);
  });

  it('the timeline accounts for every step: compute, transfer, idle, overlap', async () => {
    const x = makeInputs(s, SEED + 5);
    const got = await ringAttention(devs.slice(0, 4), s, { q: x.q, k: x.k, v: x.v }, { causal: true, layout: 'contiguous', precision: 'f32' });
    const tl = got.timeline;
    expect(tl.phases.map((p) => p.phase)).toEqual(['forward']);
    const steps = tl.phases[0].steps;
    for (const st of steps) {
      expect(st.end).toBeGreaterThanOrEqual(st.computeEnd);
      expect(st.idleMs).toBeGreaterThanOrEqual(0);
      // K and V of the chunk it holds (B=1, Hkv=1, D=16, f32); nothing at the last step.
      const held = tl.schedule.shards[st.kvFrom][0].count;
      expect(st.transferBytes).toBe(st.step < 3 ? 2 * held * 16 * 4 : 0);
      if (devs[0].hasTimestamps) expect(st.gpuComputeMs).not.toBeNull();
    }
    // Causal contiguous: rank 0 only ever computes its own diagonal chunk.
    expect(steps.filter((st) => st.rank === 0 && st.pairs > 0).length).toBe(1);
    expect(tl.summary.overlapEfficiency).toBeGreaterThanOrEqual(0);
    expect(tl.summary.overlapEfficiency).toBeLessThanOrEqual(1);
    expect(JSON.parse(JSON.stringify(tl)).kind).toBe('flashring.timeline');
  });

  it('rejects bad rings clearly', async () => {
    const x = makeInputs(s, 1);
    const tiny: AttentionShape = { ...s, Nq: 3, Nk: 3 };
    const xt = makeInputs(tiny, 2);
    await expect(ringAttention(devs.slice(0, 4), tiny, xt)).rejects.toThrow(/4 ranks but the sequence only 3 tokens/);
    await expect(ringAttention([], s, x)).rejects.toThrow(/integer >= 1/);
    await expect(ringAttention(devs.slice(0, 2), s, x, { layout: 'spiral' as never })).rejects.toThrow(/unknown layout/);
    await expect(ringAttention(devs.slice(0, 2), { ...s, Nq: 44 }, x)).rejects.toThrow(InputError);
  });
});

describe('ring faults', () => {
  it('a device destroyed mid-ring rejects within seconds naming the rank; no buffers are left', async () => {
    const own = await acquireDevices(await nodeGPU(), 3);
    const s: AttentionShape = { B: 1, Hq: 4, Hkv: 4, Nq: 600, Nk: 600, D: 32 };
    const x = makeInputs(s, SEED + 3);
    const t0 = performance.now();
    const run = ringAttention(own, s, x, {
      layout: 'contiguous', precision: 'f32',
      onStep: ({ phase, step }) => { if (phase === 'forward' && step === 0) own[1].destroy(); },
    });
    const e = await run.then(() => null, (err) => err);
    expect(e).toBeInstanceOf(DeviceLostError);
    expect(String(e.message)).toMatch(/rank 1/);
    expect(performance.now() - t0).toBeLessThan(30_000);
    // No grace period: the ring waits for every rank's in-flight step before it rejects.
    for (const d of own) expect(d.tracker.snapshot().liveBuffers, `device ${d.index}`).toBe(0);
    own[0].destroy();
    own[2].destroy();
  });
});
