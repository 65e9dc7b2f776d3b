/**
 * README's "Advice for the seed's model" section quotes `flashring advise` at five lengths: its table (the fastest
 * layout's step, TFLOP/s/GPU, comm share and peak; the best at TP = 8), TP = 8's and CP's comm shares, and the ranges drawn from it (how much shorter
 * than TP = 8, how much longer recomputing every layer takes at 128K, and that at 256K the fastest does). Each figure is computed again here from advise's --json.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface Cand { tp: number; cp: number; cpCommType: string | null; pp: number; recompute: string; iterMs: number; totalBytes: number; tflopsPerGpu: number; commFraction: number; terms: { name: string; ms: number }[] }

const SEED = ['--num-layers', '32', '--hidden-size', '4096', '--num-attention-heads', '32', '--gpus', '8', '--hbm-gib', '80'];
const LENGTHS = { '8K': 8192, '32K': 32768, '64K': 65536, '128K': 131072, '256K': 262144 } as const;
const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

const advise = (seq: number): Cand[] => {
  const r = spawnSync('node', ['bin/flashring.mjs', 'advise', ...SEED, '--seq-length', String(seq), '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { candidates: Cand[] }).candidates;
};
/** Seconds as the table writes them: two decimals under 10 s, one from there. */
const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
const pctRange = (xs: number[]) => `${Math.round(100 * Math.min(...xs))}–${Math.round(100 * Math.max(...xs))}%`;
/** README's table row for `label` (the first cell). */
const row = (label: string) => README.split('\n').find((l) => l.startsWith(`| ${label} |`)) ?? '';

describe("README's advise table and ranges are advise's output", () => {
  const runs = Object.entries(LENGTHS).map(([label, seq]) => ({ label, seq, c: advise(seq) }));

  it('each row: the fastest layout (step, TFLOP/s/GPU, comm, GiB) and the best at TP = 8', () => {
    for (const { label, c } of runs) {
      const best = c[0], tp8 = c.find((x) => x.tp === 8)!;
      const figures = `${secs(best.iterMs)}, ${best.tflopsPerGpu.toFixed(0)}, ${(100 * best.commFraction).toFixed(1)}%, ${(best.totalBytes / 2 ** 30).toFixed(1)} GiB`;
      expect(row(label), label).toContain(figures);
      expect(row(label).split('|')[4], label).toContain(secs(tp8.iterMs));
    }
  }, 60_000);

  it('the ranges: shorter steps than TP = 8, and the fastest layout recomputing every layer against the fastest at 128K and 256K', () => {
    const shorter = runs.map(({ c }) => 1 - c[0].iterMs / c.find((x) => x.tp === 8)!.iterMs);
    expect(README.match(/gives (\S+) shorter steps/)?.[1]).toBe(pctRange(shorter));
    const tp8Comm = (label: string) => Math.round(100 * runs.find((r) => r.label === label)!.c.find((x) => x.tp === 8)!.commFraction);
    expect(README).toContain(`reduce-scatters are ${tp8Comm('8K')}% of its step at 8K and ${tp8Comm('64K')}% at 64K`);
    const cpComm = Math.max(...runs.map(({ c }) => c[0]).filter((b) => b.cp > 1).map((b) => b.commFraction));
    expect(README).toContain(`communication ≤ ${(100 * cpComm).toFixed(1)}% of the step at CP ≥ 2`);
    const every = (label: string) => { const c = runs.find((r) => r.label === label)!.c; return c.find((x) => x.recompute === 'full:uniform/1')!.iterMs / c[0].iterMs - 1; };
    expect(README.match(/the fastest layout that recomputes every layer takes (\S+) longer; at 256K the fastest recomputes every\s+layer/)?.[1]).toBe(`${Math.round(100 * every('128K'))}%`);
    expect(every('256K')).toBe(0);
    expect(runs.find((r) => r.label === '128K')!.c[0].recompute).toBe('full:block/16');
  }, 60_000);

  it('attention priced per call: at 32K, p2p at CP = 8 (TP = 1) and at TP = 2 CP = 2, their attention against their step', () => {
    const c = runs.find((r) => r.label === '32K')!.c;
    const at = (tp: number, cp: number) => c.find((x) => x.tp === tp && x.cp === cp && x.cpCommType === 'p2p' && x.pp === 1 && x.recompute === 'none')!;
    const s1 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const [a, b] = [at(1, 8), at(2, 2)].map((x) => ({ att: s1(x.terms.find((t) => t.name === 'attention')!.ms), step: s1(x.iterMs) }));
    expect(README.replace(/\s+/g, ' ')).toContain(`TP = 1 (calls of 4K tokens) spends ${a.att} of a ${a.step} step in attention, TP = 2 CP = 2 (16K tokens, 16 heads) ${b.att} of ${b.step}.`);
  }, 60_000);

  it("the page's preset (seed-32L-4096h, vocabulary 128256) at 128K, as README gives it", () => {
    const r = spawnSync('node', ['bin/flashring.mjs', 'advise', '--preset', 'seed-32L-4096h', '--gpus', '8', '--hbm-gib', '80', '--seq-length', '131072', '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    expect(r.status, r.stderr).toBe(0);
    const b = (JSON.parse(r.stdout) as { candidates: (Cand & { cpCommType: string })[] }).candidates[0];
    expect(README).toContain(`(\`--preset seed-32L-4096h\`: at 128K, TP=${b.tp} CP=${b.cp}${b.cp > 1 ? ` ${b.cpCommType}` : ''}, ${secs(b.iterMs)}):`);
  }, 60_000);
});
