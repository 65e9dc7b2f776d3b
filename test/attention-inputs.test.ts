/**
 * `flashring attention`'s checks of what it reads and where it writes, made before any device is asked for
 * (src/cli/attention.ts, src/cli/files.ts): each case is refused with an InputError, nothing written.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeNpy, NpyArray } from '../src/cli/npy.js';
import { attentionCommand } from '../src/cli/attention.js';
import { InputError } from '../src/errors.js';
import { checkRoom, sizeOf } from '../src/cli/files.js';
import { toHalfArray } from '../src/f16.js';

// A file system with 8 KiB free (4 KiB blocks) under any folder named 'smallfs', as statfs reports a nearly full disk,
// and 4 KiB more that only root may fill (ext4's reserved blocks: bfree counts them, bavail not);
// one that gives no sizes under 'nosizefs'; 200 GiB free, and none for root alone, under 'bigfs'; 40 KiB under 'roomfs'.
vi.mock('node:fs/promises', async (importOriginal) => {
  const fsp = await importOriginal<typeof import('node:fs/promises')>();
  const statfs = (async (path: string, ...rest: unknown[]) => {
    const st = await (fsp.statfs as (...a: unknown[]) => Promise<import('node:fs').StatsFs>)(path, ...rest);
    if (/nosizefs/.test(String(path))) return { ...st, bsize: 4096, blocks: 0, bfree: 0, bavail: 0 };
    if (/roomfs/.test(String(path))) return { ...st, bsize: 4096, bavail: 10, bfree: 10 };
    if (/bigfs/.test(String(path))) return { ...st, bsize: 4096, bavail: 200 * 2 ** 18, bfree: 200 * 2 ** 18 };
    return /smallfs/.test(String(path)) ? { ...st, bsize: 4096, bavail: 2, bfree: 3 } : st;
  }) as typeof fsp.statfs;
  return { ...fsp, statfs, default: { ...fsp, statfs } };
});

// Devices without shader-f16 (lavapipe has it; `devices.withF16` lists those given it), and no GPU work: the refusals
// below come before any. The adapters' name (`adapter.description`) a test may change.
const devices = vi.hoisted(() => ({ withF16: [] as number[] }));
const adapter = vi.hoisted(() => ({ description: '' }));
vi.mock('../src/gpu/node.js', () => ({ nodeGPU: async () => ({}) }));
vi.mock('../src/gpu/device.js', async (importOriginal) => {
  const mod = await importOriginal<typeof import('../src/gpu/device.js')>();
  const fake = (index: number) => {
    const hasF16 = devices.withF16.includes(index);
    const description = adapter.description || `an adapter ${hasF16 ? 'with' : 'without'} shader-f16`;
    return { index, hasF16, adapter: { description }, destroy: () => {} };
  };
  return { ...mod, acquireDevices: async (_gpu: unknown, n: number) => Array.from({ length: n }, (_, i) => fake(i)) };
});

const dir = mkdtempSync(join(tmpdir(), 'flashring-attention-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const f = (n: string) => join(dir, n);

/** A [1, 2, N, 8] tensor file of `dtype` (cos(i)), with `set` applied to its values. */
function tensor(name: string, dtype: 'f2' | 'f4' | 'f8' = 'f4', set: (x: Float64Array) => void = () => {}, N = 16): string {
  const x = Float64Array.from({ length: 16 * N }, (_, i) => Math.cos(i));
  set(x);
  const data = dtype === 'f8' ? x : dtype === 'f2' ? toHalfArray(x) : Float32Array.from(x);
  writeFileSync(f(name), encodeNpy({ dtype, shape: [1, 2, N, 8], data } as NpyArray));
  return f(name);
}

