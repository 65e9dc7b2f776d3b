/**
 * Acquiring devices (src/gpu/device.ts) on a fake GPU: an adapter that refuses the device is a
 * DeviceRequestError naming the adapter, what was asked and what to do (not the driver's bare
 * error); a bad device count is an InputError.
 */
import { describe, expect, it } from 'vitest';
import { acquireDevices } from '../src/gpu/device.js';
import { DeviceRequestError, InputError } from '../src/errors.js';

/** A GPU with one adapter (shader-f16, a storage limit) whose requestDevice rejects as Dawn does. */
function refusingGPU(): GPU {
  const adapter = {
    info: { vendor: 'acme', architecture: 'x', device: 'Acme X1', description: 'Acme X1 (driver 1.0)' },
    features: new Set(['shader-f16']),
    limits: { maxStorageBufferBindingSize: 1 << 30 },
    requestDevice: async () => { throw new Error('Required limit (1073741824) is greater than the supported limit'); },
  };
  return { requestAdapter: async () => adapter, getPreferredCanvasFormat: () => 'rgba8unorm', wgslLanguageFeatures: new Set() } as unknown as GPU;
}

describe('acquireDevices', () => {
  it('a refused device is a DeviceRequestError naming the adapter, the request and what to do', async () => {
    const e = await acquireDevices(refusingGPU(), 1).catch((x) => x);
    expect(e).toBeInstanceOf(DeviceRequestError);
    expect(e.message).toMatch(/^the adapter Acme X1 \(driver 1\.0\) refused a device/);
    expect(e.message).toContain('features: shader-f16');
    expect(e.message).toContain('maxStorageBufferBindingSize=1073741824');
    expect(e.message).toContain('Required limit (1073741824) is greater than the supported limit');
    expect(e.message).toContain('FLASHRING_ADAPTER=');
  });

  it('a device count that is not a positive integer is an InputError', async () => {
    for (const n of [0, -1, 1.5]) await expect(acquireDevices(refusingGPU(), n)).rejects.toThrow(InputError);
  });
});
