/**
 * NaN and ±Inf in what `flashring attention` reads and writes, counted as the data is read and before it is
 * written (one pass each, no copy), and said in a note on stderr: the run goes on (a NaN reaches every output it
 * touches, as in PyTorch: docs/numerics.md), but a user who did not expect them learns which array holds them.
 */
import { counted } from '../plural.js';

/** The data of an array as the CLI holds it: f16 as raw bits (Uint16Array), f32, f64. */
type Floats = Uint16Array | Float32Array | Float64Array;

/** How many of an array's values are NaN and how many ±Inf. */
export interface NonFinite { nan: number; inf: number }

/** f16 bits with every exponent bit set: ±Inf (mantissa 0) or NaN. */
const HALF_EXP = 0x7c00;

/** The NaN and ±Inf values of `data` (f16 as raw bits). */
export function countNonFinite(data: Floats): NonFinite {
  let nan = 0, inf = 0;
  if (data instanceof Uint16Array) {
    for (let i = 0; i < data.length; i++)
      if ((data[i] & HALF_EXP) === HALF_EXP) data[i] & 0x3ff ? nan++ : inf++;
    return { nan, inf };
  }
  for (let i = 0; i < data.length; i++) {
    const x = data[i];
    if (x - x !== 0) x !== x ? nan++ : inf++;   // x − x is NaN for NaN and ±Inf, 0 for any finite x
  }
  return { nan, inf };
}

/** How many rows of `width` values of `data` hold a NaN or ±Inf (f16 as raw bits). */
export function nonFiniteRows(data: Floats, width: number): number {
  let rows = 0;
  const bad = data instanceof Uint16Array ? (i: number) => (data[i] & HALF_EXP) === HALF_EXP : (i: number) => data[i] - data[i] !== 0;
  for (let r = 0; r + width <= data.length; r += width) {
    for (let j = r; j < r + width; j++) {
      if (bad(j)) {
        rows++;
        break;
      }
    }
  }
  return rows;
}

/** How many LSE entries (one a query row) are NaN or +Inf: −Inf is a row that sees no key (O = 0), which docs/numerics.md gives. */
export function badLseRows(lse: Float32Array): number {
  let n = 0;
  for (let i = 0; i < lse.length; i++) if (lse[i] !== lse[i] || lse[i] === Infinity) n++;
  return n;
}

const WHERE = 'a NaN or ±Inf reaches every output it touches, as in PyTorch (docs/numerics.md)';

/** The note of an input holding NaN or ±Inf: 'note: K (k.npy) holds 1 ±Inf of its 2048 values; …', or null where it holds none. */
export function inputNote(name: string, path: string, c: NonFinite, values: number): string | null {
  if (!c.nan && !c.inf) return null;
  const what = [c.nan ? `${c.nan} NaN` : '', c.inf ? `${c.inf} ±Inf` : ''].filter(Boolean).join(' and ');
  return `note: ${name} (${path}) holds ${what} of its ${values} values; ${WHERE}`;
}

/** An output file's rows that hold NaN or ±Inf (for lse.npy, NaN or +Inf), of its rows. */
export interface BadRows { file: string; rows: number; of: number }

/** The note of outputs holding NaN or ±Inf, each file with its rows: 'note: o.npy has NaN or ±Inf in 25 of 128 rows, lse.npy in 25 of 128; …', or null. */
export function outputNote(files: BadRows[]): string | null {
  const bad = files.filter((f) => f.rows > 0);
  if (!bad.length) return null;
  const each = bad.map((f, i) => `${f.file}${i ? ' in' : ' has NaN or ±Inf in'} ${f.rows} of ${counted(f.of, 'row')}`).join(', ');
  const lse = bad.some((f) => f.file === 'lse.npy') ? ' (lse.npy: NaN or +Inf; −Inf is a row that sees no key)' : '';
  return `note: ${each}${lse}; docs/numerics.md says where NaN and Inf come from`;
}

/**
 * The rows of a run's outputs that hold NaN or ±Inf: each array of `tensors` (o, dq, dk, dv: rows of `D` values)
 * and the LSE (one value a row, −Inf not counted).
 */
export function outputBadRows(tensors: Record<string, Floats>, D: number, lse?: Float32Array): BadRows[] {
  const rows = Object.entries(tensors).map(([name, data]) => ({ file: `${name}.npy`, rows: nonFiniteRows(data, D), of: data.length / D }));
  return lse ? [...rows.slice(0, 1), { file: 'lse.npy', rows: badLseRows(lse), of: lse.length }, ...rows.slice(1)] : rows;
}
