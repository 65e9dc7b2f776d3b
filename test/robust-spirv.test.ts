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

interface Counts { clamps: number; guards: number; modules: number; moved: number }

/** Clamps and loop guards, summed over the SPIR-V that test/robust-spirv-child.mjs makes Dawn print. */
function count(stdout: string): Counts {
  const rows = spirvCounts(stdout);
  const sum = (k: 'clamps' | 'guards' | 'modules') => rows.reduce((t, r) => t + r[k], 0);
  return { clamps: sum('clamps'), guards: sum('guards'), modules: sum('modules'), moved: Number(/^moved (\d+)$/m.exec(stdout)?.[1] ?? NaN) };
}

async function compile(kind: 'fwd' | 'bwd', form: 'shipped' | 'rt' | 'plain'): Promise<Counts> {
  const env = { ...process.env, FLASHRING_ROBUST: '1' };
  const r = await promisify(execFile)(process.execPath, ['test/robust-spirv-child.mjs', kind, form], { env, encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 26 });
  return count(r.stdout);
}

describe('robustness transform on the portable kernels (SPIR-V on the CPU adapter)', () => {
  for (const kind of ['fwd', 'bwd'] as const) {
    it(`${kind}: constant loop bounds leave fewer loop guards and index clamps than bounds through rt()`, async () => {
      const [shipped, rt] = await Promise.all([compile(kind, 'shipped'), compile(kind, 'rt')]);
      expect(shipped.modules).toBe(kind === 'fwd' ? 1 : 2);   // every entry point dumped
      expect(rt.modules).toBe(shipped.modules);
      expect(shipped.moved).toBeGreaterThan(4);                // the inner loops' bounds were constants
      expect(rt.guards).toBeGreaterThan(shipped.guards);
      expect(rt.clamps).toBeGreaterThan(shipped.clamps);
      console.log(`${kind}: guards ${rt.guards} → ${shipped.guards}, clamps ${rt.clamps} → ${shipped.clamps}`);
    }, 240_000);
    it(`${kind}: the inner loops' helpers restating tx, ty, t, c with their bounds leave fewer clamps`, async () => {
      const [shipped, plain] = await Promise.all([compile(kind, 'shipped'), compile(kind, 'plain')]);
      expect(plain.guards).toBe(shipped.guards);
      expect(plain.clamps).toBeGreaterThan(shipped.clamps);
      console.log(`${kind}: clamps ${plain.clamps} → ${shipped.clamps}`);
    }, 240_000);
  }
});
