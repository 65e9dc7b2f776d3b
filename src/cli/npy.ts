/**
 * NumPy .npy files (format versions 1.0, 2.0 and 3.0), little-endian f2/f4/f8, C order.
 * f16 data is kept as raw bits in a Uint16Array.
 */
import { NpyError } from '../errors.js';

export type NpyDtype = 'f2' | 'f4' | 'f8';
export interface NpyArray {
  dtype: NpyDtype;
  shape: number[];
  data: Uint16Array | Float32Array | Float64Array;
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
const BYTES: Record<NpyDtype, number> = { f2: 2, f4: 4, f8: 8 };

/**
 * The dtypes of an array read as int32 (cu_seqlens), as readNpyHeader names them: little-endian int32, or int64
 * (np.cumsum's default) whose every value fits int32, converted when its data is read.
 */
export type NpyInt32 = 'i4' | 'i8';
const ELEM: Record<NpyDtype | NpyInt32, number> = { ...BYTES, i4: 4, i8: 8 };

/**
 * What a .npy header says, checked against the file's size: the dtype, the shape, where the data starts
 * and how many bytes it holds (exactly what the rest of the file holds).
 */
export interface NpyHeader<D extends NpyDtype | NpyInt32 = NpyDtype | NpyInt32> { dtype: D; shape: number[]; dataStart: number; dataBytes: number }

/** The float dtypes read: f2, f4, f8, little-endian (or no order, as '|'). */
function floatDtype(d: string, name: string): NpyDtype {
  const m = /^([<>|=])?f([248])$/.exec(d);
  if (!m) throw new NpyError(`${name}: dtype '${d}' is not supported; use float16, float32 or float64`);
  if (m[1] === '>') throw new NpyError(`${name}: big-endian data is not supported; save with dtype '<f${m[2]}'`);
  return `f${m[2]}` as NpyDtype;
}

function int32Dtype(d: string, name: string): NpyInt32 {
  const m = /^[<|=]?i([48])$/.exec(d);
  if (!m) throw new NpyError(`${name}: dtype '${d}' is not int32 or int64 (little-endian; int64 values must fit int32); save it with .astype(np.int32)`);
  return `i${m[1]}` as NpyInt32;
}

/** int64 data as int32: an NpyError naming the first value outside int32's range (which .astype(np.int32) would wrap). */
function int32Of(data: BigInt64Array, name: string): Int32Array {
  const out = new Int32Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const x = data[i];
    if (x > 2147483647n || x < -2147483648n)
      throw new NpyError(`${name}: int64 value ${x} (element ${i}) is outside int32's range (-2147483648 to 2147483647): cu_seqlens are int32 offsets`);
    out[i] = Number(x);
  }
  return out;
}

/** A typed array of `count` elements of `dtype` (f2 as raw bits in a Uint16Array): what a .npy's data is read into. */
function typedArray(dtype: NpyDtype | NpyInt32, count: number): NpyArray['data'] | Int32Array | BigInt64Array {
  return dtype === 'f2' ? new Uint16Array(count) : dtype === 'f8' ? new Float64Array(count) : dtype === 'i4' ? new Int32Array(count) : dtype === 'i8' ? new BigInt64Array(count) : new Float32Array(count);
}

/** Data as read: int64 narrowed to int32 (int32Of), anything else as it is. */
const asRead = (data: ReturnType<typeof typedArray>, name: string): NpyArray['data'] | Int32Array =>
  data instanceof BigInt64Array ? int32Of(data, name) : data;

/** The data bytes of `bytes` an in-memory header describes, as the typed array of its dtype (an aligned copy; int64 narrowed). */
function typedOf<D extends NpyDtype | NpyInt32>(h: NpyHeader<D>, bytes: Uint8Array, name: string) {
  const data = typedArray(h.dtype, h.dataBytes / ELEM[h.dtype]);
  new Uint8Array(data.buffer).set(bytes.subarray(h.dataStart, h.dataStart + h.dataBytes));
  return asRead(data, name);
}

