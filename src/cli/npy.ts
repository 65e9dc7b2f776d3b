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
 * Parses a whole .npy file. Every defect (wrong magic, a header cut short, unsupported dtype or
 * order, a malformed shape, data shorter or longer than the shape says) is an NpyError naming `name`.
 */
export function parseNpy(bytes: Uint8Array, name = 'array'): NpyArray {
  const { descr, shape, data } = readNpy(bytes, name, (d) => {
    const m = /^([<>|=])?f([248])$/.exec(d);
    if (!m) throw new NpyError(`${name}: dtype '${d}' is not supported; use float16, float32 or float64`);
    if (m[1] === '>') throw new NpyError(`${name}: big-endian data is not supported; save with dtype '<f${m[2]}'`);
    return +m[2];
  });
  const dtype = `f${descr.slice(-1)}` as NpyDtype;
  const count = data.length / BYTES[dtype];
  const arr = dtype === 'f2' ? new Uint16Array(data.buffer, 0, count) : dtype === 'f4' ? new Float32Array(data.buffer, 0, count) : new Float64Array(data.buffer, 0, count);
  return { dtype, shape, data: arr };
}

/** A .npy file of little-endian int32 (cu_seqlens); any other dtype is an NpyError saying so. */
export function parseNpyInt32(bytes: Uint8Array, name = 'array'): { shape: number[]; data: Int32Array } {
  const { shape, data } = readNpy(bytes, name, (d) => {
    if (!/^[<|=]?i4$/.test(d)) throw new NpyError(`${name}: dtype '${d}' is not int32; save it with .astype(np.int32)`);
    return 4;
  });
  return { shape, data: new Int32Array(data.buffer, 0, data.length / 4) };
}

/** The header (dtype checked by `elemBytes`, which returns the element size) and an aligned copy of the data bytes. */
function readNpy(bytes: Uint8Array, name: string, elemBytes: (descr: string) => number): { descr: string; shape: number[]; data: Uint8Array } {
  if (bytes.length < 8 || MAGIC.some((b, i) => bytes[i] !== b))
    throw new NpyError(`${name}: not a .npy file (missing the \\x93NUMPY magic)`);
  const major = bytes[6];
  if (major < 1 || major > 3) throw new NpyError(`${name}: unsupported .npy format version ${major}.${bytes[7]}`);
  const start = major === 1 ? 10 : 12;
  if (bytes.length < start) throw new NpyError(`${name}: truncated header: a version ${major} file needs ${start} bytes before its header, the file has ${bytes.length}`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  if (start + headerLen > bytes.length) throw new NpyError(`${name}: truncated header (${headerLen} bytes announced, ${bytes.length - start} present)`);
  const header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(start, start + headerLen));
  const { descr, shape } = parseHeader(header, name);
  const eb = elemBytes(descr);
  const count = shape.reduce((a, b) => a * b, 1);
  const dataStart = start + headerLen;
  const need = count * eb;
  const have = bytes.length - dataStart;
  if (have < need) throw new NpyError(`${name}: truncated data: shape (${shape.join(', ')}) needs ${need} bytes, file has ${have}`);
  if (have > need) throw new NpyError(`${name}: ${have - need} unexpected bytes after the data of shape (${shape.join(', ')}) (${need} bytes); the file is damaged or not one array`);
  return { descr, shape, data: bytes.slice(dataStart, dataStart + need) }; // aligned copy
}

/** Largest element count accepted (well past any tensor that fits a device). */
const MAX_ELEMENTS = 2 ** 40;

/** The header dict: descr, fortran_order False, shape a tuple of integers. */
function parseHeader(header: string, name: string): { descr: string; shape: number[] } {
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header)?.[1];
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!header.trimStart().startsWith('{') || descr === undefined || fortran === undefined || shapeText === undefined)
    throw new NpyError(`${name}: malformed header ${JSON.stringify(header.trim().slice(0, 120))}`);
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

export function encodeNpy(arr: NpyArray): Uint8Array {
  const count = arr.shape.reduce((a, b) => a * b, 1);
  if (count !== arr.data.length) throw new NpyError(`encodeNpy: shape (${arr.shape.join(', ')}) does not match ${arr.data.length} elements`);
  const shape = arr.shape.length === 1 ? `(${arr.shape[0]},)` : `(${arr.shape.join(', ')})`;
  let header = `{'descr': '<${arr.dtype}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const out = new Uint8Array(10 + header.length + arr.data.byteLength);
  out.set(MAGIC, 0);
  out[6] = 1;
  out[7] = 0;
  new DataView(out.buffer).setUint16(8, header.length, true);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  out.set(new Uint8Array(arr.data.buffer, arr.data.byteOffset, arr.data.byteLength), 10 + header.length);
  return out;
}
