/**
 * activation_memory.csv: the schema the sweep writes, the replay writes and the page reads.
 *   seq_len, tp, cp, pp, sp, recompute, micro_batch, activation_gib, total_gib, fits, source
 * (recompute: none | selective | selective:core_attn+mlp | full:uniform/N | full:block/N)
 * plus optional columns line, hbm_gib, iter_ms, tflops_per_gpu, tight (a model row that fits with less than advise's
 * margin of hbm_gib to spare: headroom.ts, as `flashring memory` judges one point). `source` is `model` or
 * `measured: <what and where>`. Empty cells are unknown values. Readers ignore unknown columns.
 */
import { InputError } from '../errors.js';
import { decimalNumber, nonDecimal } from '../decimal.js';
import { counted, plural } from '../plural.js';
import { SweepPoint, recomputeSpec } from './model.js';
import { MeasuredPoint, shown } from './megatron.js';
import { headroom } from './headroom.js';

/** How the source of a row replay reads from a Megatron-LM log begins (src/cli/files.ts tells a replay's CSV by it). */
export const REPLAY_SOURCE = 'measured: Megatron-LM log ';

export const CSV_COLUMNS = ['seq_len', 'tp', 'cp', 'pp', 'sp', 'recompute', 'micro_batch', 'activation_gib', 'total_gib', 'fits', 'source'] as const;
export const CSV_EXTRA = ['line', 'hbm_gib', 'iter_ms', 'tflops_per_gpu', 'tight'] as const;

export interface CsvRow {
  seq_len: number;
  tp: number | null;
  cp: number | null;
  pp: number | null;
  sp: boolean | null;
  recompute: string | null;
  micro_batch: number | null;
  activation_gib: number | null;
  total_gib: number | null;
  fits: boolean | null;
  source: string;
  line?: string;
  hbm_gib?: number | null;
  iter_ms?: number | null;
  tflops_per_gpu?: number | null;
  /** The model's point fits, with less than advise's margin of hbm_gib spare (headroom()); empty for a measured row. */
  tight?: boolean | null;
}

/**
 * A cell: a fraction to 6 significant digits, or to its whole part where that is longer (an iteration of 1234567.5 ms
 * as 1234568, not 1.23457e+6: no exponent, and no figure of its whole part lost), without trailing zeros (35.5, not
 * 35.5000 beside a whole 20); integers, text and booleans as they are.
 */
function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const digits = (x: number) => Math.min(21, Math.max(6, Math.floor(Math.log10(Math.abs(x))) + 1));
  const fraction = (x: number) => x.toPrecision(digits(x)).replace(/(\.\d*?)0+(?=$|e)/, '$1').replace(/\.(?=$|e)/, '');
  const s = typeof v === 'number' ? (Number.isInteger(v) ? String(v) : fraction(v)) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(rows: CsvRow[]): string {
  const cols = [...CSV_COLUMNS, ...CSV_EXTRA];
  return [cols.join(','), ...rows.map((r) => cols.map((c) => cell((r as unknown as Record<string, unknown>)[c])).join(','))].join('\n') + '\n';
}

/**
 * RFC 4180-style fields (quotes, doubled quotes, commas and newlines inside quotes), each row with
 * the line it starts on. A quote that opens inside a field, text after a closing quote and a quote
 * never closed are refused with their line number. One pass over the text: no recursion. Each
 * field is a slice of the text (a quoted one with its doubled quotes made single), never built a
 * character at a time: a long field costs about its own size, not dozens of times it.
 */
