/** Command-line parsing and output writing shared by the commands (src/cli/args.ts). */
import { describe, expect, it } from 'vitest';
import { nearestOption, numberArg, parseCommand } from '../src/cli/args.js';
import { InputError } from '../src/errors.js';

const OPTS = { scale: { type: 'string' }, causal: { type: 'boolean' } } as const;

describe('parseCommand', () => {
  it('names the option a mistyped flag most likely meant, and none where no option is near or two are as near', () => {
    const mistake = (argv: string[]) => { try { parseCommand('t', argv, OPTS); } catch (e) { return (e as Error).message; } return 'no error'; };
    expect(mistake(['--casual'])).toBe("unknown option '--casual': did you mean --causal? (see flashring t --help)");
    expect(mistake(['--Scale', '2'])).toBe("unknown option '--Scale': did you mean --scale? (see flashring t --help)");
    expect(mistake(['--bogus'])).toBe("unknown option '--bogus' (see flashring t --help)");
    expect(nearestOption('head', ['heads', 'batch'])).toBe('heads');
    expect(nearestOption('n', ['N', 'D'])).toBe('N');
    expect(nearestOption('x', ['N', 'D'])).toBeUndefined();   // one letter off a one-letter name: too far to guess
    expect(nearestOption('causel', ['causal', 'causex'])).toBeUndefined();   // two as near
    expect(nearestOption('preicsion', ['precision'])).toBe('precision');   // a swap is one edit
    expect(nearestOption('memroy-preset', ['memory-preset', 'memory-tp'])).toBe('memory-preset');
    expect(nearestOption('outt', ['out', 'force'])).toBe('out');
    expect(nearestOption('sequence', ['seq-length'])).toBeUndefined();
  });

  it('takes a negative number after a string flag as its value, and --flag=value', () => {
    expect(parseCommand('t', ['--scale', '-0.125'], OPTS).values.scale).toBe('-0.125');
    expect(parseCommand('t', ['--scale', '-.5', '--causal'], OPTS).values).toEqual({ scale: '-.5', causal: true });
    expect(parseCommand('t', ['--scale=-1e3'], OPTS).values.scale).toBe('-1e3');
  });

  it('turns every parsing mistake into a one-line InputError', () => {
    for (const [argv, re] of [
      [['--causal=yes'], /^option '--causal' does not take an argument \(see flashring t --help\)$/],
      [['stray'], /^unexpected argument 'stray'/],
      [['--bogus'], /^unknown option '--bogus'/],
      [['--scale'], /argument missing/],
      [['--scale', '-x'], /^--scale needs a value \(to give one starting with '-', write --scale=VALUE\)/],
    ] as [string[], RegExp][]) {
      expect(() => parseCommand('t', argv, OPTS)).toThrow(InputError);
      expect(() => parseCommand('t', argv, OPTS)).toThrow(re);
    }
  });
});

describe('numberArg', () => {
  const pos = { above: 0, what: 'a positive number' };
  it('accepts plain decimal and scientific numbers only', () => {
    expect(numberArg('s', '0.125', pos)).toBe(0.125);
    expect(numberArg('s', '1e-3', pos)).toBe(0.001);
    expect(numberArg('s', '.5', pos)).toBe(0.5);
    for (const bad of ['', ' ', '0x10', '0b1', 'Infinity', 'NaN', '1e400', '-1', '0', '1_000', '1 ', '+'])
      expect(() => numberArg('s', bad, pos), bad).toThrow(`--s must be a positive number, got '${bad}'`);
  });
  it('checks integrality and bounds', () => {
    const rule = { integer: true, min: 1, max: 64, what: 'an integer from 1 to 64' };
    expect(numberArg('cp', '64', rule)).toBe(64);
    for (const bad of ['65', '0', '1.5', '-1']) expect(() => numberArg('cp', bad, rule)).toThrow(/--cp must be an integer from 1 to 64/);
  });
});
