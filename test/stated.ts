/**
 * A published figure recomputed: the docs' "within X%" is the largest error rounded up at X's last
 * digit (so X bounds it, and one unit less would not), and a median "Y%" is the median rounded to Y's digits.
 * Either moves when the model does: a term removed or changed fails here, not only in a regenerated table.
 */
import { expect } from 'vitest';

const digits = (s: string) => s.split('.')[1]?.length ?? 0;

/** `largest` (a fraction) is within `pct` percent, and not within one unit of its last digit less. */
export function expectWithin(largest: number, pct: string, what: string): void {
  const x = largest * 100, unit = 10 ** -digits(pct);
  expect(x, `${what}: ${x.toFixed(4)}% against the stated ${pct}%`).toBeLessThanOrEqual(Number(pct) + 1e-9);
  expect(x, `${what}: ${x.toFixed(4)}% is within the stated ${pct}% with room: state it tighter`).toBeGreaterThan(Number(pct) - unit);
}

/** `value` (a fraction) is `pct` percent, rounded to its digits. */
export function expectRounded(value: number, pct: string, what: string): void {
  expect((value * 100).toFixed(digits(pct)), what).toBe(pct);
}
