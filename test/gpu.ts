/**
 * One device per test file, from Dawn (lavapipe on CPU machines). No adapter is a failure,
 * never a silent skip; FLASHRING_ALLOW_NO_GPU=1 turns GPU tests into explicit skips.
 */
import { afterAll } from 'vitest';
import { acquireDevices, FlashDevice, AcquireOptions } from '../src/gpu/device.js';
import { planSgmm } from '../src/kernels/sgmmTiles.js';
import { nodeGPU } from '../src/gpu/node.js';

/**
 * The path 'auto' takes for f16 on this device (head dims that are multiples of 16): tensor cores
 * where the adapter can run them (subgroup matrices, subgroups of 32: planSgmm), unless
 * FLASHRING_PATH=scalar forces the portable kernels (so the suite runs on either path).
 */
export const autoF16Path = (dev: FlashDevice): 'subgroup-matrix' | 'scalar' =>
  dev.hasF16 && typeof planSgmm(dev, 16, 'f16') !== 'string' && process.env.FLASHRING_PATH !== 'scalar' ? 'subgroup-matrix' : 'scalar';

export const ALLOW_NO_GPU = process.env.FLASHRING_ALLOW_NO_GPU === '1' && process.env.CI !== 'true';

const acquired: FlashDevice[] = [];

export async function testDevices(n = 1, opts: AcquireOptions = {}): Promise<FlashDevice[]> {
  const devs = await acquireDevices(await nodeGPU(), n, opts);
  acquired.push(...devs);
  return devs;
}

export async function testDevice(opts: AcquireOptions = {}): Promise<FlashDevice> {
  return (await testDevices(1, opts))[0];
}

afterAll(() => {
  for (const d of acquired.splice(0)) d.destroy();
});
