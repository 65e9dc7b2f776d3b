/** The page's short forms of figures, for tooltips and compact cells. */

import { sig3 } from '../src/table.js';

export { sig3 };

/** x rounded to three significant digits: what a unit is chosen by, so that 999.96 (1000 to three digits) takes the unit above. */
const round3 = (x: number): number => Number(x.toPrecision(3));

/**
 * A duration in ms, to three significant digits, in ms below a second and in s from there: "412 ms", "67 s";
 * one that rounds to 1000 ms is "1 s".
 */
export const duration = (ms: number): string => (Math.abs(round3(ms)) >= 1000 ? `${sig3(ms / 1000)} s` : `${sig3(ms)} ms`);

/** FLOP/s to three significant digits in the largest of PFLOP/s, TFLOP/s, GFLOP/s, MFLOP/s it reaches once rounded (999.96 GFLOP/s is "1.00 TFLOP/s"); MFLOP/s below. */
export function flopRate(flopsPerSecond: number): string {
  const units: [number, string][] = [[1e15, 'PFLOP/s'], [1e12, 'TFLOP/s'], [1e9, 'GFLOP/s'], [1e6, 'MFLOP/s']];
  const [div, unit] = units.find(([d]) => Math.abs(round3(flopsPerSecond / d)) >= 1) ?? units[units.length - 1];
  return `${(flopsPerSecond / div).toPrecision(3)} ${unit}`;
}

/** A bound as a person writes it: grouped thousands, no exponent (0.000001, 1,000,000). */
export const bound = (x: number): string => x.toLocaleString('en-US', { maximumFractionDigits: 12 });

/** What a field bounded on both sides takes, in the page's words: "a number from 0.000001 to 1,000,000". */
export const numberFrom = (min: number, max: number): string => `a number from ${bound(min)} to ${bound(max)}`;

/** `text` cut at `max` characters, at a word where it can, with an ellipsis. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1), space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, '')}…`;
}
