/**
 * Pipeline-overridable constants (WGSL `override`) through buildPipeline: the tensor-core
 * backward builds its accumulating pipelines this way (ACCUMULATE, shaders/flash_bwd_sgmm.wgsl),
 * which only GPUs with subgroup matrices run; this is where CI checks the plumbing itself.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { testDevice } from './gpu.js';
import { FlashDevice } from '../src/gpu/device.js';
import { buildPipeline } from '../src/kernels/pipeline.js';
import { readback, storage } from '../src/gpu/buffers.js';
import { GPUValidationError } from '../src/errors.js';

const CODE = `
override ACCUMULATE: bool = false;
override SCALE: u32 = 3u;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn main() { out[0] = select(7u, 9u, ACCUMULATE) * SCALE; }
`;

let dev: FlashDevice;
beforeAll(async () => {
  dev = await testDevice();
});

/** What the probe writes when built with `constants`. */
async function run(constants: Record<string, number>): Promise<number> {
  const pipeline = await buildPipeline(dev, 'overrideProbe', CODE, 'main', undefined, constants);
  const out = storage(dev, 4, 'overrideProbe.out');
  const enc = dev.device.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, dev.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: out } }] }));
  pass.dispatchWorkgroups(1);
  pass.end();
  dev.device.queue.submit([enc.finish()]);
  const got = new Uint32Array(await readback(dev, out, 4))[0];
  dev.tracker.destroy(out);
  return got;
}

describe('buildPipeline with override constants', () => {
  it('takes the defaults when given none, and each constant given (a bool as 0 or 1)', async () => {
    expect(await run({})).toBe(21);
    expect(await run({ ACCUMULATE: 1 })).toBe(27);
    expect(await run({ ACCUMULATE: 0, SCALE: 5 })).toBe(35);
  });

  it('a constant the shader does not declare is a validation error naming the pipeline', async () => {
    await expect(run({ ACCUMULAT: 1 })).rejects.toThrow(GPUValidationError);
    await expect(run({ ACCUMULAT: 1 })).rejects.toThrow(/overrideProbe/);
  });
});
