/**
 * Hand-computed checks of the readers and writers of user files (a mutation review of src/cli/npy.ts,
 * src/cli/args.ts, src/cli/files.ts, src/memory/csv.ts, src/memory/megatron.ts and the value checks of
 * src/cli/memory.ts and src/cli/attention.ts): each expectation is written out by hand (a .npy header
 * byte by byte, a CSV cell as text), and each test fails on a change of the code that every other unit
 * test let through.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, chmodSync, linkSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { encodeNpy, parseNpy, parseNpyInt32 } from '../src/cli/npy.js';
import { InputError, NpyError } from '../src/errors.js';
import { checkInputFile, MAX_BINARY_BYTES, OUTPUT_KINDS, OutputPlan, type OutputTarget } from '../src/cli/files.js';
import { CSV_COLUMNS, measuredRow, parseCsv, toCsv, type CsvRow } from '../src/memory/csv.js';
import { parseMegatronLog, parseMegatronLogs, type MeasuredPoint } from '../src/memory/megatron.js';
import { numberArg, parseCommand } from '../src/cli/args.js';
import { configFromFlags, memoryCommand, replayCommand } from '../src/cli/memory.js';
import { attentionCommand, parseAttentionArgs } from '../src/cli/attention.js';
import { computeTflopsArg, parseRingArgs } from '../src/cli/ringArgs.js';

/** A .npy file: magic, version, header length (2 bytes little-endian in 1.0, 4 in 2.0/3.0), header, data. */
function npy(version: number, header: string, data: number[] = [], headerBytes?: number[]): Uint8Array {
  const h = headerBytes ?? [...header].map((c) => c.charCodeAt(0));
  const pre = version === 1 ? [h.length & 0xff, h.length >> 8] : [h.length & 0xff, (h.length >> 8) & 0xff, (h.length >> 16) & 0xff, h.length >>> 24];
  return Uint8Array.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, version, 0, ...pre, ...h, ...data]);
}
/** 1.0f, 2.0f as little-endian float32 bytes; 0, 2 as little-endian int32. */
const F32_1_2 = [0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40];
const I32_0_2 = [0, 0, 0, 0, 2, 0, 0, 0];

