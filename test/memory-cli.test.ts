/**
 * `flashring memory` and `flashring replay` end to end (in-process through main()): the breakdown
 * with every term named, the new flags, and each bad input as one line with exit code 2 and nothing
 * written.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMain } from './cli-run.js';
import { formatCount, formatLayers } from '../src/cli/memory.js';
import { formatBytes } from '../src/bytes.js';
import { CP_COMM_TYPES, DEFAULT_PARALLEL, PRESETS, ROUTER_INPUT, memoryBreakdown } from '../src/memory/model.js';
import { breakdownRows } from '../src/memory/chart.js';
import { notTimeData } from '../src/memory/time/fromLog.js';
import { MOE_EXPERT_BIASES } from '../src/memory/untrainable.js';
import { parseMegatronLog } from '../src/memory/megatron.js';
import { H200 } from '../src/memory/time/devices.js';

const dir = mkdtempSync(join(tmpdir(), 'flashring-memcli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = runMain;

const TORCH = ['--stack', 'torch-amp', '--num-layers', '8', '--hidden-size', '4096', '--num-attention-heads', '32', '--vocab-size', '8192',
  '--untie-embeddings-and-output-weights', '--attention-dropout', '0', '--hidden-dropout', '0', '--position-embedding-type', 'none'];

describe('flashring (no such command)', () => {
  it('an unknown command is one line naming the commands, exit 2', async () => {
    const r = await run(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^flashring: unknown command 'frobnicate' \(one of info, .*advise.*; flashring help describes them\)$/);
  });
  it('--robust before the command is that command with --robust (it said "unknown command \'--robust\'")', async () => {
    const env = process.env.FLASHRING_ROBUST;
    const before = await run(['--robust', 'memory', '--preset', 'llama3-8b', '--json']);
    // The switch reached main's record of it (FLASHRING_ROBUST=1 until a command without it), not only the output.
    expect(process.env.FLASHRING_ROBUST).toBe('1');
    const after = await run(['memory', '--preset', 'llama3-8b', '--json', '--robust']);
    await run(['memory', '--preset', 'llama3-8b', '--json']);
    expect(process.env.FLASHRING_ROBUST).toBe(env);
    // memory runs no shaders: the switch changes nothing there, and a note says so (either place).
    const note = 'note: --robust has no effect on flashring memory (it runs no shaders)'; // one 'note:' (it read 'flashring memory: note: …')
    expect([before.code, before.err, after.err]).toEqual([0, note, note]);
    expect(before.out).toBe(after.out);
    // Before a word that is no command, that word is named.
    const unknown = await run(['--robust', 'frobnicate']);
    expect([unknown.code, unknown.err]).toEqual([2, expect.stringMatching(/^flashring: unknown command 'frobnicate'/)]);
    // Alone or before a help word it is no command: one line, exit 2, as before.
    for (const a of [['--robust'], ['--robust', '--help']]) {
      const r = await run(a);
      expect(r.code, a.join(' ')).toBe(2);
      expect(r.err, a.join(' ')).toMatch(/^flashring: unknown command '--robust'/);
    }
  });
  it('`flashring help CMD` is CMD --help; --version prints package.json\'s', async () => {
    const h = await run(['help', 'memory']), direct = await run(['memory', '--help']);
    expect([h.code, h.out]).toEqual([0, direct.out]);
    expect(h.out).toMatch(/^usage: flashring memory/);
    const v = await run(['--version']);
    expect([v.code, v.out.trim()]).toEqual([0, `flashring ${JSON.parse(readFileSync('package.json', 'utf8')).version}`]);
  });
  it('--help: the usage on stdout, exit 0; no command: the usage on stderr, exit 2; --version with more: one line, exit 2', async () => {
    for (const a of ['--help', '-h', 'help']) {
      const h = await run([a]);
      expect([h.code, h.err], a).toEqual([0, '']);
      expect(h.out, a).toMatch(/^usage: flashring <command>/);
    }
    const bare = await run([]);
    expect([bare.code, bare.out]).toEqual([2, '']);
    expect(bare.err).toMatch(/^usage: flashring <command>/);
    expect((await run(['--help', 'memory'])).out).toMatch(/^usage: flashring memory/);
    // A help word after a help word is the usage (it called itself until the stack ran out).
    for (const a of [['--help', '--help'], ['help', 'help'], ['help', '-h']]) {
      const h = await run(a);
      expect([h.code, h.err], a.join(' ')).toEqual([0, '']);
      expect(h.out, a.join(' ')).toMatch(/^usage: flashring <command>/);
    }
    const v = await run(['--version', '--bogus']);
    expect([v.code, v.out]).toEqual([2, '']);
    expect(v.err).toBe("flashring: --version takes nothing after it, got '--bogus' (flashring --version alone prints the version)");
  });
  it('every command takes -h as --help', async () => {
    for (const c of ['info', 'selftest', 'attention', 'memory', 'advise', 'cp-plan', 'replay', 'bench', 'tune', 'notes', 'start']) {
      const h = await run([c, '-h']), help = await run([c, '--help']);
      expect([h.code, h.out], c).toEqual([0, help.out]);
      expect(h.out, c).toMatch(/^usage: /);
    }
  });
});

describe('flashring memory', () => {
  it('--json: totalBytes and every term named, with formulas; --recompute-modules core_attn mlp (Megatron-LM spelling)', async () => {
    const r = await run(['memory', ...TORCH, '--seq-length', '65536', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.totalBytes).toBeGreaterThan(100 * 2 ** 30);
    expect(j.outside.map((t: { name: string }) => t.name)).toContain('cross-entropy fp32 log-softmax');
    for (const t of [...j.perLayer, ...j.outside, ...j.transients]) expect(t.formula).toMatch(/s|p|V|h/);
    const m = JSON.parse((await run(['memory', ...TORCH, '--seq-length', '65536', '--recompute-granularity', 'selective', '--recompute-modules', 'core_attn', 'mlp', '--json'])).out);
    expect(m.recompute).toBe('selective:core_attn+mlp');
    expect(m.perLayer.map((t: { name: string }) => t.name)).not.toContain('GeLU input');
  });

  it("the sweep marks a tight point '~' as the single point judges it (headroom), and the longest fitting line says which lengths are only tight; --json and --csv carry tight", async () => {
    // The newcomer's sweep: CP=2 at 8192 (77.4 GiB of 80) showed no mark and was called the longest fitting, where the single
    // point says 'tight … this peak may not run' and advise (fits ≤ 90%) rejects it.
    const base = ['memory', '--preset', 'llama3-8b', '--tensor-model-parallel-size', '2', '--sequence-parallel'];
    const sweepArgs = [...base, '--sweep', '--lines', '1,2,4:recompute', '--seq-lengths', '8192,32768,131072'];
    const r = await run(sweepArgs);
    expect(r.code).toBe(0);
    const rows = r.out.split('\n').filter((l) => /^ +\d+ /.test(l)).map((l) => l.trim().split(/ +/));
    const at = (s: number, col: number) => rows.find((x) => x[0] === String(s))![col];
    // Each cell's mark is the single point's verdict.
    const single = async (cp: string, s: number, extra: string[] = []) => JSON.parse((await run([...base, '--context-parallel-size', cp, '--seq-length', String(s), ...extra, '--json'])).out) as { fits: boolean; tight: boolean };
    const recompute = ['--recompute-granularity', 'selective', '--recompute-modules', 'core_attn', 'mlp'];
    for (const [s, col, cp, extra] of [[8192, 2, '2', []], [8192, 3, '4', recompute], [32768, 3, '4', recompute], [32768, 2, '2', []]] as const) {
      const h = await single(cp, s, [...extra]), cell = at(s, col);
      expect(cell.slice(-1) === '~' ? 'tight' : cell.endsWith('!') ? 'over' : 'fits', `${cp} ${s} ${cell}`).toBe(!h.fits ? 'over' : h.tight ? 'tight' : 'fits');
    }
    expect(at(8192, 2)).toBe('77.4~');
    expect(r.out).toContain("longest fitting sequence: CP=1: none; CP=2: 8192 (tight; with 10% of the HBM spare: none); CP=4 + recompute: 32768 (tight; with 10% of the HBM spare: 8192)");
    expect(r.out).toMatch(/^note: '~' = tight: under 10% of the HBM is spare .* such peaks may not run$/m);
    const j = JSON.parse((await run([...sweepArgs, '--json'])).out) as { points: { line: string; seqLength: number; fits: boolean; tight: boolean }[] };
    expect(j.points.filter((p) => p.tight).map((p) => `${p.line}|${p.seqLength}`)).toEqual(['CP=2|8192', 'CP=4 + recompute|32768']);
    expect(j.points.every((p) => !p.tight || p.fits)).toBe(true);
    const csv = join(dir, 'tight.csv');
    expect((await run([...sweepArgs, '--csv', csv])).code).toBe(0);
    const lines = readFileSync(csv, 'utf8').trim().split('\n'), head = lines[0].split(',');
    const tightRows = lines.slice(1).map((l) => l.split(',')).filter((c) => c[head.indexOf('tight')] === 'true').map((c) => `${c[head.indexOf('line')]}|${c[0]}`);
    expect(tightRows).toEqual(['CP=2|8192', 'CP=4 + recompute|32768']);
    // A sweep with no tight point says nothing of it.
    const roomy = await run([...base, '--sweep', '--lines', '4:recompute', '--seq-lengths', '8192']);
    expect(roomy.out).toMatch(/^longest fitting sequence: CP=4 \+ recompute: 8192$/m);
    expect(roomy.out).not.toMatch(/~ |tight;|'~' = tight:/);
  });

  it('labels fp32 weights as fp32', async () => {
    const r = await run(['memory', ...TORCH, '--seq-length', '4096']);
    expect(r.out).toMatch(/weights \(fp32\)/);
    expect((await run(['memory', '--preset', 'seed-32L-4096h', '--seq-length', '4096'])).out).toMatch(/weights \(bf16\)/);
  });

  it('prints every name and formula whole, transients too (long ones on their own line)', async () => {
    const r = await run(['memory', ...TORCH, '--seq-length', '32768', '--context-parallel-size', '2']);
    expect(r.out).toContain('attention output copy (ring merge, reshaped for the projection) [2·s/CP·b·h/t]');
    expect(r.out).toContain('cross-entropy backward: two fp32 gradients [8·s/CP·b·V/t]'); // s/CP: the value uses the local sequence
    expect(r.out).toMatch(/ring attention backward \(PyTorch: .*\) \[\(4\(h\+2hk\) .*\(upstream gradients\)\]\n +-?\d+(\.\d\d)? (B|KiB|MiB|GiB)/);
  });

  it('--lines and --seq-lengths ask for the sweep (as --csv does), not a single point', async () => {
    const r = await run(['memory', ...TORCH, '--lines', '1,2']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^per-GPU peak memory \(GiB\)/);
    expect(r.out).toMatch(/longest fitting sequence: CP=1: \d+; CP=2: \d+/);
    expect((await run(['memory', ...TORCH, '--seq-lengths', '4096,8192'])).out.split('\n').filter((l) => /^ +(4096|8192) /.test(l))).toHaveLength(2);
    // A length a line cannot split (2·CP chunks) is '-' with Megatron-LM's reason.
    const gap = await run(['memory', '--preset', 'seed-32L-4096h', '--seq-lengths', '4098,8192', '--lines', '1,2']);
    expect(gap.out).toContain("'-' under CP=2: 4098 cannot be split over CP 2 (Megatron-LM splits the sequence into 2·CP chunks, two per CP rank: --seq-length 4098 is not divisible by 2·--context-parallel-size = 4)");
  });

  // The text breakdown, checked by hand as a reader would: amounts in B/KiB/MiB/GiB, a wrapped label joined with its amounts.
  const UNIT: Record<string, number> = { B: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40, PiB: 2 ** 50 };
  const AMT = String.raw`(-?\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB|PiB)`;
  const rows = (out: string) => out.split('\n').reduce<string[]>((r, l) => (/^ +-?\d/.test(l) && r.length ? (r[r.length - 1] += ` ${l.trim()}`) : r.push(l), r), []);
  /** Printed amount ≈ bytes, to the two decimals it is printed with. */
  const near = (v: string, u: string, bytes: number) => expect(Math.abs(Number(v) * UNIT[u] - bytes)).toBeLessThanOrEqual(0.0051 * UNIT[u]);
  const evalFormula = (f: string, x: Record<string, number>): number => {
    const js = f.replace(/·/g, '*').replace(/²/g, '**2');
    expect(js).toMatch(/^[\d\s*+\-/()sbhaftg]+$/);
    return Function(...Object.keys(x), `return ${js}`)(...Object.values(x)) as number;
  };
  const ONE_LINE = [
    ['--preset', 'seed-32L-4096h', '--seq-length', '8192'],
    ['--preset', 'llama3-8b', '--tensor-model-parallel-size', '2', '--sequence-parallel'],
    ['--preset', 'seed-32L-4096h', '--seq-length', '2048', '--no-use-flash-attn'],
    ['--preset', 'llama3-8b', '--pipeline-model-parallel-size', '4', '--num-layers-per-virtual-pipeline-stage', '2', '--recompute-granularity', 'full', '--recompute-method', 'block', '--recompute-num-layers', '1'],
  ];
  for (const args of ONE_LINE)
    it(`text ${args.slice(1).join(' ')}: each layer term's per-layer bytes = its [formula] = --json's, total = per layer × the group's layers`, async () => {
      const j = JSON.parse((await run(['memory', ...args, '--json'])).out);
      const par = j.parallel, m = j.model;
      const x = { s: par.seqLength / par.contextParallel, b: par.microBatchSize, h: m.hiddenSize, a: m.numAttentionHeads, f: m.ffnHiddenSize ?? 4 * m.hiddenSize,
        t: par.tensorParallel, g: m.numQueryGroups ?? m.numAttentionHeads };
      const out = rows((await run(['memory', ...args])).out);
      expect(out.some((l) => /^ +term \[formula.*per layer.*\] +per layer +total$/.test(l))).toBe(true);
      for (const g of j.layerGroups as { label: string; layers: number; bytesPerLayer: number; terms: { name: string; bytes: number; formula: string }[] }[]) {
        const i = out.findIndex((l) => l.startsWith(`    ${g.label}: `));
        const head = out[i].match(new RegExp(String.raw`: (\d+(?:\.\d+)?) layers \(total = \1 × per layer\) +${AMT} +${AMT}$`));
        expect(head, out[i]).not.toBeNull();
        // Integers as integers; a fractional count (interleaved pipeline stages) with its decimals.
        if (Number.isInteger(g.layers)) expect(head![1]).toBe(String(g.layers));
        else expect(Math.abs(Number(head![1]) - g.layers)).toBeLessThan(1e-3);
        near(head![2], head![3], g.bytesPerLayer);
        near(head![4], head![5], g.bytesPerLayer * g.layers);
        g.terms.forEach((t, k) => {
          const r = out[i + 1 + k].match(new RegExp(String.raw`^      (.*) \[(.+)\] +${AMT} +${AMT}$`));
          expect(r, out[i + 1 + k]).not.toBeNull();
          expect(r![1]).toContain(t.name);
          expect(r![2]).toBe(t.formula);
          near(r![3], r![4], t.bytes);
          near(r![3], r![4], evalFormula(t.formula, x));
          near(r![5], r![6], t.bytes * g.layers);
        });
      }
      // PP = 4, VP = 4: model chunks of 2 layers, the first of each recomputed; the first stage 4 × (1 + 3/16) = 4.75 micro batches' worth in flight.
      if (args.includes('block')) expect(out.join('\n')).toMatch(/pipeline stage: the first .*; the last stage's total is [\d.]+ GiB\n(.*\n)* +recomputed layers \(block, first 1 of each model chunk\): 19 layers .*\n(.*\n)* +stored layers: 19 layers/);
      else expect(out.join('\n')).toMatch(/stored layers: 32 layers \(total = 32 × per layer\)/);
    });

  /**
   * A transient's or outside term's [formula] as a number: s the whole sequence, CP (= R) the context-parallel
   * size, hk the K/V width h·g/a, V the vocabulary as padded (Megatron-LM: to a multiple of 128·t; torch-amp: not),
   * p the pipeline's micro batches in flight, m the step's. A label after a space ("(upstream gradients)") names
   * the addend before it; a "·(quantity)" in words is looked up in `q`, and a formula with one not there is
   * returned as null.
   */
  const evalTermFormula = (f: string, x: Record<string, number>, q: Record<string, number>): number | null => {
    let unknown = false;
    const js = f.replace(/ \([a-z][a-z ]*\)/g, '')
      .replace(/·\(([A-Za-z][A-Za-z -]*)\)/g, (_, name: string) => (name in q ? `·(${q[name]})` : ((unknown = true), '·0')))
      .replace(/²/g, '**2').replace(/·/g, '*')
      .replace(/(\d)(?=[A-Za-z(])/g, '$1*').replace(/\)(?=[A-Za-z\d(])/g, ')*');
    if (unknown) return null;
    expect(js, f).toMatch(/^[\w\s*+\-/().]+$/);
    for (const id of js.match(/[A-Za-z_]\w*/g) ?? []) expect(Object.keys(x), `'${id}' in [${f}]`).toContain(id);
    return Function(...Object.keys(x), `return ${js}`)(...Object.values(x)) as number;
  };
  const TERM_CASES = [
    [...TORCH, '--seq-length', '32768', '--context-parallel-size', '2'],
    [...TORCH, '--seq-length', '32768', '--context-parallel-size', '4', '--num-query-groups', '8'],
    ...CP_COMM_TYPES.map((c) => ['--preset', 'seed-32L-4096h', '--seq-length', '131072', '--context-parallel-size', '4', '--tensor-model-parallel-size', '8', '--sequence-parallel', '--cp-comm-type', c]),
    ['--preset', 'seed-32L-4096h', '--seq-length', '2048', '--no-use-flash-attn'],
    ['--preset', 'llama3-8b', '--tensor-model-parallel-size', '2', '--sequence-parallel', '--recompute-granularity', 'selective'],
    ['--preset', 'llama3-8b', '--context-parallel-size', '2', '--recompute-granularity', 'full', '--recompute-method', 'uniform', '--recompute-num-layers', '2'],
    ['--preset', 'llama3-8b', '--pipeline-model-parallel-size', '4', '--num-layers-per-virtual-pipeline-stage', '2', '--recompute-granularity', 'full', '--recompute-method', 'block', '--recompute-num-layers', '1'],
    [...TORCH, '--seq-length', '8192', '--recompute-granularity', 'full', '--recompute-method', 'uniform', '--recompute-num-layers', '2'],
  ];
  it("each transient's and outside term's bytes = its [formula] evaluated (PyTorch's ring, every CP scheme, unfused, recompute, pipeline)", async () => {
    const evaluated: string[] = [], words: string[] = [];
    for (const args of TERM_CASES) {
      const j = JSON.parse((await run(['memory', ...args, '--json'])).out);
      const par = j.parallel, m = j.model, t = par.tensorParallel, a = m.numAttentionHeads, h = m.hiddenSize, g = m.numQueryGroups ?? a;
      const div = (par.stack === 'torch-amp' ? 1 : 128) * t, f = m.ffnHiddenSize ?? 4 * h, hk = (h * g) / a;
      const x = { s: par.seqLength, CP: par.contextParallel, R: par.contextParallel, b: par.microBatchSize, h, hk, a, f, g, t,
        V: Math.ceil(m.vocabSize / div) * div, p: par.pipelineParallel, m: par.numMicrobatches ?? NaN };
      // Quantities named in words: one stored layer (the stored layers' per-layer bytes); without recompute or a
      // pipeline, every layer's weight matrices and the output layer's, per GPU.
      const q: Record<string, number> = { 'one stored layer': j.perLayerBytes };
      if (par.recompute === 'none' && par.pipelineParallel === 1)
        q['weight-matrix parameters per GPU not recomputed'] = (m.numLayers * (h * (h + 2 * hk) + h * h + (m.swiglu ? 3 : 2) * h * f) + x.V * h) / t;
      for (const term of [...j.outside, ...j.transients] as { name: string; bytes: number; formula: string }[]) {
        const v = evalTermFormula(term.formula, x, q);
        const what = `${args.join(' ')}: ${term.name} [${term.formula}]`;
        if (v === null) { words.push(term.formula); continue; }
        expect(Math.abs(v - term.bytes), `${what} = ${v}, bytes ${term.bytes}`).toBeLessThanOrEqual(1e-9 * term.bytes);
        evaluated.push(term.name);
      }
    }
    // Every CP scheme's buffers and PyTorch's ring were among them; only the recomputed weights' copies are not.
    for (const re of [/ring attention backward \(PyTorch/, /\(p2p\)$/, /\(all_gather\)$/, /\(a2a\)$/, /\(unfused\)$/, /^recomputing one checkpointed chunk/, /^recomputing the attention core/])
      expect(evaluated.some((n) => re.test(n)), String(re)).toBe(true);
    expect(evaluated.filter((n) => /ring attention backward \(PyTorch/.test(n))).toHaveLength(2);
    expect(new Set(words.map((w) => w.match(/·\(([^)]*)\)/)![1]))).toEqual(new Set(['weight-matrix parameters per GPU not recomputed', 'recomputed weight-matrix parameters per GPU']));
  });

  it('joins a term\'s part and name without a doubled word (attention dropout mask, not attention attention …)', async () => {
    const out = (await run(['memory', '--preset', 'seed-32L-4096h', '--seq-length', '8192'])).out;
    for (const l of out.split('\n')) expect(l).not.toMatch(/\b(\w+) +\1\b/i);
    expect(out).toMatch(/\n +attention dropout mask \[s·b·h\] /);
    expect(out).toMatch(/\n +embedding dropout mask \[s·b·h·p\] /);
    expect(out).toMatch(/\n +output layer input \[2·s·b·h\] /);
    expect(out).toMatch(/\n +mlp +GeLU input \[2·s·b·f\/t\] /);
  });

  it('a small model: every amount in a unit that shows it (no 0.00 GiB), parameters in K/M/B', async () => {
    const r = await run(['memory', '--num-layers', '2', '--hidden-size', '64', '--num-attention-heads', '4', '--seq-length', '128', '--micro-batch-size', '1']);
    expect(r.code).toBe(0);
    // the tied table at Megatron-LM's padded vocabulary: 50304 rows of 64, not GPT-2's 50257
    expect(r.out).toMatch(/parameters 3\.328 M total, 3\.328 M per GPU/);
    const amounts = [...r.out.matchAll(new RegExp(AMT, 'g'))].filter((a) => !/in 80 GiB/.test(r.out.slice(a.index! - 3, a.index! + a[0].length)));
    expect(amounts.length).toBeGreaterThan(25);
    for (const a of amounts) expect(Number(a[1]), a[0]).toBeGreaterThanOrEqual(1);
    expect(r.out).toMatch(/\n +LayerNorm 1 input \[2·s·b·h\] +16\.00 KiB +32\.00 KiB\n/); // 2·128·1·64 = 16 KiB per layer, 2 layers
    expect(r.out).toMatch(/\n +total \(peak\) +\d+\.\d\d MiB +fits in 80 GiB/);
  });

  it('formats bytes, counts and layer counts', async () => {
    expect([0, 512, 1023.999, 1536, 2 ** 30 * 1.5, 2 ** 30 * 1000, 2 ** 30 * 3000, 2 ** 50 * 3, 2 ** 60].map(formatBytes))
      .toEqual(['0 B', '512 B', '1.00 KiB', '1.50 KiB', '1.50 GiB', '1000.00 GiB', '2.93 TiB', '3.00 PiB', '1024.00 PiB']);
    // In the breakdown: a total no GPU holds in PiB.
    expect((await run(['memory', '--preset', 'llama3-8b', '--micro-batch-size', '100000'])).out).toMatch(/total \(peak\) +1\.91 PiB +DOES NOT FIT in 80 GiB/);
    // Under advise's margin to spare: tight, and why a tight peak may not run (src/memory/headroom.ts).
    const tight = (await run(['memory', '--preset', 'llama3-8b', '--hbm-gib', '160'])).out;
    expect(tight).toMatch(/total \(peak\) +154\.70 GiB +fits in 160 GiB, tight: 5\.3 GiB \(3\.3%\) spare\n  note: under 10% of the HBM is spare .* in 302 measured runs, the CUDA context besides: this peak may not run$/);
    expect((await run(['memory', '--preset', 'llama3-8b', '--hbm-gib', '160', '--json'])).out).toMatch(/"fits": true,\n "tight": true,\n "spareGib": 5\.304,/);
    expect([999, 3_325_000, 999_960, 7.0034e9].map(formatCount)).toEqual(['999', '3.325 M', '1.000 M', '7.003 B']);
    expect([32, 32.000000000001, 4.375, 30.625].map(formatLayers)).toEqual(['32', '32', '4.375', '30.625']);
  });

  it('an MoE model (--num-experts 8 --moe-router-topk 2): the router and experts\' terms, a total of its own, EP and MoE recompute', async () => {
    const SEED = ['memory', '--preset', 'seed-32L-4096h', '--seq-length', '8192'];
    const MOE = [...SEED, '--num-experts', '8', '--moe-router-topk', '2'];
    const dense = await run(SEED), moe = await run(MOE);
    expect(moe.code).toBe(0);
    for (const name of ['router input (the MoE layer input) [2·s·b·h]', 'router scores (fp32, top-k and auxiliary loss) [8·s·b·E]', "permuted tokens (experts' fc1 input) [2·s·b·k·h]",
      'experts: GeLU input [2·s·b·k·f_e/t]', 'experts: second linear input [2·s·b·k·f_e/t]']) expect(moe.out).toContain(name);
    expect(dense.out).not.toContain('router input');
    const total = (out: string) => out.match(/\n +total \(peak\) +(\S+ \S+)/)![1];
    expect(total(moe.out)).not.toBe(total(dense.out));
    const j = JSON.parse((await run([...MOE, '--json'])).out), jd = JSON.parse((await run([...SEED, '--json'])).out);
    expect(j.model.moe).toEqual({ numExperts: 8, routerTopk: 2 });
    expect(j.totalBytes).toBeGreaterThan(jd.totalBytes);
    // the experts split over EP ranks: fewer parameters per GPU
    const ep = JSON.parse((await run([...MOE, '--expert-model-parallel-size', '4', '--data-parallel-size', '4', '--json'])).out);
    expect(ep.parallel.expertParallel).toBe(4);
    expect(ep.parametersPerGpu).toBeLessThan(j.parametersPerGpu);
    // a shared expert, capacity, dispatcher and unfused SwiGLU are taken; moe and shared_experts recompute drop their terms
    const all = JSON.parse((await run(['memory', '--preset', 'llama3-8b', '--num-experts', '8', '--moe-router-topk', '2', '--moe-ffn-hidden-size', '2048',
      '--moe-shared-expert-intermediate-size', '4096', '--moe-expert-capacity-factor', '1.25', '--moe-token-dispatcher-type', 'alltoall', '--no-bias-swiglu-fusion', '--json'])).out);
    expect(all.model.moe).toEqual({ numExperts: 8, routerTopk: 2, ffnHiddenSize: 2048, sharedExpertSize: 4096, capacityFactor: 1.25, dispatcher: 'alltoall' });
    expect(all.model.biasActivationFusion).toBe(false);
    const names = (x: { perLayer: { name: string }[] }) => x.perLayer.map((t) => t.name);
    expect(names(all)).toContain('shared expert: gate and up projections');
    expect(names(all)).toContain('experts: SiLU output (unfused SwiGLU)');
    // The seed has linear biases, which Megatron-LM refuses in a shared expert (shared_experts.py): one line, exit 2.
    const biased = await run([...MOE, '--moe-shared-expert-intermediate-size', '4096']);
    expect([biased.code, biased.err.trim()]).toEqual([2, expect.stringMatching(/^flashring memory: Megatron-LM refuses a shared expert with linear biases .*add --disable-bias-linear/)]);
    const rc = JSON.parse((await run([...MOE, '--disable-bias-linear', '--moe-shared-expert-intermediate-size', '4096', '--recompute-granularity', 'selective', '--recompute-modules', 'moe', 'shared_experts', '--json'])).out);
    expect(rc.recompute).toBe('selective:moe+shared_experts');
    // what the moe checkpoint keeps: the layer's input, the tensor the router and the shared expert would keep (moe_utils.py:1382)
    expect(names(rc).filter((n) => /router|experts|expert:/.test(n))).toEqual([ROUTER_INPUT]);
    expect(rc.perLayerBytes).toBeLessThan(j.perLayerBytes);
  });

  const moeBad: [string[], RegExp][] = [
    [['--moe-router-topk', '2'], /^flashring memory: --moe-router-topk needs --num-experts/],
    [['--moe-ffn-hidden-size', '2048'], /^flashring memory: --moe-ffn-hidden-size needs --num-experts/],
    [['--expert-model-parallel-size', '2'], /^flashring memory: --expert-model-parallel-size 2 needs --num-experts/],
    [['--recompute-granularity', 'selective', '--recompute-modules', 'moe'], /^flashring memory: --recompute-modules moe needs MoE layers \(--num-experts\)$/],
    [['--num-experts', '8', '--recompute-granularity', 'selective', '--recompute-modules', 'shared_experts'], /--recompute-modules shared_experts needs a shared expert/],
    [['--num-experts', '0'], /--num-experts must be a positive integer, got '0'/],
    [['--num-experts', '8', '--moe-router-topk', '1.5'], /--moe-router-topk must be a positive integer, got '1.5'/],
    [['--num-experts', '8', '--moe-router-topk', '9'], /--moe-router-topk 9 is more than --num-experts 8/],
    [['--num-experts', '8', '--moe-expert-capacity-factor', '-1'], /--moe-expert-capacity-factor must be a positive number, got '-1'/],
    [['--num-experts', '8', '--moe-token-dispatcher-type', 'ring'], /--moe-token-dispatcher-type must be allgather, alltoall, flex, got 'ring'/],
    [['--num-experts', '8', '--expert-model-parallel-size', '3'], /--num-experts 8 is not divisible by --expert-model-parallel-size 3/],
  ];
  for (const [extra, re] of moeBad)
    it(`MoE: refuses ${extra.join(' ')} in one line, exit 2`, async () => {
      const r = await run(['memory', '--preset', 'seed-32L-4096h', ...extra]);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err.split('\n')).toHaveLength(1);
      expect(r.err).toMatch(re);
    });

  it('the CP comm types in memory and advise --help and the refusal of another are CP_COMM_TYPES, the model\'s', async () => {
    for (const cmd of ['memory', 'advise']) expect((await run([cmd, '--help'])).out).toContain(`--cp-comm-type ${CP_COMM_TYPES.join('|')}`);
    const r = await run(['memory', '--preset', 'seed-32L-4096h', '--cp-comm-type', 'a2a+p2p']);
    expect([r.code, r.err.trim()]).toEqual([2, `flashring memory: --cp-comm-type must be ${CP_COMM_TYPES.join(', ')}, got 'a2a+p2p'`]);
  });

  it("--moe-router-enable-expert-bias: the routers' two buffers of E; Megatron-LM's requirement of a sigmoid or sqrtsoftplus score function, refused otherwise in one line (memory, advise); replay --compare names it", async () => {
    const MOE = ['--preset', 'seed-32L-4096h', '--disable-bias-linear', '--num-experts', '8'];
    const REFUSED = 'Megatron-LM refuses --moe-router-enable-expert-bias with the softmax score function (TransformerConfig): add --moe-router-score-function sigmoid (or sqrtsoftplus), or leave out --moe-router-enable-expert-bias';
    for (const cmd of ['memory', 'advise']) {
      const r = await run([cmd, ...MOE, '--moe-router-enable-expert-bias', '--seq-length', '8192', '--gpus', '8'].filter((x, i, a) => cmd === 'advise' || (x !== '--gpus' && a[i - 1] !== '--gpus')));
      expect([r.code, r.err.trim()], cmd).toEqual([2, `flashring ${cmd}: ${REFUSED}`]);
    }
    const softmax = await run(['memory', ...MOE, '--moe-router-score-function', 'softmax', '--moe-router-enable-expert-bias']);
    expect([softmax.code, softmax.err.trim()]).toEqual([2, `flashring memory: ${REFUSED}`]);
    const plain = JSON.parse((await run(['memory', ...MOE, '--json'])).out);
    for (const f of ['sigmoid', 'sqrtsoftplus']) {
      const j = JSON.parse((await run(['memory', ...MOE, '--moe-router-score-function', f, '--moe-router-enable-expert-bias', '--json'])).out);
      expect(j.model.moe).toEqual({ numExperts: 8, routerTopk: 2, scoreFunction: f, expertBias: true });
      expect(j.totalBytes - plain.totalBytes).toBe(32 * (512 + 512)); // 4·8 and 2·8 bytes, each a 512-byte block, in 32 layers
    }
    const dense = await run(['memory', '--preset', 'seed-32L-4096h', '--moe-router-enable-expert-bias']);
    expect([dense.code, dense.err.trim()]).toEqual([2, 'flashring memory: --moe-router-enable-expert-bias needs --num-experts E (mixture-of-experts layers); without it the model is dense']);
    const bad = await run(['memory', ...MOE, '--moe-router-score-function', 'tanh']);
    expect([bad.code, bad.err.trim()]).toEqual([2, "flashring memory: --moe-router-score-function must be softmax, sigmoid, sqrtsoftplus, got 'tanh'"]);
    // r05 of the MoE-extras draw (sigmoid, the expert bias) compared without the bias: named with the MoE settings
    const R05 = ['--transformer-impl', 'local', '--num-layers', '3', '--hidden-size', '512', '--num-attention-heads', '8', '--ffn-hidden-size', '2048', '--seq-length', '8192',
      '--vocab-size', '30891', '--attention-dropout', '0', '--hidden-dropout', '0', '--position-embedding-type', 'learned_absolute', '--swiglu', '--disable-bias-linear',
      '--num-experts', '8', '--moe-router-topk', '1', '--moe-ffn-hidden-size', '512', '--moe-token-dispatcher-type', 'alltoall', '--moe-shared-expert-intermediate-size', '704',
      '--torch-optimizer', '--global-batch-size', '1'];
    const log = 'bench/results/2026-12-07-moe-extras/runs/r05.log';
    const without = await run(['replay', log, '--compare', ...R05]);
    expect(without.out + without.err).toContain('--moe-token-dispatcher-type alltoall --moe-router-score-function sigmoid --moe-router-enable-expert-bias (compared: 8 --moe-router-topk 1');
    const withBias = await run(['replay', log, '--compare', ...R05, '--moe-router-score-function', 'sigmoid', '--moe-router-enable-expert-bias']);
    expect(withBias.code).toBe(0);
    expect(withBias.out + withBias.err).not.toMatch(/measured another setup/);
  });

  it('--help names the MoE flags', async () => {
    const r = await run(['memory', '--help']);
    for (const f of ['--num-experts', '--moe-router-topk', '--moe-ffn-hidden-size', '--moe-shared-expert-intermediate-size', '--moe-expert-capacity-factor',
      '--moe-token-dispatcher-type', '--expert-model-parallel-size', '--no-bias-swiglu-fusion', '--no-bias-gelu-fusion', 'moe shared_experts',
      '--moe-router-score-function softmax|sigmoid|sqrtsoftplus', '--moe-router-enable-expert-bias']) expect(r.out).toContain(f);
  });

  const bad: [string[], RegExp][] = [
    [['--recompute-granularity', 'full'], /--recompute-granularity full needs --recompute-method/],
    [['--recompute-granularity', 'full', '--recompute-method', 'block', '--recompute-num-layers', '9'], /--recompute-num-layers 9 is more than the 8 layers/],
    [['--recompute-granularity', 'selective', '--recompute-modules', 'moe_act'], /unknown module 'moe_act'/],
    [['--stack', 'jax'], /--stack must be megatron, torch-amp, got 'jax'/],
    [['--ffn-hidden-size', '-5'], /--ffn-hidden-size must be a positive integer, got '-5'/],
    [['--vocab-size', '-50000'], /--vocab-size must be a positive integer/],
    [['--attention-dropout', '2'], /--attention-dropout must be a probability in \[0, 1\), got '2'/],
    [['--hbm-gib', '-1'], /--hbm-gib must be a positive number of GiB, got '-1'/],
    [['--seq-length', '1e300'], /--seq-length must be a positive integer, got '1e300'|--seq-length 1e\+300 is beyond/],
    [['--lines', '4:full'], /full recompute needs a method/],
    [['--lines', '1,2,1'], /--lines: '1' is the line '1' again \(.*\): give each line once/],
    [['--tensor-model-parallel-size', '2'], /--stack torch-amp models PyTorch DDP with its context-parallel ring \(the measured harness\): --tensor-model-parallel-size is Megatron-LM's/],
    [['--num-experts', '8'], /--stack torch-amp models PyTorch DDP with its context-parallel ring \(the measured harness\): --num-experts is Megatron-LM's/],
    [['--global-batch-size', '3', '--data-parallel-size', '2'], /--global-batch-size 3 is not divisible by --micro-batch-size 1 × --data-parallel-size 2/],
    // What the sweep sets at each point is refused, not ignored (each line had its own CP and recompute, whatever these said).
    [['--context-parallel-size', '2'], /^flashring memory: --context-parallel-size is set at each point of a sweep \(--seq-lengths gives the lengths, --lines each line's CP and recompute, e\.g\. --lines 1,2,2:selective\): leave --context-parallel-size out$/],
    [['--recompute-granularity', 'full', '--recompute-method', 'uniform', '--recompute-num-layers', '1'], /--recompute-granularity is set at each point of a sweep/],
    [['--seq-length', '8192'], /--seq-length is set at each point of a sweep/],
    [['--lines', ''], /^flashring memory: --lines needs at least one line \(cp\[:recompute\], e\.g\. 1,1:recompute,2,4,4:recompute\), got ''$/],
    [['--seq-lengths', '4096,8192,4096'], /^flashring memory: --seq-lengths: 4096 is given twice: give each value once$/],
  ];
  for (const [extra, re] of bad)
    it(`refuses ${extra.join(' ')} in one line, exit 2, nothing written`, async () => {
      const csv = join(dir, 'never.csv');
      // A flag given twice is itself an error, so the case that names --stack replaces the torch one.
      const stack = extra.includes('--stack') ? [] : TORCH.slice(0, 2);
      const r = await run(['memory', ...stack, '--num-layers', '8', '--hidden-size', '4096', '--num-attention-heads', '32', ...extra, '--sweep', '--csv', csv]);
      expect(r.code).toBe(2);
      expect(r.err.split('\n')).toHaveLength(1);
      expect(r.err).toMatch(re);
      expect(existsSync(csv)).toBe(false);
    });
});

describe('replay\'s --compare, which shares the model flags\' table, given to memory or advise', () => {
  it('is refused in one line naming the command it belongs to, exit 2 (memory printed its breakdown as if it were not given)', async () => {
    const m = await run(['memory', '--preset', 'seed-32L-4096h', '--compare']);
    expect([m.code, m.out]).toEqual([2, '']);
    expect(m.err).toBe('flashring memory: --compare belongs to flashring replay, not memory');
    const a = await run(['advise', '--preset', 'seed-32L-4096h', '--seq-length', '8192', '--gpus', '8', '--compare']);
    expect([a.code, a.out]).toEqual([2, '']);
    expect(a.err).toBe('flashring advise: --compare belongs to flashring replay, not advise');
    // And the sweep's flags given to replay, with --compare or not (with it they were ignored; without, called model flags).
    const log = 'bench/results/2026-12-02-megatron-campaign/runs/r01.log';
    for (const extra of [['--sweep'], ['--seq-lengths', '1,2'], ['--lines', '1,2']]) for (const compare of [[], ['--compare', '--preset', 'seed-32L-4096h']]) {
      const r = await run(['replay', log, ...compare, ...extra]);
      expect([r.code, r.out, r.err], extra.join(' ')).toEqual([2, '', `flashring replay: ${extra[0]} belongs to flashring memory --sweep, not replay`]);
    }
  });
});

describe("flashring memory and advise --help: an H200's memory is the profile's, as PyTorch measured it", () => {
  it("--hbm-gib's help gives the H200 profile's 139.8 GiB (the logs' 'total capacity of 139.80 GiB'), not the 141 of its data sheet's GB", async () => {
    for (const cmd of ['memory', 'advise']) {
      const h = (await run([cmd, '--help'])).out;
      const line = h.split('\n').find((l) => l.trimStart().startsWith('--hbm-gib'))!;
      expect(line, cmd).toContain(`${H200.hbmGib}`);
      expect(line, cmd).not.toMatch(/\b141\b/);
    }
    expect(H200.hbmGib).toBe(139.8);
  });
});

describe('flashring memory: a refusal names where a value it did not get from the user came from', () => {
  it('a value --preset gave is said as the preset\'s; one the user typed is not', async () => {
    const small = ['--preset', 'llama3-8b', '--num-layers', '2', '--hidden-size', '256', '--num-attention-heads', '4'];
    const r = await run(['memory', ...small]);
    expect([r.code, r.err]).toEqual([2, 'flashring memory: --num-attention-heads 4 is not a multiple of --num-query-groups 8 (from --preset llama3-8b)']);
    const pp = await run(['memory', '--preset', 'llama3-8b', '--pipeline-model-parallel-size', '5']);
    expect(pp.err).toBe('flashring memory: --num-layers 32 (from --preset llama3-8b) is not divisible by --pipeline-model-parallel-size 5');
    const typed = await run(['memory', ...small, '--num-query-groups', '3']);
    expect(typed.err).toBe('flashring memory: --num-attention-heads 4 is not a multiple of --num-query-groups 3');
  });

  it('a sweep line the user did not ask for (no --lines) is said as one of the default lines', async () => {
    const args = ['memory', '--preset', 'llama3-8b', '--seq-lengths', '100'];
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^flashring memory: default line 'CP=4' \(--lines not given: 1,1:recompute,2,4,4:recompute\): none of the sequence lengths \(100\) splits over CP 4 .*: choose lengths that are multiples of 8, or give --lines$/);
    const given = await run([...args, '--lines', '1,4']);
    expect(given.err).toMatch(/^flashring memory: line 'CP=4': none of the sequence lengths \(100\) .*multiples of 8$/);
  });
});

describe('flashring memory: flags Megatron-LM sets aside or refuses', () => {
  it('--sequence-parallel at TP = 1 is set aside with a note, as Megatron-LM does (the same memory as without it); at TP = 2 it is kept', async () => {
    const plain = await run(['memory', '--preset', 'seed-32L-4096h', '--json']);
    const r = await run(['memory', '--preset', 'seed-32L-4096h', '--sequence-parallel', '--json']);
    expect(r.code).toBe(0);
    expect(r.err.split('\n').filter((l) => l.startsWith('note: '))).toEqual([
      'note: --sequence-parallel at TP = 1 is set aside: Megatron-LM turns sequence parallelism off without tensor parallelism, and so does the model',
    ]);
    const a = JSON.parse(plain.out), b = JSON.parse(r.out);
    expect(b.parallel.sequenceParallel).toBe(false);
    expect(b.totalBytes).toBe(a.totalBytes);
    const tp2 = await run(['memory', '--preset', 'seed-32L-4096h', '--tensor-model-parallel-size', '2', '--sequence-parallel', '--json']);
    expect(tp2.err).not.toMatch(/set aside/);
    expect(JSON.parse(tp2.out).parallel.sequenceParallel).toBe(true);
  });
  it('--no-bias-swiglu-fusion on a GeLU MLP is taken, as Megatron-LM takes it, with a note that it changes nothing (it was silent); with --swiglu it adds the unfused tensors', async () => {
    const plain = await run(['memory', '--preset', 'seed-32L-4096h', '--json']);
    const r = await run(['memory', '--preset', 'seed-32L-4096h', '--no-bias-swiglu-fusion', '--json']);
    expect(r.code).toBe(0);
    expect(r.err.split('\n').filter((l) => l.startsWith('note: '))).toEqual(['note: --no-bias-swiglu-fusion changes nothing without --swiglu: the MLP is GeLU, whose kept tensors do not depend on it']);
    expect(JSON.parse(r.out).totalBytes).toBe(JSON.parse(plain.out).totalBytes);
    const fused = await run(['memory', '--preset', 'seed-32L-4096h', '--swiglu', '--json']);
    const unfused = await run(['memory', '--preset', 'seed-32L-4096h', '--swiglu', '--no-bias-swiglu-fusion', '--json']);
    expect(unfused.err).not.toMatch(/changes nothing/);
    expect(JSON.parse(unfused.out).totalBytes).toBeGreaterThan(JSON.parse(fused.out).totalBytes);
    expect(JSON.parse(r.out).model.biasActivationFusion).toBeUndefined(); // the GeLU reads its own flag, not SwiGLU's
  });
  it("--no-bias-gelu-fusion (Megatron-LM's): the GeLU's fusion, which routed experts with linear biases need off to train (at EP > 1, TP 1); noted where it changes nothing", async () => {
    const MOE = ['memory', '--preset', 'seed-32L-4096h', '--num-experts', '8', '--expert-model-parallel-size', '2', '--data-parallel-size', '2', '--json'];
    const fused = await run(MOE), unfused = await run([...MOE, '--no-bias-gelu-fusion']);
    expect([fused.code, unfused.code]).toEqual([0, 0]);
    expect(JSON.parse(fused.out).untrainable).toBe(MOE_EXPERT_BIASES);
    expect(JSON.parse(unfused.out).untrainable).toBeNull();
    expect(JSON.parse(unfused.out).model.biasActivationFusion).toBe(false);
    expect(JSON.parse(unfused.out).totalBytes).toBe(JSON.parse(fused.out).totalBytes); // GeLU keeps the same tensors either way
    expect(unfused.err).not.toMatch(/^note: .*fusion/m);
    const notes = async (...extra: string[]) => (await run(['memory', '--preset', 'seed-32L-4096h', ...extra, '--json'])).err.split('\n').filter((l) => l.startsWith('note: '));
    expect(await notes('--swiglu', '--no-bias-gelu-fusion')).toEqual(["note: --no-bias-gelu-fusion changes nothing with --swiglu: Megatron-LM's SwiGLU reads --no-bias-swiglu-fusion"]);
    expect(await notes('--disable-bias-linear', '--no-bias-gelu-fusion')).toEqual(['note: --no-bias-gelu-fusion changes nothing with --disable-bias-linear: Megatron-LM fuses GeLU only with its bias, and turns the fusion off without one']);
  });
  it('--disable-bias-linear and --normalization RMSNorm (Megatron-LM\'s flags; the Llama presets set both): fewer parameters, and selective mlp no longer untrainable', async () => {
    const bytes = async (...extra: string[]) => {
      const r = await run(['memory', '--preset', 'seed-32L-4096h', '--recompute-granularity', 'selective', '--recompute-modules', 'core_attn', 'mlp', ...extra, '--json']);
      expect(r.code, r.err).toBe(0);
      const j = JSON.parse(r.out);
      return { total: j.totalBytes as number, untrainable: (j.untrainable ?? null) as string | null };
    };
    const base = await bytes(), nobias = await bytes('--disable-bias-linear'), rms = await bytes('--disable-bias-linear', '--normalization', 'RMSNorm');
    expect(nobias.total).toBeLessThan(base.total);
    expect(rms.total).toBeLessThan(nobias.total);
    expect(base.untrainable).toMatch(/cannot train selective recompute of mlp with linear biases.*add --disable-bias-linear/);
    expect(nobias.untrainable).toBeNull();
    expect(await bytes('--normalization', 'LayerNorm')).toEqual(base);
    const llama = JSON.parse((await run(['memory', '--preset', 'llama3-8b', '--json'])).out);
    const llamaFlags = JSON.parse((await run(['memory', '--preset', 'llama3-8b', '--normalization', 'RMSNorm', '--disable-bias-linear', '--json'])).out);
    expect(llamaFlags.totalBytes).toBe(llama.totalBytes);
    const bad = await run(['memory', '--preset', 'seed-32L-4096h', '--normalization', 'rms']);
    expect([bad.code, bad.err.trim()]).toEqual([2, "flashring memory: --normalization must be LayerNorm or RMSNorm, got 'rms'"]);
  });
  it('--max-position-embeddings (Megatron-LM\'s): the learned table\'s rows, (max − s)·h parameters more than its default of the sequence\'s; below the sequence refused, as Megatron-LM refuses it', async () => {
    const GPT = ['memory', '--num-layers', '4', '--hidden-size', '1024', '--num-attention-heads', '16', '--tensor-model-parallel-size', '2'];
    const json = async (...extra: string[]) => {
      const r = await run([...GPT, ...extra, '--json']);
      expect(r.code, r.err).toBe(0);
      return JSON.parse(r.out);
    };
    const base = await json('--seq-length', '8192'), same = await json('--seq-length', '8192', '--max-position-embeddings', '8192');
    const big = await json('--seq-length', '8192', '--max-position-embeddings', '32768');
    expect(same.totalBytes).toBe(base.totalBytes);
    expect(big.parameters - base.parameters).toBe((32768 - 8192) * 1024);
    expect(big.activationBytes).toBe(base.activationBytes);
    // RoPE has no table: the flag weighs nothing there (Megatron-LM takes it all the same).
    expect((await json('--seq-length', '8192', '--position-embedding-type', 'rope', '--max-position-embeddings', '32768')).totalBytes)
      .toBe((await json('--seq-length', '8192', '--position-embedding-type', 'rope')).totalBytes);
    // Below the sequence: one line, exit 2, at the point (its default length too), the sweep's longest length, and advise's length.
    const refused = (max: number, what: string) => `--max-position-embeddings ${max} is less than ${what}: Megatron-LM refuses it (max_position_embeddings must be at least seq_length); ` +
      `give at least ${/\d+/.exec(what.replace(/^the sweep's longest length, /, ''))![0]}, or leave it out (the table then has a row a position of the sequence)`;
    for (const [args, msg] of [
      [['--seq-length', '8192', '--max-position-embeddings', '4096'], `flashring memory: ${refused(4096, '--seq-length 8192')}`],
      [['--max-position-embeddings', '2048'], `flashring memory: ${refused(2048, '--seq-length 4096')}`],
      [['--sweep', '--max-position-embeddings', '65536'], `flashring memory: ${refused(65536, "the sweep's longest length, 1048576 (--seq-lengths)")}`],
      [['--max-position-embeddings', '0'], "flashring memory: --max-position-embeddings must be a positive integer, got '0'"],
    ] as const) {
      const r = await run([...GPT, ...args]);
      expect([r.code, r.err.trim(), r.out], args.join(' ')).toEqual([2, msg, '']);
    }
    // A sweep whose lengths the table covers runs; --help names the flag.
    const sweep = await run([...GPT, '--sweep', '--seq-lengths', '1024,2048', '--max-position-embeddings', '2048', '--json']);
    expect(sweep.code, sweep.err).toBe(0);
    expect((await run(['memory', '--help'])).out).toMatch(/--max-position-embeddings N/);
    const advise = await run(['advise', ...GPT.slice(1, 7), '--seq-length', '8192', '--gpus', '8', '--max-position-embeddings', '4096']);
    expect([advise.code, advise.err.trim()]).toEqual([2, `flashring advise: ${refused(4096, '--seq-length 8192')}`]);
  });
  it('the norm is named as the model has it wherever a person reads a term: RMSNorm for the Llama presets (never LayerNorm), LayerNorm for GPT', async () => {
    const FULL = ['--recompute-granularity', 'full', '--recompute-method', 'uniform', '--recompute-num-layers', '1'];
    const rms = Object.keys(PRESETS).filter((p) => PRESETS[p].model.rmsNorm);
    expect(rms).toEqual(['llama3-8b', 'llama3-70b']);
    for (const preset of rms) {
      const text = (await run(['memory', '--preset', preset])).out, full = (await run(['memory', '--preset', preset, ...FULL])).out;
      // 'layernorm' may only be a recompute module's name (Megatron-LM's flag value); neither output recomputes it.
      for (const out of [text, full]) expect(out).not.toMatch(/layernorm/i);
      expect(text).toMatch(/\n {6}RMSNorm 1 input \[/);
      expect(text).toMatch(/\n {6}RMSNorm 2 input \[/);
      expect(full).toMatch(/\n {6}RMSNorm {3}layer input \(full recompute\) \[/);
      for (const out of [text, full]) expect(out).toMatch(/\n {6}output {4}final RMSNorm input \[/);
      // Recomputing the norm: its transient names the model's norm; 'layernorm' only where the flag's value is echoed (recompute=…).
      const sel = (await run(['memory', '--preset', preset, '--recompute-granularity', 'selective', '--recompute-modules', 'layernorm', 'mlp'])).out;
      expect(sel).toMatch(/\n {6}recomputing the RMSNorm and MLP of one layer in backward \[/);
      expect(sel.split('\n').filter((l) => /layernorm/i.test(l))).toEqual([expect.stringMatching(/ recompute=selective:layernorm\+mlp /)]);
      const model = PRESETS[preset].model;
      for (const par of [DEFAULT_PARALLEL, { ...DEFAULT_PARALLEL, recompute: 'full' as const, recomputeMethod: 'uniform' as const, recomputeNumLayers: 1 }]) {
        const rows = breakdownRows(memoryBreakdown(model, par), model);
        expect(rows.filter((r) => /layernorm/i.test(`${r.section} ${r.label} ${r.formula}`))).toEqual([]);
        expect(rows.some((r) => r.label.startsWith('RMSNorm: '))).toBe(true);
      }
    }
    const gpt = await run(['memory', '--preset', 'seed-32L-4096h']), gptRms = await run(['memory', '--preset', 'seed-32L-4096h', '--normalization', 'RMSNorm']);
    expect(gpt.out).toMatch(/\n {6}LayerNorm 1 input \[[^]*\n {6}output {4}final LayerNorm input \[/);
    expect(gptRms.code, gptRms.err).toBe(0);
    expect(gptRms.out).toMatch(/\n {6}RMSNorm 1 input \[[^]*\n {6}output {4}final RMSNorm input \[/);
    expect(gptRms.out).not.toMatch(/LayerNorm/);
    expect(breakdownRows(memoryBreakdown(PRESETS['seed-32L-4096h'].model, DEFAULT_PARALLEL), PRESETS['seed-32L-4096h'].model).some((r) => r.label.startsWith('LayerNorm: '))).toBe(true);
  });
  it('--swiglu without --ffn-hidden-size takes Megatron-LM\'s width, ⌊(4h·2/3)/64⌋·64 (10880 at h = 4096), not 4h', async () => {
    const total = async (...extra: string[]) => JSON.parse((await run(['memory', '--num-layers', '4', '--hidden-size', '4096', '--num-attention-heads', '32', ...extra, '--json'])).out).totalBytes as number;
    expect(await total('--swiglu')).toBe(await total('--swiglu', '--ffn-hidden-size', '10880'));
    expect(await total('--swiglu')).not.toBe(await total('--swiglu', '--ffn-hidden-size', '16384'));
    expect(await total()).toBe(await total('--ffn-hidden-size', '16384'));
  });
  it('the sweep marks a line Megatron-LM cannot train with † in its header, and says why under the table; none without linear biases', async () => {
    // Each sweep ran and drew its table (an empty stdout would pass every "no †" below).
    const sweep = async (...extra: string[]) => {
      const r = await run(['memory', '--sweep', '--preset', 'seed-32L-4096h', '--seq-lengths', '8192', ...extra]);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toMatch(/^ +8192 +\d/m);
      return r.out.split('\n');
    };
    const biased = await sweep('--lines', '1,1:selective:core_attn+mlp,2,4:recompute,4:selective:core_attn+mlp');
    expect(biased[1]).toMatch(/CP=1 \+ selective core_attn, mlp †.*CP=4 \+ recompute +CP=4 \+ selective core_attn, mlp †$/);
    expect(biased[1]).not.toMatch(/CP=2 †/);
    expect(biased.find((l) => l.startsWith('† '))).toMatch(/^† CP=1 \+ selective core_attn, mlp and CP=4 \+ selective core_attn, mlp: .*cannot train selective recompute of mlp with linear biases/);
    const byDefault = await sweep();
    expect(byDefault[1]).toMatch(/^ seq_len +CP=1 +CP=1 \+ recompute +CP=2 +CP=4 +CP=4 \+ recompute$/);
    expect(byDefault.join('\n')).not.toMatch(/†/); // the default lines recompute full layers on this model
    const plain = await sweep('--disable-bias-linear', '--lines', '1,1:selective:core_attn+mlp,4:recompute');
    expect(plain[1]).toMatch(/^ seq_len +CP=1 +CP=1 \+ recompute +CP=4 \+ recompute$/);
    expect(plain.join('\n')).not.toMatch(/†/);
  });
  it('virtual stages at PP = 1 are refused, as Megatron-LM refuses them (one virtual stage is none, and taken)', async () => {
    const r = await run(['memory', '--preset', 'seed-32L-4096h', '--num-layers-per-virtual-pipeline-stage', '4']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^flashring memory: --num-layers-per-virtual-pipeline-stage 4 makes 8 virtual stages, and Megatron-LM refuses virtual stages without a pipeline/);
    expect((await run(['memory', '--preset', 'seed-32L-4096h', '--num-layers-per-virtual-pipeline-stage', '32', '--json'])).code).toBe(0);
    expect((await run(['memory', '--preset', 'seed-32L-4096h', '--pipeline-model-parallel-size', '2', '--num-layers-per-virtual-pipeline-stage', '4', '--json'])).code).toBe(0);
  });
});

describe('flashring replay', () => {
  const D = 'bench/results/memory-h200-2026-12-01';
  it("a CSV's rows without a source are named by its path, as a log's are: two runs.csv of two folders stay two sources", async () => {
    const a = join(dir, 'src-a'), b = join(dir, 'src-b');
    for (const [d, gib] of [[a, 20], [b, 40]] as const) {
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 'runs.csv'), `seq_len,total_gib\n4096,${gib}\n`);
    }
    const merged = join(dir, 'merged.csv');
    expect((await run(['replay', join(a, 'runs.csv'), join(b, 'runs.csv'), '--csv', merged])).code).toBe(0);
    const sources = (await run(['replay', merged, '--json'])).out;
    // Both were 'measured: runs.csv': one series on the chart, one name in the merged file.
    expect(JSON.parse(sources).points.map((p: { source: string }) => p.source)).toEqual([`measured: ${join(a, 'runs.csv')}`, `measured: ${join(b, 'runs.csv')}`]);
  });
  it('--compare: per-point error of total and activations and the OOM verdict', async () => {
    const r = await run(['replay', 'bench/results/torchcp-2xh200-2026-11-30/activation_memory_measured.csv', '--compare', '--preset', 'torchcp-8L-4096h', '--hbm-gib', '139.8']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/\| bench\/results\/torchcp-2xh200-2026-11-30\/activation_memory_measured\.csv: CP=2 \| 196608 \| 2 \| none \| OOM \| 1[4-9]\d\.\d \|.*\| right \|/);
    expect(r.out).toMatch(/28 points: largest total error \d\.\d%, largest activation error \d\.\d%, 0 wrong OOM verdicts$/m);
    expect(r.out + r.err).not.toMatch(/another setup/);
    // With --json, stdout is the JSON alone: the comparison in it, no table before it.
    const j = await run(['replay', 'bench/results/torchcp-2xh200-2026-11-30/activation_memory_measured.csv', '--compare', '--preset', 'torchcp-8L-4096h', '--hbm-gib', '139.8', '--json']);
    expect(JSON.parse(j.out).comparison).toHaveLength(28);
  });
  it('--compare names the rows that measured another model than the compared one (the CSV names it in source)', async () => {
    const r = await run(['replay', `${D}/activation_memory_measured.csv`, '--compare', '--stack', 'torch-amp', '--num-layers', '4', '--hidden-size', '2048',
      '--num-attention-heads', '16', '--vocab-size', '32000', '--untie-embeddings-and-output-weights', '--attention-dropout', '0', '--hidden-dropout', '0',
      '--position-embedding-type', 'none', '--hbm-gib', '139.8']);
    expect(r.code).toBe(0);
    const notes = r.out.split('\n').filter((l) => l.startsWith('note: ')); // with the table, on stdout
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(/^note: 2 points \(.*activation_memory_measured\.csv: .*\) measured another setup than the one compared, with layers 12 \(compared: 4\), hidden 1024 \(compared: 2048\), heads 8 \(compared: 16\), vocab 50257 \(compared: 32000\): their errors are against the wrong model/);
    expect(notes[1]).toMatch(/layers 8 \(compared: 4\), hidden 4096/);
  });
  it('--compare on a log names its model when the compared one is another (the log\'s arguments give it)', async () => {
    const log = 'bench/results/2026-12-02-megatron-campaign/runs/r00.log';
    const r = await run(['replay', log, '--compare', '--preset', 'seed-32L-4096h']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^note: 1 point \(bench\/results\/2026-12-02-megatron-campaign\/runs\/r00\.log\) measured another setup than the one compared, with --num-layers 11 \(compared: 32\), --hidden-size 1536 \(compared: 4096\), --num-attention-heads 24 \(compared: 32\), .*: its error is against the wrong model.*; give --compare those flags to compare it with its own model$/m);
    expect(r.out).toMatch(/^\| bench\/results\/2026-12-02-megatron-campaign\/runs\/r00\.log \| 2048 \|/m); // the table names each log
    const csv = await run(['replay', log]);
    expect(csv.out).toMatch(/measured: Megatron-LM log bench\/results\/2026-12-02-megatron-campaign\/runs\/r00\.log \(11L h=1536 a=24 vocab=146481; peak max allocated over ranks\)/);
    // The CSV it writes names the vocabulary too: compared with the log's own size and vocabulary, nothing to say.
    const out = join(dir, 'r00.csv');
    expect((await run(['replay', log, '--csv', out])).code).toBe(0);
    const back = await run(['replay', out, '--compare', '--num-layers', '11', '--hidden-size', '1536', '--num-attention-heads', '24', '--vocab-size', '146481']);
    expect(back.code, back.err).toBe(0);
    expect(back.out).toMatch(/^\| .*r00\.csv.* \| 2048 \|/m);
    expect(back.out).not.toMatch(/another setup/);
    expect((await run(['replay', out, '--compare', '--num-layers', '11', '--hidden-size', '1536', '--num-attention-heads', '24'])).out).toMatch(/vocab 146481 \(compared: 50257\)/);
    // A file given twice would count its points twice; a point's own sizes win over the compared ones, and that is said.
    const twice = await run(['replay', log, `./${log}`]);
    expect([twice.code, twice.err.trim()]).toEqual([2, `flashring replay: ./${log} is the same file as ${log}: give each log or CSV once (its points would count twice)`]);
    // Settings that move the total only together (DP with the distributed optimizer) are named too.
    const dp = await run(['replay', log, '--compare', '--num-layers', '11', '--hidden-size', '1536', '--num-attention-heads', '24', '--data-parallel-size', '4', '--use-distributed-optimizer']);
    expect(dp.out).toMatch(/no --use-distributed-optimizer \(compared: --use-distributed-optimizer\), --data-parallel-size 1 \(compared: 4\)/);
    const tp = await run(['replay', log, '--compare', '--preset', 'seed-32L-4096h', '--tensor-model-parallel-size', '2']);
    expect(tp.err).toMatch(/^note: --tensor-model-parallel-size: each point is compared at what it measured .*; the given value is used only where a point does not say it$/m);
  });
  it('--compare on a log of the same size names every other setting its arguments give, and how far they move the model; none when all match', async () => {
    const log = 'bench/results/2026-12-02-megatron-campaign/runs/r00.log';
    const size = ['--num-layers', '11', '--hidden-size', '1536', '--num-attention-heads', '24'];
    const r = await run(['replay', log, '--compare', ...size]);
    expect(r.code).toBe(0);
    const note = r.out.split('\n').filter((l) => l.startsWith('note: '));
    expect(note).toHaveLength(1);
    // Each setting as the flashring memory flags that give it: what --compare takes.
    for (const s of ['--ffn-hidden-size 5120 (compared: 6144)', '--swiglu (compared: no --swiglu)', '--vocab-size 146481 (compared: 50257)',
      '--untie-embeddings-and-output-weights (compared: no --untie-embeddings-and-output-weights)', '--disable-bias-linear (compared: no --disable-bias-linear)',
      '--no-use-flash-attn (compared: --use-flash-attn)']) expect(note[0]).toContain(s);
    expect(note[0]).not.toMatch(/--num-layers|--hidden-size|--cp-comm-type/);
    // A setting that differs but does not change this point's memory is not named (CP comm type at CP = 1).
    const noise = await run(['replay', log, '--compare', ...size, '--cp-comm-type', 'a2a']);
    expect(noise.out).toMatch(/another setup/);
    expect(noise.out).not.toMatch(/--cp-comm-type/);
    expect(note[0]).toMatch(/the compared model's total is -5\d\.\d% off the model under the log's own arguments/);
    const same = await run(['replay', log, '--compare', ...size, '--ffn-hidden-size', '5120', '--swiglu', '--vocab-size', '146481', '--untie-embeddings-and-output-weights',
      '--position-embedding-type', 'rope', '--disable-bias-linear', '--attention-dropout', '0', '--no-bias-swiglu-fusion', '--transformer-impl', 'local']);
    expect(same.code).toBe(0);
    expect(same.out + same.err).not.toMatch(/another setup/);
    expect(same.out).toMatch(/largest total error 0\.\d%/);
  });
  it('a log that sets what the model does not take (FP8) is said so, in its note and in --compare\'s table, and given no error', async () => {
    // r00 as if run with --fp8-format e4m3: the table gave it -0.1% and counted it in the largest error, and no line said why its own prediction had none.
    const log = join(dir, 'r00-fp8.log');
    writeFileSync(log, readFileSync('bench/results/2026-12-02-megatron-campaign/runs/r00.log', 'utf8').replace(/^( {2}fp8 \.+) None$/m, '$1 e4m3'));
    const own = ['--num-layers', '11', '--hidden-size', '1536', '--num-attention-heads', '24', '--ffn-hidden-size', '5120', '--swiglu', '--vocab-size', '146481',
      '--untie-embeddings-and-output-weights', '--position-embedding-type', 'rope', '--disable-bias-linear', '--attention-dropout', '0', '--no-bias-swiglu-fusion', '--transformer-impl', 'local'];
    const r = await run(['replay', log, '--compare', ...own]);
    expect(r.code).toBe(0);
    expect(r.err).toContain('  note: not modelled: --fp8-format e4m3 (the prediction is not comparable with this run)');
    expect(r.out).toMatch(/^\| .*r00-fp8\.log \| 2048 \| 1 \| full:block\/5 \| 21\.7 \| 21\.7 \| not comparable \(not modelled: --fp8-format e4m3\) \|  \| 8\.0 \|  \| 0\.0 \| unknown \|$/m);
    expect(r.out).toContain('1 point: largest total error -, largest activation error -, 0 wrong OOM verdicts; 1 point not compared (its log sets what the model does not take)');
    const j = JSON.parse((await run(['replay', log, '--compare', ...own, '--json'])).out).comparison[0];
    expect([j.totalError, j.verdict, j.notModelled]).toEqual([null, 'unknown', ['--fp8-format e4m3']]);
  });
  it('a log that ran out of memory because other processes held the GPU is no wrong verdict: said on its line, in the table, counted apart, in --json; its point has no fits and no peak', async () => {
    // A at 16K beside B's run (120.65 GiB): it was counted "says it fits, it ran out of memory"; r21 ran out on its own.
    const logs = ['bench/results/memory-h200-2026-12-01/megatron-failed/A-s16384-none.log', 'bench/results/2026-12-02-time-heldout/runs/r21.log'];
    const flags = ['--compare', '--num-layers', '4', '--hidden-size', '1024', '--num-attention-heads', '16', '--hbm-gib', '139.8'];
    const r = await run(['replay', ...logs, ...flags]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('| OUT OF MEMORY (other processes held 120.67 GiB: not a verdict) |');
    expect(r.err).toContain("  note: the log reports CUDA out of memory with other processes holding 120.67 GiB of the GPU's 139.80 GiB (this process 18.99 GiB, 8.00 GiB asked for, line 1006)");
    expect(r.out).toMatch(/^\| .*A-s16384-none\.log \| 16384 \| 1 \| none \| OOM \(other processes\) \| [\d.]+ \|  \|  \| [\d.]+ \|  \| 0\.0 \| not a verdict \(other processes held 120\.7 GiB\) \|$/m);
    expect(r.out).toMatch(/^\| .*r21\.log \| .* \| OOM \| .* \| says it fits, it ran out of memory \|$/m);
    expect(r.out).toContain('2 points: largest total error -, largest activation error -, 1 wrong OOM verdict; 1 point out of memory because other processes held the GPU (not a verdict, not compared)');
    const j = JSON.parse((await run(['replay', ...logs, ...flags, '--json'])).out);
    expect(j.comparison.map((c: { verdict: string; othersOom?: { line: number } }) => [c.verdict, c.othersOom?.line ?? null])).toEqual([['unknown', 1006], ['says it fits, it ran out of memory', null]]);
    expect(j.reports[0].point.outOfMemoryOthers.processGiB).toBe(18.99);
    expect(j.points[0]).toMatchObject({ fits: null, total_gib: null });
    // Its CSV leaves the point out, said (a row with neither peak nor fits did not read back: the fuzz found it), and reads back.
    const csv = join(dir, 'others.csv');
    const w = await run(['replay', ...logs, '--csv', csv]);
    expect(w.code).toBe(0);
    expect(w.err).toMatch(/^1 point left out of the CSV, out of memory because other processes held the GPU \(no measurement of its configuration\): .*A-s16384-none\.log$/m);
    expect(w.out).toContain(`wrote 1 point to ${csv}`);
    const back = await run(['replay', csv]);
    expect(back.code, back.err).toBe(0);
  });
  it("with --compare or --csv (each log's line on stdout, its notes on stderr) the notes are headed by the point they are about", async () => {
    // Two campaign runs in one file: stderr held two unnamed 'not time data' notes, the lines they were about on stdout.
    const two = join(dir, 'two-traced.log');
    writeFileSync(two, ['r00', 'r05'].map((r) => readFileSync(`bench/results/2026-12-02-megatron-campaign/runs/${r}.log`, 'utf8')).join(''));
    for (const extra of [['--compare', '--preset', 'llama3-8b'], ['--csv', join(dir, 'two-traced.csv')]]) {
      const r = await run(['replay', two, ...extra]);
      expect(r.code, extra[0]).toBe(0);
      expect(r.err.split('\n').filter((l) => l && !l.startsWith('note: ')).map((l) => l.replace(/^ {2}note: (.{14}).*$/, '  $1')), extra[0])
        .toEqual([`${two}#1:`, '  not time data:', `${two}#2:`, '  not time data:']);
    }
    // Without them, each note follows its log's line on stderr, as before.
    expect((await run(['replay', two])).err).not.toMatch(/#1:$/m);
  });
  it("--json's keys are the ones docs/cli.md names", async () => {
    const two = join(dir, 'two-keys.log');
    writeFileSync(two, ['r00', 'r05'].map((r) => readFileSync(`bench/results/2026-12-02-megatron-campaign/runs/${r}.log`, 'utf8')).join(''));
    const j = JSON.parse((await run(['replay', two, '--compare', '--preset', 'llama3-8b', '--json'])).out);
    const keys = [Object.keys(j), Object.keys(j.reports[0]), Object.keys(j.comparison[0])];
    expect(keys).toEqual([['points', 'reports', 'comparison', 'notes'], ['file', 'run', 'startLine', 'point', 'warnings', 'untrainable', 'notTimeData', 'prediction'],
      ['row', 'modelTotalGib', 'modelActivationGib', 'modelOptimizerStepGib', 'modelFits', 'totalError', 'activationError', 'verdict']]);
    const doc = readFileSync('docs/cli.md', 'utf8').split('\n').find((l) => l.startsWith('| `replay '))!;
    for (const k of [...keys.flat(), 'error', 'notModelled', 'othersOom']) expect(doc, k).toContain(`\`${k}\``);
  });
  it("--compare names each row of a replay's CSV apart (it has no line column: every row was named by the file alone)", async () => {
    const out = join(dir, 'two-runs.csv');
    const logs = ['r00', 'r01'].map((r) => `bench/results/2026-12-02-megatron-campaign/runs/${r}.log`);
    expect((await run(['replay', ...logs, '--csv', out])).code).toBe(0);
    const r = await run(['replay', out, '--compare', '--num-layers', '11', '--hidden-size', '1536', '--num-attention-heads', '24']);
    expect(r.code).toBe(0);
    const rows = r.out.split('\n').filter((l) => /^\| .*two-runs\.csv/.test(l)).map((l) => l.split(' | ')[0]);
    expect(rows).toEqual([`| ${out}: row 1`, `| ${out}: row 2`]);
    expect(r.out).toContain(`note: 1 point (${out}: row 2) measured another setup`);
  });
  it("--compare's note names a default that follows another setting (query groups the heads, positions SwiGLU): its flags give the log's own prediction", async () => {
    // r10: 4 heads with 1 query group, SwiGLU with learned positions. Against 1 head, the groups (1) and the positions
    // (learned: no SwiGLU) matched and were not named, and the note's flags gave 1.6% more than the log's own model.
    const log = 'bench/results/2026-12-02-megatron-campaign/runs/r10.log';
    const r = await run(['replay', log, '--compare', '--num-layers', '1', '--hidden-size', '64', '--num-attention-heads', '1']);
    const note = r.out.split('\n').find((l) => l.startsWith('note: '))!;
    expect(note).toContain('--num-query-groups 1 (compared: its default, 4 with the flags before)');
    expect(note).toContain('--position-embedding-type learned_absolute (compared: its default, rope with the flags before)');
    // The note's flags, as given (a `no --flag` left out), reproduce the log's own prediction exactly, and nothing is said then.
    const flags = /, with (.*): its error is/.exec(note)![1].replace(/ \(compared: [^()]*\)/g, '').replace(/,? ?no --[a-z-]+/g, '').replace(/,/g, '').split(' ').filter(Boolean);
    const again = JSON.parse((await run(['replay', log, '--compare', ...flags, '--json'])).out);
    expect(again.notes).toEqual([]);
    expect(again.comparison[0].modelTotalGib * 2 ** 30).toBe(again.reports[0].prediction.totalBytes);
  });
  it('--json: each log with an argument dump predicts itself from its own arguments', async () => {
    const r = await run(['replay', `${D}/megatron/B-s8192-none.log`, '--json', '--hbm-gib', '139.8']);
    expect(r.code).toBe(0);
    const p = JSON.parse(r.out).reports[0].prediction;
    expect(p.parallel.flashAttention).toBe(false); // transformer_impl local: unfused attention
    expect(Math.abs(p.totalError)).toBeLessThan(0.05);
    expect(p.fits).toBe(true);
  });
  it("a log says its time check as the time model is judged: the model against the median of the iterations after the first two (the memory point's iter is its own window)", async () => {
    const log = 'bench/results/2026-12-03-time-heldout6/runs/r02.log';
    const r = await run(['replay', log]);
    expect(r.code).toBe(0);
    expect(r.err).toContain(`${log}: s=8192 TP=1 CP=1 PP=1 SP=false recompute=full:uniform/1 | iter 472.2 ms (median of iterations 15-24) |`);
    expect(r.err.split('\n')).toContain("  step time: model 449.1 ms, measured 483.6 ms (the time model's measure, after the first 2: median of 22 reports, iterations 3-24; the point's iter above is its dataset's window): -7.1%");
    // The same figures as the held-out table (bench/results/2026-12-03-time-heldout6/README.md) and --json's prediction.iterMs.
    const j = JSON.parse((await run(['replay', log, '--json'])).out).reports[0];
    expect(j.prediction.iterMs).toBeCloseTo(449.1, 1);
    expect(j.notTimeData).toBeNull();
    expect(r.err).not.toContain('not time data');
  });
  it('a run short by design (the campaign: 6 of 6 iterations, all within the point\'s 10 warm-up) is said once on its line, no note; one cut short keeps its note', async () => {
    const log = 'bench/results/2026-12-02-megatron-campaign/runs/r00.log';
    const r = await run(['replay', log]);
    expect(r.code).toBe(0);
    const lines = r.err.split('\n');
    expect(lines[0]).toContain(`${log}: s=2048 TP=1 CP=1 PP=1 SP=false recompute=full:block/5 | iter ? (a 6-iteration run, all within the point's 10 warm-up) | ? TFLOP/s/GPU |`);
    // What it took instead: the step time's iterations, said once on its line; the only note is that it is no time data.
    expect(lines[1]).toMatch(/^ {2}step time: model [\d.]+ ms, measured [\d.]+ ms \(.*iterations 3-6; /);
    expect(lines.filter((l) => l.startsWith('  note: '))).toEqual([`  note: ${notTimeData(parseMegatronLog(readFileSync(log, 'utf8'), log))}`]);
    expect(JSON.parse((await run(['replay', log, '--json'])).out).reports[0].warnings).toEqual([]);
    // The same log stopping at iteration 6 of the 100 it was asked for (a killed run): a note, and no "run" said on its line.
    const cut = join(dir, 'r00-cut.log');
    writeFileSync(cut, readFileSync(log, 'utf8').replace(/(iteration\s+\d+\/)\s+6 \|/g, '$1     100 |'));
    const c = await run(['replay', cut]);
    expect(c.err).toContain('| iter ? | ? TFLOP/s/GPU |');
    expect(c.err.split('\n')).toContain("  note: the log stops at iteration 6 of the run's 100, within the 10 warm-up iterations: the point has no iter time");
  });
  it('a log of the memory campaign (run under the tracer, up to 8 at once on one GPU) says its step time is not time data: a note on stderr, notTimeData in --json', async () => {
    const log = 'bench/results/2026-12-02-megatron-campaign/runs/r46.log';
    const r = await run(['replay', log]);
    expect(r.code).toBe(0);
    const lines = r.err.split('\n');
    const at = lines.findIndex((l) => l.startsWith('  step time: model 92.4 ms, measured 166.9 ms'));
    expect(lines[at]).toMatch(/: -44\.6%$/);
    expect(lines[at + 1]).toBe(`  note: ${notTimeData(parseMegatronLog(readFileSync(log, 'utf8'), log))}`);
    expect(lines[at + 1]).toMatch(/^  note: not time data: .*up to 8 runs sharing one GPU/);
    expect(JSON.parse((await run(['replay', log, '--json'])).out).reports[0].notTimeData).toMatch(/^not time data: /);
  });
  it('a step time of one iteration after the warm-up (the 2026-12-01 memory runs: 3 iterations) is said to be no time data, in a note and in --json', async () => {
    const log = `${D}/megatron/A-s4096-none.log`;
    const r = await run(['replay', log]);
    expect(r.code).toBe(0);
    const lines = r.err.split('\n');
    const at = lines.findIndex((l) => l.startsWith('  step time: model '));
    expect(lines[at]).toMatch(/median of 1 report, iterations 3-3/);
    expect(lines[at + 1]).toBe("  note: not time data: one iteration after the first 2, one step's time rather than a steady median; a step time needs 3 or more (--train-iters 5 or more)");
    expect(JSON.parse((await run(['replay', log, '--json'])).out).reports[0].notTimeData).toMatch(/^not time data: one iteration after the first 2/);
  });
  it('every flag applies or is refused: model flags on replay need --compare; --csv with --compare writes the points too; an empty --seq-lengths is no list', async () => {
    const log = `${D}/megatron/B-s8192-none.log`;
    const stray = await run(['replay', log, '--num-layers', '8']);
    expect(stray.code).toBe(2);
    expect(stray.err).toMatch(/^flashring replay: --num-layers is a model flag: it applies only with --compare/);
    expect(stray.err.split('\n')).toHaveLength(1);
    const csv = join(dir, 'compared.csv');
    const both = await run(['replay', log, '--compare', '--num-layers', '8', '--hidden-size', '2048', '--num-attention-heads', '16', '--vocab-size', '50257', '--csv', csv]);
    expect(both.code).toBe(0);
    expect(both.out).toContain('OOM verdict');
    expect(readFileSync(csv, 'utf8')).toMatch(/^seq_len,/);
    const empty = await run(['memory', '--preset', 'seed-32L-4096h', '--seq-lengths', '']);
    expect(empty.code).toBe(2);
    expect(empty.err).toMatch(/--seq-lengths/);
  });
  it('bad input: --hbm-gib abc, a file that is no log, a folder: one line each, exit 2', async () => {
    expect((await run(['replay', `${D}/megatron/B-s8192-none.log`, '--hbm-gib', 'abc'])).err).toMatch(/^flashring replay: --hbm-gib must be a positive number of GiB, got 'abc'$/);
    const junk = join(dir, 'junk.txt');
    writeFileSync(junk, 'hello\n');
    const r = await run(['replay', junk]);
    expect(r.code).toBe(2);
    expect((await run(['replay', dir])).code).toBe(2);
  });
  it('a missing file: one line in the words of the other commands (not a raw ENOENT), exit 2, before any file is read', async () => {
    const nope = join(dir, 'nope.log');
    const r = await run(['replay', `${D}/megatron/B-s8192-none.log`, nope]);
    expect([r.code, r.err.trim(), r.out]).toEqual([2, `flashring replay: input file ${nope}: no such file`, '']);
  });
  it('a dump whose world_size is not TP × CP × PP × DP, and iterations of 0.0 ms: a note each, and no +Infinity% step-time error', async () => {
    const log = fx('core_0.16_tp4_cp2_sp_selective.log'), world = join(dir, 'world.log'), zero = join(dir, 'zero.log');
    writeFileSync(world, log.replace(/(world_size \.+) 8$/m, '$1 16'));
    const w = await run(['replay', world]);
    expect(w.code).toBe(0);
    expect(w.err.split('\n')).toContain('  note: world_size 16 is not TP × CP × PP × DP = 4 × 2 × 1 × 1 = 8: Megatron-LM runs exactly that many ranks, ' +
      'so the dump was edited or is of two runs; the point and the prediction use its TP, CP, PP and DP as given (check the log)');
    writeFileSync(zero, log.replace(/elapsed time per iteration \(ms\): [\d.]+/g, 'elapsed time per iteration (ms): 0.0'));
    const z = await run(['replay', zero]);
    expect(z.code).toBe(0);
    expect(z.err).toMatch(/^ {2}note: elapsed time per iteration 0\.0 ms at iterations 1, 2, 3, 4, 5 and 15 more: no step takes no time .*: check the log before trusting its times$/m);
    expect(z.err).toMatch(/^ {2}step time: model [\d.]+ ms; the log's median after the first 2 is 0\.0 ms \(no step takes no time\): no error taken$/m);
    expect(z.err).not.toMatch(/Infinity/);
    // the untouched log: neither note
    const ok = await run(['replay', join(__dirname, 'fixtures/megatron/core_0.16_tp4_cp2_sp_selective.log')]);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.err).toMatch(/^ {2}step time: model [\d.]+ ms, measured [\d.]+ ms /m);
    expect(ok.err).not.toMatch(/world_size|0\.0 ms at iteration/);
  });
  it('a log with 110k memory lines (no stack overflow) and a log cut mid-line (said, not misread)', async () => {
    const args = readFileSync(`${D}/megatron/A-s4096-none.log`, 'utf8').split('\n').filter((l) => !/memory \(MB\)|iteration\s+\d+\//.test(l));
    const mem = Array.from({ length: 110_000 }, (_, k) => `[Rank 0] (after ${k + 1} iterations) memory (MB) | allocated: 1.0 | max allocated: ${k === 5 ? 9999 : 10}.0 | reserved: 1.0 | max reserved: 1.0`);
    const big = join(dir, 'big.log');
    writeFileSync(big, [...args, ...mem].join('\n') + '\n');
    const r = await run(['replay', big, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).points[0].total_gib).toBeCloseTo(9999 / 1024, 6);
    const cut = join(dir, 'cut.log');
    writeFileSync(cut, [...args, ' [2026-12-01 04:08:03] iteration        3/       3 | consumed samples: 3 | elapsed time per iteration (ms): 12'].join('\n'));
    const c = await run(['replay', cut, '--json']);
    expect(c.err).toMatch(/the log ends mid-line: its last line .* is cut off and was not used/);
  });
  const fx = (n: string) => readFileSync(join(__dirname, 'fixtures/megatron', n), 'utf8');
  it('a log of two runs (appended to one file): one point per run, named two.log#1 and #2, not one merged peak', async () => {
    const two = join(dir, 'two.log'), out = join(dir, 'two.csv');
    writeFileSync(two, fx('core_0.16_tp4_cp2_sp_selective.log') + fx('core_0.10_tp4_cp2_sp.log'));
    const r = await run(['replay', two, '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.points.map((p: { total_gib: number }) => p.total_gib.toFixed(4))).toEqual([(58001.5 / 1024).toFixed(4), ((70321.98765 + 300) / 1024).toFixed(4)]);
    expect(j.points.map((p: { source: string }) => p.source)).toEqual([
      `measured: Megatron-LM log ${two}#1 (32L h=4096 a=32; peak max allocated over ranks)`, `measured: Megatron-LM log ${two}#2 (32L h=4096 a=32; peak max allocated over ranks)`]);
    expect(j.reports.map((x: { run: number; startLine: number }) => [x.run, x.startLine])).toEqual([[1, 2], [2, 49]]);
    expect(r.err).toMatch(new RegExp(`^${two.replace(/[.]/g, '\\.')}#1: s=131072 `, 'm'));
    expect((await run(['replay', two, '--csv', out])).code).toBe(0);
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(3);
  });
  const REFUSED: [string, (log: string) => string, RegExp][] = [
    ['an argument repeated with another value', (l) => l.replace(/( {2}seq_length \.+ 131072\n)/, '$1  seq_length ...................................... 4096\n'),
      /line 15: argument seq_length is given twice in one argument dump with different values \('131072' at line 14, '4096' here\)$/],
    ['a dump cut inside a value', (l) => l.split('\n').slice(0, 14).join('\n').replace(/131072$/, '13'),
      /line 2: the argument dump opened here has no '---- end of arguments ----' \(the file ends at line 14\): it is cut off$/],
    ['a negative peak', (l) => l.replace('max allocated: 58000.50', 'max allocated: -58000.50'),
      /line 25: memory max allocated '-58000\.50' is not a non-negative finite number$/],
    ['an infinite peak', (l) => l.replace('max allocated: 58000.50', 'max allocated: 1e400'),
      /line 25: memory max allocated '1e400' is not a non-negative finite number$/],
  ];
  for (const [what, edit, re] of REFUSED)
    it(`a log with ${what}: one line with the file and line number, exit 2, the log unchanged, no --csv written`, async () => {
      const log = join(dir, 'bad.log'), out = join(dir, 'bad-out.csv');
      const text = edit(fx('core_0.16_tp4_cp2_sp_selective.log'));
      writeFileSync(log, text);
      const r = await run(['replay', log, '--csv', out]);
      expect(r.code).toBe(2);
      expect(r.err.split('\n')).toHaveLength(1);
      expect(r.err).toMatch(new RegExp(`^flashring replay: ${log.replace(/[.]/g, '\\.')} ${re.source}`));
      expect(r.err).not.toMatch(/Infinity|NaN/);
      expect(readFileSync(log, 'utf8')).toBe(text);
      expect(existsSync(out)).toBe(false);
    });
  const CSV_REFUSED: [string, string, RegExp][] = [
    ['an unterminated quote', 'seq_len,total_gib,source\n4096,50,"measured: a\n8192,60,b\n', /line 2: a quote opened here is never closed/],
    ['a duplicate header', 'seq_len,total_gib,total_gib\n4096,50,51\n', /line 1: column 'total_gib' is named twice in the header \(columns 2 and 3\)$/],
    ['an empty total_gib without fits (unknown, not an OOM)', 'seq_len,total_gib\n4096,50\n8192,\n', /line 3: total_gib is empty and fits is not given: the row measures nothing/],
  ];
  for (const [what, text, re] of CSV_REFUSED)
    it(`a CSV with ${what}: one line with the file and line number, exit 2, the CSV unchanged, no --csv written`, async () => {
      const csv = join(dir, 'bad-in.csv'), out = join(dir, 'bad-out2.csv');
      writeFileSync(csv, text);
      for (const extra of [['--csv', out], ['--compare', '--preset', 'seed-32L-4096h']]) {
        const r = await run(['replay', csv, ...extra]);
        expect(r.code).toBe(2);
        expect(r.err.split('\n')).toHaveLength(1);
        expect(r.err).toMatch(new RegExp(`^flashring replay: ${csv.replace(/[.]/g, '\\.')} ${re.source}`));
        expect(r.out).not.toMatch(/OOM/);
      }
      expect(readFileSync(csv, 'utf8')).toBe(text);
      expect(existsSync(out)).toBe(false);
    });
});

describe('replay of a file that is not text', () => {
  it('a gzip-compressed log, a UTF-16 CSV, a binary file: refused in one line saying what the file is and what to do (exit 2)', async () => {
    const { gzipSync } = await import('node:zlib');
    const log = readFileSync('test/fixtures/megatron/core_0.4_tp8.log');
    const files: [string, Buffer, RegExp][] = [
      ['run.log.gz', gzipSync(log), /it is gzip-compressed: decompress it first \(gunzip\)/],
      ['run.log', gzipSync(log), /it is gzip-compressed/],   // named as a log, compressed all the same
      ['u16.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('seq_len,total_gib\n4096,10\n', 'utf16le')]), /it is UTF-16 text: save it as UTF-8/],
      ['raw.csv', Buffer.from('seq_len,total_gib\n4096,10\n', 'utf16le'), /it holds NUL bytes/],
    ];
    for (const [name, data, re] of files) {
      const path = join(dir, name);
      writeFileSync(path, data);
      const r = await run(['replay', path]);
      expect([r.code, r.out], name).toEqual([2, '']);
      expect(r.err, name).toMatch(new RegExp(`^flashring replay: ${path.replace(/[.]/g, '\\.')}: ${re.source}.*replay takes Megatron-LM training logs and activation_memory\\.csv files as text$`));
    }
  });
});

describe("--torch-optimizer: torch.optim.AdamW's step, from the flag or from a log's 'Falling back to Torch optimizers'", () => {
  const R00 = 'bench/results/2026-12-06-time-heldout8/runs/r00.log';
  // r00's own arguments as flashring memory's flags (its log's command line), without the optimizer
  const FLAGS = ['--num-layers', '3', '--hidden-size', '3072', '--num-attention-heads', '24', '--ffn-hidden-size', '12288', '--seq-length', '2048',
    '--max-position-embeddings', '2048', '--vocab-size', '56820', '--micro-batch-size', '1', '--attention-dropout', '0.0', '--hidden-dropout', '0.0',
    '--normalization', 'RMSNorm', '--num-query-groups', '2', '--untie-embeddings-and-output-weights', '--recompute-granularity', 'full',
    '--recompute-method', 'uniform', '--recompute-num-layers', '1', '--transformer-impl', 'local', '--global-batch-size', '3'];
  it('replay reads it from the log (r00 of the eighth draw: −0.0%, not −11.4%); --compare without the flag names it, with it agrees', async () => {
    expect((await run(['replay', R00])).err).toMatch(/peak max allocated 13\.44 GiB \| model 13\.43 GiB \(-0\.0%\)/);
    const without = await run(['replay', R00, '--compare', ...FLAGS]);
    expect(without.out).toMatch(/\| 13\.4 \| 11\.9 \| -11\.4% \|/);
    expect(without.out + without.err).toMatch(/with --torch-optimizer \(compared: no --torch-optimizer\)/);
    const withIt = await run(['replay', R00, '--compare', ...FLAGS, '--torch-optimizer']);
    expect(withIt.out).toMatch(/\| 13\.4 \| 13\.4 \| -0\.0% \|/);
    // the temporary in its own column, not in the activations' (those as without it)
    expect(withIt.out).toMatch(/\| model activation GiB \| error \| model optimizer step GiB \| OOM verdict \|/);
    expect(withIt.out).toMatch(/\| 13\.4 \| 13\.4 \| -0\.0% \|  \| 1\.1 \|  \| 2\.4 \| right \|/);
    expect(without.out).toMatch(/\| 13\.4 \| 11\.9 \| -11\.4% \|  \| 1\.1 \|  \| 0\.0 \| right \|/);
    expect(withIt.out + withIt.err).not.toMatch(/another setup/);
  });
  it('memory and memory --sweep count it as the peak where the flag is given', async () => {
    const json = async (extra: string[]) => JSON.parse((await run(['memory', ...FLAGS.slice(0, -2), '--json', ...extra])).out);
    const [off, on] = [await json([]), await json(['--torch-optimizer'])];
    expect(on.peakTransient.name).toMatch(/^optimizer step: torch\.optim\.AdamW's foreach temporary/);
    expect(on.peakTransient.bytes).toBe(4 * (on.parametersPerGpu - 87_552));   // r00's weight-decayed parameters (test/memory-terms.test.ts)
    expect(on.totalBytes - off.totalBytes).toBeGreaterThan(1.5e9);
    // the sweep's line (its own sequence and recompute): r00's, as the CSV says it
    const sweep = async (extra: string[]) => {
      const r = await run(['memory', ...FLAGS.slice(0, 6), '--vocab-size', '56820', '--micro-batch-size', '1', '--sweep', '--seq-lengths', '2048', '--lines', '1:full:uniform/1', '--csv', join(dir, `opt${extra.length}.csv`), '--force', ...extra]);
      expect(r.code, r.err).toBe(0);
      return Number(readFileSync(join(dir, `opt${extra.length}.csv`), 'utf8').split('\n')[1].split(',')[8]);
    };
    expect(await sweep(['--torch-optimizer'])).toBeGreaterThan((await sweep([])) + 1);
  });
});
