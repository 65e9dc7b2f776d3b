/**
 * Each kernel family's bindings are one table (src/kernels/bindings.ts), from which its layout
 * and bind groups are built: here, every shader of the family declares exactly the table's
 * bindings (index, variable name, access), so a binding added to a shader and not to its table,
 * or the other way round, fails before any GPU sees it.
 */
import { describe, expect, it } from 'vitest';
import { BindingTable, bindingSubset, bindingTable, declaredBindings } from '../src/kernels/bindings.js';
import { SHADERS } from '../src/kernels/shaders.js';
import { FORWARD_BINDINGS } from '../src/kernels/flashForward.js';
import { BACKWARD_BINDINGS, PREPROCESS_BINDINGS } from '../src/kernels/flashBackward.js';
import { MERGE_ADD_BINDINGS, MERGE_BINDINGS } from '../src/kernels/merge.js';

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
  it.each(families.map(([t, what, body]) => [what, t, body] as const))('%s: the common header and the body declare its table', (_, table, body) => {
    expect(declaredBindings(`${SHADERS.common}\n${body}`)).toEqual(sorted(table));
  });
  it('merge declares its table; its add entry point binds a subset of it', () => {
    expect(declaredBindings(SHADERS.merge)).toEqual(sorted(MERGE_BINDINGS));
    expect(MERGE_ADD_BINDINGS.entries.every((e) => MERGE_BINDINGS.entries.includes(e))).toBe(true);
    expect(SHADERS.merge).toMatch(/fn add\(/);
  });
  it('the forward and the backward bind at most 10 storage buffers (a limit some adapters set)', () => {
    for (const t of [FORWARD_BINDINGS, BACKWARD_BINDINGS, PREPROCESS_BINDINGS, MERGE_BINDINGS])
      expect(t.entries.filter((e) => e.access !== 'uniform').length, t.label).toBeLessThanOrEqual(10);
  });
  it('reads every access spelling, and refuses a table with a binding or a name twice', () => {
    const src = '@group(0) @binding(3) var<storage, read_write> c: array<f32>;\n@group(0) @binding(0) var<uniform> P: Params;\n@group(0)  @binding(1)  var<storage,read> a: array<f32>;';
    expect(declaredBindings(src)).toEqual([
      { binding: 0, name: 'P', access: 'uniform' }, { binding: 1, name: 'a', access: 'read' }, { binding: 3, name: 'c', access: 'read_write' },
    ]);
    expect(() => bindingTable('T', [[0, 'a', 'read'], [0, 'b', 'read']])).toThrow(/T: binding 0 is in the binding table twice/);
    expect(() => bindingTable('T', [[0, 'a', 'read'], [1, 'a', 'read']])).toThrow(/T: name a is in the binding table twice/);
    expect(() => bindingSubset(MERGE_BINDINGS, 'X', ['q' as 'M'])).toThrow(/X: q is not in Merge's bindings/);
  });
});
