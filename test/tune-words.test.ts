/**
 * Tune's candidates in the page's words (web/tuneWords.ts): a tile the GPU's limits refuse is said from the figures its
 * trial carries (TuneTrial.need, from planTiles' or planSgmm's LimitError), never from its error's text.
 */
import { describe, expect, it } from 'vitest';
import { trialWords } from '../web/tuneWords.js';
import { skipped } from '../src/bench/tune.js';
import { planTiles } from '../src/kernels/tiles.js';
import { tuningFromEnv, type KernelTuning } from '../src/kernels/tuning.js';
import { withTuning } from '../src/gpu/device.js';
import { FlashBackward } from '../src/kernels/flashBackward.js';
import { SGMM_PAD, sgmmBwdWorkgroupBytes } from '../src/kernels/sgmmTiles.js';
import { sgmmDevice } from './sgmm-device.js';

const tuning: KernelTuning = { portableForward: { rows: 128, cols: 32 }, forwardPrefetch: 0 };
const need = { bytes: 41472, chunk: 32, invocations: 256, maxBytes: 32768, maxInvocations: 1024 };

describe("a Tune candidate in the page's words", () => {
  it("a tile planTiles refuses on this GPU's limits is said as that, with the figures (too large, or too many invocations)", () => {
    let e: unknown;
    try {
      planTiles('fwd', 64, 'f32', 32768, 1024, 8, tuningFromEnv({ FLASHRING_PORTABLE_FWD: '128x32', FLASHRING_PORTABLE_FWD_SHARED_P: '0' }));   // P~ apart: 41472 bytes
    } catch (err) {
      e = err;
    }
    expect(trialWords({ ...skipped('fwd', 'P', e), tuning }))
      .toBe("forward candidate tile 128×32, no prefetch: skipped, too large for this GPU's workgroup memory (needs 41472 bytes, it has 32768)");
    expect(trialWords({ kind: 'fwd', pins: 'P', ms: null, error: 'x', need: { ...need, maxBytes: 49152, maxInvocations: 128 }, tuning }))
      .toBe('forward candidate tile 128×32, no prefetch: skipped, too many invocations per workgroup for this GPU (256, it takes 128)');
    expect(trialWords({ kind: 'bwd', pins: 'P', ms: 0.5, tuning: { portableBackward: { rows: 64, cols: 32 } } })).toBe('backward candidate tile 64×32: 0.500 ms');
    for (const [pf, words] of [[1, 'with prefetch'], [2, 'with prefetch of K and V only']] as const)
      expect(trialWords({ kind: 'fwd', pins: 'P', ms: 0.5, tuning: { ...tuning, forwardPrefetch: pf } })).toBe(`forward candidate tile 128×32, ${words}: 0.500 ms`);
  });

  it('a tensor-core tile the limits refuse is said the same way, from the figures its kernel\'s refusal carries', async () => {
    const sgmm: KernelTuning = { sgmmBackward: { subgroups: 8, rows: 16 }, sgmmDqSpill: 'two', sgmmKvSpill: 'two' };
    const bytes = sgmmBwdWorkgroupBytes(8, 16, 64, SGMM_PAD, false, false);
    const refusal = (maxBytes: number, maxInvocations: number) => FlashBackward.create(withTuning(sgmmDevice(maxBytes, maxInvocations), { ...sgmm, path: 'subgroup-matrix' }), 64, { precision: 'f16', out: 'f16', grad: 'f16' })
      .then(() => new Error('it built'), (x: unknown) => x);
    expect(trialWords({ ...skipped('bwd', 'P', await refusal(bytes - 1, 1024)), tuning: sgmm })).toBe('backward candidate tensor-core tile 8 subgroups × 16 rows, ' +
      `dQ's blocks at once, dK/dV's blocks at once: skipped, too large for this GPU's workgroup memory (needs ${bytes} bytes, it has ${bytes - 1})`);
    expect(trialWords({ ...skipped('bwd', 'P', await refusal(bytes, 128)), tuning: sgmm })).toBe('backward candidate tensor-core tile 8 subgroups × 16 rows, ' +
      "dQ's blocks at once, dK/dV's blocks at once: skipped, too many invocations per workgroup for this GPU (256, it takes 128)");
  });

  it("reads the figures, not the error's text: a reworded error keeps them, and one that only reads alike (no figures) is said as it is", () => {
    expect(trialWords({ kind: 'fwd', pins: 'P', ms: null, error: 'does not fit', need, tuning }))
      .toBe("forward candidate tile 128×32, no prefetch: skipped, too large for this GPU's workgroup memory (needs 41472 bytes, it has 32768)");
    const alike = 'WebGPU error in forward: 99999 bytes at chunk 4, 2048 invocations in the driver log';
    expect(trialWords({ kind: 'fwd', pins: 'P', ms: null, error: alike, tuning })).toBe(`forward candidate tile 128×32, no prefetch: skipped (${alike})`);
  });
});
