/**
 * `flashring advise` when nothing fits: after the verdict, what would fit, each change found by the same
 * search run again, and checked here by advise itself at that value (it fits: exit 0, the same count and
 * fastest layout) and, for the HBM, just below it (nothing fits: exit 3).
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { GIB } from '../src/memory/model.js';
import { fewestGpus, gpusRefusal, moreGpus, notWholeNodes, shorterSequences, takesGpus, wouldFitLines, type WouldFit } from '../src/memory/adviseForward.js';
import { type AdviseRequest, type AdviseResult, type Candidate } from '../src/memory/advise.js';
import { CLI_WORDS } from '../src/cli/advise.js';
import { PAGE_WORDS } from '../web/advise.js';
import { configFromFlags } from '../src/cli/memory.js';
import { resolveLink } from '../src/cp/plan/linkModel.js';

const run = (args: string[]) => spawnSync('node', ['bin/flashring.mjs', 'advise', ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
const json = (args: string[]) => {
  const r = run([...args, '--json']);
  return { status: r.status, o: JSON.parse(r.stdout) };
};
// Llama-3 8B at 128K on two H200s: its smallest layout (the last pipeline stage's logits) needs more than 90% of 139.8 GiB.
const MODEL = ['--preset', 'llama3-8b', '--seq-length', '131072'], LLAMA = [...MODEL, '--hbm-gib', '139.8'];
const layout = (c: Record<string, unknown>) => ({ tp: c.tp, cp: c.cp, cpCommType: c.cpCommType, pp: c.pp, vp: c.vp, dp: c.dp, recompute: c.recompute, distributedOptimizer: c.distributedOptimizer });

describe('advise: what would fit when nothing does', () => {
  const r = run([...LLAMA, '--gpus', '2']), { status, o } = json([...LLAMA, '--gpus', '2']), w = o.wouldFit;

  it('the verdict, then one line for each change searched, the same in the text and --json', () => {
    expect([r.status, status]).toEqual([3, 3]);
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(-4)).toEqual(w.lines);
    expect(lines.at(-5)).toBe(o.nothingFits);
    expect(w.lines[0]).toBe('what would fit (the same search again, one thing changed):');
    expect(w.lines[1]).toMatch(/^ {2}HBM: 146\.1 GiB a GPU \(the smallest layout's 131\.4 GiB, fits ≤ 90%\): 1 layout fits, TP=2 CP=1 PP=1 DP=1 recompute=full:uniform\/1 \(\d+ ms\/step, 131\.4 GiB\)$/);
    expect(w.lines[2]).toMatch(/^ {2}GPUs: 4, the fewest that fits of those searched \(doubling from 2: 4; between 2 and 4, each count in turn: 3; global batch 4 sequences, one sequence a GPU\): \d+ layouts fit, the fastest TP=/);
    expect(w.lines[3]).toMatch(/^ {2}sequence: 65536 tokens on these GPUs \(halving from 131072: 65536\): \d+ layouts fit, the fastest TP=/);
  });

  it('the HBM is the least (to 0.1 GiB) at which advise finds a layout: at it one fits, 0.1 GiB less none does', () => {
    expect(w.hbmGib.at).toBe(Math.ceil((10 * o.smallest.totalBytes) / GIB / 0.9) / 10);
    const at = json([...MODEL, '--gpus', '2', '--hbm-gib', `${w.hbmGib.at}`]);
    expect([at.status, at.o.candidates.length]).toEqual([0, w.hbmGib.layouts]);
    expect(layout(at.o.candidates[0])).toEqual(layout(w.hbmGib.fastest));
    expect(run([...MODEL, '--gpus', '2', '--hbm-gib', `${(w.hbmGib.at - 0.1).toFixed(1)}`]).status).toBe(3);
  });

  it('more GPUs and a shorter sequence: advise run at that value keeps the same layouts, the fastest first', () => {
    const g = json([...LLAMA, '--gpus', `${w.gpus.at}`]);
    expect([g.status, g.o.globalBatchSize, g.o.candidates.length]).toEqual([0, w.gpus.globalBatch, w.gpus.layouts]);
    expect(g.o.candidates[0]).toMatchObject({ ...layout(w.gpus.fastest), iterMs: w.gpus.fastest.iterMs, totalBytes: w.gpus.fastest.totalBytes });
    const s = json([...LLAMA.map((a) => (a === '131072' ? `${w.seqLength.at}` : a)), '--gpus', '2']);
    expect([s.status, s.o.candidates.length]).toEqual([0, w.seqLength.layouts]);
    expect(s.o.candidates[0]).toMatchObject({ ...layout(w.seqLength.fastest), iterMs: w.seqLength.fastest.iterMs });
  });

  it('a global batch given is kept on more GPUs (the default, one sequence a GPU, grows with them)', () => {
    const b = json([...LLAMA, '--gpus', '2', '--global-batch-size', '8']).o.wouldFit.gpus;
    expect([b.at, b.globalBatch]).toEqual([4, 8]);
    expect(w.gpus.globalBatch).toBe(4);
  });

  it('where no change searched helps, it says how far each went; with no layout at all, no HBM line', () => {
    // Three heads and three layers on 2 GPUs with one sequence a step and unfused attention: no TP, PP, CP or DP divides it.
    const x = run(['--num-layers', '3', '--hidden-size', '96', '--num-attention-heads', '3', '--seq-length', '4096', '--gpus', '2', '--global-batch-size', '1', '--transformer-impl', 'local']);
    expect(x.status).toBe(3);
    expect(x.stdout.trim().split('\n').slice(-4)).toEqual([
      expect.stringMatching(/^no layout of these GPUs can run this model/),
      'what would fit (the same search again, one thing changed):',
      '  GPUs: nothing fits on up to 128 (doubling from 2: 4, 8, 16, 32, 64, 128)',
      '  sequence: nothing fits on these GPUs down to 64 tokens (halving from 4096: 2048, 1024, 512, 256, 128, 64)',
    ]);
  });

  it("each front end words the lines itself: the CLI its flag and whole ms a step (as all its step times), the page its field and its duration", () => {
    const { model, par } = configFromFlags({ preset: 'llama3-8b', 'seq-length': '131072' });
    const r: AdviseRequest = { model, base: par, gpus: 65536, hbmGib: 80, margin: 0.1, gbs: 65536, link: resolveLink('nvlink-h200') };
    // A layout of an 82.8 s step (made up: the words are what is tested, not the search).
    const c = { tp: 8, sp: true, cp: 1, cpCommType: null, pp: 1, vp: 1, dp: 8192, recompute: 'none', distributedOptimizer: false, iterMs: 82800, totalBytes: 90 * GIB } as Candidate;
    const res = { all: 1, fitting: [], smallest: { c, bytes: c.totalBytes }, untrainable: [], skipped: [] } as AdviseResult;
    const none = { tried: [], at: null, layouts: 0, fastest: null, globalBatch: null };
    const w: WouldFit = { hbmGib: { tried: [100], at: 100, layouts: 1, fastest: c, globalBatch: 65536 }, gpus: { ...none, between: null }, seqLength: { ...none, tried: [65536], at: 65536, layouts: 1, fastest: c } };
    const cli = wouldFitLines(r, res, w, true, CLI_WORDS), page = wouldFitLines(r, res, w, true, PAGE_WORDS);
    expect(cli[1]).toBe("  HBM: 100 GiB a GPU (the smallest layout's 90.0 GiB, fits ≤ 90%): 1 layout fits, TP=8 CP=1 PP=1 DP=8192 recompute=none (82800 ms/step, 90.0 GiB)");
    expect(page[1]).toBe("  HBM: 100 GiB a GPU (the smallest layout's 90.0 GiB, fits ≤ 90%): 1 layout fits, TP=8 CP=1 PP=1 DP=8192 recompute=none (82.8 s/step, 90.0 GiB)");
    expect(cli[2]).toBe('  GPUs: none searched (--gpus 65536 is as many as advise takes)');
    expect(page[2]).toBe('  GPUs: none searched (65,536 GPUs is as many as the advisor takes)');
    expect(page[3]).toMatch(/\(82\.8 s\/step, 90\.0 GiB\)$/);
    expect(page.join('\n')).not.toMatch(/--|ms\/step/);
  });

  it('no GPU count searched below the most advise takes: the line says doubling passes it, never that the request is the most', () => {
    const { model, par } = configFromFlags({ preset: 'llama3-8b', 'seq-length': '131072' });
    const r: AdviseRequest = { model, base: par, gpus: 40000, hbmGib: 80, margin: 0.1, gbs: 40000, link: resolveLink('nvlink-h200') };
    expect(moreGpus(40000, 8)).toEqual([65536]);   // the most advise takes is the last step where a double passes it
    expect(moreGpus(24576, 8)).toEqual([49152, 65536]);
    expect(moreGpus(65532, 6)).toEqual([]);   // 65532 is the most in whole nodes of 6
    const res = { all: 1, fitting: [], smallest: null, untrainable: [], skipped: [] } as AdviseResult;
    const none = { tried: [], at: null, layouts: 0, fastest: null, globalBatch: null };
    const w: WouldFit = { hbmGib: null, gpus: { ...none, between: null }, seqLength: none };
    const most = { ...r, gpus: 65532, gpusPerNode: 6 };
    expect(wouldFitLines(most, res, w, true, CLI_WORDS)[1]).toBe('  GPUs: none searched (twice 65532 is past the most: --gpus 65536 is as many as advise takes)');
    expect(wouldFitLines(most, res, w, true, PAGE_WORDS)[1]).toBe('  GPUs: none searched (twice 65532 is past the most: 65,536 GPUs is as many as the advisor takes)');
    // No count above the request's that advise takes (an EP of 40000: its next multiple is past 65536): none searched, and the line says why.
    const ep = { ...r, gpus: 40000, gpusPerNode: 8, base: { ...r.base, expertParallel: 40000 } };
    expect(moreGpus(40000, 8, (n) => takesGpus({ ...ep, gpus: n, gbs: n }))).toEqual([]);
    expect(wouldFitLines(ep, res, w, true, CLI_WORDS)[1]).toBe('  GPUs: none searched (advise takes no count above 40000 up to 65536: each must be whole nodes, a multiple of the EP 40000 and of whole micro batches of 1)');
    // The page names the advisor as its other lines do, never the command.
    expect(wouldFitLines(ep, res, w, true, PAGE_WORDS)[1]).toBe('  GPUs: none searched (the advisor takes no count above 40000 up to 65536: each must be whole nodes, a multiple of the EP 40000 and of whole micro batches of 1)');
    for (const q of [most, ep]) expect(wouldFitLines(q, res, w, true, PAGE_WORDS).join('\n')).not.toMatch(/\badvise takes/);
  });

  it('gpusRefusal: why advise does not take a GPU count, the first reason in the order the CLI checks its flags, with its data; takesGpus is its null', () => {
    const q = (gpus: number, gbs: number, microBatchSize: number, expertParallel: number) => ({ gpus, gpusPerNode: 8, gbs, base: { microBatchSize, expertParallel } });
    expect(gpusRefusal(q(65544, 65544, 1, 1))).toEqual({ why: 'too-many', most: 65536 });
    expect(gpusRefusal(q(12, 13, 2, 5))).toEqual({ why: 'whole-nodes', perNode: 8, below: 8, above: 16 });
    expect(gpusRefusal(q(6, 3, 2, 5))).toEqual({ why: 'micro-batch', gbs: 3, micro: 2 });
    expect(gpusRefusal(q(16, 2.5, 1, 1))).toEqual({ why: 'micro-batch', gbs: 2.5, micro: 1 });
    expect(gpusRefusal(q(16, 32, 2, 3))).toEqual({ why: 'expert-parallel', ep: 3 });
    expect(gpusRefusal(q(6, 6, 2, 3))).toBeNull();   // one node: any count up to a node's GPUs
    expect([notWholeNodes(8, 8), notWholeNodes(24, 8), notWholeNodes(65536, 6)]).toEqual([null, null, { why: 'whole-nodes', perNode: 6, below: 65532, above: 65538 }]);
    const { model, par } = configFromFlags({ preset: 'llama3-8b', 'seq-length': '4096' });
    const r: AdviseRequest = { model, base: par, gpus: 24, hbmGib: 80, margin: 0.1, gbs: 24, link: resolveLink('nvlink-h200') };
    expect([takesGpus(r), takesGpus({ ...r, gpus: 12 }), takesGpus({ ...r, base: { ...par, expertParallel: 16 } })]).toEqual([true, false, false]);
  });

  it("--help says how the counts between the doublings are searched: every one up to 7, else up to 7 of them, evenly spaced (not 'else at most 7')", () => {
    const help = run(['--help']).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('every one where there are at most 7, else up to 7 of them, evenly spaced, then narrowed around the first that fits');
    expect(help).not.toMatch(/at most 7, else at most 7/);
  });

  it('more GPUs: the fewest that fits, a count between two doublings where one fits there (3 GPUs of 2, 4; 24 of 16, 32), not the doubling above', () => {
    // 24 heads, 24 layers, 3 × 32768 tokens: TP, PP or CP = 3 divide it. At 40 GiB 2 GPUs peak over 36 GiB, 3 under.
    const M = ['--num-layers', '24', '--hidden-size', '3072', '--num-attention-heads', '24'], at98 = [...M, '--seq-length', '98304', '--hbm-gib', '40'];
    const a = json([...at98, '--gpus', '2']);
    expect(a.status).toBe(3);
    expect(a.o.wouldFit.gpus).toMatchObject({ tried: [4], at: 3, globalBatch: 3, between: { from: 2, to: 4, counts: 1, searched: [3], notSearched: 0 } });
    expect(a.o.wouldFit.lines[2]).toMatch(/^ {2}GPUs: 3, the fewest that fits of those searched \(doubling from 2: 4; between 2 and 4, each count in turn: 3; global batch 3 sequences, one sequence a GPU\): 1 layout fits, TP=3 /);
    // advise itself at 3 GPUs: that layout fits (exit 0).
    const three = json([...at98, '--gpus', '3']);
    expect([three.status, three.o.candidates.length]).toEqual([0, a.o.wouldFit.gpus.layouts]);
    expect(layout(three.o.candidates[0])).toEqual(layout(a.o.wouldFit.gpus.fastest));
    // Beyond one node only whole nodes are counts advise takes: 8 GPUs of 8 a node, 8× the sequence at 25 GiB: 16 does not fit, 32 does, and 24 is the fewest.
    // RoPE: a learned table of 786432 positions (2.4 B parameters) is whole on every TP rank and fits nowhere here.
    const R = [...M, '--position-embedding-type', 'rope', '--seq-length', '786432', '--hbm-gib', '25'];
    const b = json([...R, '--gpus', '8']);
    expect(b.o.wouldFit.gpus).toMatchObject({ tried: [16, 32], at: 24, between: { from: 16, to: 32, counts: 1, searched: [24], notSearched: 0 } });
    const b24 = json([...R, '--gpus', '24']);
    expect([b24.status, b24.o.candidates.length, layout(b24.o.candidates[0])]).toEqual([0, b.o.wouldFit.gpus.layouts, layout(b.o.wouldFit.gpus.fastest)]);
  });

  it('more GPUs: a count advise refuses is not searched (one sequence a GPU of micro batches of 2: 3 GPUs is no whole micro batch)', () => {
    const M = ['--num-layers', '24', '--hidden-size', '3072', '--num-attention-heads', '24', '--seq-length', '98304', '--hbm-gib', '70', '--micro-batch-size', '2'];
    const { status, o } = json([...M, '--gpus', '2']);
    expect(status).toBe(3);
    expect(o.wouldFit.gpus).toMatchObject({ tried: [4], at: 4, between: { from: 2, to: 4, counts: 0, searched: [], notSearched: 0 } });
    expect(o.wouldFit.lines[2]).toMatch(/^ {2}GPUs: 4, the fewest that fits of those searched \(doubling from 2: 4; none to search between 2 and 4; global batch 4 sequences/);
    expect(run([...M, '--gpus', '3']).status).toBe(2);
  });

  it('more GPUs with an EP that some doublings are no multiple of: those are rounded up to counts advise takes, so the search goes on past them (it stopped at 6 GPUs, saying nothing fits)', () => {
    // Llama-3 70B with 6 experts over EP 3 at 8K on 3 GPUs: 8 and 16 GPUs are no multiples of 3; 96 GPUs fit.
    const args = ['--preset', 'llama3-70b', '--num-experts', '6', '--expert-model-parallel-size', '3', '--seq-length', '8192'];
    const { status, o } = json([...args, '--gpus', '3']);
    expect(status).toBe(3);
    expect(o.wouldFit.gpus).toMatchObject({ tried: [6, 24, 48, 96], at: 96, between: { from: 48, to: 96, counts: 1, searched: [72] } });
    expect(o.wouldFit.lines[2]).toMatch(/^ {2}GPUs: 96, the fewest that fits of those searched \(doubling from 3, each rounded up to a count advise takes: 6, 24, 48, 96; between 48 and 96, each count in turn: 72; /);
    const at = json([...args, '--gpus', '96']);
    expect([at.status, at.o.candidates.length, layout(at.o.candidates[0])]).toEqual([0, o.wouldFit.gpus.layouts, layout(o.wouldFit.gpus.fastest)]);
  });

  it('the searches go in steps, one whole search a step (the page without a worker handles its events between them)', () => {
    const { model, par } = configFromFlags({ preset: 'llama3-8b', 'seq-length': '131072' });
    const r: AdviseRequest = { model, base: par, gpus: 2, hbmGib: 139.8, margin: 0.1, gbs: 2, link: resolveLink('nvlink-h200') };
    const steps = fewestGpus(r, true);
    let yields = 0, x = steps.next();
    for (; !x.done; x = steps.next()) yields++;
    // 4 (the doubling that fits), then 3 (between 2 and 4): two searches, two steps.
    expect(x.value).toMatchObject({ tried: [4], at: 4, between: { searched: [3] } });
    expect(yields).toBe(2);
  });

  it('the GPUs line says what was searched between the doublings: each count in turn, how many of how many, or none', () => {
    const { model, par } = configFromFlags({ preset: 'llama3-8b', 'seq-length': '131072' });
    const r: AdviseRequest = { model, base: par, gpus: 1024, hbmGib: 80, margin: 0.1, gbs: 1024, link: resolveLink('nvlink-h200') };
    const c = { tp: 8, sp: true, cp: 1, cpCommType: null, pp: 1, vp: 1, dp: 8192, recompute: 'none', distributedOptimizer: false, iterMs: 900, totalBytes: 70 * GIB } as Candidate;
    const res = { all: 1, fitting: [], smallest: null, untrainable: [], skipped: [] } as AdviseResult;
    const none = { tried: [], at: null, layouts: 0, fastest: null, globalBatch: null };
    const gpus = (at: number, between: WouldFit['gpus']['between']) =>
      wouldFitLines(r, res, { hbmGib: null, seqLength: none, gpus: { tried: [2048, 4096], at, layouts: 2, fastest: c, globalBatch: at, between } }, true, CLI_WORDS)[1];
    // (made up: the line is what is tested, not the search)
    expect(gpus(3072, { from: 2048, to: 4096, counts: 255, searched: [2560, 3072, 2304, 2816], notSearched: 124 }))
      .toBe('  GPUs: 3072, the fewest that fits of those searched (doubling from 1024: 2048, 4096; between 2048 and 4096, 4 of its 255 counts: 2304, 2560, 2816, 3072; global batch 3072 sequences, one sequence a GPU): 2 layouts fit, the fastest TP=8 CP=1 PP=1 DP=8192 recompute=none (900 ms/step, 70.0 GiB)');
    expect(gpus(2064, { from: 2048, to: 4096, counts: 255, searched: [2056, 2064], notSearched: 0 })).toContain(' (doubling from 1024: 2048, 4096; between 2048 and 4096, each count up to 2064 in turn: 2056, 2064; ');
    expect(gpus(4096, { from: 2048, to: 4096, counts: 2, searched: [2560, 3072], notSearched: 0 })).toContain(' (doubling from 1024: 2048, 4096; between 2048 and 4096, each count in turn: 2560, 3072; ');
    expect(gpus(4096, { from: 2048, to: 4096, counts: 0, searched: [], notSearched: 0 })).toContain(' (doubling from 1024: 2048, 4096; none to search between 2048 and 4096; ');
  });

  it('the values searched: GPUs doubling (a whole node where a double is past it), at most 64× and 65536; the sequence halving while whole, at most 6 times', () => {
    expect(moreGpus(2, 8)).toEqual([4, 8, 16, 32, 64, 128]);
    expect(moreGpus(6, 8)).toEqual([8, 16, 32, 64, 128, 256]);
    expect(moreGpus(3, 8)).toEqual([6, 8, 16, 32, 64, 128]);
    expect(moreGpus(12, 4)).toEqual([24, 48, 96, 192, 384, 768]);
    expect(moreGpus(16384, 8)).toEqual([32768, 65536]);
    expect(moreGpus(65536, 8)).toEqual([]);
    // A doubling advise does not take is rounded up to the next count it does (EP 3 on nodes of 8: 8 and 16 are not
    // multiples of 3, 24 is), not dropped: dropping them ended the search at 6.
    const ep3 = (n: number) => n % 3 === 0 && (n <= 8 || n % 8 === 0);
    expect(moreGpus(3, 8, ep3)).toEqual([6, 24, 48, 96, 192, 384]);
    expect(moreGpus(40000, 8, ep3)).toEqual([65520]);   // the most advise takes: whole nodes, a multiple of 3
    expect(shorterSequences(131072)).toEqual([65536, 32768, 16384, 8192, 4096, 2048]);
    expect(shorterSequences(24)).toEqual([12, 6, 3]);
    expect(shorterSequences(1)).toEqual([]);
  });
});