export function splitCsv(text: string, name: string): { cells: string[]; line: number }[] {
  const rows: { cells: string[]; line: number }[] = [];
  const n = text.length;
  let row: string[] = [], line = 1, rowLine = 1, i = 0;
  const bad = (at: number, what: string): never => { throw new InputError(`${name} line ${at}: ${what}`); };
  const endRow = () => {
    if (row.some((x) => x !== '')) rows.push({ cells: row, line: rowLine });
    row = [];
  };
  for (;;) {
    // One field from i: unquoted text up to a comma, a line break or a quote.
    const start = i;
    let j = i;
    for (; j < n; j++) {
      const c = text.charCodeAt(j);
      if (c === 44 /* , */ || c === 10 /* \n */ || c === 13 /* \r */ || c === 34 /* " */) break;
    }
    let f: string;
    if (j < n && text.charCodeAt(j) === 34) {
      if (text.slice(start, j).trim() !== '') bad(line, `a quote inside an unquoted field ${row.length + 1} ('${shown(text.slice(start, j + 1), 40)}'): quote the whole field and double the quotes in it`);
      // A quoted field (what precedes its quote is blank, and left out): up to the quote that is not doubled.
      const quoteLine = line;
      let close = j + 1, doubled = false;
      for (;;) {
        const q = text.indexOf('"', close);
        if (q < 0) bad(quoteLine, `a quote opened here is never closed (the file ends inside field ${row.length + 1})`);
        if (text.charCodeAt(q + 1) === 34) { doubled = true; close = q + 2; continue; }
        close = q;
        break;
      }
      const inner = text.slice(j + 1, close);
      // Line breaks inside the field count as outside it: LF, CRLF once, and a CR alone.
      line += (inner.match(/\r\n|\r|\n/g) ?? []).length;
      f = doubled ? inner.replaceAll('""', '"') : inner;
      // After the closing quote: blanks only, up to a comma or a line break.
      for (j = close + 1; j < n; j++) {
        const c = text[j];
        if (c === ',' || c === '\n' || c === '\r') break;
        if (!/\s/.test(c)) bad(line, `text after a closing quote in field ${row.length + 1} ('${shown(text.slice(start, j + 1), 40)}')`);
      }
    } else f = text.slice(start, j);
    row.push(f);
    if (j >= n) break;
    if (text.charCodeAt(j) === 44) { i = j + 1; continue; }
    if (text.charCodeAt(j) === 13 && text.charCodeAt(j + 1) === 10) j++;
    endRow();
    line++; rowLine = line; i = j + 1;
  }
  endRow();
  return rows;
}

/** More memory than any GPU holds (1 PiB, in GiB): a total or activation above it cannot be. */
const MAX_GIB = 2 ** 20;
/** The recompute column's grammar (the modules themselves are the model's to know: one it lacks is an error of that row's comparison). */
const RECOMPUTE = /^(none|selective(:[a-z_]+(\+[a-z_]+)*)?|full:(uniform|block)\/[1-9]\d*)$/;

/**
 * activation_memory.csv → rows. Refused with the line number (InputError): bad quoting, a column
 * named twice in the header, a seq_len missing, a size (seq_len, tp, cp, pp, micro_batch) that is not
 * a positive integer, a number cell that is not a finite number or is negative (a total_gib or
 * hbm_gib of 0 too, a memory above 1 PiB), a boolean (sp, fits) that is not true/false/1/0/yes/no, a
 * recompute that is no recompute setting, a row with fewer fields than the header's columns (a file cut short) or with a
 * field beyond them that is not empty (a value split by a comma in it: '10,5' read as 10), and a row that measures nothing (empty total_gib with fits
 * not given and no iter_ms or tflops_per_gpu). An empty total_gib is an unknown peak, never an
 * out-of-memory: only fits=false says that.
 */
