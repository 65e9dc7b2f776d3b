/**
 * The tensor-core (subgroup-matrix) shaders cannot run on a CPU adapter, but Dawn's null
 * backend offers the feature and validates WGSL fully (types, uniformity, extensions), so every
 * specialization the planner can pick is compiled on any machine, CI included
 * (bin/validate-shaders.mjs, in its own process: Dawn aborted inside a Vitest worker); so are
 * the portable forward's candidate tiles unrolled, the form GPUs run (CPU adapters run it with
 * its loops rolled, so lavapipe's tests never compile that form). Whether
 * the kernels compute the right thing is checked on a GPU that has subgroup matrices (the
 * forward and backward tests, run on the H200).
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { SHADERS } from '../src/kernels/shaders.js';
import { GEMM_TILINGS } from '../bench/ceiling/gemm.js';
import { CEILING_SHADERS } from '../bench/ceiling/shaders.js';

/** Runs a validation script (bin/validate-shaders.mjs, or the ceiling's bench/ceiling/validate.mjs) and reads its report. */
function validate(script: string, ...args: string[]): { status: number | null; report: { checked: string[]; errors: string[] } } {
  const r = spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', timeout: 480_000 });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (!line.startsWith('{')) throw new Error(`${script} printed no report (status ${r.status}): ${r.stderr.slice(-2000)}`);
  return { status: r.status, report: JSON.parse(line) };
}

describe('tensor-core shaders', () => {
  it('every specialization the planner can pick validates on the null backend', () => {
    const { status, report } = validate('bin/validate-shaders.mjs');
    expect(report.errors).toEqual([]);
    expect(status).toBe(0);
    for (const D of [16, 64, 128, 256]) {
      expect(report.checked.some((c) => c.startsWith(`forward D=${D} `)), `forward D=${D}`).toBe(true);
      expect(report.checked.some((c) => c.startsWith(`backward D=${D} `)), `backward D=${D}`).toBe(true);
    }
    // The tensor-core forward in both orders of its steps.
    for (const pipe of [0, 2]) expect(report.checked.some((c) => c.startsWith('forward D=128 ') && c.includes(` PIPE=${pipe} `)), `PIPE=${pipe}`).toBe(true);
    // The portable forward unrolled as GPUs compile it (lavapipe runs it rolled), without the prefetch, with it and with
    // it of K and V only (where Q is staged every tile: not f16 at D = 64, whose 128×32 stages whole rows), f16 storage
    // with f16 and f32 products, P~ in its own array and in Q's (pinned, where Q is staged every tile and P~ has Q's word
    // type: f32, and f16 with f16 products at D = 128).
    const has = (head: string, tail: string) => report.checked.some((c) => c.startsWith(head) && c.endsWith(tail));
    for (const D of [64, 128]) for (const p of ['f32', 'f16']) for (const reduce of ['subgroup', 'workgroup']) for (const pf of [0, 1, 2])
      for (const products of p === 'f16' ? [' products f16', ' products f32'] : [''])
        for (const shared of ['', ' shared P'].filter((x) => x === '' || p === 'f32' || (D === 128 && products === ' products f16'))) {
          if (pf === 2 && D === 64 && p === 'f16') continue;
          expect(has(`portable forward D=${D} ${p} 128x32x`, ` ${reduce} prefetch ${pf}${products}${shared}`), `D=${D} ${p} ${reduce} prefetch ${pf}${products}${shared}`).toBe(true);
        }
    // Never prefetch 2 where Q is staged once (whole rows: the chunk is D): the same kernel as 1.
    expect(report.checked.filter((c) => / prefetch 2/.test(c) && new RegExp(`^portable forward D=(\\d+) \\w+ \\d+x\\d+x\\1 `).test(c))).toEqual([]);
    expect(has('portable forward D=128 f32 128x32x64 ', ' shared P'), 'f32 at D = 128, pinned: 64-column chunks, shared').toBe(true);
    // 64×64 in f32 at D = 128 fits only with P~ in Q's array (34,816 bytes against 52,224): that plan alone.
    expect(report.checked.filter((c) => c.startsWith('portable forward D=128 f32 64x64x')).every((c) => c.endsWith(' shared P'))).toBe(true);
    expect(has('portable forward D=128 f32 64x64x64 ', ' shared P')).toBe(true);
  });
  it('every tiling of the ceiling GEMM probe (bench/ceiling) validates on the null backend', () => {
    const { status, report } = validate('bench/ceiling/validate.mjs');
    expect(report.errors).toEqual([]);
    expect(status).toBe(0);
    expect(report.checked.length, 'ceiling GEMM tilings').toBe(GEMM_TILINGS.length);
  });
  it('a broken shader is reported (the check can fail)', () => {
    const { status, report } = validate('bin/validate-shaders.mjs', '--break');
    expect(status).toBe(1);
    expect(report.errors.join('\n')).toMatch(/requires argument .* to be uniform/);
    // Without the directive every specialization fails (at D = 64, enough to show it), none passes unseen.
    expect(report.checked.length).toBeGreaterThan(100);
    expect(report.errors.length).toBe(report.checked.length);
  });
  it('no scalar or short workgroup variable can shift the matrix arrays off 16 bytes', () => {
    // Matrix loads and stores from an array that is not 16-byte aligned give wrong results on
    // the NVIDIA Vulkan driver (docs/performance.md): workgroup variables are arrays (sized in
    // multiples of 16 rows or columns) or 16-byte vectors, never a scalar or a 1–3 element array.
    for (const src of [SHADERS.flashFwdSgmm, SHADERS.flashBwdSgmm, CEILING_SHADERS.gemmSgmm, CEILING_SHADERS.gemmSgmmPadded, CEILING_SHADERS.gemmSgmmPaddedVec, CEILING_SHADERS.gemmSgmmPadded3]) {
      const vars = [...src.matchAll(/var<workgroup>\s+\w+\s*:\s*([^;]+);/g)];
      expect(vars.length).toBeGreaterThan(1);
      for (const m of vars) {
        expect(m[1], m[0]).toMatch(/^(array<.*>|vec4<(u32|f32|i32)>)$/);
        expect(m[1], m[0]).not.toMatch(/^array<(atomic<)?(u32|f32|i32)>?, [1-3]>$/);
      }
    }
  });
});
