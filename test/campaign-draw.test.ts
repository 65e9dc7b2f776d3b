/**
 * bench/megatron/campaign.py draw, as docs/memory.md and each results README say it reproduces a draw:
 * every committed draw.json comes back from its seed, run count, --layers, --seqs and --micro-batches (the configurations
 * kept, their split and the rejections by sequence length), and a range no run fits in still stops with
 * its line. The draw is plain Python (random.Random), so it needs only python3, no GPU.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const RESULTS = 'bench/results';
const hasPython = spawnSync('python3', ['--version']).status === 0;

/** Every committed draw of campaign.py (its generator field), with the folder it is in. */
function committedDraws(): { dir: string; doc: Record<string, unknown> }[] {
  return readdirSync(RESULTS)
    .map((d) => join(RESULTS, d, 'draw.json'))
    .filter((f) => existsSync(f))
    .map((f) => ({ dir: f, doc: JSON.parse(readFileSync(f, 'utf8')) as Record<string, unknown> }))
    .filter(({ doc }) => String(doc.generator ?? '').includes('bench/megatron/campaign.py'));
}

function draw(args: string[]): { status: number | null; stderr: string; doc?: Record<string, unknown> } {
  const out = mkdtempSync(join(tmpdir(), 'flashring-draw-'));
  try {
    const r = spawnSync('python3', ['bench/megatron/campaign.py', 'draw', ...args, '--out', out], { encoding: 'utf8' });
    const file = join(out, 'draw.json');
    return { status: r.status, stderr: r.stderr, ...(existsSync(file) ? { doc: JSON.parse(readFileSync(file, 'utf8')) } : {}) };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

// Skipped only off CI where python3 is missing: on CI (CI=true, as .ci/run sets it) a missing python3 fails these tests
// instead of passing them unchecked, as test/gpu.ts does for a feature CI's lavapipe has.
describe.skipIf(!hasPython && process.env.CI !== 'true')('campaign.py draw (python3)', () => {
  const draws = committedDraws();

  it('finds the committed draws, the campaign (seed 33, 48 runs) among them', () => {
    expect(draws.length).toBeGreaterThanOrEqual(8);
    expect(draws.some(({ doc }) => doc.seed === 33 && doc.runs === 48)).toBe(true);
  });

  it.each(committedDraws().map(({ dir, doc }) => [dir, doc] as const))('%s comes back from its seed', (_dir, doc) => {
    const args = ['--seed', String(doc.seed), '--runs', String(doc.runs)];
    if (Array.isArray(doc.layers)) args.push('--layers', (doc.layers as number[]).join('-'));
    if (Array.isArray(doc.seqs)) args.push('--seqs', (doc.seqs as number[]).join(','));
    if (Array.isArray(doc.micro_batches)) args.push('--micro-batches', (doc.micro_batches as number[]).join('-'));
    if (doc.moe_share !== undefined) args.push('--moe-share', String(doc.moe_share));
    if (doc.moe_extras) args.push('--moe-extras');
    const r = draw(args);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.doc?.kept).toEqual(doc.kept);
    expect(r.doc?.rejected_by_seq).toEqual(doc.rejected_by_seq);
  });

  // campaign.py twins: each run again with one micro batch a step (-mb1), as the ninth and tenth draws' runs.json were written.
  it.each(['2026-12-06-time-heldout9', '2026-12-06-time-heldout10'])('%s/runs.json comes back from its draw.json (campaign.py twins)', (d) => {
    const out = mkdtempSync(join(tmpdir(), 'flashring-twins-'));
    try {
      const r = spawnSync('python3', ['bench/megatron/campaign.py', 'twins', join(RESULTS, d, 'draw.json'), '--out', join(out, 'runs.json')], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^8 runs \(4 twins\)/);
      const made = JSON.parse(readFileSync(join(out, 'runs.json'), 'utf8')), committed = JSON.parse(readFileSync(join(RESULTS, d, 'runs.json'), 'utf8'));
      expect(made.kept.map((k: { id: string; flags: unknown }) => [k.id, k.flags])).toEqual(committed.kept.map((k: { id: string; flags: unknown }) => [k.id, k.flags]));
      expect(made.kept.filter((k: { id: string }) => k.id.endsWith('-mb1')).every((k: { flags: string[] }) => k.flags[k.flags.indexOf('--global-batch-size') + 1] === k.flags[k.flags.indexOf('--micro-batch-size') + 1])).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('--moe-extras draws, for MoE runs only, linear biases (never beside a shared expert, always with the bias activation unfused) and the router expert bias with sigmoid scores; --moe-share 1 draws MoE only; the default draw is untouched by either', () => {
    const plain = draw(['--seed', '7', '--runs', '20', '--seqs', '2048,4096']), extras = draw(['--seed', '7', '--runs', '20', '--seqs', '2048,4096', '--moe-share', '1', '--moe-extras']);
    expect(extras.stderr).toBe('');
    type Kept = { config: { bias: boolean; bias_act_fusion: boolean; swiglu: boolean; moe?: { shared: number | null; topk: number; expert_bias?: boolean } }; flags: string[] };
    const kept = extras.doc!.kept as Kept[];
    expect(kept.every((k) => k.config.moe)).toBe(true);
    expect(extras.doc!.moe_extras).toBe(true);
    expect(extras.doc!.moe_share).toBe(1);
    expect(plain.doc!.moe_extras).toBeUndefined();
    expect((plain.doc!.kept as Kept[]).every((k) => k.config.moe?.expert_bias === undefined)).toBe(true);
    for (const k of kept) {
      const f = k.flags, on = (x: string) => f.includes(x);
      expect(on('--disable-bias-linear')).toBe(!k.config.bias);
      if (k.config.bias) expect(k.config.moe!.shared, 'no shared expert with biases').toBeNull();
      if (k.config.bias) expect(on(k.config.swiglu ? '--no-bias-swiglu-fusion' : '--no-bias-gelu-fusion')).toBe(true);
      expect(on('--moe-router-enable-expert-bias')).toBe(!!k.config.moe!.expert_bias);
      if (k.config.moe!.expert_bias) expect(f[f.indexOf('--moe-router-score-function') + 1]).toBe('sigmoid');
      else expect(on('--moe-router-score-function')).toBe(false);
      expect(on('--moe-router-pre-softmax')).toBe(k.config.moe!.topk === 1 && !k.config.moe!.expert_bias);
    }
    for (const what of [(k: Kept) => k.config.bias, (k: Kept) => !k.config.bias, (k: Kept) => k.config.moe!.expert_bias, (k: Kept) => !k.config.moe!.expert_bias])
      expect(kept.some(what)).toBe(true);
    expect(draw(['--seed', '1', '--runs', '1', '--moe-share', '1.5']).stderr).toMatch(/--moe-share takes a chance from 0 to 1/);
  });

  it('a range no run fits in stops with its line and writes nothing', () => {
    const r = draw(['--seed', '1', '--runs', '1', '--layers', '1000-1000', '--seqs', '32768']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/10000 draws in a row at 32768 tokens were all over the 56 GiB budget/);
    expect(r.doc).toBeUndefined();
  });
});
