/**
 * The tensor-core kernels' subgroup-matrix offsets, read from every specialization the planner can pick
 * (src/kernels/validate.ts sgmmModules, the sources validate-shaders compiles). Dawn's robustness
 * transform (on in every browser) checks a subgroup-matrix load or store at run time, its offset and
 * stride through selects, unless it can prove it in bounds (constant offset, stride and array length;
 * nothing built from the subgroup was proven in the dumps); measured on the
 * H200 that check cost the forward 10–32% (docs/performance.md, "fifteenth step"). So every load and
 * store from workgroup memory must take its block's pointer at an offset made of literals and module
 * constants only; the forward's D split (DS = 2) may add its subgroup part hd. Loads and stores of
 * the storage buffers (the backward's direct epilogue) are checked by the driver's robustness, not Tint's.
 */
import { describe, expect, it } from 'vitest';
import { sgmmCalls } from '../src/kernels/pipeline.js';
import { sgmmModules } from '../src/kernels/validate.js';

/** Literals (16u), module constants (SS, DP, CB, …), products, sums, quotients and remainders of them. */
const CONSTANT = /^[0-9A-Z_u*+/% ]+$/;

/**
 * The array and offset of each subgroup-matrix load and store in a source (parsed as legacySgmmSpelling
 * parses them), how many calls it holds, and the arrays it declares in workgroup and in storage memory.
 */
function matrixOffsets(code: string): { calls: number; ops: [string, string][]; workgroup: Set<string>; storage: Set<string> } {
  const declared = (space: string) => new Set([...code.matchAll(new RegExp(`var<${space}[^>]*> (\\w+)`, 'g'))].map((m) => m[1]));
  return {
    calls: (code.match(/subgroupMatrix(Load|Store)</g) ?? []).length,
    ops: sgmmCalls(code).map(({ pointer, offset }): [string, string] => [/^&(\w+)/.exec(pointer)?.[1] ?? pointer, offset.trim()]),
    workgroup: declared('workgroup'),
    storage: declared('storage'),
  };
}

describe('tensor-core kernels: subgroup-matrix offsets the robustness transform can see are constants', () => {
  it('every load and store from workgroup memory is at a constant offset within its block (hd too with the D split)', () => {
    let modules = 0;
    let checked = 0;
    for (const [what, code] of sgmmModules([16, 32, 48, 64, 128, 256])) {
      modules++;
      const { calls, ops, workgroup, storage } = matrixOffsets(code);
      expect(ops.length, `${what}: every call parsed`).toBe(calls);
      for (const [array, offset] of ops) {
        if (storage.has(array)) continue;
        expect(workgroup.has(array), `${what}: ${array} is declared in workgroup memory`).toBe(true);
        const allowed = what.includes('DS=') ? offset.replace(/\bhd\b/g, '0u') : offset;
        expect(allowed, `${what}: offset of a load or store from ${array}`).toMatch(CONSTANT);
        checked++;
      }
    }
    expect(modules).toBeGreaterThan(50);
    expect(checked).toBeGreaterThan(5000);
  });
  it('the check itself: the offsets before the change (7d8e3fc, a run-time block offset) fail it', () => {
    const old = 'let kt = subgroupMatrixLoad<RM, col_major>(&Ks, kb + 0u * 16u, DP);\nsubgroupMatrixStore<row_major>(&S, blk + 0u * 16u * SS + cb * 16u, acc0, SS);';
    const { calls, ops } = matrixOffsets(old);
    expect(ops.length).toBe(calls);
    expect(ops.map(([, off]) => CONSTANT.test(off))).toEqual([false, false]);
    const now = 'let kt = subgroupMatrixLoad<RM, col_major>(&Ks[0u * CB / DS + 1u], 0u * 16u, DP);';
    expect(matrixOffsets(now).ops.map(([a, off]) => [a, CONSTANT.test(off)])).toEqual([['Ks', true]]);
  });
});