describe('flashring attention: float64 inputs', () => {
  it('a finite float64 value beyond float32 range is refused, named, before any device (it would become Inf, its rows NaN)', async () => {
    const q = tensor('q64.npy', 'f8', (x) => void (x[37] = -1e39));
    const k = tensor('k.npy');
    const run = attentionCommand(['--q', q, '--k', k, '--v', k, '--out', f('out64')]);
    await expect(run).rejects.toThrow(InputError);
    await expect(run).rejects.toThrow(/^Q \(.*q64\.npy\) holds -1e\+39 \(element 37\), beyond float32's range/);
    expect(existsSync(f('out64'))).toBe(false);
  });

  it('a refused float64 input is one line: no note of an f32 run that will not happen before it', async () => {
    const q = tensor('q64n.npy', 'f8', (x) => void (x[3] = 1e39));
    const k = tensor('k.npy');
    const said: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...m: unknown[]) => void said.push(m.join(' ')));
    try {
      await expect(attentionCommand(['--q', q, '--k', k, '--v', k, '--out', f('out64n')])).rejects.toThrow(/holds 1e\+39 \(element 3\), beyond float32's range/);
    } finally {
      spy.mockRestore();
    }
    expect(said).toEqual([]);
    expect(existsSync(f('out64n'))).toBe(false);
  });

  it('values that round to a finite float32, Inf and NaN pass (non-finite data propagates)', async () => {
    // Q and K are read first: the refusal names V, so their values passed.
    const q = tensor('q64r.npy', 'f8', (x) => void (x[0] = 3.4028235e38)); // rounds to float32's largest
    const k = tensor('k64r.npy', 'f8', (x) => x.set([Infinity, NaN, -Infinity], 1));
    const v = tensor('v64r.npy', 'f8', (x) => void (x[5] = 1e300));
    await expect(attentionCommand(['--q', q, '--k', k, '--v', v, '--out', f('out64r')])).rejects.toThrow(/^V \(.*v64r\.npy\) holds 1e\+300 \(element 5\)/);
  });
});

describe('flashring attention: an input that is a folder', () => {
  it("is said as a folder, not as --out lying inside an input folder (every input of attention is a file)", async () => {
    const data = f('datafolder');
    mkdirSync(data, { recursive: true });
    const k = tensor('kfold.npy');
    const run = attentionCommand(['--q', data, '--k', k, '--v', k, '--out', join(data, 'out')]);
    await expect(run).rejects.toThrow(InputError);
    await expect(run).rejects.toThrow(`--q ${data} is a folder, not an ordinary file: give a file (a pipe or device could be endless)`);
    expect(existsSync(join(data, 'out'))).toBe(false);
  });
});

