/**
 * The page's panels tell bad input from bugs (web/fields.ts): a field's error or the model's own
 * check (InputError) is said as input to fix; anything else (a TypeError) is said as an internal
 * error to report, and rethrown after the task so the console and the page tests see it.
 */
import { describe, expect, it } from 'vitest';
import { InputError } from '../src/errors.js';
import { FieldError, FieldErrors, bugWords, isInputError } from '../web/fields.js';

describe('isInputError and bugWords (web/fields.ts)', () => {
  it('field errors and the model\'s InputErrors are input; a TypeError is not', () => {
    expect(isInputError(new FieldError('Heads must be…'))).toBe(true);
    expect(isInputError(new FieldErrors([new FieldError('a')]))).toBe(true);
    expect(isInputError(new InputError('--num-layers must be a positive integer, got 0'))).toBe(true);
    expect(isInputError(new TypeError('x is undefined'))).toBe(false);
    expect(isInputError('a string')).toBe(false);
  });

  it('a bug is said as an internal error to report, and handed on to be rethrown', () => {
    const rethrown: unknown[] = [];
    const e = new TypeError("Cannot read properties of undefined (reading 'moe')");
    expect(bugWords(e, (x) => rethrown.push(x))).toBe("Internal error of the page (please report it, with the page's address): TypeError: Cannot read properties of undefined (reading 'moe')");
    expect(rethrown).toEqual([e]);
  });
});
