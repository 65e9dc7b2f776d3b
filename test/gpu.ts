/**
 * One device per test file, from Dawn (lavapipe on CPU machines). No adapter is a failure,
 * never a silent skip; FLASHRING_ALLOW_NO_GPU=1 turns GPU tests into explicit skips.
 */
import { afterAll } from 'vitest';
import { acquireDevices, FlashDevice, AcquireOptions } from '../src/gpu/device.js';
import { nodeGPU } from '../src/gpu/node.js';

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