/**
 * Parses a whole .npy file. Every defect (wrong magic, a header cut short, unsupported dtype or
 * order, a malformed shape, data shorter or longer than the shape says) is an NpyError naming `name`.
 */
export function parseNpy(bytes: Uint8Array, name = 'array'): NpyArray {
  const h = npyHeader(bytes, bytes.length, name, 'float');
  return { dtype: h.dtype, shape: h.shape, data: typedOf(h, bytes, name) as NpyArray['data'] };
}

/**
 * A .npy file of little-endian int32 (cu_seqlens), or int64 whose values all fit int32 (converted); any other
 * dtype, or an int64 value outside int32's range, is an NpyError saying so.
 */
export function parseNpyInt32(bytes: Uint8Array, name = 'array'): { shape: number[]; data: Int32Array } {
  const h = npyHeader(bytes, bytes.length, name, 'int32');
  return { shape: h.shape, data: typedOf(h, bytes, name) as Int32Array };
}

/**
 * How many of a file's first bytes its header takes (magic, version, header length, the header), read from at
 * least its first 12 (or all of a shorter file); where they are no .npy preamble, `head.length` (npyHeader says what is wrong).
 */
function npyHeaderEnd(head: Uint8Array): number {
  if (head.length < 12 || MAGIC.some((b, i) => head[i] !== b) || head[6] < 1 || head[6] > 3) return head.length;
  const dv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  return head[6] === 1 ? 10 + dv.getUint16(8, true) : 12 + dv.getUint32(8, true);
}

/**
 * The header of a .npy file of `fileSize` bytes from its first bytes `head` (at least npyHeaderEnd of them, or
 * the whole file): magic, version, header, dtype (`kind`), and that the file holds exactly the data the shape
 * needs. Every defect is an NpyError naming `name`. Reads nothing: a file's data is checked by its size.
 */
export function npyHeader(head: Uint8Array, fileSize: number, name: string, kind: 'float'): NpyHeader<NpyDtype>;
export function npyHeader(head: Uint8Array, fileSize: number, name: string, kind: 'int32'): NpyHeader<NpyInt32>;
export function npyHeader(head: Uint8Array, fileSize: number, name: string, kind: 'float' | 'int32'): NpyHeader {
  if (fileSize < 8 || head.length < 8 || MAGIC.some((b, i) => head[i] !== b))
    throw new NpyError(`${name}: not a .npy file (missing the \\x93NUMPY magic)`);
  const major = head[6];
  if (major < 1 || major > 3) throw new NpyError(`${name}: unsupported .npy format version ${major}.${head[7]}`);
  const start = major === 1 ? 10 : 12;
  if (fileSize < start) throw new NpyError(`${name}: truncated header: a version ${major} file needs ${start} bytes before its header, the file has ${fileSize}`);
  const dv = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const headerLen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  if (start + headerLen > fileSize) throw new NpyError(`${name}: truncated header (${headerLen} bytes announced, ${fileSize - start} present)`);
  if (start + headerLen > head.length) throw new RangeError(`npyHeader: ${name}: ${head.length} bytes given of a header ending at ${start + headerLen}`);
  const header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(head.subarray(start, start + headerLen));
  const { descr, shape } = parseHeader(header, name);
  const dtype = kind === 'float' ? floatDtype(descr, name) : int32Dtype(descr, name);
  const count = shape.reduce((a, b) => a * b, 1);
  const dataStart = start + headerLen;
  const need = count * ELEM[dtype];
  const have = fileSize - dataStart;
  if (have < need) throw new NpyError(`${name}: truncated data: shape (${shape.join(', ')}) needs ${need} bytes, file has ${have}`);
  if (have > need) throw new NpyError(`${name}: ${have - need} unexpected bytes after the data of shape (${shape.join(', ')}) (${need} bytes); the file is damaged or not one array`);
  return { dtype, shape, dataStart, dataBytes: need };
}

