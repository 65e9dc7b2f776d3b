/** The median (mean of the two middle values for an even count); null for no values. */
export function median(xs: number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * The largest and smallest value by a loop, not Math.max(...xs): a file of 300k rows has more values
 * than a call takes arguments. −Infinity / Infinity for no values.
 */
export function maxOf(xs: number[]): number {
  return xs.reduce((m, x) => Math.max(m, x), -Infinity);
}
export function minOf(xs: number[]): number {
  return xs.reduce((m, x) => Math.min(m, x), Infinity);
}
