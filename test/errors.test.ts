/**
 * Typed errors across the process boundary: what a rank process sends (errorFields, through JSON
 * as process.send does) rebuilds in the parent (processRanks.ts rankError) as the same class,
 * naming the rank; a class that is not one of flashring's (a bug) is an internal error, never a
 * lost device. No process is started.
 */
import { describe, expect, it } from 'vitest';
import * as errors from '../src/errors.js';
import { DeviceLostError, ERROR_CLASSES, FlashringError, GPUOutOfMemoryError, GPUValidationError, InputError, LimitError, errorFields, rebuildError } from '../src/errors.js';
import { rankError } from '../src/cp/launch/processRanks.js';
import { NoLengthError } from '../src/memory/model.js';

/** As it arrives in the parent. */
const sent = (e: unknown) => JSON.parse(JSON.stringify(errorFields(e)));

describe('a rank process error in its parent (rankError)', () => {
  it('a GPUValidationError keeps its class, label and WebGPU message', () => {
    const e = rankError(1, sent(new GPUValidationError('Merge[D=64].add', 'bad bind group')));
    expect(e).toBeInstanceOf(GPUValidationError);
    expect((e as GPUValidationError).label).toBe('Merge[D=64].add');
    expect((e as GPUValidationError).gpuMessage).toBe('bad bind group');
    expect(e.message).toBe('rank 1: WebGPU error in Merge[D=64].add: bad bind group');
    expect(e.name).toBe('GPUValidationError');
  });

  it('a GPUOutOfMemoryError keeps its class and its message (what flashring held, what to do), not an internal error', () => {
    const oom = new GPUOutOfMemoryError('Forward[D=64] step 2', 'Out of memory', 3 * 2 ** 20);
    const e = rankError(1, sent(oom));
    expect(e).toBeInstanceOf(GPUOutOfMemoryError);
    expect(e.message).toBe(`rank 1: ${oom.message}`);
    expect((e as GPUValidationError).label).toBe('Forward[D=64] step 2');
  });

  it('a TypeError (a bug) is an internal error to report, not a lost device', () => {
    const e = rankError(2, sent(new TypeError("Cannot read properties of undefined (reading 'size')")));
    expect(e).toBeInstanceOf(FlashringError);
    expect(e).not.toBeInstanceOf(DeviceLostError);
    expect(e.message).toBe("internal error in rank 2: TypeError: Cannot read properties of undefined (reading 'size'); please report it with the command");
  });

  it('InputError and DeviceLostError keep their class; a lost device names its rank', () => {
    expect(rankError(0, sent(new InputError('bad shape')))).toBeInstanceOf(InputError);
    const lost = rankError(3, sent(new DeviceLostError('device 0 is lost')));
    expect(lost).toBeInstanceOf(DeviceLostError);
    expect((lost as DeviceLostError).rank).toBe(3);
    expect(lost.message).toBe('rank 3: device 0 is lost');
  });

  it("an InputError keeps the flags it names (InputError.flags), which a form marks its control by; one without any has none", () => {
    const refused = new InputError('--num-experts 8 is not divisible by --expert-model-parallel-size 3', { flags: ['--num-experts', '--expert-model-parallel-size'] });
    const e = rankError(2, sent(refused));
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).flags).toEqual(['--num-experts', '--expert-model-parallel-size']);
    expect(e.message).toBe(`rank 2: ${refused.message}`);
    expect((rankError(0, sent(new InputError('bad shape'))) as InputError).flags).toEqual([]);
  });

  it("a LimitError keeps the tiles it tried (LimitError.tried), with what each needs; one that tried none has none", () => {
    const need = { bytes: 41472, chunk: 32, invocations: 256, maxBytes: 32768, maxInvocations: 1024 };
    const tried = [{ tile: '128x32', why: '41472 bytes at chunk 32, 256 invocations', need }, { tile: '64x32', why: 'chunk 24 does not divide head dim 64' }];
    const e = rankError(1, sent(new LimitError('no tile fits', tried)));
    expect(e).toBeInstanceOf(LimitError);
    expect((e as LimitError).tried).toEqual(tried);
    expect((rankError(0, sent(new LimitError('buffer too large'))) as LimitError).tried).toEqual([]);
  });

  it("every FlashringError class of errors.ts is in ERROR_CLASSES and rebuilds as itself", () => {
    const classes = Object.entries(errors).filter(([, v]) => typeof v === 'function' && (v === FlashringError || v.prototype instanceof FlashringError));
    expect(classes.length).toBeGreaterThan(5);
    for (const [name, cls] of classes) {
      expect(Object.keys(ERROR_CLASSES), name).toContain(name);
      expect(rankError(0, { name, message: 'm', label: 'l', gpuMessage: 'g' }).constructor, name).toBe(cls);
    }
  });

  it("an error crosses named by its class, not by its name, which a minifier renames with the class (the page's bundle)", () => {
    const classes = Object.entries(errors).filter(([, v]) => typeof v === 'function' && (v === FlashringError || v.prototype instanceof FlashringError));
    for (const [name, cls] of classes) {
      // As the page's bundle makes it: the class's name (new.target.name) minified to 't'.
      const e = Object.assign(Object.create((cls as typeof FlashringError).prototype) as FlashringError, { name: 't', message: 'm', flags: ['--x'], tried: [] });
      expect(errorFields(e).name, name).toBe(name);
    }
    const refusal = Object.assign(new InputError('refused', { flags: ['--num-layers'] }), { name: 't' });
    const back = rebuildError(sent(refusal));
    expect([back.constructor, back.message, (back as InputError).flags]).toEqual([InputError, 'refused', ['--num-layers']]);
  });

  it("an error's name is its class's as written, even where a minifier renamed the class; a subclass elsewhere crosses as the class of this file it is", () => {
    // A class renamed as a minifier renames it: `class t extends InputError {}` is what the bundle holds for a subclass.
    const Minified = { t: class extends InputError {} }.t;
    expect(Minified.name).toBe('t');
    expect(new InputError('x').name).toBe('InputError');
    expect(new NoLengthError('no length', ['CP=2']).name).toBe('NoLengthError');
    const back = rebuildError(sent(new NoLengthError('no length', ['CP=2'], ['--seq-length'])));
    expect([back.constructor, back.message, (back as InputError).flags]).toEqual([InputError, 'no length', ['--seq-length']]);
    expect(errorFields(new Minified('m')).name).toBe('InputError');
  });
});