/** A file read at positions (a node:fs/promises FileHandle). */
export interface ReadAt { read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }> }

/** The bytes of a file read before its header is known: every header np.save writes fits (a longer one is read whole). */
export const NPY_HEAD_BYTES = 4096;
/** The longest header read (np.load itself refuses over 10000 bytes unless told otherwise). */
const MAX_HEADER_BYTES = 1 << 20;
/** The most one read asks for (Linux reads at most ~2 GiB at a time). */
const READ_CHUNK = 1 << 30;

/** Reads `length` bytes at `position` into `into` from `offset`: fewer only where the file ends first. */
async function readFully(file: ReadAt, into: Uint8Array, offset: number, length: number, position: number): Promise<number> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await file.read(into, offset + done, Math.min(length - done, READ_CHUNK), position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return done;
}

/**
 * The header of the .npy file `file` of `size` bytes (its fstat): only the header's bytes are read, and
 * every check of npyHeader is made (the data's length by the size) before any of the data is read.
 */
export async function readNpyHeader(file: ReadAt, size: number, name: string, kind: 'float'): Promise<NpyHeader<NpyDtype>>;
export async function readNpyHeader(file: ReadAt, size: number, name: string, kind: 'int32'): Promise<NpyHeader<NpyInt32>>;
export async function readNpyHeader(file: ReadAt, size: number, name: string, kind: 'float' | 'int32'): Promise<NpyHeader> {
  let asked = Math.min(size, NPY_HEAD_BYTES);
  let head = new Uint8Array(asked);
  head = head.subarray(0, await readFully(file, head, 0, asked, 0));
  const end = npyHeaderEnd(head);
  if (end > head.length && end <= size) {
    if (end > MAX_HEADER_BYTES) throw new NpyError(`${name}: its header announces ${end} bytes; at most ${MAX_HEADER_BYTES} are read (np.save writes a few hundred): the file is damaged or not a .npy file`);
    const whole = new Uint8Array((asked = end));
    head = whole.subarray(0, await readFully(file, whole, 0, end, 0));
  }
  // Fewer bytes than asked of a file of this size: it changed. A header announced past the file's end is npyHeader's to say.
  if (head.length < asked) throw new NpyError(`${name}: the file ended while its header was read (it changed while being read?)`);
  return kind === 'float' ? npyHeader(head, size, name, kind) : npyHeader(head, size, name, kind);
}

/**
 * The data a header read by readNpyHeader describes, read once, straight into a typed array of its dtype
 * (f2 as raw bits in a Uint16Array; i8 converted to int32, an NpyError naming a value outside its range); a file
 * that ends early (it changed since its header was read) is an NpyError.
 */
export async function readNpyData(file: ReadAt, h: NpyHeader<NpyDtype>, name: string): Promise<NpyArray['data']>;
export async function readNpyData(file: ReadAt, h: NpyHeader<NpyInt32>, name: string): Promise<Int32Array>;
export async function readNpyData(file: ReadAt, h: NpyHeader, name: string): Promise<NpyArray['data'] | Int32Array> {
  const data = typedArray(h.dtype, h.dataBytes / ELEM[h.dtype]);
  const got = await readFully(file, new Uint8Array(data.buffer), 0, h.dataBytes, h.dataStart);
  if (got < h.dataBytes) throw new NpyError(`${name}: truncated data: shape (${h.shape.join(', ')}) needs ${h.dataBytes} bytes, the file ended after ${got} (it changed while being read?)`);
  return asRead(data, name);
}

/** Largest element count accepted (well past any tensor that fits a device). */
const MAX_ELEMENTS = 2 ** 40;

/** The keys np.save writes in a header, each once: the only ones read. */
const HEADER_KEYS = ['descr', 'fortran_order', 'shape'];
/** One `'key': value,` of the header dict: a quoted key; a quoted string, a tuple or a word (True, 3) as value. */
const ENTRY = /\s*(?:'([^']*)'|"([^"]*)")\s*:\s*('[^']*'|"[^"]*"|\([^()]*\)|[A-Za-z0-9_.+-]+)\s*(?:,|(?=\s*$))/y;