export function parseCsv(text: string, name = 'CSV'): CsvRow[] {
  const rows = splitCsv(text, name);
  if (!rows.length) throw new InputError(`${name}: empty file`);
  const head = rows[0].cells.map((h) => h.trim().toLowerCase());
  const headLine = rows[0].line;
  for (let i = 0; i < head.length; i++) {
    const j = head.indexOf(head[i]);
    if (head[i] !== '' && j < i) throw new InputError(`${name} line ${headLine}: column '${shown(head[i])}' is named twice in the header (columns ${j + 1} and ${i + 1})`);
  }
  const need = ['seq_len', 'total_gib'];
  const missing = need.filter((c) => !head.includes(c));
  if (missing.length) throw new InputError(`${name}: not an activation_memory.csv: missing ${plural(missing.length, 'column')} ${missing.join(', ')} (header: ${shown(head.join(', '), 200)})`);
  // A row with fewer fields than the header's named columns is most often a file cut short: refused, not read with blanks.
  const named = head.reduce((last, h, i) => (h === '' ? last : i + 1), 0);
  const out: CsvRow[] = [];
  for (let k = 1; k < rows.length; k++) {
    const { cells, line } = rows[k];
    if (cells.length < named)
      throw new InputError(`${name} line ${line}: ${counted(cells.length, 'field')} where the header has ${named} (up to '${shown(head[named - 1])}'): a short row, the file cut short? Give every column a field (an empty one for an unknown value)`);
    const extra = cells.findIndex((c, i) => i >= head.length && c.trim() !== '');
    if (extra >= 0)
      throw new InputError(`${name} line ${line}: ${cells.length} fields where the header has ${head.length} columns: field ${extra + 1} ('${shown(cells[extra])}') has no column (a comma inside a value, a decimal comma as in '10,5'? Quote the value, write a decimal point, or name the column in the header)`);
    out.push(csvRow(cells, head, line, name));
  }
  return out;
}

/** One row of cells under the header `head`, refused (with its line) where a cell cannot be. */
function csvRow(r: string[], head: string[], line: number, name: string): CsvRow {
  const bad = (what: string): never => { throw new InputError(`${name} line ${line}: ${what}`); };
  const at = (c: string) => { const i = head.indexOf(c); return i < 0 ? '' : (r[i] ?? '').trim(); };
  /** A number cell: null when empty; refused when not a finite number in [0, max] (above 0 when positive; a safe integer when integer). */
  const n = (c: string, o: { positive?: boolean; integer?: boolean; max?: number } = {}) => {
    const s = at(c);
    if (s === '') return null;
    const x = decimalNumber(s); // decimal or scientific, as the command line takes: '0x1000' is not read as 4096
    if (!Number.isFinite(x)) bad(`${c} '${shown(s)}' is not ${nonDecimal(s) ? 'a decimal number' : 'a number'}`);
    if (o.integer && !(Number.isSafeInteger(x) && x > 0)) bad(`${c} '${shown(s)}' is not a positive integer`);
    if (x < 0 || (o.positive && x === 0)) bad(`${c} '${shown(s)}' is not ${o.positive ? 'positive' : 'a non-negative number'}`);
    if (o.max !== undefined && x > o.max) bad(`${c} ${s} GiB is more than any GPU holds (1 PiB)`);
    return x;
  };
  const b = (c: string) => {
    const s = at(c);
    if (s === '') return null;
    if (!/^(true|false|1|0|yes|no)$/i.test(s)) bad(`${c} '${shown(s)}' is not true or false`);
    return /^(true|1|yes)$/i.test(s);
  };
  const size = { integer: true };
  if (at('seq_len') === '') bad('seq_len is missing');
  const recompute = at('recompute') || null;
  if (recompute !== null && !RECOMPUTE.test(recompute))
    bad(`recompute '${shown(recompute)}' is not a recompute setting (none, selective, selective:core_attn+mlp, full:uniform/N, full:block/N)`);
  const row: CsvRow = {
    seq_len: n('seq_len', size)!, tp: n('tp', size), cp: n('cp', size), pp: n('pp', size), sp: b('sp'), recompute, micro_batch: n('micro_batch', size),
    activation_gib: n('activation_gib', { max: MAX_GIB }), total_gib: n('total_gib', { positive: true, max: MAX_GIB }),
    fits: b('fits'), source: at('source') || `measured: ${name}`, line: at('line') || undefined,
    hbm_gib: n('hbm_gib', { positive: true }), iter_ms: n('iter_ms'), tflops_per_gpu: n('tflops_per_gpu'), ...(head.includes('tight') ? { tight: b('tight') } : {}),
  };
  if (row.total_gib === null && row.fits === null && row.iter_ms === null && row.tflops_per_gpu === null)
    bad('total_gib is empty and fits is not given: the row measures nothing (an empty total_gib is an unknown peak, not an out-of-memory; write fits=false for a run that ran out of memory)');
  return row;
}

