/**
 * Numbers as people and logs write them: decimal, or scientific notation. Number() alone also reads
 * '0x1000' (4096), '0b11', '0o7', '' (0) and 'Infinity'; every reader of numbers (the command line,
 * CSV cells, Megatron-LM logs) goes through this instead, so they take the same forms.
 */

/** Plain decimal or scientific notation: no hex, binary or octal, no empty string, no 'Infinity', no spaces, no digit separators. */
export const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** `s` as a number where it is written in decimal (DECIMAL; a finite value or ±Infinity past float64's range), else NaN. */
export const decimalNumber = (s: string): number => (DECIMAL.test(s) ? Number(s) : NaN);

/** Text Number() reads as a finite number though it is not decimal ('0x1000', '0b11'): said as 'not a decimal number', not 'not a number'. */
export const nonDecimal = (s: string): boolean => !DECIMAL.test(s) && s.trim() !== '' && Number.isFinite(Number(s));
