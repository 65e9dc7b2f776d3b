/**
 * Formatters that choose a unit (or a number of decimals) and then round: the choice goes by the rounded
 * figure, so a value just under a boundary that rounds onto it is written in the unit above ("1 s", not
 * "1000 ms"). web/format.ts (the page), sizeOf (the CLI's disk messages), pctFine (the notes).
 */
import { describe, expect, it } from 'vitest';
import { duration, flopRate } from '../web/format.js';
import { sizeOf } from '../src/cli/files.js';
import { pctFine } from '../src/cli/notes.js';

describe('a unit chosen by the rounded figure', () => {
  it('duration: ms to 999 ms, s once three significant digits read 1000 ms, either sign', () => {
    expect([999.4, 999.5, 999.96, 1000, 1234, 67_000].map(duration)).toEqual(['999 ms', '1 s', '1 s', '1 s', '1.23 s', '67 s']);
    expect([-999.4, -999.5, -999.96, -1000].map(duration)).toEqual(['-999 ms', '-1 s', '-1 s', '-1 s']);
    expect([0, 0.0523, NaN, Infinity].map(duration)).toEqual(['0 ms', '0.0523 ms', '? ms', '? s']);
  });

  it('flopRate: the unit above once the figure rounds to 1000 of this one', () => {
    expect([999.4e9, 999.5e9, 999.96e9, 1e12, 61.3e12].map(flopRate)).toEqual(['999 GFLOP/s', '1.00 TFLOP/s', '1.00 TFLOP/s', '1.00 TFLOP/s', '61.3 TFLOP/s']);
    expect([999.96e6, 999.96e3, 0].map(flopRate)).toEqual(['1.00 GFLOP/s', '1.00 MFLOP/s', '0.00 MFLOP/s']);
    expect([-999.96e9, -2e12].map(flopRate)).toEqual(['-1.00 TFLOP/s', '-2.00 TFLOP/s']);
    expect([999.96e12, 1.5e15].map(flopRate)).toEqual(['1.00 PFLOP/s', '1.50 PFLOP/s']);   // --compute-tflops 1500 (a predicted ring)
  });

  it('sizeOf: 1024 KiB is 1 MiB and 1024 MiB is 1.0 GiB, however they are reached', () => {
    expect([1023 * 1024, 1023 * 1024 + 1, 2 ** 20 - 1, 2 ** 20].map(sizeOf)).toEqual(['1023 KiB', '1 MiB', '1 MiB', '1 MiB']);
    expect([1023.4 * 2 ** 20, 1023.5 * 2 ** 20, 2 ** 30 - 1, 2 ** 30].map(sizeOf)).toEqual(['1023 MiB', '1.0 GiB', '1.0 GiB', '1.0 GiB']);
  });

  it('pctFine: two decimals below 1%, one from 1%, by the rounded figure and by size, either sign', () => {
    expect([0.00994, 0.00995, 0.009996, 0.01, 0.1234].map(pctFine)).toEqual(['0.99%', '1.0%', '1.0%', '1.0%', '12.3%']);
    expect([-0.005, -0.009996, -0.5].map(pctFine)).toEqual(['-0.50%', '-1.0%', '-50.0%']);
  });
});