/**
 * The entries of the header dict `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, key to the
 * value's text. A key given twice (NumPy's literal_eval would take the last) or one np.save does not write is refused.
 */
function headerEntries(header: string, name: string, malformed: () => NpyError): Map<string, string> {
  const body = header.trim();
  if (!body.startsWith('{') || !body.endsWith('}')) throw malformed();
  const inner = body.slice(1, -1), entries = new Map<string, string>();
  for (ENTRY.lastIndex = 0; inner.slice(ENTRY.lastIndex).trim() !== '';) {
    const m = ENTRY.exec(inner);
    if (!m) throw malformed();
    const key = m[1] ?? m[2];
    if (entries.has(key)) throw new NpyError(`${name}: the header gives '${key}' twice (NumPy would read the last, so what the array is is unclear): the file is damaged; save the array again with np.save`);
    if (!HEADER_KEYS.includes(key)) throw new NpyError(`${name}: unknown key '${key}' in the header (np.save writes only 'descr', 'fortran_order' and 'shape'): save the array again with np.save`);
    entries.set(key, m[3]);
  }
  return entries;
}

/** The header dict: exactly descr (a string), fortran_order (False) and shape (a tuple of integers). */
function parseHeader(header: string, name: string): { descr: string; shape: number[] } {
  const malformed = () => new NpyError(`${name}: malformed header ${JSON.stringify(header.trim().slice(0, 120))}`);
  const entries = headerEntries(header, name, malformed);
  const [d, fortran, t] = HEADER_KEYS.map((k) => entries.get(k));
  if (d === undefined || !/^('.*'|".*")$/.test(d) || (fortran !== 'True' && fortran !== 'False') || t === undefined || !t.startsWith('('))
    throw malformed();
  const descr = d.slice(1, -1), shapeText = t.slice(1, -1);
  if (fortran === 'True') throw new NpyError(`${name}: Fortran-order arrays are not supported; save with np.ascontiguousarray`);
  if (!/^\s*(\d+L?\s*(,\s*\d+L?\s*)*,?)?\s*$/.test(shapeText)) throw new NpyError(`${name}: bad shape (${shapeText}) in header`);
  const shape = shapeText
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x.length > 0)
    .map((x) => Number(x.replace(/L$/, '')));
  if (shape.some((n) => !Number.isSafeInteger(n)) || shape.reduce((a, b) => a * b, 1) > MAX_ELEMENTS)
    throw new NpyError(`${name}: shape (${shapeText}) is too large`);
  return { descr, shape };
}

/**
 * A .npy file (version 1.0) of `arr` in two parts: its header (magic, version, length, the dict padded to 64
 * bytes) and its data, a view of the array's own bytes, not a copy (a run's outputs are written from them).
 */
export function npyParts(arr: NpyArray): [Uint8Array, Uint8Array] {
  const count = arr.shape.reduce((a, b) => a * b, 1);
  if (count !== arr.data.length) throw new NpyError(`encodeNpy: shape (${arr.shape.join(', ')}) does not match ${arr.data.length} elements`);
  const shape = arr.shape.length === 1 ? `(${arr.shape[0]},)` : `(${arr.shape.join(', ')})`;
  let header = `{'descr': '<${arr.dtype}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = new Uint8Array(10 + header.length);
  head.set(MAGIC, 0);
  head[6] = 1;
  head[7] = 0;
  new DataView(head.buffer).setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i++) head[10 + i] = header.charCodeAt(i);
  return [head, new Uint8Array(arr.data.buffer, arr.data.byteOffset, arr.data.byteLength)];
}

/** A .npy file (version 1.0) of `arr`, in one array. */
export function encodeNpy(arr: NpyArray): Uint8Array {
  const [head, data] = npyParts(arr);
  const out = new Uint8Array(head.length + data.length);
  out.set(head, 0);
  out.set(data, head.length);
  return out;
}