describe('flashring attention: room for the outputs', () => {
  // The free space depends on who runs: every case below as a user (root's reserved blocks not counted), then as root.
  const asUser = () => vi.spyOn(process, 'getuid').mockReturnValue(1000);
  afterEach(() => void vi.restoreAllMocks());

  it('checkRoom counts each file in whole blocks against the free space, and refuses what does not fit', async () => {
    asUser();
    mkdirSync(f('smallfs'));
    await expect(checkRoom('out', f('smallfs/new/deeper'), [4096, 4096])).resolves.toBeUndefined();
    await expect(checkRoom('out', f('smallfs/new'), [4096, 4097])).rejects.toThrow(`--out ${f('smallfs/new')}: this run writes 12 KiB there and its file system has 8 KiB free: make room, or give a folder on another disk`);
    await expect(checkRoom('out', dir, [2 ** 62])).rejects.toThrow(InputError);
    await expect(checkRoom('out', dir, [1 << 20])).resolves.toBeUndefined();
    // A file system that reports no sizes at all (0 blocks of 0: some FUSE mounts) is not taken as full.
    mkdirSync(f('nosizefs'));
    await expect(checkRoom('out', f('nosizefs/x'), [1 << 20])).resolves.toBeUndefined();
  });

  it("root may also fill the blocks kept for root (bfree, not bavail): 12 KiB fit there, 16 KiB do not", async () => {
    mkdirSync(f('smallfs'), { recursive: true });
    vi.spyOn(process, 'getuid').mockReturnValue(0);
    await expect(checkRoom('out', f('smallfs/root'), [4096, 4097])).resolves.toBeUndefined();
    await expect(checkRoom('out', f('smallfs/root'), [4096, 4096, 4096, 1])).rejects.toThrow(`this run writes 16 KiB there and its file system has 12 KiB free`);
  });

  it('sizes from 1 GiB are said in GiB (not 204800 MiB)', async () => {
    asUser();
    mkdirSync(f('bigfs'));
    await expect(checkRoom('out', f('bigfs'), [300 * 2 ** 30])).rejects.toThrow(`--out ${f('bigfs')}: this run writes 300.0 GiB there and its file system has 200.0 GiB free`);
    await expect(checkRoom('out', f('bigfs'), [2 ** 30 - 4096, 200 * 2 ** 30])).rejects.toThrow('this run writes 201.0 GiB there');
    expect([1023, 2 ** 20, 1023 * 2 ** 20, 2 ** 30, 1.25 * 2 ** 30].map(sizeOf)).toEqual(['1 KiB', '1 MiB', '1023 MiB', '1.0 GiB', '1.3 GiB']);
  });

  it('outputs larger than the free space are refused before any device (a full disk failed the write after the work)', async () => {
    asUser();
    const k = tensor('k.npy');
    const run = attentionCommand(['--q', k, '--k', k, '--v', k, '--do', k, '--out', f('smallfs/run')]);
    // O, dQ, dK, dV: 1 KiB of data each and a header (a block each), LSE and the record: 6 blocks, 2 free.
    await expect(run).rejects.toThrow(/--out .*smallfs\/run: this run writes 24 KiB there and its file system has 8 KiB free/);
    expect(existsSync(f('smallfs/run'))).toBe(false);
  });

  // [1, 2, 512, 8] float16: O 16 KiB (5 blocks with its header), LSE 4 KiB (2), the record (1): 32 KiB, in 40 KiB
  // free; in float32 O takes 9 blocks: 48 KiB.
  it('float16 inputs written as float32 (--precision auto, no shader-f16 on the device) are checked at float32 before any GPU work', async () => {
    asUser();
    mkdirSync(f('roomfs'));
    const h = tensor('h.npy', 'f2', undefined, 512);
    for (const ring of [[], ['--cp', '2'], ['--cp', '2', '--cp-mode', 'multi-adapter']]) {
      const run = attentionCommand(['--q', h, '--k', h, '--v', h, '--out', f('roomfs/o'), ...ring]);
      await expect(run, ring.join(' ')).rejects.toThrow(`--out ${f('roomfs/o')}: this run writes 48 KiB there and its file system has 40 KiB free`);
    }
    expect(existsSync(f('roomfs/o'))).toBe(false);
  });

  it('multi-adapter: float16 inputs run in f32 where any rank\'s adapter lacks shader-f16, not only the first', async () => {
    asUser();
    mkdirSync(f('roomfs'), { recursive: true });
    const h = tensor('h.npy', 'f2', undefined, 512);
    devices.withF16 = [0];   // rank 0's adapter has it, rank 1's not: f32 on both, checked at float32 (48 KiB)
    try {
      const run = attentionCommand(['--q', h, '--k', h, '--v', h, '--out', f('roomfs/o'), '--cp', '2', '--cp-mode', 'multi-adapter']);
      await expect(run).rejects.toThrow(`--out ${f('roomfs/o')}: this run writes 48 KiB there and its file system has 40 KiB free`);
    } finally {
      devices.withF16 = [];
    }
  });

  it("a ring's --timeline counts with --out where both are on one file system (at most timelineBound: its structure, every figure at its widest)", async () => {
    asUser();
    mkdirSync(f('roomfs'), { recursive: true });
    // float32 [1, 2, 448, 8]: O 28 KiB (8 blocks with its header), LSE (1), the record (1): the 40 KiB free, exactly;
    // the timeline of 2 ranks × 2 p2p forward steps, at most 5 to 8 KiB, is 2 blocks more.
    const k = tensor('k448.npy', 'f4', undefined, 448), tl = f('roomfs/tl.json');
    const args = ['--q', k, '--k', k, '--v', k, '--out', f('roomfs/o'), '--cp', '2'];
    await expect(attentionCommand([...args, '--timeline', tl]))
      .rejects.toThrow(`--out ${f('roomfs/o')} and --timeline ${tl}: this run writes 48 KiB on their file system, which has 40 KiB free: make room, or give folders on another disk`);
    // Without the timeline the outputs fit: the run goes on (to this file's device without GPU work, which fails otherwise).
    await expect(attentionCommand(args)).rejects.not.toThrow(/this run writes/);
  });

  it("the --timeline is checked again with its adapter names once the devices are there, before any GPU work", async () => {
    asUser();
    mkdirSync(f('roomfs'), { recursive: true });
    // [1, 2, 16, 8]: O, LSE and the record a block each; the timeline without its names 2 blocks: 20 KiB of 40 free.
    const k = tensor('k.npy'), tl = f('roomfs/tl2.json');
    const args = ['--q', k, '--k', k, '--v', k, '--out', f('roomfs/o2'), '--cp', '2', '--timeline', tl];
    const name = adapter.description;
    try {
      adapter.description = 'an adapter whose name runs on '.repeat(400); // 12000 bytes, twice (one a rank): 6 blocks more
      await expect(attentionCommand(args))
        .rejects.toThrow(`--out ${f('roomfs/o2')} and --timeline ${tl}: this run writes 44 KiB on their file system, which has 40 KiB free`);
      expect(existsSync(f('roomfs/o2'))).toBe(false);
    } finally {
      adapter.description = name;
    }
    await expect(attentionCommand(args)).rejects.not.toThrow(/this run writes/);
  });
});
