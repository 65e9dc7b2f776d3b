/**
 * Which workgroup variables each tensor-core backward kernel's code reaches, read from every specialization
 * the planner can pick (src/kernels/validate.ts sgmmModules). Dawn builds a pipeline from its entry point's
 * call graph alone, so a variable no function of that graph names takes no workgroup memory there. On the
 * H200 the D = 64 backward ran 1.6–1.8× slower with 4 KiB more (unused) workgroup memory and about a
 * quarter faster with 8 KiB less (bench/results/2026-12-04-wg-bytes-h200; timing-only variants: …-wg-alias-h200,
 * …-wg-alias2-h200). With one spill block (the default up to SGMM_ONE_SPILL_MAX_D) dq reaches one f32 block a
 * subgroup (Sa: S, then dP) and dkdv one f32 (Sa: Sᵀ, then dPᵀ) and one f16 (dSa: Pᵀ, then dSᵀ), neither the dP
 * nor the Pᵀ arrays; with two, dq reaches Sa and dPa (never Pa), dkdv every array.
 */
import { describe, expect, it } from 'vitest';
import { sgmmModules } from '../src/kernels/validate.js';
import { SGMM_ONE_SPILL_MAX_D, oneSpill, sgmmTilePlan } from '../src/kernels/sgmmTiles.js';

/** A WGSL source without its comments. */
const uncommented = (source: string) => source.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '');

/** The body of each function of a WGSL source without comments (by brace matching from its `fn name(`). */
function functionBodies(code: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of code.matchAll(/\bfn\s+(\w+)\s*\(/g)) {
    let i = code.indexOf('{', m.index! + m[0].length);
    const start = i;
    let depth = 0;
    for (; i < code.length; i++) {
      if (code[i] === '{') depth++;
      else if (code[i] === '}' && --depth === 0) break;
    }
    expect(out.has(m[1]), `one function named ${m[1]}`).toBe(false);
    out.set(m[1], code.slice(start, i + 1));
  }
  return out;
}

/** The workgroup variables that entry point `entry` reaches through the functions it calls. */
function reachedWorkgroup(source: string, entry: string): Set<string> {
  const code = uncommented(source);
  const bodies = functionBodies(code);
  const vars = [...code.matchAll(/\bvar<workgroup>\s+(\w+)/g)].map((m) => m[1]);
  const seen = new Set<string>();
  const reached = new Set<string>();
  const visit = (f: string) => {
    if (seen.has(f)) return;
    seen.add(f);
    const body = bodies.get(f)!;
    for (const v of vars) if (new RegExp(`\\b${v}\\b`).test(body)) reached.add(v);
    for (const g of bodies.keys()) if (g !== f && new RegExp(`\\b${g}\\s*\\(`).test(body)) visit(g);
  };
  visit(entry);
  return reached;
}

describe('tensor-core backward: the workgroup memory each kernel reaches', () => {
  it('with one spill block neither kernel reaches dPa or Pa; with two dq reaches dPa, dkdv every array', () => {
    let modules = 0;
    for (const [what, code] of sgmmModules([16, 64, 128])) {
      if (!what.startsWith('backward')) continue;
      modules++;
      const spills = / dq=(one|two) kv=(one|two)$/.exec(what);
      expect(spills, `${what}: names the spills`).not.toBeNull();
      const [, dq, kv] = spills!;
      const both = ['Qs', 'Sa', 'dOs', 'dSa', 'delta_s', 'lse2_s', 'nf', 'nf_u'];
      expect([...reachedWorkgroup(code, 'dq_main')].sort(), `${what}: dq`).toEqual([...both, ...(dq === 'one' ? [] : ['dPa'])].sort());
      expect([...reachedWorkgroup(code, 'dkdv')].sort(), `${what}: dkdv`).toEqual([...both, ...(kv === 'one' ? [] : ['dPa', 'Pa'])].sort());
    }
    expect(modules).toBeGreaterThan(10);
  });

  it("the forward's two row blocks take turns through one 16-row S and P block without the robustness transform, unless pinned", () => {
    const bytes = (RB: number, T: number, turnPin?: 0 | 1, robust = false) => sgmmTilePlan('fwd', 4, T, 64, RB, { turnPin, robust });
    expect([bytes(2, 16).turns, bytes(2, 16).workgroupBytes]).toEqual([true, 13344]);
    expect([bytes(2, 16, undefined, true).turns, bytes(2, 16, undefined, true).workgroupBytes]).toEqual([false, 21536]);
    expect(bytes(2, 16, 0).turns).toBe(false);
    expect(bytes(2, 16, 1, true).turns).toBe(true);
    expect(bytes(1, 16, 1).turns).toBe(false);   // one row block: nothing to take turns
    expect(bytes(2, 32, 1).turns).toBe(false);   // 32-key tiles: S's two column blocks would be held
    expect(sgmmTilePlan('fwd', 16, 32, 128, 1, { DS: 2, turnPin: 1 }).turns).toBe(false);   // the D split
  });

  it("the backward's planned bytes follow its spills: 12960 at D = 64 4×16 with one block, 21152 with two (dkdv), 18080 dq's two", () => {
    expect(sgmmTilePlan('bwd', 4, 16, 64).workgroupBytes).toBe(12960);
    expect(sgmmTilePlan('bwd', 4, 16, 64, 1, { dqSpill: 'two', kvSpill: 'two' }).workgroupBytes).toBe(21152);
    expect(sgmmTilePlan('bwd', 4, 16, 64, 1, { dqSpill: 'two', kvSpill: 'one' }).workgroupBytes).toBe(18080);
    expect(sgmmTilePlan('bwd', 8, 16, 128).workgroupBytes).toBe(41632);   // two blocks above D = 64
  });

  it('each kernel takes one spill block up to its SGMM_ONE_SPILL_MAX_D, two above, unless pinned', () => {
    for (const kernel of ['dq', 'dkdv'] as const) {
      expect([16, 64, 128, 256].map((D) => oneSpill(kernel, D))).toEqual([16, 64, 128, 256].map((D) => D <= SGMM_ONE_SPILL_MAX_D[kernel]));
      expect(oneSpill(kernel, 128, 'one')).toBe(true);
      expect(oneSpill(kernel, 64, 'two')).toBe(false);
    }
  });
});
