/**
 * .npy inputs read header first (src/cli/npy.ts readNpyHeader, src/cli/attention.ts loadInputs): a file whose
 * size does not match its header, or shapes that do not fit each other, are refused having read only the
 * headers; the data is then read once, straight into its typed array. Reads are recorded through a mocked
 * node:fs/promises (open's handles, and readFile, which reads a whole file).
 */
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeNpy, NPY_HEAD_BYTES, readNpyData, readNpyHeader, ReadAt } from '../src/cli/npy.js';
import { attentionCommand } from '../src/cli/attention.js';
import { NpyError } from '../src/errors.js';

/** Every read of a file: [path, position, length]. */
const reads = vi.hoisted(() => [] as [string, number, number][]);
vi.mock('node:fs/promises', async (importOriginal) => {
  const fsp = await importOriginal<typeof import('node:fs/promises')>();
  const wrapped = {
    ...fsp,
    open: async (path: string, ...rest: unknown[]) => {
      const fh = await (fsp.open as (...a: unknown[]) => Promise<import('node:fs/promises').FileHandle>)(path, ...rest);
      return new Proxy(fh, {
        get(t, key) {
          if (key === 'read') return (buf: Uint8Array, off: number, len: number, pos: number) => (reads.push([String(path), pos, len]), t.read(buf, off, len, pos));
          const v = Reflect.get(t, key, t);
          return typeof v === 'function' ? v.bind(t) : v;
        },
      });
    },
    readFile: async (path: string, ...rest: unknown[]) => {
      reads.push([String(path), 0, statSync(path).size]);
      return (fsp.readFile as (...a: unknown[]) => Promise<Buffer>)(path, ...rest);
    },
  };
  return { ...wrapped, default: wrapped };
});

