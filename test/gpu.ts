/**
 * One device per test file, from Dawn (lavapipe on CPU machines). No adapter is a failure,
 * never a silent skip; FLASHRING_ALLOW_NO_GPU=1 turns GPU tests into explicit skips.
 * Kernel pins reach a device through its options (`tuning`), never through process.env: a test
 * that times out cannot leave them to the next one, and every device is destroyed with its file.
 */
import { afterAll } from 'vitest';
import { acquireDevices, FlashDevice, AcquireOptions } from '../src/gpu/device.js';
import { planSgmm } from '../src/kernels/sgmmTiles.js';
import { nodeGPU } from '../src/gpu/node.js';
import { KernelTuning, tuningFromEnv } from '../src/kernels/tuning.js';

/**
 * The suite's own pins, read once from the environment it was started in (as the CLI reads
 * them): `FLASHRING_PATH=scalar npm test` runs every GPU test on the portable kernels. A test's
 * `tuning` adds to them.
 */
export const SUITE_TUNING: Readonly<KernelTuning> = tuningFromEnv(process.env);

/**
 * The path 'auto' takes for f16 on this device (head dims that are multiples of 16): tensor cores
 * where the adapter can run them (subgroup matrices, subgroups of 32: planSgmm), unless the
 * device's tuning pins the portable kernels (path 'scalar').
 */
export const autoF16Path = (dev: FlashDevice): 'subgroup-matrix' | 'scalar' =>
  dev.hasF16 && !('why' in planSgmm(dev, 16, 'f16')) && dev.tuning.path !== 'scalar' ? 'subgroup-matrix' : 'scalar';

export const ALLOW_NO_GPU = process.env.FLASHRING_ALLOW_NO_GPU === '1' && process.env.CI !== 'true';

const acquired: FlashDevice[] = [];

/** `n` devices of this file, with the suite's pins and `opts.tuning`'s over them; destroyed after the file. */
export async function testDevices(n = 1, opts: AcquireOptions = {}): Promise<FlashDevice[]> {
  const devs = await acquireDevices(await nodeGPU(), n, { ...opts, tuning: { ...SUITE_TUNING, ...opts.tuning } });
  acquired.push(...devs);
  for (const d of devs) requireFeatures(d);
  return devs;
}

/**
 * Tests that run a path only where the adapter has its feature skip it elsewhere; these switches turn
 * such a skip into a failure where the path must run: CI (`.ci/run` sets CI=true: its lavapipe has
 * shader-f16), and FLASHRING_REQUIRE_TENSOR_CORES=1 on a GPU host whose adapter has subgroup matrices
 * (the tensor-core kernels, which no CPU adapter runs).
 */
function requireFeatures(d: FlashDevice): void {
  const name = d.adapter.description || d.adapter.device;
  if (process.env.CI === 'true' && !d.hasF16) throw new Error(`CI=true: the adapter (${name}) has no shader-f16, so every f16 test would skip; CI's lavapipe (Mesa ≥ 25) has it`);
  if (process.env.FLASHRING_REQUIRE_TENSOR_CORES === '1' && (!d.hasF16 || !d.hasSubgroupMatrix))
    throw new Error(`FLASHRING_REQUIRE_TENSOR_CORES=1: the adapter (${name}) has no ${d.hasF16 ? 'subgroup matrices' : 'shader-f16'}, so the tensor-core tests would skip`);
}

export async function testDevice(opts: AcquireOptions = {}): Promise<FlashDevice> {
  return (await testDevices(1, opts))[0];
}

const tuned = new Map<string, Promise<FlashDevice>>();

/**
 * A device of this file with these pins over the suite's, one per distinct tuning (a kernel built
 * with other pins is never shared; the tuning is part of the device), destroyed after the file.
 */
export function tunedDevice(tuning: KernelTuning): Promise<FlashDevice> {
  const key = JSON.stringify(tuning);
  let dev = tuned.get(key);
  if (!dev) tuned.set(key, (dev = testDevice({ tuning })));
  return dev;
}

afterAll(() => {
  tuned.clear();
  for (const d of acquired.splice(0)) d.destroy();
});
