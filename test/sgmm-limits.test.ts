/**
 * A tensor-core tile the device's limits refuse (src/kernels/sgmmTiles.ts planSgmm): refused before any pipeline is
 * made, as a LimitError whose `tried` says each tile and, where the device's workgroup memory or invocations refuse
 * it, what it needs (TileNeed: the byte formulas sgmmWorkgroupBytes / sgmmBwdWorkgroupBytes, 32 invocations a
 * subgroup) beside the device's maxima: the shape the portable planner (tiles.ts planTiles) gives its misses.
 */
import { describe, expect, it, vi } from 'vitest';
import { LimitError, type TileMiss } from '../src/errors.js';
import { FlashForward } from '../src/kernels/flashForward.js';
import { FlashBackward } from '../src/kernels/flashBackward.js';
import { choosePath } from '../src/kernels/pipeline.js';
import { describePlan, planDeviceTiles, type TilePlan } from '../src/kernels/tiles.js';
import { SGMM_PAD, oneSpill, planSgmm, type SgmmRefusal, sgmmBwdWorkgroupBytes, sgmmCandidates, sgmmFwdTurns, sgmmWorkgroupBytes } from '../src/kernels/sgmmTiles.js';
import { tuningFromEnv } from '../src/kernels/tuning.js';
import { createCalls, sgmmDevice } from './sgmm-device.js';

const F16 = { precision: 'f16', out: 'f16', grad: 'f16' } as const;

/** What a build rejected with (it must reject). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(() => { throw new Error('it did not reject'); }, (e: unknown) => e);
}

/** A plan that must be a refusal. */
function refused(p: TilePlan | SgmmRefusal): SgmmRefusal {
  if (!('why' in p)) throw new Error(`it planned ${describePlan(p)}`);
  return p;
}

/** The misses of a LimitError (and that it is one). */
function missesOf(e: unknown): readonly TileMiss[] {
  expect(e).toBeInstanceOf(LimitError);
  return (e as LimitError).tried;
}