const dir = mkdtempSync(join(tmpdir(), 'flashring-npy-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => void (reads.length = 0));
const f = (n: string) => join(dir, n);

/** A .npy file of `descr` and `shape` with `data` bytes after its header (v1, padded to 64 as np.save pads). */
function rawNpy(descr: string, shape: number[], data: Uint8Array): Uint8Array {
  const t = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${t}, }`;
  h += ' '.repeat((64 - ((10 + h.length + 1) % 64)) % 64) + '\n';
  const out = new Uint8Array(10 + h.length + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(out.buffer).setUint16(8, h.length, true);
  for (let i = 0; i < h.length; i++) out[10 + i] = h.charCodeAt(i);
  out.set(data, 10 + h.length);
  return out;
}
const bytesOf = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
/** The most of a file any read reached. */
const reachOf = (path: string) => Math.max(0, ...reads.filter(([p]) => p === path).map(([, pos, len]) => pos + len));

describe('readNpyHeader and readNpyData', () => {
  it('round-trips f32, f16, f64 and int32 exactly, each read once into an array of its own (no second copy)', async () => {
    const cases = [
      { kind: 'float' as const, bytes: encodeNpy({ dtype: 'f4', shape: [2, 3, 700], data: Float32Array.from({ length: 4200 }, (_, i) => Math.sin(i) * 1e3) }), want: Float32Array },
      { kind: 'float' as const, bytes: encodeNpy({ dtype: 'f2', shape: [3, 1001], data: Uint16Array.from({ length: 3003 }, (_, i) => (i * 40503) & 0xffff) }), want: Uint16Array },
      { kind: 'float' as const, bytes: encodeNpy({ dtype: 'f8', shape: [5], data: Float64Array.from([Math.PI, -1e300, 0, -0, 5e-324]) }), want: Float64Array },
      { kind: 'int32' as const, bytes: rawNpy('<i4', [4], bytesOf(Int32Array.from([0, 7, 2 ** 31 - 1, -5]))), want: Int32Array },
    ];
    for (const [i, c] of cases.entries()) {
      const path = f(`rt${i}.npy`);
      writeFileSync(path, c.bytes);
      const fh = await open(path, 'r');
      try {
        const h = c.kind === 'float' ? await readNpyHeader(fh, c.bytes.length, path, 'float') : await readNpyHeader(fh, c.bytes.length, path, 'int32');
        const data = await readNpyData(fh, h as never, path);
        expect(data).toBeInstanceOf(c.want);
        expect(data.byteOffset).toBe(0);
        expect(data.buffer.byteLength).toBe(h.dataBytes);
        expect(Buffer.from(bytesOf(data)).equals(Buffer.from(c.bytes.subarray(h.dataStart)))).toBe(true);
        // The header's read, then the data's, once.
        expect(reads.filter(([p, pos]) => p === path && pos >= h.dataStart).map(([, pos, len]) => [pos, len])).toEqual(h.dataBytes ? [[h.dataStart, h.dataBytes]] : []);
      } finally {
        await fh.close();
      }
    }
  });

  it('int64 data read as int32 (cu_seqlens as np.cumsum writes them): the same values; one beyond int32 refused, naming it', async () => {
    const read = async (name: string, values: bigint[]) => {
      const path = f(name), bytes = rawNpy('<i8', [values.length], bytesOf(BigInt64Array.from(values)));
      writeFileSync(path, bytes);
      const fh = await open(path, 'r');
      try {
        return await readNpyData(fh, await readNpyHeader(fh, bytes.length, path, 'int32'), path);
      } finally {
        await fh.close();
      }
    };
    expect(await read('i8.npy', [0n, 7n, 2n ** 31n - 1n, -5n])).toEqual(Int32Array.from([0, 7, 2 ** 31 - 1, -5]));
    await expect(read('i8big.npy', [0n, 7n, 2n ** 31n])).rejects.toThrow(/i8big\.npy: int64 value 2147483648 \(element 2\) is outside int32's range/);
  });

  it('a file whose header claims more data than it has is refused by its size, having read only the header', async () => {
    // 1 GiB claimed, 16 bytes there; and a sparse file of 1.5 GiB one byte short of what its header claims.
    const short = f('short.npy');
    writeFileSync(short, rawNpy('<f4', [1024, 1024, 256], new Uint8Array(16)));
    const sparse = f('sparse.npy');
    const head = rawNpy('<f4', [3, 2 ** 27], new Uint8Array(0));
    writeFileSync(sparse, head);
    truncateSync(sparse, head.length + 3 * 2 ** 29 - 1);
    for (const [path, re] of [[short, /truncated data: shape \(1024, 1024, 256\) needs 1073741824 bytes, file has 16$/], [sparse, /truncated data: shape \(3, 134217728\) needs 1610612736 bytes, file has 1610612735$/]] as const) {
      const fh = await open(path, 'r');
      try {
        const err = await readNpyHeader(fh, statSync(path).size, path, 'float').catch((e) => e);
        expect(err).toBeInstanceOf(NpyError);
        expect(err.message).toMatch(re);
      } finally {
        await fh.close();
      }
      expect(reachOf(path)).toBeLessThanOrEqual(NPY_HEAD_BYTES);
    }
  });

  it('a header longer than the first read is read whole; one announced past the end of the file is truncated', async () => {
    const long = rawNpy('<f4', [2], bytesOf(Float32Array.from([1, 2])));
    // The same array with a header padded past NPY_HEAD_BYTES (np.save pads with spaces too).
    const pad = 5000;
    const h = new TextDecoder('latin1').decode(long.subarray(10, long.length - 8)).trimEnd() + ' '.repeat(pad) + '\n';
    const bytes = new Uint8Array(10 + h.length + 8);
    bytes.set(long.subarray(0, 8));
    new DataView(bytes.buffer).setUint16(8, h.length, true);
    for (let i = 0; i < h.length; i++) bytes[10 + i] = h.charCodeAt(i);
    bytes.set(long.subarray(long.length - 8), 10 + h.length);
    const reader: ReadAt = { read: async (buf, off, len, pos) => (buf.set(bytes.subarray(pos, pos + len), off), { bytesRead: Math.max(0, Math.min(len, bytes.length - pos)) }) };
    const got = await readNpyHeader(reader, bytes.length, 'long.npy', 'float');
    expect([...(await readNpyData(reader, got, 'long.npy'))]).toEqual([1, 2]);
    await expect(readNpyHeader(reader, 4000, 'cut.npy', 'float')).rejects.toThrow(/^cut\.npy: truncated header \(\d+ bytes announced, 3990 present\)$/);
    // Over 4 KiB and still short of the header it announces: the same words, not 'the file ended while it was read'.
    await expect(readNpyHeader(reader, 4500, 'cut2.npy', 'float')).rejects.toThrow(/^cut2\.npy: truncated header \(\d+ bytes announced, 4490 present\)$/);
  });
});

describe('flashring attention reads every header before any data', () => {
  const tensor = (name: string, shape: number[]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    writeFileSync(f(name), encodeNpy({ dtype: 'f4', shape, data: Float32Array.from({ length: n }, (_, i) => Math.cos(i)) }));
    return f(name);
  };
  const run = (q: string, k: string, v: string, ...extra: string[]) => attentionCommand(['--q', q, '--k', k, '--v', v, '--out', f('out'), ...extra]);

  it('a shape mismatch between Q and K (and dO against Q) is refused having read only the headers', async () => {
    const [q, k, v] = [tensor('q.npy', [1, 2, 64, 64]), tensor('k.npy', [1, 2, 64, 32]), tensor('v.npy', [1, 2, 64, 32])];
    await expect(run(q, k, v)).rejects.toThrow('head dim mismatch: Q has D=64, K/V have D=32');
    for (const p of [q, k, v]) {
      expect(statSync(p).size).toBeGreaterThan(NPY_HEAD_BYTES);
      expect(reachOf(p), p).toBeLessThanOrEqual(NPY_HEAD_BYTES);
    }
    reads.length = 0;
    const [k2, dO] = [tensor('k2.npy', [1, 2, 64, 64]), tensor('do.npy', [1, 2, 32, 64])];
    await expect(run(q, k2, k2, '--do', dO)).rejects.toThrow('dO has shape [1,2,32,64] but Q has [1,2,64,64]; they must match');
    for (const p of [q, k2, dO]) expect(reachOf(p), p).toBeLessThanOrEqual(NPY_HEAD_BYTES);
  });

  it('a mismatch with an [H, N, D] file names its shape as the file gives it, and what it is read as', async () => {
    const [q3, k3, k4] = [tensor('q3.npy', [2, 64, 64]), tensor('k3.npy', [2, 64, 64]), tensor('k4.npy', [2, 2, 64, 64])];
    const dO = tensor('do4.npy', [2, 2, 64, 64]);
    await expect(run(q3, k3, k3, '--do', dO)).rejects.toThrow('dO has shape [2,2,64,64] but Q has [2,64,64] ([H, N, D], read as [1,2,64,64]); they must match');
    await expect(run(q3, k4, k4)).rejects.toThrow('batch mismatch: Q has B=1 (an [H, N, D] file is B = 1), K/V have B=2');
    await expect(run(k4, k3, k4)).rejects.toThrow('K has shape [2,64,64] ([H, N, D], read as [1,2,64,64]) but V has [2,2,64,64]; they must match');
    // Grouped-query heads: Q's count a multiple of K/V's, said in words that count (it said 'Q has 1 heads').
    await expect(run(tensor('q1.npy', [1, 64, 64]), k3, k3)).rejects.toThrow("Q has 1 head, not a multiple of K/V's 2 (grouped-query attention)");
  });

  it('one --cu-seqlens for Q and K/V of different lengths is refused as such, naming both, before it is read', async () => {
    // Its last entry cannot be both totals: it was refused as 'cu_seqlens_k ends at 64 but the sequence has 48 tokens', naming a file not given.
    const [q, k] = [tensor('qcu.npy', [1, 2, 64, 64]), tensor('kcu.npy', [1, 2, 48, 64])];
    const cu = f('cu.npy');
    writeFileSync(cu, rawNpy('<i4', [3], bytesOf(Int32Array.from([0, 30, 64]))));
    await expect(run(q, k, k, '--cu-seqlens', cu)).rejects.toThrow(
      `--cu-seqlens ${cu} gives Q and K/V the same documents, but Q has 64 tokens and K/V have 48: give each its own, --cu-seqlens-q (ending at 64) and --cu-seqlens-k (ending at 48)`,
    );
    expect(reads.filter(([p]) => p === cu)).toEqual([]);
    for (const p of [q, k]) expect(reachOf(p), p).toBeLessThanOrEqual(NPY_HEAD_BYTES);
  });

  it('a truncated Q is refused by its size, its data never read', async () => {
    const good = tensor('q1.npy', [1, 2, 64, 64]);
    const cut = f('qcut.npy');
    writeFileSync(cut, rawNpy('<f4', [1, 2, 1024, 1024], new Uint8Array(64 * 1024)));
    await expect(run(cut, good, good)).rejects.toThrow(/qcut\.npy: truncated data: shape \(1, 2, 1024, 1024\) needs 8388608 bytes, file has 65536$/);
    expect(reachOf(cut)).toBeLessThanOrEqual(NPY_HEAD_BYTES);
    expect(reachOf(good)).toBeLessThanOrEqual(NPY_HEAD_BYTES);
  });
});
