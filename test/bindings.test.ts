/**
 * Each kernel family's bindings are one table (src/kernels/bindings.ts), from which its shaders'
 * declarations ({{BINDINGS}}), its layout and its bind groups are built: here, every specialized
 * source declares exactly its table (index, name, access, type), no shader file declares a
 * binding by hand, and each kernel file defines the storage-word aliases its table names.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { BindingTable, bindingTable, declaredBindings, wgslBindings } from '../src/kernels/bindings.js';
import { SHADERS } from '../src/kernels/shaders.js';
import { FORWARD_BINDINGS } from '../src/kernels/flashForward.js';
import { BACKWARD_BINDINGS, PREPROCESS_BINDINGS } from '../src/kernels/flashBackward.js';
import { MERGE_ADD_BINDINGS } from '../src/kernels/merge.js';
import { attentionSource, attentionValues } from '../src/kernels/source.js';

/** A table's rows in binding order, as declaredBindings gives a shader's. */
const sorted = (t: BindingTable) => [...t.entries].sort((a, b) => a.binding - b.binding);

describe('binding tables against the shaders', () => {
  const families: [BindingTable, string, string][] = [
    [FORWARD_BINDINGS, 'portable forward (subgroup rows)', SHADERS.flashFwd.subgroup],
    [FORWARD_BINDINGS, 'portable forward (workgroup rows)', SHADERS.flashFwd.workgroup],
    [FORWARD_BINDINGS, 'tensor-core forward', SHADERS.flashFwdSgmm],
    [BACKWARD_BINDINGS, 'portable backward', SHADERS.flashBwd],
    [BACKWARD_BINDINGS, 'tensor-core backward', SHADERS.flashBwdSgmm],
    [PREPROCESS_BINDINGS, 'backward preprocess', SHADERS.flashBwdPre],
  ];
  it.each(families.map(([t, what, body]) => [what, t, body] as const))('%s: its table declares itself, and the file defines the words the table names', (_, table, body) => {
    expect(declaredBindings(wgslBindings(table))).toEqual(sorted(table));
    for (const alias of new Set(table.entries.map((e) => /array<(\w+)>/.exec(e.type!)?.[1]).filter((a) => a && /^[IOG]W$/.test(a))))
      expect(body, alias).toMatch(new RegExp(`^alias ${alias} = `, 'm'));
  });
  it('the common header fills in the table it is given, once (a whole source: the preprocess)', () => {
    expect(SHADERS.common.match(/\{\{BINDINGS\}\}/g)).toHaveLength(1);
    const src = attentionSource(SHADERS.flashBwdPre, attentionValues(64, { BR: 16, BC: 16, WG: 64, workgroupBytes: 0 }, { precision: 'f16', out: 'f32', grad: 'f32' }, true), PREPROCESS_BINDINGS);
    expect(declaredBindings(src)).toEqual(sorted(PREPROCESS_BINDINGS));
  });
  it('no shader file declares a binding: every declaration comes from a table', () => {
    for (const f of readdirSync('shaders').filter((x) => x.endsWith('.wgsl')))
      expect(readFileSync(`shaders/${f}`, 'utf8'), f).not.toMatch(/@binding\(/);
  });
  it('the add (shaders/merge.wgsl) declares its table', () => {
    expect(declaredBindings(wgslBindings(MERGE_ADD_BINDINGS))).toEqual(sorted(MERGE_ADD_BINDINGS));
    expect(SHADERS.merge).toContain('{{BINDINGS}}');
    expect(SHADERS.merge).toMatch(/fn add\(/);
  });
  it('the forward and the backward bind at most 10 storage buffers (a limit some adapters set)', () => {
    for (const t of [FORWARD_BINDINGS, BACKWARD_BINDINGS, PREPROCESS_BINDINGS, MERGE_ADD_BINDINGS])
      expect(t.entries.filter((e) => e.access !== 'uniform').length, t.label).toBeLessThanOrEqual(10);
  });
  it('reads every access spelling, and refuses a table with a binding or a name twice', () => {
    const src = '@group(0) @binding(3) var<storage, read_write> c: array<f32>;\n@group(0) @binding(0) var<uniform> P: Params;\n@group(0)  @binding(1)  var<storage,read> a: array<f32>;';
    expect(declaredBindings(src)).toEqual([
      { binding: 0, name: 'P', access: 'uniform', type: 'Params' }, { binding: 1, name: 'a', access: 'read', type: 'array<f32>' },
      { binding: 3, name: 'c', access: 'read_write', type: 'array<f32>' },
    ]);
    expect(() => wgslBindings(bindingTable('T', [[0, 'a', 'read']]))).toThrow(/T: binding 0 \(a\) has no WGSL type to declare/);
    expect(() => bindingTable('T', [[0, 'a', 'read'], [0, 'b', 'read']])).toThrow(/T: binding 0 is in the binding table twice/);
    expect(() => bindingTable('T', [[0, 'a', 'read'], [1, 'a', 'read']])).toThrow(/T: name a is in the binding table twice/);
  });
});
