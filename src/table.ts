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
