/**
 * The buffer tracker (src/gpu/tracker.ts) on a fake device: a buffer the device would refuse (past maxBufferSize)
 * is a LimitError before it is made, and is never counted (Dawn makes an invalid buffer, reports the error
 * uncaptured, and the tracker counted its bytes as live; mapping it at creation threw a plain Error).
 */
import { describe, expect, it } from 'vitest';
import { BufferTracker } from '../src/gpu/tracker.js';
import { LimitError } from '../src/errors.js';

function fakeDevice(maxBufferSize: number) {
  const made: GPUBufferDescriptor[] = [];
  const device = { limits: { maxBufferSize }, createBuffer: (d: GPUBufferDescriptor) => (made.push(d), { size: d.size, destroy: () => {} }) };
  return { device: device as unknown as GPUDevice, made };
}

describe('BufferTracker', () => {
  it('counts live and peak bytes of the buffers it makes', () => {
    const { device } = fakeDevice(1024);
    const t = new BufferTracker(device);
    const a = t.create({ label: 'a', size: 1024, usage: 0 });
    t.create({ label: 'b', size: 8, usage: 0 });
    t.destroy(a);
    expect(t.snapshot()).toEqual({ liveBytes: 8, peakBytes: 1032, liveBuffers: 1, largestBuffer: 1024 });
  });

  it('a buffer past maxBufferSize: a LimitError naming it and the limit, nothing made or counted', () => {
    const { device, made } = fakeDevice(1024);
    const t = new BufferTracker(device);
    expect(() => t.create({ label: 'Q', size: 1028, usage: 0, mappedAtCreation: true })).toThrow(LimitError);
    expect(() => t.create({ label: 'Q', size: 1028, usage: 0 })).toThrow(/^buffer Q needs 1028 bytes; this device allows 1024 \(maxBufferSize\): /);
    expect(made).toEqual([]);
    expect(t.snapshot()).toEqual({ liveBytes: 0, peakBytes: 0, liveBuffers: 0, largestBuffer: 0 });
  });
});
