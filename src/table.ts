/** Text tables as the CLI and the benches print them. */

/**
 * Rows of cells (the first the header) as lines whose columns line up: each column padded to its widest cell, to the
 * right where `left` names it, else to the left (numbers), with `gap` between columns; no line ends in spaces (a last
 * column padded to the right writes none).
 */
export function aligned(rows: string[][], left: readonly number[], gap = '  '): string[] {
  const n = Math.max(...rows.map((r) => r.length));
  const width = Array.from({ length: n }, (_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => width.map((w, c) => (left.includes(c) ? (r[c] ?? '').padEnd(w) : (r[c] ?? '').padStart(w))).join(gap).trimEnd());
}

/** Three significant digits as JavaScript writes the number ('0.000001', '5.12e-7', '1230'): '?' where it is not finite. */
export const sig3 = (x: number): string => (Number.isFinite(x) ? String(Number(x.toPrecision(3))) : '?');
