/**
 * `flashring notes --out FILE` reproduces the committed notes_attention.md byte for byte, its
 * figures come from the results files (a changed file changes the notes), and each bad input is
 * one line with exit code 2 and nothing written.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { runMain } from './cli-run.js';
import { notesText, reachText } from '../src/cli/notes.js';
import { SOURCES, imbalance, seedFigures, sourceFiles, torchFigures } from '../src/cli/notesData.js';

const ROOT = join(import.meta.dirname, '..');
const COMMITTED = readFileSync(join(ROOT, 'notes_attention.md'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'flashring-notes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = runMain;

describe('flashring notes', () => {
  it('the command (node bin/flashring.mjs notes --out FILE) writes the committed notes_attention.md byte for byte', async () => {
    const out = join(dir, 'notes.md');
    const r = await promisify(execFile)(process.execPath, [join(ROOT, 'bin/flashring.mjs'), 'notes', '--out', out], { cwd: dir });
    expect(r.stdout).toMatch(/^wrote .*notes\.md \(\d+ lines\)\n$/);
    expect(readFileSync(out, 'utf8')).toBe(COMMITTED);
  });

  it('quotes the newest kernel figures with their folders, not the ones measured before the kernels were rewritten', () => {
    expect(COMMITTED).toContain('`bench/results/2026-12-05-next-h200`');
    expect(COMMITTED).toContain('`bench/results/gemm-h200-2026-12-01`');
    expect(COMMITTED).not.toMatch(/\b61 TFLOP\/s|\b71 TFLOP\/s/);
  });

  it("quotes the scores' terms per GPU under TP, as the model's formulas do (5·a·s²·b/t, not 5·a·s²·b)", () => {
    expect(COMMITTED).toContain('5·a·s²·b/t');
    expect(COMMITTED).not.toMatch(/5·a·s²·b(?!\/t)/);
  });

  it("says where the seed's model stops fitting without FlashAttention, from the model (not 'a few thousand tokens')", () => {
    expect(seedFigures(32768, 8, 80).noFlash).toEqual({ longest: 8192, next: 16384 });
    expect(seedFigures(32768, 8, 30).noFlash).toEqual({ longest: null, next: 4096 });
    expect(COMMITTED).toContain('Without it, that model fits 8K tokens at TP=8 in 80 GiB and not 16K (*model*)');
    expect(COMMITTED).not.toContain('a few thousand tokens');
  });

  it('quotes the portable kernels as they ship (fma chains; an H100, and the H200 against its own peer) and says where the errors were spot-checked', () => {
    expect(COMMITTED).toContain('reach 20.9 / 22.0 TFLOP/s forward at D=64 / 128, 0.61× / 0.49×');
    expect(COMMITTED).toMatch(/on the H200 the same\nkernels reach 0\.61× \/ 0\.50× PyTorch's f32 in the same call, `bench\/results\/2026-12-06-h200-owed`/);
    expect(COMMITTED).not.toContain('have not been measured on the H200');
    expect(COMMITTED).not.toContain('20.2 / 21.4');
    expect(COMMITTED).toContain('in a spot check at N=67 before each timed point, f32 3.5e-7, f16 3.4e-4');
    expect(SOURCES.portableUnits).toContain('2026-12-06-units-h100');
  });

  it("does not say the model agrees with selective recompute's measured saving where it does not (CP=2: 2.8% measured, the model's LSE 0.05%)", () => {
    const cp2 = torchFigures(ROOT).saved.find((x) => x.cp === 2)!;
    expect(cp2.fraction).toBeGreaterThan(0.02);
    expect(cp2.model!.fraction).toBeLessThan(0.001);
    expect(COMMITTED).not.toContain('The model agrees');
    expect(COMMITTED).toContain('0.05% at CP=2 and 128K, where 2.8% was measured');
  });

  it('says the memory-h200 runs were not shown held out, and where the 8 failed Megatron-LM runs are listed', () => {
    expect(COMMITTED).not.toContain('the memory model\npredicts all three');
    expect(COMMITTED).toContain('so they are not shown to be held out');
    expect(COMMITTED).toContain('10 of 10 Megatron-LM runs on an H200 or H100, listed in\n`src/memory/untrainable.ts`');
  });

  it("marks a line that fits at the sweep's longest sequence as a lower bound, not the longest that fits", () => {
    // At 80 GiB the seed's learned position table (whole on every TP rank: 1M positions are 4.3 B parameters) stops
    // CP=4 + recompute at 512K; on a 141 GiB GPU it reaches the sweep's end, which is then marked as a lower bound.
    const at80 = seedFigures(32768, 8, 80), at141 = seedFigures(32768, 8, 141);
    expect(at80.longest['CP=4 + recompute']).toBe(at80.sweepEnd / 2);
    expect(COMMITTED).toContain('and CP=4 512K (`npx flashring memory');
    expect(at141.longest['CP=4 + recompute']).toBe(at141.sweepEnd);
    expect(reachText(at141.longest['CP=4 + recompute'], at141.sweepEnd)).toBe("1M (the sweep's longest: more may fit)");
    expect(reachText(at80.longest['CP=4 + recompute'], at80.sweepEnd)).toBe('512K');
    expect(reachText(null, at80.sweepEnd)).toBe('none');
  });

  it("gives the formulas a newcomer needs (online softmax, LSE, Δ, dS, the ring's merge, layouts, Ulysses, memory terms), and its contiguous imbalance 2 − 1/R is what the schedule counted", () => {
    for (const f of ['LSEᵢ = mᵢ + log ℓᵢ', 'Δ = rowsum(dO ∘ O)', 'dSᵢⱼ = Pᵢⱼ·(dPᵢⱼ − Δᵢ)', 'O = e^(LSE_A − LSE)·O_A + e^(LSE_B − LSE)·O_B',
      'chunks r and 2R − 1 − r', 'token t to rank t mod R', 'an imbalance (busiest ÷ mean) of 2 − 1/R', 'Ulysses', 's·b·h·(10 + 24/t) + 5·a·s²·b/t']) expect(COMMITTED).toContain(f);
    const im = imbalance(ROOT);
    for (const [r, v] of im.contiguous) expect(Math.abs(v - (2 - 1 / r))).toBeLessThan(1e-3);
    expect(im.balanced.get('zigzag')).toBe(1);
  });

  it("says CP=2's longer sequence is of the lengths tried (the true limits lie below the next, which ran out), and what the TFLOP/s figure leaves out", () => {
    expect(COMMITTED).not.toContain('longest trainable sequence');
    expect(COMMITTED).toContain('of the lengths tried, from 64K to 128K tokens (the next tried, 96K and 192K, ran out of memory)');
    expect(COMMITTED).toContain("communication's share of the step was not measured there");
  });

  it("gives what recomputing the MLP or every layer cost in iteration time, beside the seed's expectation", () => {
    expect(COMMITTED).toContain('and full recomputation to 57.5 GiB, for 24% and 25% more\niteration time');
  });

  it("gives what the split costs flashring's own ring and FlashAttention-2 (kernel time over one call), each read from its file", () => {
    const sweep = JSON.parse(readFileSync(join(ROOT, SOURCES.ringSweep), 'utf8')) as { rows: { R: number; scheme: string; layout: string; vsR1: number }[] };
    const ours = [2, 4, 8].map((R) => sweep.rows.find((r) => r.R === R && r.scheme === 'p2p' && r.layout === 'zigzag')!.vsR1.toFixed(2));
    const peer = (JSON.parse(readFileSync(join(ROOT, SOURCES.ringPeer), 'utf8')) as { results: { R: number; ratio: number }[] }).results;
    const theirs = [2, 4, 8].map((R) => peer.find((r) => r.R === R)!.ratio.toFixed(2));
    const flat = COMMITTED.replace(/\s+/g, ' ');
    expect(flat).toContain(`sums to ${ours.join(' / ')}× the kernel time of one causal call at R = 2 / 4 / 8`);
    expect(flat).toContain(`its backward timed alone, ${theirs.join(' / ')}× its own one call`);
    expect(ours).toEqual(['1.05', '1.12', '1.29']);
  });

  it('reads every figure from the files it names: a copy of them gives the same notes, a changed file changes them', () => {
    const copy = join(dir, 'repo');
    for (const p of sourceFiles()) {
      mkdirSync(dirname(join(copy, p)), { recursive: true });
      copyFileSync(join(ROOT, p), join(copy, p));
    }
    expect(notesText(copy)).toBe(COMMITTED);
    const gemm = join(copy, SOURCES.gemm[1]);
    writeFileSync(gemm, readFileSync(gemm, 'utf8').replace(/"tflops": 221\.93\d*/, '"tflops": 300'));
    const changed = notesText(copy);
    expect(changed).toContain('reaches 300.0 TFLOP/s at 8192³');
    expect(changed).not.toContain('221.9');
  });

  it.each([
    [[] as string[], /--out is required/],
    [['--out', '.'], /--out \. is a folder; give a file name/],
    [['--out', 'x.md', '--bogus'], /unknown option '--bogus'/],
    [['--out', join(ROOT, SOURCES.torchcp)], /which is the input file/],
  ])('notes %j: one line, exit code 2, nothing written', async (args, message) => {
    const before = readFileSync(join(ROOT, SOURCES.torchcp));
    const r = await run(['notes', ...args]);
    expect(r.code).toBe(2);
    expect(r.err.split('\n')).toHaveLength(1);
    expect(r.err).toMatch(message);
    expect(existsSync('x.md')).toBe(false);
    expect(readFileSync(join(ROOT, SOURCES.torchcp)).equals(before)).toBe(true);
  });

  it('--help describes the command and exits 0', async () => {
    const r = await run(['notes', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^usage: flashring notes --out FILE/);
  });
});
