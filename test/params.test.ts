/**
 * The attention uniform block is written once (src/kernels/params.ts): the WGSL struct the
 * shaders see and the host's packing must agree field for field, and a packed buffer must read
 * back as the values the table computes.
 */
import { describe, expect, it } from 'vitest';
import { ATTENTION_PARAMS, PARAMS_WGSL, ParamInputs, packUniform, uniformBytes } from '../src/kernels/params.js';
import { attentionSource, attentionValues } from '../src/kernels/source.js';
import { PREPROCESS_BINDINGS } from '../src/kernels/flashBackward.js';
import { kernelKey } from '../src/kernels/pipeline.js';
import { SHADERS } from '../src/kernels/shaders.js';
import { resolveOptions } from '../src/shape.js';
import { POS_MAX } from '../src/mask.js';

/** The fields of a WGSL struct of 4-byte scalars, with their offsets (WGSL layout rules: 4-byte aligned, in order). */
function parseStruct(src: string, name: string): { name: string; type: string; offset: number }[] {
  const body = new RegExp(`struct ${name} \\{([^}]*)\\}`).exec(src)![1];
  return [...body.matchAll(/^\s*(\w+)\s*:\s*(u32|i32|f32)\s*,/gm)].map((m, i) => ({ name: m[1], type: m[2], offset: 4 * i }));
}

const read = (view: DataView, type: string, offset: number) =>
  type === 'u32' ? view.getUint32(offset, true) : type === 'i32' ? view.getInt32(offset, true) : view.getFloat32(offset, true);

describe('attention uniform block', () => {
  const s = { B: 2, Hq: 8, Hkv: 2, Nq: 96, Nk: 160, D: 64 };
  const o = resolveOptions(s, { causal: true, window: [-1, 1e9], qPos: { offset: -7, stride: 3 }, kPos: { offset: 5, stride: 2, split: 40, jump: 17 }, scale: 0.3, docs: { cuQ: new Int32Array([0, 40, 96]), cuK: new Int32Array([0, 70, 160]) } });
  const x: ParamInputs = { s, o, accumulate: true };
  const fields = parseStruct(PARAMS_WGSL, 'Params');

  it("the WGSL struct has the table's fields, types and offsets, padded to a multiple of 16 bytes", () => {
    const named = fields.filter((f) => !f.name.startsWith('_pad'));
    expect(named.map(({ name, type }) => ({ name, type }))).toEqual(ATTENTION_PARAMS.map(({ name, type }) => ({ name, type })));
    expect(fields.slice(named.length).every((f) => f.name.startsWith('_pad') && f.type === 'u32')).toBe(true);
    expect(4 * fields.length).toBe(uniformBytes(ATTENTION_PARAMS));
    expect((4 * fields.length) % 16).toBe(0);
    expect(fields.length - named.length).toBeLessThan(4);
    expect(packUniform(ATTENTION_PARAMS, x).byteLength).toBe(4 * fields.length);
  });

  it("a packed buffer reads back, at the struct's offsets, as the values the table computes", () => {
    const view = new DataView(packUniform(ATTENTION_PARAMS, x));
    const got = Object.fromEntries(fields.map((f) => [f.name, read(view, f.type, f.offset)]));
    const want = Object.fromEntries(ATTENTION_PARAMS.map((f) => [f.name, f.type === 'f32' ? Math.fround(f.value(x)) : f.value(x)]));
    expect(got).toMatchObject(want);
    expect(got).toMatchObject({ B: 2, Hq: 8, Hkv: 2, Nq: 96, Nk: 160, causal: 1, q_off: -7, q_stride: 3, k_off: 5, k_stride: 2, accumulate: 1, zero: 0, win_left: -1, win_right: POS_MAX, n_docs: 2 });
    expect(got.scale).toBeCloseTo(0.3, 6);
    for (const f of fields.filter((f) => f.name.startsWith('_pad'))) expect(got[f.name]).toBe(0);
  });

  it('is filled into the common header once, and kernel keys follow the specialization values', () => {
    const plan = { BR: 32, BC: 16, WG: 32, workgroupBytes: 0 };
    const types = { precision: 'f32', out: 'f32', grad: 'f32' } as const;
    const code = attentionSource(SHADERS.flashBwdPre, attentionValues(64, plan, types, true), PREPROCESS_BINDINGS);
    expect(code.match(/struct Params \{/g)).toHaveLength(1);
    expect(parseStruct(code, 'Params')).toEqual(fields);
    expect(SHADERS.common).not.toMatch(/struct Params \{/);
    const key = (D: number, t = types) => kernelKey('k', attentionValues(D, plan, t, true));
    expect(key(64)).toBe(key(64));
    expect(key(64)).not.toBe(key(128));
    expect(key(64)).not.toBe(key(64, { ...types, out: 'f16' } as never));
  });

  it('positions of two runs need both split and jump, integers >= 0', () => {
    for (const kPos of [{ offset: 0, stride: 1, split: 3 }, { offset: 0, stride: 1, jump: 3 }, { offset: 0, stride: 1, split: -1, jump: 3 }, { offset: 0, stride: 1, split: 2, jump: 1.5 }])
      expect(() => resolveOptions(s, { kPos }), JSON.stringify(kPos)).toThrow(/kPos: a chunk of two runs needs both split and jump, integers >= 0/);
    expect(() => resolveOptions(s, { qPos: { offset: 0, stride: 1, split: 4, jump: 2 ** 31 - 1 } })).toThrow(/qPos: positions must stay below 536870912/);
  });

  it('the last position must stay below POS_MAX too (each of offset, stride and jump can be small while the last is not)', () => {
    const n = s.Nk;
    expect(() => resolveOptions(s, { kPos: { offset: 0, stride: 2 ** 28 } })).toThrow(new RegExp(`kPos: the last of ${n} positions would be ${(n - 1) * 2 ** 28}; positions must stay below 536870912`));
    expect(() => resolveOptions(s, { qPos: { offset: 2 ** 29 - 5, stride: 1, split: 1, jump: 2 ** 28 } })).toThrow(/qPos: the last of \d+ positions would be/);
    // A second run no row reaches (split >= rows) adds nothing to the last position.
    expect(() => resolveOptions(s, { qPos: { offset: 0, stride: 1, split: s.Nq, jump: 2 ** 29 - 1 } })).not.toThrow();
    // Just inside: the last position POS_MAX − 1.
    expect(() => resolveOptions(s, { kPos: { offset: 2 ** 29 - n, stride: 1 } })).not.toThrow();
  });
});
