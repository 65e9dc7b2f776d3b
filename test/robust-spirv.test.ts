/**
 * What Dawn's robustness transform (on in every browser) leaves in the portable kernels, read from
 * the SPIR-V Dawn dumps on the CPU adapter: the kernels as GPUs compile them (unrolled), as shipped
 * against the same source with each constant loop bound put back through rt() (the code before
 * constantBounds, src/kernels/specialize.ts). Tint proves a loop finite and its counter in range
 * only against a constant bound, so the shipped kernels must carry fewer infinite-loop guards and
 * fewer index clamps (UMin); and it proves an index only within one function, so the inner loops'
 * helpers restate their parameters with visible bounds (tx_ % TX), which must remove clamps too. The speed this buys is measured on the H200 (docs/performance.md,
 * "fourteenth step"); that the results do not change is test/robust.test.ts's and the numeric tests'.
 */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { spirvCounts } from '../bench/spirv-counts.mjs';
import { ALLOW_NO_GPU } from './gpu.js';

interface Counts { clamps: number; guards: number; modules: number; moved: number }

/** Clamps and loop guards, summed over the SPIR-V that test/robust-spirv-child.mjs makes Dawn print. */
function count(stdout: string): Counts {
  const rows = spirvCounts(stdout);
  const sum = (k: 'clamps' | 'guards' | 'modules') => rows.reduce((t, r) => t + r[k], 0);
  return { clamps: sum('clamps'), guards: sum('guards'), modules: sum('modules'), moved: Number(/^moved (\d+)$/m.exec(stdout)?.[1] ?? NaN) };
}

/** The counts of one kernel and form; null where no adapter exists and FLASHRING_ALLOW_NO_GPU=1 (then the test skips). */
async function compile(kind: 'fwd' | 'bwd', form: 'shipped' | 'rt' | 'plain'): Promise<Counts | null> {
  const r = await promisify(execFile)(process.execPath, ['test/robust-spirv-child.mjs', kind, form], { encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 26 })
    .catch((e: { code?: number; stdout?: string; stderr?: string }) => {
      if (e.code === 3 && ALLOW_NO_GPU) return null;   // no adapter, and FLASHRING_ALLOW_NO_GPU=1 asked for a skip
      throw new Error(`test/robust-spirv-child.mjs ${kind} ${form} failed: ${e.stdout?.slice(-300) ?? ''}${e.stderr?.slice(-2000) ?? ''}`);
    });
  return r && count(r.stdout);
}

describe('robustness transform on the portable kernels (SPIR-V on the CPU adapter)', () => {
  for (const kind of ['fwd', 'bwd'] as const) {
    it(`${kind}: constant loop bounds leave fewer loop guards and index clamps than bounds through rt()`, async (ctx) => {
      const [shipped, rt] = await Promise.all([compile(kind, 'shipped'), compile(kind, 'rt')]);
      if (!shipped || !rt) return ctx.skip();
      expect(shipped.modules).toBe(kind === 'fwd' ? 1 : 2);   // every entry point dumped
      expect(rt.modules).toBe(shipped.modules);
      expect(shipped.moved).toBeGreaterThan(4);                // the inner loops' bounds were constants
      expect(rt.guards).toBeGreaterThan(shipped.guards);
      expect(rt.clamps).toBeGreaterThan(shipped.clamps);
      console.log(`${kind}: guards ${rt.guards} → ${shipped.guards}, clamps ${rt.clamps} → ${shipped.clamps}`);
    }, 240_000);
    it(`${kind}: the inner loops' helpers restating tx, ty, t, c with their bounds leave fewer clamps`, async (ctx) => {
      const [shipped, plain] = await Promise.all([compile(kind, 'shipped'), compile(kind, 'plain')]);
      if (!shipped || !plain) return ctx.skip();
      expect(plain.guards).toBe(shipped.guards);
      expect(plain.clamps).toBeGreaterThan(shipped.clamps);
      console.log(`${kind}: clamps ${plain.clamps} → ${shipped.clamps}`);
    }, 240_000);
  }
});