describe('.npy by hand', () => {
  it('int32 cu_seqlens: little-endian and native are read, big-endian is refused', () => {
    expect([...parseNpyInt32(npy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n", I32_0_2)).data]).toEqual([0, 2]);
    expect([...parseNpyInt32(npy(1, "{'descr': '|i4', 'fortran_order': False, 'shape': (2,), }\n", I32_0_2)).data]).toEqual([0, 2]);
    // Big-endian 0 and 2: read little-endian they would be 0 and 33554432.
    const be = npy(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }\n", [0, 0, 0, 0, 0, 0, 0, 2]);
    expect(() => parseNpyInt32(be, 'cu.npy')).toThrow("cu.npy: dtype '>i4' is not int32 or int64 (little-endian; int64 values must fit int32); save it with .astype(np.int32)");
    expect(() => parseNpyInt32(npy(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }\n", I32_0_2), 'cu.npy')).toThrow(/dtype '<u4' is not int32/);
  });

  it('float cu_seqlens are refused, saying int32 and int64 are what is read', () => {
    for (const d of ['<f4', '<f8'])
      expect(() => parseNpyInt32(npy(1, `{'descr': '${d}', 'fortran_order': False, 'shape': (2,), }\n`, d === '<f4' ? F32_1_2 : [...new Uint8Array(Float64Array.from([0, 2]).buffer)]), 'cu.npy'), d)
        .toThrow(`cu.npy: dtype '${d}' is not int32 or int64 (little-endian; int64 values must fit int32); save it with .astype(np.int32)`);
  });

  it('int64 cu_seqlens (np.cumsum\'s default): read as int32 where every value fits, refused naming the first value that does not', () => {
    const i8 = (descr: string, values: bigint[]) =>
      npy(1, `{'descr': '${descr}', 'fortran_order': False, 'shape': (${values.length},), }\n`, [...new Uint8Array(BigInt64Array.from(values).buffer)]);
    const fits = [0n, 17n, 2n ** 31n - 1n];
    for (const d of ['<i8', '|i8', 'i8']) {
      const got = parseNpyInt32(i8(d, fits), 'cu.npy');
      expect(got.data).toBeInstanceOf(Int32Array);
      expect(got).toEqual(parseNpyInt32(npy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }\n", [...new Uint8Array(Int32Array.from([0, 17, 2 ** 31 - 1]).buffer)]), 'cu.npy'));
    }
    expect(() => parseNpyInt32(i8('<i8', [0n, 17n, 2n ** 31n, 5n]), 'cu.npy')).toThrow("cu.npy: int64 value 2147483648 (element 2) is outside int32's range");
    expect(() => parseNpyInt32(i8('<i8', [0n, -(2n ** 31n) - 1n]), 'cu.npy')).toThrow(/int64 value -2147483649 \(element 1\) is outside int32's range/);
    expect(() => parseNpyInt32(i8('>i8', [0n]), 'cu.npy')).toThrow("cu.npy: dtype '>i8' is not int32 or int64 (little-endian; int64 values must fit int32); save it with .astype(np.int32)");
  });

  it("a dtype with more after the size ('<f48', '<f4x') is refused, not read as f8 or f4", () => {
    for (const d of ['<f48', '<f4x', 'f16'])
      expect(() => parseNpy(npy(1, `{'descr': '${d}', 'fortran_order': False, 'shape': (2,), }\n`, F32_1_2), 'x.npy')).toThrow(`x.npy: dtype '${d}' is not supported`);
    // the accepted spellings of float32: '<f4', '|f4', '=f4', 'f4'
    for (const d of ['<f4', '|f4', '=f4', 'f4'])
      expect([...parseNpy(npy(1, `{'descr': '${d}', 'fortran_order': False, 'shape': (2,), }\n`, F32_1_2)).data]).toEqual([1, 2]);
  });

  it('format versions 1, 2 and 3 are read; 0 and 4 are refused by number', () => {
    for (const v of [1, 2, 3]) {
      const a = parseNpy(npy(v, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", F32_1_2));
      expect([...a.data]).toEqual([1, 2]);
    }
    for (const v of [0, 4]) expect(() => parseNpy(npy(v, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", F32_1_2), 'x.npy')).toThrow(`x.npy: unsupported .npy format version ${v}.0`);
  });

  it('an empty array whose header ends the file is read (its header is not truncated)', () => {
    const a = parseNpy(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }\n"), 'e.npy');
    expect(a.shape).toEqual([0]);
    expect(a.data.length).toBe(0);
    // One byte of header missing is a truncated header: 58 announced, 57 present.
    const cut = npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }\n").subarray(0, 67);
    expect(() => parseNpy(cut, 'e.npy')).toThrow('e.npy: truncated header (58 bytes announced, 57 present)');
  });

  it('a version 3 header is UTF-8: a non-ASCII character in it is quoted as written', () => {
    // 'é' is 0xc3 0xa9 in UTF-8 (latin1 would read 'Ã©'); a key np.save does not write is quoted in the message.
    const text = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'b";
    const bytes = [...[...text].map((c) => c.charCodeAt(0)), 0xc3, 0xa9, 0x27, 0x3a, 0x20, 0x31, 0x7d, 0x0a];
    expect(() => parseNpy(npy(3, '', F32_1_2, bytes), 'u.npy')).toThrow("u.npy: unknown key 'bé'");
  });

  it('a header that is not a dict (no opening brace) is malformed', () => {
    expect(() => parseNpy(npy(1, "'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", F32_1_2), 'x.npy')).toThrow('x.npy: malformed header');
    expect(() => parseNpy(npy(1, "x{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", F32_1_2), 'x.npy')).toThrow('x.npy: malformed header');
    // leading blanks before the brace are allowed
    expect(parseNpy(npy(1, "  {'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", F32_1_2)).shape).toEqual([2]);
  });

  it("Python 2 long dimensions ('2L') are read as integers", () => {
    const a = parseNpy(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1L, 2L), }\n", F32_1_2));
    expect(a.shape).toEqual([1, 2]);
  });

  it('2^40 elements is the largest shape judged by its data; one more is too large', () => {
    // 2^40 = 1099511627776 elements: allowed by the header, then the data is short (0 of 4398046511104 bytes).
    expect(() => parseNpy(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }\n"), 'x.npy'))
      .toThrow('x.npy: truncated data: shape (1099511627776) needs 4398046511104 bytes, file has 0');
    expect(() => parseNpy(npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627777,), }\n"), 'x.npy')).toThrow(/too large/);
  });

  it('encodeNpy writes NumPy\'s header byte for byte: a 1-D shape is a one-element tuple "(3,)", padded to 64 bytes', () => {
    const out = encodeNpy({ dtype: 'f4', shape: [3], data: Float32Array.from([1, 2, -2]) });
    // 10 bytes of preamble + 57 characters of dict + 60 spaces + '\n' = 128.
    const header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }" + ' '.repeat(60) + '\n';
    expect(header.length).toBe(118);
    const want = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, 118, 0, ...[...header].map((c) => c.charCodeAt(0)),
      0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0xc0];
    expect([...out]).toEqual(want);
    // 2-D: "(2, 3)"; 59 characters + 58 spaces + '\n' = 118 again.
    const two = encodeNpy({ dtype: 'f8', shape: [2, 3], data: new Float64Array(6) });
    expect(new TextDecoder('latin1').decode(two.subarray(10, 128))).toBe("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }" + ' '.repeat(58) + '\n');
    expect(two.length).toBe(128 + 48);
  });

  it('encodeNpy refuses a shape that does not match the data', () => {
    expect(() => encodeNpy({ dtype: 'f4', shape: [2, 2], data: new Float32Array(3) })).toThrow(NpyError);
    expect(() => encodeNpy({ dtype: 'f4', shape: [2, 2], data: new Float32Array(3) })).toThrow('encodeNpy: shape (2, 2) does not match 3 elements');
  });

  it('a file of 6 or 7 bytes is no .npy file (the magic check needs the version bytes)', () => {
    for (const n of [6, 7]) expect(() => parseNpy(Uint8Array.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1].slice(0, n)), 'x.npy')).toThrow('x.npy: not a .npy file');
  });
});

const TMP = mkdtempSync(join(tmpdir(), 'io-hand-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));
let seq = 0;
/** A fresh folder under TMP. */
const fresh = () => { const d = join(TMP, `d${seq++}`); mkdirSync(d); return d; };
const fileOut = (flag: string, path: string): OutputTarget => ({ flag, path, kind: 'file', what: 'a test output', looks: () => true });

describe('files: what a command reads', () => {
  it('a folder is refused as an input file, unless `present` leaves it to the reader', async () => {
    const d = fresh();
    await expect(checkInputFile('q', d, 100)).rejects.toThrow(`--q ${d} is a folder, not an ordinary file: give a file (a pipe or device could be endless)`);
    await expect(checkInputFile('input file', '/dev/null', 100)).rejects.toThrow('input file /dev/null is a device, not an ordinary file');
    await expect(checkInputFile('input file', d, 2 ** 20, true)).resolves.toBeUndefined();
  });

  it('a file larger than the bound is refused with both sizes; one at the bound is read', async () => {
    const d = fresh(), big = join(d, 'big.log');
    writeFileSync(big, Buffer.alloc(3 * 2 ** 20 + 1));
    await expect(checkInputFile('input file', big, 2 * 2 ** 20)).rejects.toThrow(`input file ${big} holds 3 MiB; at most 2 MiB can be read`);
    await expect(checkInputFile('input file', big, 3 * 2 ** 20 + 1)).resolves.toBeUndefined();
    // Just past the bound, where both round to the same MiB (a 2 GiB array and its .npy header): said in bytes.
    await expect(checkInputFile('input file', big, 3 * 2 ** 20)).rejects.toThrow(`input file ${big} holds ${3 * 2 ** 20 + 1} bytes; at most ${3 * 2 ** 20} bytes can be read`);
  });

  it('a .npy past the binary bound is refused saying what to do with that file: a narrower dtype where it then fits, or parts; parts of a float16 one; no parts of a single head; a cu_seqlens is no such file', async () => {
    const d = fresh();
    /** A sparse .npy (no disk used): a 1.0 header of `descr` and `shape`, padded to 128 bytes, and the array's bytes. */
    const big = (name: string, descr: string, shape: number[], item: number) => {
      let h = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
      h += ' '.repeat(128 - 10 - h.length - 1) + '\n';
      writeFileSync(join(d, name), npy(1, h));
      truncateSync(join(d, name), 128 + shape.reduce((a, b) => a * b, item));
      return join(d, name);
    };
    const q = big('q.npy', '<f4', [1, 2, 2 ** 22, 64], 4), h = big('h.npy', '<f2', [4, 2, 2 ** 22, 64], 2), w = big('w.npy', '<f8', [2, 1, 2 ** 22, 64], 8);
    const small = join(d, 'k.npy');
    writeFileSync(small, encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 8], data: new Float32Array(256) }));
    const cu = big('cu.npy', '<i4', [2 ** 29 + 1], 4);
    const split = 'split it along the batch or the heads (attention is independent across both) and run each part';
    const said = (...a: string[]) => attentionCommand(['--k', small, '--v', small, '--out', join(d, 'o'), ...a]).then(() => '', (e: Error) => e.message);
    // (just past the bound: in bytes, where both would read 2.0 GiB)
    expect(await said('--q', q)).toBe(`--q ${q} holds ${2 ** 31 + 128} bytes; at most ${MAX_BINARY_BYTES} bytes can be read: save it in float16 (half the bytes), or ${split}`);
    expect(await said('--q', h)).toBe(`--q ${h} holds 4.0 GiB; at most 2.0 GiB can be read: ${split}`);
    // Its float32 would be 2^31 + 128 bytes, past the bound again: only float16 is said (both were).
    expect(await said('--q', w)).toBe(`--q ${w} holds 4.0 GiB; at most 2.0 GiB can be read: save it in float16 (a quarter of the bytes: float64 is computed in f32 anyway), or ${split}`);
    const w3 = big('w3.npy', '<f8', [3, 2 ** 21, 64], 8);
    expect(await said('--q', w3)).toBe(`--q ${w3} holds 3.0 GiB; at most 2.0 GiB can be read: save it in float32 or float16 (a half or a quarter of the bytes: float64 is computed in f32 anyway), or ${split}`);
    // One head (B = H = 1): no batch or head to split along (both were said); float16 where it fits, else the sequence is too long.
    const q1 = big('q1.npy', '<f4', [1, 1, 2 ** 23, 64], 4), h1 = big('h1.npy', '<f2', [1, 2 ** 24, 64], 2);
    expect(await said('--q', q1)).toBe(`--q ${q1} holds ${2 ** 31 + 128} bytes; at most ${MAX_BINARY_BYTES} bytes can be read: save it in float16 (half the bytes)`);
    const flat = big('flat.npy', '<f4', [2 ** 29 + 1], 4);
    expect(await said('--q', flat)).toBe(`--q ${flat} holds ${2 ** 31 + 132} bytes; at most ${MAX_BINARY_BYTES} bytes can be read: its shape (${2 ** 29 + 1}) is no tensor attention takes ([B, H, N, D] or [H, N, D]): check the path`);
    expect(await said('--q', h1)).toBe(`--q ${h1} holds ${2 ** 31 + 128} bytes; at most ${MAX_BINARY_BYTES} bytes can be read: it is a single head (B = H = 1) of 16777216 tokens at D = 64, past that bound even in float16, and there is no batch or head to split it along: attention cannot read a sequence this long from one file`);
    expect(await said('--q', small, '--cu-seqlens', cu)).toBe(`--cu-seqlens ${cu} holds ${2 ** 31 + 132} bytes; at most ${MAX_BINARY_BYTES} bytes can be read: cu_seqlens holds one int32 a document and one more (4 MiB for a million documents), so a file this large is not one: check the path`);
    // Without a reader's advice (files.ts alone), the bound only.
    await expect(checkInputFile('q', q, MAX_BINARY_BYTES)).rejects.toThrow(new RegExp(`bytes can be read$`));
  });

  it('a missing file: "no such file", or nothing when `present` (the reader says it)', async () => {
    const p = join(fresh(), 'none.npy');
    await expect(checkInputFile('k', p, 100)).rejects.toThrow(`--k ${p}: no such file`);
    await expect(checkInputFile('input file', p, 100, true)).resolves.toBeUndefined();
  });
});

describe('files: where a command writes', () => {
  it('an output file that is an existing folder is refused', async () => {
    const d = fresh();
    await expect(OutputPlan.make([], [fileOut('csv', d)])).rejects.toThrow(`--csv ${d} is a folder; give a file name`);
  });

  it('an output file in a folder that does not exist is refused before any work', async () => {
    const d = fresh(), p = join(d, 'no', 'such', 'x.csv');
    await expect(OutputPlan.make([], [fileOut('csv', p)])).rejects.toThrow(`--csv ${p}: the folder ${join(d, 'no', 'such')} does not exist`);
  });

  it('a system folder (/dev, /proc) is refused as the place of an output', async () => {
    await expect(OutputPlan.make([], [fileOut('csv', '/dev/io-hand-never.csv')])).rejects.toThrow('--csv /dev/io-hand-never.csv: /dev is a system folder; choose an ordinary folder');
    await expect(OutputPlan.make([], [{ flag: 'out', path: '/proc/io-hand-never', kind: 'dir', names: ['o.npy'] }])).rejects.toThrow(/system folder/);
  });

  it('an output that is an input (by name, or a hard link to it) is refused', async () => {
    const d = fresh(), a = join(d, 'a.csv'), b = join(d, 'b.csv');
    writeFileSync(a, 'x');
    linkSync(a, b);
    await expect(OutputPlan.make([{ flag: 'input file', path: a }], [fileOut('csv', a)])).rejects.toThrow(`--csv would write ${a}, which is the input file ${a}: choose another path`);
    await expect(OutputPlan.make([{ flag: 'input file', path: a }], [fileOut('csv', b)])).rejects.toThrow(`--csv would write ${b}, which is the input file ${a}: choose another path`);
  });

  it('an output inside an input folder is refused', async () => {
    const d = fresh();
    await expect(OutputPlan.make([{ flag: 'data', path: d }], [fileOut('csv', join(d, 'x.csv'))])).rejects.toThrow(`--csv ${join(d, 'x.csv')} is inside the input --data ${d}: choose a path outside it`);
  });

  it('two outputs at one path are refused; a file output inside a folder output at a name of its own is not', async () => {
    const d = fresh(), p = join(d, 'x.json');
    await expect(OutputPlan.make([], [fileOut('timeline', p), fileOut('csv', p)])).rejects.toThrow(`--csv ${p} is also written by --timeline (${p}): give each output its own path`);
    const out = join(d, 'out');
    await expect(OutputPlan.make([], [{ flag: 'out', path: out, kind: 'dir', names: ['o.npy'] }, fileOut('timeline', join(out, 'timeline.json'))])).resolves.toBeInstanceOf(OutputPlan);
  });

  it('a file written over keeps its permissions (0600 stays 0600)', async () => {
    const d = fresh(), p = join(d, 'private.csv');
    writeFileSync(p, 'old');
    chmodSync(p, 0o600);
    const plan = await OutputPlan.make([], [fileOut('csv', p)]);
    await plan.write([{ path: p, data: 'new' }]);
    expect(readFileSync(p, 'utf8')).toBe('new');
    expect(statSync(p).mode & 0o777).toBe(0o600);
  });

  it('a failed write leaves the targets as they were, no temporary, and no folder it created', async () => {
    const d = fresh(), a = join(d, 'a.csv'), b = join(d, 'b.csv');
    writeFileSync(a, 'old');
    const plan = await OutputPlan.make([], [fileOut('a', a), fileOut('b', b)]);
    // The second file's data is not writable data: writeFile throws after the first temporary is written.
    await expect(plan.write([{ path: a, data: 'new' }, { path: b, data: 42 as unknown as string }])).rejects.toThrow();
    expect(readFileSync(a, 'utf8')).toBe('old');
    expect(readdirSync(d)).toEqual(['a.csv']);
    // A folder target the plan created is removed again.
    const out = join(d, 'made', 'deeper');
    const plan2 = await OutputPlan.make([], [{ flag: 'out', path: out, kind: 'dir', names: ['o.npy', 'p.npy'] }]);
    await expect(plan2.write([{ path: join(out, 'o.npy'), data: 'x' }, { path: join(out, 'p.npy'), data: 42 as unknown as string }])).rejects.toThrow();
    expect(readdirSync(d)).toEqual(['a.csv']);
  });

  it("temporaries of a process gone are removed; a live process's are left alone", async () => {
    const d = fresh(), p = join(d, 'x.csv');
    const dead = `.x.csv.${2 ** 22 + 7}.abc.tmp`, live = `.x.csv.${process.pid}.abc.tmp`;
    writeFileSync(join(d, dead), ''); writeFileSync(join(d, live), '');
    await (await OutputPlan.make([], [fileOut('csv', p)])).write([{ path: p, data: 'x' }]);
    expect(readdirSync(d).sort()).toEqual([live, 'x.csv'].sort());
  });
});

describe("files: telling a command's own earlier output", () => {
  it('a sweep CSV longer than the 4096 bytes looked at is judged on its whole rows (a row cut at byte 4096 is not read)', () => {
    const row = (line = '') => `4096,1,1,1,false,none,1,1.5,20.5,true,model,${line},,,\n`;
    const header = CSV_COLUMNS.join(',') + ',line,hbm_gib,iter_ms,tflops_per_gpu\n';
    // The 4096 bytes end inside the source of a row ('mo' of 'model'): read, that row would not be the model's.
    const cut = '4096,1,1,1,false,none,1,1.5,20.5,true,mo';
    const n = Math.floor((4096 - header.length - cut.length - row().length) / row().length);
    const pad = 4096 - header.length - cut.length - row().length - n * row().length;
    const head = header + row('x'.repeat(pad)) + row().repeat(n) + cut;
    expect(head.length).toBe(4096);
    expect(OUTPUT_KINDS.sweepCsv.looks(head)).toBe(true);
    // a shorter file is read whole: its last row counts
    expect(OUTPUT_KINDS.sweepCsv.looks(CSV_COLUMNS.join(',') + '\n' + '4096,1,1,1,false,none,1,1.5,20.5,true,measured: x\n')).toBe(false);
  });

  it('a run record that is not one, or one that does not list a file, stops a run from writing over it', async () => {
    const d = fresh();
    const target = (): OutputTarget => ({ flag: 'out', path: d, kind: 'dir', names: ['o.npy', 'rec.json'], manifest: { name: 'rec.json', lists: (t) => (t.startsWith('REC') ? t.slice(3).trim().split(' ').filter(Boolean) : null) } });
    writeFileSync(join(d, 'rec.json'), 'something else');
    await expect(OutputPlan.make([], [target()])).rejects.toThrow(`--out ${join(d, 'rec.json')} exists and is not this command's record of what it wrote there`);
    writeFileSync(join(d, 'rec.json'), 'REC');
    writeFileSync(join(d, 'o.npy'), 'theirs');
    await expect(OutputPlan.make([], [target()])).rejects.toThrow(`--out ${join(d, 'o.npy')} exists and is not listed in rec.json`);
    writeFileSync(join(d, 'rec.json'), 'REC o.npy');
    await expect(OutputPlan.make([], [target()])).resolves.toBeInstanceOf(OutputPlan);
    await expect(OutputPlan.make([], [target()], { force: true })).resolves.toBeInstanceOf(OutputPlan);
  });
});

const HEAD = 'seq_len,tp,cp,pp,sp,recompute,micro_batch,activation_gib,total_gib,fits,source,line,hbm_gib,iter_ms,tflops_per_gpu,tight';
const row = (o: Partial<CsvRow>): CsvRow => ({ seq_len: 4096, tp: 1, cp: 1, pp: 1, sp: false, recompute: 'none', micro_batch: 1, activation_gib: null, total_gib: 20, fits: true, source: 'model', ...o });

describe('activation_memory.csv by hand', () => {
  it('a line break inside a quoted field counts as one outside it: LF, CRLF or a CR alone', () => {
    // The bad row is the file's fourth line whatever the line ends.
    for (const eol of ['\n', '\r\n', '\r'])
      expect(() => parseCsv(`seq_len,total_gib,source${eol}4096,1,"a${eol}b"${eol}0,1,x${eol}`, 'm.csv'), JSON.stringify(eol)).toThrow(/line 4/);
  });

  it('toCsv writes integers as they are, other numbers with 6 significant digits and no trailing zeros, empty cells for unknowns', () => {
    expect(toCsv([row({ activation_gib: 1.23456789, total_gib: 20.5, hbm_gib: 80, iter_ms: 1234.5678 })])).toBe(
      `${HEAD}\n4096,1,1,1,false,none,1,1.23457,20.5,true,model,,80,1234.57,,\n`); // 20.5 beside a whole 80 (it wrote 20.5000)
    expect(toCsv([row({ activation_gib: 1.5e-7, total_gib: 2.0000001, iter_ms: 0.1 })]).split('\n')[1]).toBe('4096,1,1,1,false,none,1,1.5e-7,2,true,model,,,0.1,,');
  });

  it('a cell holding a comma, a quote or a line break is quoted, quotes doubled', () => {
    expect(toCsv([row({ source: 'measured: a,b' })]).split('\n')[1]).toBe('4096,1,1,1,false,none,1,,20,true,"measured: a,b",,,,,');
    expect(toCsv([row({ source: 'say "x"' })]).split('\n')[1]).toBe('4096,1,1,1,false,none,1,,20,true,"say ""x""",,,,,');
    const back = parseCsv(toCsv([row({ source: 'measured: a,b\nc' })]));
    expect(back[0].source).toBe('measured: a,b\nc');
  });

  it('blank lines are skipped, and line numbers count every line (LF, CRLF, CR alike)', () => {
    expect(parseCsv('seq_len,total_gib\n\n,\n4096,1\n').map((r) => r.seq_len)).toEqual([4096]);
    for (const eol of ['\n', '\r\n', '\r'])
      expect(() => parseCsv(['seq_len,total_gib', '4096,1', '0,1', ''].join(eol), 'm.csv')).toThrow("m.csv line 3: seq_len '0' is not a positive integer");
  });

  it('text after a closing quote is refused with its line', () => {
    expect(() => parseCsv('seq_len,total_gib,source\n4096,1,"a"b\n', 'm.csv')).toThrow("m.csv line 2: text after a closing quote in field 3 ('\"a\"b')");
    expect(parseCsv('seq_len,total_gib,source\n4096,1,"a" \n')[0].source).toBe('a');
  });

  it('a header naming a column twice, or lacking total_gib, is refused', () => {
    expect(() => parseCsv('seq_len,total_gib,TP,tp\n4096,1,1,2\n', 'm.csv')).toThrow("m.csv line 1: column 'tp' is named twice in the header (columns 3 and 4)");
    expect(() => parseCsv('seq_len,fits\n4096,false\n', 'm.csv')).toThrow('m.csv: not an activation_memory.csv: missing column total_gib');
  });

  it('sizes are positive integers: 0 is refused', () => {
    for (const c of ['tp', 'cp', 'pp', 'micro_batch'])
      expect(() => parseCsv(`seq_len,total_gib,${c}\n4096,1,0\n`, 'm.csv')).toThrow(`m.csv line 2: ${c} '0' is not a positive integer`);
  });

  it('booleans: true/1/yes are true, false/0/no are false', () => {
    const rows = parseCsv('seq_len,total_gib,sp,fits\n1,1,yes,no\n2,1,YES,No\n3,1,1,0\n4,1,true,false\n');
    expect(rows.map((r) => [r.sp, r.fits])).toEqual([[true, false], [true, false], [true, false], [true, false]]);
  });

  it('recompute full:uniform/0 is no setting; full:block/4 is', () => {
    expect(() => parseCsv('seq_len,total_gib,recompute\n4096,1,full:uniform/0\n', 'm.csv')).toThrow("m.csv line 2: recompute 'full:uniform/0' is not a recompute setting");
    expect(parseCsv('seq_len,total_gib,recompute\n4096,1,full:block/4\n')[0].recompute).toBe('full:block/4');
  });

  it("a row without a source is measured, named after the file (never the model's)", () => {
    expect(parseCsv('seq_len,total_gib\n4096,1\n', 'runs.csv')[0].source).toBe('measured: runs.csv');
  });

  it('a row with only a time (iter_ms or tflops_per_gpu) is a measurement; with nothing it is refused', () => {
    expect(parseCsv('seq_len,total_gib,iter_ms\n4096,,812.5\n')[0]).toMatchObject({ total_gib: null, fits: null, iter_ms: 812.5 });
    expect(parseCsv('seq_len,total_gib,tflops_per_gpu\n4096,,300\n')[0].tflops_per_gpu).toBe(300);
    expect(() => parseCsv('seq_len,total_gib,iter_ms\n4096,,\n', 'm.csv')).toThrow('m.csv line 2: total_gib is empty and fits is not given: the row measures nothing');
  });

  it('a memory above 1 PiB (1048576 GiB) is refused; 1 PiB itself is not', () => {
    expect(parseCsv('seq_len,total_gib\n4096,1048576\n')[0].total_gib).toBe(1048576);
    expect(() => parseCsv('seq_len,total_gib\n4096,1048577\n', 'm.csv')).toThrow('m.csv line 2: total_gib 1048577 GiB is more than any GPU holds (1 PiB)');
    expect(() => parseCsv('seq_len,total_gib,activation_gib\n4096,1,2e6\n', 'm.csv')).toThrow('m.csv line 2: activation_gib 2e6 GiB is more than any GPU holds (1 PiB)');
  });

  it('measuredRow: a point with a time but no memory line has an unknown fits, not true', () => {
    const p: MeasuredPoint = {
      source: 'r.log', seqLength: 4096, tp: 1, cp: 1, pp: 1, sp: false, recompute: 'none', microBatch: 1, numLayers: null, hiddenSize: null, numHeads: null,
      vocabSize: null, worldSize: null, flashAttention: null, iterMs: 100, tflopsPerGpu: null, window: [11], peakMaxAllocatedGiB: null, peakMaxReservedGiB: null,
      theoretical: null, outOfMemory: false, outOfMemoryOthers: null,
    };
    expect(measuredRow(p)).toMatchObject({ total_gib: null, fits: null, iter_ms: 100 });
    expect(measuredRow({ ...p, peakMaxAllocatedGiB: 30 })).toMatchObject({ total_gib: 30, fits: true });
    expect(measuredRow({ ...p, outOfMemory: true })).toMatchObject({ total_gib: null, fits: false });
  });
});

/** A Megatron-LM argument dump of these `name value` pairs. */
const dump = (args: Record<string, string>) =>
  ['------------------------ arguments ------------------------', ...Object.entries(args).map(([k, v]) => `  ${k} ${'.'.repeat(Math.max(3, 40 - k.length))} ${v}`),
    '-------------------- end of arguments ---------------------'];
const ARGS = { seq_length: '4096', tensor_model_parallel_size: '2', micro_batch_size: '1', num_layers: '2', hidden_size: '256', num_attention_heads: '4' };
const iter = (k: number, ms: number, total = 30) => ` [2026-11-01 12:00:00] iteration ${String(k).padStart(8)}/${String(total).padStart(8)} | elapsed time per iteration (ms): ${ms.toFixed(1)} | throughput per GPU (TFLOP/s/GPU): ${(k * 10).toFixed(1)} | lm loss: 8.0E+00 |`;
const mem = (rank: number, a: string, ma: string, r: string, mr: string) => `[Rank ${rank}] (after 1 iterations) memory (MB) | allocated: ${a} | max allocated: ${ma} | reserved: ${r} | max reserved: ${mr}`;

describe('Megatron-LM logs by hand', () => {
  it('sizes in the dump are positive integers: 0 is refused with its line', () => {
    expect(() => parseMegatronLog([...dump({ ...ARGS, seq_length: '0' })].join('\n'), 'r.log')).toThrow("r.log line 2: argument seq_length '0' is not a positive integer");
  });

  it("booleans in the dump are True or False: 'true' is refused, not read as False", () => {
    expect(() => parseMegatronLog(dump({ ...ARGS, sequence_parallel: 'true' }).join('\n'), 'r.log')).toThrow("r.log line 8: argument sequence_parallel 'true' is not True or False");
  });

  it('a dropout of 1 is a probability; 1.5 is not', () => {
    expect(parseMegatronLog(dump({ ...ARGS, attention_dropout: '1' }).join('\n'), 'r.log').args.attention_dropout).toBe('1');
    expect(() => parseMegatronLog(dump({ ...ARGS, hidden_dropout: '1.5' }).join('\n'), 'r.log')).toThrow("r.log line 8: argument hidden_dropout '1.5' is not a probability between 0 and 1");
  });

  it('a log whose lines end in CR alone is read line by line', () => {
    const r = parseMegatronLog([...dump(ARGS), mem(0, '1024', '2048', '3072', '4096')].join('\r'), 'r.log');
    expect(r.point.seqLength).toBe(4096);
    expect(r.point.peakMaxAllocatedGiB).toBe(2);
  });

  it('the window: iterations after the first 10, the last 10 of them; their median', () => {
    // 12 iterations: the window is 11 and 12 (ms 1100, 1200: median 1150).
    const twelve = [...dump(ARGS), ...Array.from({ length: 12 }, (_, i) => iter(i + 1, (i + 1) * 100))].join('\n');
    const p = parseMegatronLog(twelve, 'r.log').point;
    expect(p.window).toEqual([11, 12]);
    expect(p.iterMs).toBe(1150);
    // 25 iterations: 16..25 (median of 1600..2500 = 2050); TFLOP/s 160..250: 205.
    const q = parseMegatronLog([...dump(ARGS), ...Array.from({ length: 25 }, (_, i) => iter(i + 1, (i + 1) * 100))].join('\n'), 'r.log').point;
    expect(q.window).toEqual([16, 17, 18, 19, 20, 21, 22, 23, 24, 25]);
    expect(q.iterMs).toBe(2050);
    expect(q.tflopsPerGpu).toBe(205);
  });

  it('CP is 1 when a dump lacks context_parallel_size (an older release), unknown without a dump', () => {
    expect(parseMegatronLog(dump(ARGS).join('\n'), 'r.log').point.cp).toBe(1);
    expect(parseMegatronLog(mem(0, '1', '2', '3', '4'), 'r.log').point.cp).toBe(null);
  });

  it('memory lines are MiB ("MB"): the peak of max allocated over ranks, /1024', () => {
    const r = parseMegatronLog([...dump(ARGS), mem(0, '1000', '30720', '31000', '32000'), mem(1, '1000', '35840.5', '36000', '36864')].join('\n'), 'r.log');
    expect(r.point.peakMaxAllocatedGiB).toBe(35840.5 / 1024);
    expect(r.point.peakMaxReservedGiB).toBe(36);
  });

  it('implausible memory lines are refused with their line', () => {
    // Each line ends (a log's last line without its line end may be cut off: see 'cut inside its last number' below).
    const at = (l: string) => () => parseMegatronLog([...dump(ARGS), l].join('\n') + '\n', 'r.log');
    expect(at(mem(0, '-1', '2', '3', '4'))).toThrow("r.log line 9: memory allocated '-1' is not a non-negative finite number");
    expect(at(mem(0, '3', '2', '3', '4'))).toThrow('r.log line 9: memory allocated 3 MB exceeds max allocated 2 MB (the peak of allocated)');
    expect(at(mem(0, '1', '2', '5', '4'))).toThrow('r.log line 9: memory reserved 5 MB exceeds max reserved 4 MB (the peak of reserved)');
    expect(at(iter(1, -5))).toThrow("r.log line 9: elapsed time per iteration (ms) '-5.0' is not a non-negative finite number");
  });

  it('an argument given twice in a dump: the same value is taken, another value refused', () => {
    const lines = dump(ARGS);
    expect(parseMegatronLog([...lines.slice(0, -1), '  seq_length ........ 4096', lines.at(-1)!].join('\n'), 'r.log').point.seqLength).toBe(4096);
    expect(() => parseMegatronLog([...lines.slice(0, -1), '  seq_length ........ 8192', lines.at(-1)!].join('\n'), 'r.log'))
      .toThrow("r.log line 8: argument seq_length is given twice in one argument dump with different values ('4096' at line 2, '8192' here)");
  });

  it("recompute: selective over core_attn alone is 'selective'; with mlp 'selective:core_attn+mlp'", () => {
    const rc = (mods: string) => parseMegatronLog(dump({ ...ARGS, recompute_granularity: 'selective', recompute_modules: mods }).join('\n'), 'r.log').point.recompute;
    expect(rc("['core_attn']")).toBe('selective');
    expect(rc("['core_attn', 'mlp']")).toBe('selective:core_attn+mlp');
  });

  it('a dump without its end line is refused as cut off', () => {
    expect(() => parseMegatronLog(dump(ARGS).slice(0, -1).join('\n'), 'r.log')).toThrow("r.log line 1: the argument dump opened here has no '---- end of arguments ----' (the file ends at line 7): it is cut off");
  });

  it('several runs: each starts at its dump, numbered from line 1', () => {
    const text = ['pre', ...dump(ARGS), mem(0, '1', '2', '3', '4'), ...dump(ARGS), mem(0, '1', '2', '3', '4')].join('\n');
    const runs = parseMegatronLogs(text, 'r.log');
    expect(runs.map((r) => r.startLine)).toEqual([2, 11]);
    expect(runs.map((r) => r.point.source)).toEqual(['r.log#1', 'r.log#2']);
    expect(() => parseMegatronLog(text, 'r.log')).toThrow('r.log holds 2 runs (argument dumps at lines 2, 11), not one: split it into one file per run');
  });

  it('a memory line cut off at the end of the log is not read, and said so', () => {
    const r = parseMegatronLog([...dump(ARGS), mem(0, '1024', '2048', '3072', '4096'), '[Rank 1] (after 1 iterations) memory (MB) | allocated: 1024 | max allocated: 9999 | reserved: 3072 | max res'].join('\n'), 'r.log');
    expect(r.memory.length).toBe(1);
    expect(r.point.peakMaxAllocatedGiB).toBe(2);
    expect(r.warnings[0]).toMatch(/^the log ends mid-line: its last line "\[Rank 1\] .*" is cut off and was not used$/);
  });

  it('a memory line cut inside its last number (max reserved 6100 of 61000.00, below its reserved) is cut off, not a log refused whole', () => {
    const cut = '[Rank 1] (after 1 iterations) memory (MB) | allocated: 1024 | max allocated: 9999 | reserved: 60000.00 | max reserved: 6100';
    const r = parseMegatronLog([...dump(ARGS), mem(0, '1024', '2048', '3072', '4096'), cut].join('\n'), 'r.log');
    expect(r.memory.length).toBe(1);
    expect(r.warnings[0]).toMatch(/^the log ends mid-line: its last line "\[Rank 1\] .*" is cut off and was not used$/);
    // The same line inside the log (its line end there) is no cut: refused with its line number, as before.
    expect(() => parseMegatronLog([...dump(ARGS), cut, mem(0, '1024', '2048', '3072', '4096')].join('\n'), 'r.log')).toThrow(/^r\.log line \d+: memory reserved 60000\.00 MB exceeds max reserved 6100 MB/);
  });
});

describe('command-line values by hand', () => {
  it('numberArg: each bound is inclusive where it says so', () => {
    const r = { integer: true, min: 1, max: 64, what: 'an integer from 1 to 64' };
    expect(numberArg('cp', '1', r)).toBe(1);
    expect(numberArg('cp', '64', r)).toBe(64);
    expect(() => numberArg('cp', '0', r)).toThrow("--cp must be an integer from 1 to 64, got '0'");
    expect(() => numberArg('cp', '65', r)).toThrow("--cp must be an integer from 1 to 64, got '65'");
    expect(() => numberArg('cp', '2.5', r)).toThrow("--cp must be an integer from 1 to 64, got '2.5'");
    expect(numberArg('cp', '2e1', r)).toBe(20);
    const above = { above: 0, what: 'a positive number' };
    expect(() => numberArg('x', '0', above)).toThrow("--x must be a positive number, got '0'");
    expect(numberArg('x', '5e-324', above)).toBe(5e-324);
    expect(() => numberArg('x', '1e999', above)).toThrow("--x must be a positive number, got '1e999'");
    for (const bad of ['0x10', '', ' 1', '1 ', 'Infinity', '1e', '--1'])
      expect(() => numberArg('x', bad, { what: 'a number' }), bad).toThrow(`--x must be a number, got '${bad}'`);
  });

  it('parseCommand: a flag given twice is refused; -.5 after a string flag is its value', () => {
    const O = { scale: { type: 'string' }, causal: { type: 'boolean' } } as const;
    expect(() => parseCommand('t', ['--causal', '--causal'], O)).toThrow('--causal is given twice: give it once (see flashring t --help)');
    expect(parseCommand('t', ['--scale', '-.25'], O).values.scale).toBe('-.25');
  });

  it('memory: 80 GiB unless --hbm-gib says otherwise; dropouts below 1', () => {
    const base = { 'num-layers': '2', 'hidden-size': '256', 'num-attention-heads': '4' };
    expect(configFromFlags(base).hbmGib).toBe(80);
    expect(configFromFlags({ ...base, 'hbm-gib': '141' }).hbmGib).toBe(141);
    expect(configFromFlags({ ...base, 'attention-dropout': '0.999999' }).model.attentionDropout).toBe(0.999999);
    expect(() => configFromFlags({ ...base, 'attention-dropout': '1' })).toThrow("--attention-dropout must be a probability in [0, 1), got '1'");
    expect(() => configFromFlags({ ...base, 'num-experts': '4', 'moe-router-topk': '5' })).toThrow('--moe-router-topk 5 is more than --num-experts 4 (each token goes to k different experts)');
  });

  it('memory --seq-lengths: at most 2^31', async () => {
    const flags = ['--num-layers', '2', '--hidden-size', '256', '--num-attention-heads', '4', '--seq-lengths'];
    await expect(memoryCommand([...flags, '2147483649'])).rejects.toThrow("--seq-lengths must be positive integers up to 2^31, got '2147483649'");
    // A stray comma: the same words as bench's and tune's lists (one reader, src/cli/args.ts list).
    await expect(memoryCommand([...flags, '4096,,8192'])).rejects.toThrow('--seq-lengths 4096,,8192: entry 2 of 3 is empty (a stray comma?)');
    await expect(memoryCommand([...flags, ''])).rejects.toThrow("--seq-lengths needs at least one value, got ''");
  });

  it('replay reads a .CSV (any case) as a CSV', async () => {
    const d = fresh(), p = join(d, 'RUNS.CSV');
    writeFileSync(p, 'seq_len,total_gib,source\n4096,30.5,measured: by hand\n');
    const out: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((s) => { out.push(String(s)); });
    const err = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      expect(await replayCommand([p, '--json'])).toBe(0);
    } finally {
      log.mockRestore(); err.mockRestore();
    }
    expect(JSON.parse(out.join('\n')).points).toMatchObject([{ seq_len: 4096, total_gib: 30.5, source: 'measured: by hand' }]);
  });

  it('attention --window: each side at least -1', () => {
    const base = ['--q', 'q.npy', '--k', 'k.npy', '--v', 'v.npy', '--out', 'o'];
    expect(parseAttentionArgs([...base, '--window', '-1,0'])!.window).toEqual([-1, 0]);
    expect(() => parseAttentionArgs([...base, '--window', '-2,0'])).toThrow("--window left value -2 is below -1 (-1 = unbounded), in '-2,0'");
    // Written as every integer flag takes them (--cp 1e1, --seq-length 1e3): scientific notation too; not hex, not empty.
    expect(parseAttentionArgs([...base, '--window', '1e3, 0'])!.window).toEqual([1000, 0]);
    for (const bad of ['0x10,0', '128,', '1,2,3', '1.5e0,0'])
      expect(() => parseAttentionArgs([...base, '--window', bad]), bad).toThrow(`--window must be two integers L,R (e.g. 128,0; -1 = unbounded), got '${bad}'`);
    expect(() => parseAttentionArgs([...base, '--window', '1e400,0'])).toThrow("--window value 1e400 is too large, in '1e400,0'");
  });

  it('--compute-tflops and --link-gbps are positive; --link-latency-us may be 0', () => {
    expect(() => parseRingArgs({ cp: '2', link: 'pcie5', 'compute-tflops': '0' })).toThrow("--compute-tflops must be from 0.000001 to 10000000 (TFLOP/s a GPU), got '0'");
    expect(() => parseRingArgs({ cp: '2', link: 'custom', 'link-gbps': '0', 'link-latency-us': '0' })).toThrow("--link-gbps must be from 0.000001 to 1000000 (Gbit/s per direction: 1 kbit/s to 1 Pbit/s), got '0'");
    expect(parseRingArgs({ cp: '2', link: 'custom', 'link-gbps': '100', 'link-latency-us': '0' })!.link).toEqual({ name: 'custom', gbps: 100, latencyUs: 0 });
  });

  it('--compute-tflops is at most 1e7, as the page takes it (1e300 planned a step of 0.03 ms at 100% comm)', () => {
    expect(parseRingArgs({ cp: '2', link: 'pcie5', 'compute-tflops': '1e7' })!.computeTflops).toBe(1e7);
    expect(() => parseRingArgs({ cp: '2', link: 'pcie5', 'compute-tflops': '1e300' })).toThrow("--compute-tflops must be from 0.000001 to 10000000 (TFLOP/s a GPU), got '1e300'");
    expect(() => computeTflopsArg('10000001')).toThrow(InputError);
    // And at least 1 MFLOP/s: 1e-300 was taken, and every step planned at 1e302 ms.
    expect(computeTflopsArg('0.000001')).toBe(1e-6);
    expect(() => computeTflopsArg('1e-300')).toThrow("--compute-tflops must be from 0.000001 to 10000000 (TFLOP/s a GPU), got '1e-300'");
  });
});

describe('attention: what the .npy inputs must be (checked before any device)', () => {
  const f4 = (shape: number[]) => encodeNpy({ dtype: 'f4', shape, data: new Float32Array(shape.reduce((a, b) => a * b, 1)) });
  it('an empty tensor (a dimension 0) is refused by name', async () => {
    const d = fresh();
    writeFileSync(join(d, 'q.npy'), f4([1, 0, 16]));
    writeFileSync(join(d, 'k.npy'), f4([1, 4, 16]));
    await expect(attentionCommand(['--q', join(d, 'q.npy'), '--k', join(d, 'k.npy'), '--v', join(d, 'k.npy'), '--out', join(d, 'o')]))
      .rejects.toThrow(`Q (${join(d, 'q.npy')}) is empty: shape (1, 0, 16)`);
  });
  it('cu_seqlens must be 1-D', async () => {
    const d = fresh();
    writeFileSync(join(d, 'q.npy'), f4([1, 4, 16]));
    writeFileSync(join(d, 'cu.npy'), npy(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 2), }\n", [0, 0, 0, 0, 4, 0, 0, 0]));
    await expect(attentionCommand(['--q', join(d, 'q.npy'), '--k', join(d, 'q.npy'), '--v', join(d, 'q.npy'), '--out', join(d, 'o'), '--cu-seqlens', join(d, 'cu.npy')]))
      .rejects.toThrow(`--cu-seqlens ${join(d, 'cu.npy')} has shape (1, 2); cu_seqlens is 1-D (documents + 1 entries)`);
  });
});
