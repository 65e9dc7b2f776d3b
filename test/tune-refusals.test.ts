/**
 * `flashring tune` refused by its device (src/cli/tune.ts): f16 on an adapter without shader-f16, or a shape the device
 * cannot bind, refused before any search with nothing made on disk (the store's folder was made before the device's
 * checks, and a refused run left it empty). The devices are fakes: no GPU work comes before these refusals.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tuneCommand } from '../src/cli/tune.js';
import { InputError } from '../src/errors.js';

// One adapter without shader-f16 that binds at most 1 MiB a buffer.
vi.mock('../src/gpu/node.js', () => ({ nodeGPU: async () => ({}), robustShaders: () => false }));
vi.mock('../src/gpu/device.js', async (importOriginal) => {
  const mod = await importOriginal<typeof import('../src/gpu/device.js')>();
  const fake = { index: 0, hasF16: false, adapter: { description: 'an adapter without shader-f16' }, device: { limits: { maxStorageBufferBindingSize: 2 ** 20 } }, destroy: () => {} };
  return { ...mod, acquireDevices: async () => [fake] };
});

const dir = mkdtempSync(join(tmpdir(), 'flashring-tune-refusals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

describe('flashring tune refused by its device', () => {
  it('f16 without shader-f16, or tensors past what the device binds: an InputError, and nothing made in the cache or beside --store', async () => {
    for (const [i, [args, why]] of ([
      [['--precision', 'f16'], /^--precision f16: an adapter without shader-f16 has no shader-f16; give --precision f32$/],
      [['--precision', 'f32', '--N', '8192', '--heads', '16'], /^tune: N=8192 with 16 heads at D=64 needs 32 MiB per tensor; this device binds at most 1 MiB/],
    ] as const).entries()) {
      // The default store ($XDG_CACHE_HOME/flashring/tune.json), and one given in a folder not yet made.
      const cache = join(dir, `cache-${i}`), given = join(dir, `given-${i}`, 'store.json');
      vi.stubEnv('XDG_CACHE_HOME', cache);
      for (const store of [[], ['--store', given]]) {
        const run = tuneCommand(['--D', '64', '--causal', 'false', ...args, ...store]);
        await expect(run).rejects.toThrow(InputError);
        await expect(run).rejects.toThrow(why);
      }
      expect(existsSync(cache), args.join(' ')).toBe(false);
      expect(readdirSync(dir).filter((f) => f.startsWith('given-')), args.join(' ')).toEqual([]);
    }
  });
});