describe('a tensor-core forward tile the device refuses', () => {
  it('too many workgroup bytes: a LimitError before any pipeline, its miss holding what sgmmWorkgroupBytes counts', async () => {
    // 4×16×2 at D = 64: its row blocks take turns by default (no robustness transform).
    const bytes = sgmmWorkgroupBytes(4, 16, 64, 2, SGMM_PAD, 1, false, sgmmFwdTurns(2, 1, 16));
    const dev = sgmmDevice(bytes - 1, 1024, tuningFromEnv({ FLASHRING_SGMM_FWD: '4x16x2' }));
    const e = await rejection(FlashForward.create(dev, 64, F16, 'subgroup-matrix'));
    expect(missesOf(e)).toEqual([{ tile: '4x16x2', why: `${bytes} bytes, 128 invocations`, need: { bytes, chunk: 64, invocations: 128, maxBytes: bytes - 1, maxInvocations: 1024 } }]);
    expect((e as Error).message).toMatch(/^the subgroup-matrix forward cannot run: the pinned tile 4x16x2 \(FLASHRING_SGMM_FWD, or the tuning's sgmmForward\) does not fit this device/);
    expect(createCalls(dev)).toBe(0);
    // A ring's forward counts its merge weights too: the same tile fits one byte less.
    const merged = sgmmWorkgroupBytes(4, 16, 64, 2, SGMM_PAD, 1, true, sgmmFwdTurns(2, 1, 16));
    const ring = sgmmDevice(merged - 1, 1024, tuningFromEnv({ FLASHRING_SGMM_FWD: '4x16x2' }));
    const m = await rejection(FlashForward.create(ring, 64, { precision: 'f16', out: 'f32', grad: 'f32', merge: true }, 'subgroup-matrix'));
    expect(missesOf(m)[0].need).toEqual({ bytes: merged, chunk: 64, invocations: 128, maxBytes: merged - 1, maxInvocations: 1024 });
    expect(merged).toBeGreaterThan(bytes);
  });

  it('too many invocations: the miss holds the 32 a subgroup against the device\'s maximum', async () => {
    const dev = sgmmDevice(1 << 20, 128, tuningFromEnv({ FLASHRING_SGMM_FWD: '8x32x1' }));
    const bytes = sgmmWorkgroupBytes(8, 32, 128, 1);
    expect(missesOf(await rejection(FlashForward.create(dev, 128, F16, 'subgroup-matrix')))).toEqual([
      { tile: '8x32x1', why: `${bytes} bytes, 256 invocations`, need: { bytes, chunk: 128, invocations: 256, maxBytes: 1 << 20, maxInvocations: 128 } },
    ]);
    expect(createCalls(dev)).toBe(0);
  });

  it('a workgroup X size below the invocations: the kernels\' one-dimensional workgroups are bounded by it too', async () => {
    const dev = sgmmDevice(1 << 20, 1024, tuningFromEnv({ FLASHRING_SGMM_FWD: '8x32x1' }), 128);
    const bytes = sgmmWorkgroupBytes(8, 32, 128, 1);
    const e = await rejection(FlashForward.create(dev, 128, F16, 'subgroup-matrix'));
    expect(missesOf(e)).toEqual([
      { tile: '8x32x1', why: `${bytes} bytes, 256 invocations`, need: { bytes, chunk: 128, invocations: 256, maxBytes: 1 << 20, maxInvocations: 128 } },
    ]);
    expect(String(e)).toContain('maxComputeWorkgroupSizeX');
    expect(createCalls(dev)).toBe(0);
    // The same tile where the X size allows it plans (the forward is then built, on a fake device that runs nothing).
    expect('why' in planSgmm(sgmmDevice(1 << 20, 1024, tuningFromEnv({ FLASHRING_SGMM_FWD: '8x32x1' })), 128, 'f16')).toBe(false);
  });

  it('the portable planner takes the workgroup X size as a bound as well', () => {
    const free = planDeviceTiles('fwd', 64, 'f32', sgmmDevice(1 << 20, 1024));
    const bound = free.WG - 1, dev = sgmmDevice(1 << 20, 1024, {}, bound);
    let got: TilePlan | LimitError;
    try { got = planDeviceTiles('fwd', 64, 'f32', dev); } catch (e) { got = e as LimitError; }
    if (got instanceof LimitError) expect(got.tried.every((m) => m.need?.maxInvocations === bound)).toBe(true);
    else expect(got.WG).toBeLessThanOrEqual(bound);
  });

  it('unpinned, none fits: every candidate tried, in its order, each with what it needs', () => {
    const dev = sgmmDevice(4096, 1024);
    const { why, tried } = refused(planSgmm(dev, 128, 'f16'));
    expect(why).toMatch(/^head dim 128 has no tensor-core forward tile that fits this device: 4096 bytes of workgroup memory/);
    const tiles = sgmmCandidates('fwd', 128);
    expect(tried.map((m) => m.tile)).toEqual(tiles.map(([SG, T, RB, DS = 1]) => `${SG}x${T}x${RB}${DS > 1 ? `x${DS}` : ''}`));
    tiles.forEach(([SG, T, RB, DS = 1], i) => expect(tried[i].need).toEqual({
      bytes: sgmmWorkgroupBytes(SG, T, 128, RB, SGMM_PAD, DS, false, sgmmFwdTurns(RB, DS, T)), chunk: 128, invocations: 32 * SG, maxBytes: 4096, maxInvocations: 1024,
    }));
  });

  it('a D split the head dim cannot take: a miss without figures (no device has room for it)', () => {
    const refusal = refused(planSgmm(sgmmDevice(49152, 1024, tuningFromEnv({ FLASHRING_SGMM_FWD: '16x32x1x2' })), 48, 'f16'));
    expect(refusal.tried).toEqual([{ tile: '16x32x1x2', why: "head dim 48 is not a multiple of 32, which the forward's D split 2 ways needs" }]);
    expect(refusal.why).toMatch(/^the pinned tile 16x32x1x2 \(FLASHRING_SGMM_FWD, or the tuning's sgmmForward\) cannot run at head dim 48: .*Pin another tile or unset the pin$/);
  });

  it("on the auto path the refusal is the portable kernels' fallback reason; no tensor-core build is tried", async () => {
    const dev = sgmmDevice(4096, 1024);
    const buildSgmm = vi.fn();
    const reason = await choosePath('auto', {}, 'forward', () => planSgmm(dev, 64, 'f16'), buildSgmm, async (why) => why);
    expect(reason).toMatch(/^head dim 64 has no tensor-core forward tile that fits this device: /);
    expect(buildSgmm).not.toHaveBeenCalled();
  });
});

describe('a tensor-core backward tile the device refuses', () => {
  it('too many workgroup bytes: its miss holds what sgmmBwdWorkgroupBytes counts with the spills at that head dim', async () => {
    for (const D of [64, 128]) {
      const bytes = sgmmBwdWorkgroupBytes(4, 16, D, SGMM_PAD, oneSpill('dq', D), oneSpill('dkdv', D));
      const dev = sgmmDevice(bytes - 1, 1024, tuningFromEnv({ FLASHRING_SGMM_BWD: '4x16' }));
      const e = await rejection(FlashBackward.create(dev, D, F16, 'subgroup-matrix'));
      expect(missesOf(e), `D=${D}`).toEqual([{ tile: '4x16', why: `${bytes} bytes, 128 invocations`, need: { bytes, chunk: D, invocations: 128, maxBytes: bytes - 1, maxInvocations: 1024 } }]);
      expect((e as Error).message).toMatch(/^the subgroup-matrix backward cannot run: the pinned tile 4x16 \(FLASHRING_SGMM_BWD, or the tuning's sgmmBackward\)/);
      expect(createCalls(dev)).toBe(0);
    }
  });

  it('too many invocations, and unpinned: every candidate with its figures', async () => {
    const dev = sgmmDevice(1 << 20, 128, tuningFromEnv({ FLASHRING_SGMM_BWD: '8x16' }));
    const need = missesOf(await rejection(FlashBackward.create(dev, 64, F16, 'subgroup-matrix')))[0].need;
    expect(need).toEqual({ bytes: sgmmBwdWorkgroupBytes(8, 16, 64, SGMM_PAD, true, true), chunk: 64, invocations: 256, maxBytes: 1 << 20, maxInvocations: 128 });
    const { tried } = refused(planSgmm(sgmmDevice(4096, 1024), 64, 'f16', 'bwd'));
    expect(tried.map((m) => [m.tile, m.need?.bytes])).toEqual(sgmmCandidates('bwd', 64).map(([SG, T]) => [`${SG}x${T}`, sgmmBwdWorkgroupBytes(SG, T, 64, SGMM_PAD, true, true)]));
  });
});