/**
 * The rows of a CSV that replay may compare with the model: measurements. Rows whose source is
 * `model` (what `memory --sweep --csv` and the page's export write) are the model's own output;
 * their `fits` is a prediction, not an out-of-memory that happened, so they are left out, and a
 * file of nothing else (or of no rows) is refused by name.
 */
export function measuredRows(rows: CsvRow[], name = 'CSV'): { rows: CsvRow[]; modelRows: number } {
  if (!rows.length) throw new InputError(`${name}: no rows, only a header`);
  const measured = rows.filter((r) => !/^model\b/i.test(r.source));
  if (!measured.length)
    throw new InputError(`${name} holds the model's own output (source 'model', as memory --sweep --csv and the page's export write it), not measurements: nothing to replay`);
  return { rows: measured, modelRows: rows.length - measured.length };
}

/** A sweep's points as rows, each with `tight` as the single point's verdict gives it (headroom()). */
export function sweepRows(points: SweepPoint[], hbmGib: number): CsvRow[] {
  return points.map((p) => ({
    seq_len: p.config.seqLength, tp: p.config.tensorParallel, cp: p.config.contextParallel, pp: p.config.pipelineParallel,
    sp: p.config.sequenceParallel, recompute: recomputeSpec(p.config), micro_batch: p.config.microBatchSize,
    activation_gib: p.activationGib, total_gib: p.totalGib, fits: p.fits, source: 'model', line: p.line, hbm_gib: hbmGib,
    tight: headroom(p.breakdown.totalBytes, hbmGib).tight,
  }));
}

/**
 * A measured point as a row; null without a sequence length or without anything measured (no peak, no
 * OOM, no iteration time or throughput). Its source names the log's model ("11L h=1536 a=12 vocab=50304", as
 * compare.ts sourceModel reads it) where the log gives it, so `replay --compare` can say when the
 * compared model is another.
 */
export function measuredRow(p: MeasuredPoint, hbmGib?: number): CsvRow | null {
  if (p.seqLength === null) return null;
  if (p.peakMaxAllocatedGiB === null && !p.outOfMemory && p.iterMs === null && p.tflopsPerGpu === null) return null;
  const size = p.numLayers && p.hiddenSize && p.numHeads ? `${p.numLayers}L h=${p.hiddenSize} a=${p.numHeads}${p.vocabSize ? ` vocab=${p.vocabSize}` : ''}; ` : '';
  // An out-of-memory other processes caused: neither ran nor out of memory of its own, its peak cut short (empty cells: unknown).
  const others = p.outOfMemoryOthers;
  return {
    seq_len: p.seqLength, tp: p.tp, cp: p.cp, pp: p.pp, sp: p.sp, recompute: p.recompute, micro_batch: p.microBatch,
    activation_gib: null, total_gib: others ? null : p.peakMaxAllocatedGiB, fits: others ? null : p.outOfMemory ? false : p.peakMaxAllocatedGiB === null ? null : true,
    source: `${REPLAY_SOURCE}${p.source} (${size}${others ? `out of memory with other processes holding ${others.otherGiB.toFixed(2)} GiB of the GPU: no verdict` : 'peak max allocated over ranks'})`,
    hbm_gib: hbmGib ?? null,
    iter_ms: p.iterMs, tflops_per_gpu: p.tflopsPerGpu,
  };
}
