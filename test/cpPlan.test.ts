/** `flashring cp-plan`: flags, bad input as one line with exit 2, and the JSON it prints. */
import { describe, expect, it, vi } from 'vitest';
import { flashring } from './cli-run.js';
import { CPU_RATE_NOTE, parseCpPlan, planSchemes } from '../src/cli/cpPlan.js';
import { InputError } from '../src/errors.js';
import { RingArgs, checkRingArgs } from '../src/cli/ringArgs.js';

const cli = flashring('cp-plan');

const base = { 'context-parallel-size': '4', 'seq-length': '8192', 'num-attention-heads': '16', 'hidden-size': '2048', causal: true };

describe('flashring cp-plan', () => {
  it('--tensor-model-parallel-size plans one GPU\'s heads (H/T, G/T) as the page does; causal by default, as the page', async () => {
    const { causal: _, ...plain } = base;
    const tp = parseCpPlan({ ...plain, 'tensor-model-parallel-size': '4', 'num-query-groups': '8', 'compute-tflops': '200' });
    expect(tp.shape).toEqual({ B: 1, Hq: 4, Hkv: 2, Nq: 8192, Nk: 8192, D: 128 });
    expect(tp.causal).toBe(true);
    expect(parseCpPlan({ ...plain, 'no-causal': true }).causal).toBe(false);
    // the same GPU's work as 4 heads without TP: the same plan
    const direct = parseCpPlan({ ...plain, 'num-attention-heads': '4', 'hidden-size': '512', 'num-query-groups': '2', 'compute-tflops': '200' });
    expect((await planSchemes(tp, 200)).map((p) => p.predicted)).toEqual((await planSchemes(direct, 200)).map((p) => p.predicted));
    expect(() => parseCpPlan({ ...plain, 'tensor-model-parallel-size': '3' })).toThrow(/--tensor-model-parallel-size 3 must divide the heads \(16\)/);
    // A plan's cost grows with a GPU's heads: at most 4096 (H/T), up front; the micro batch is scaled, not bounded so.
    expect(() => parseCpPlan({ ...plain, 'num-attention-heads': '8192', 'hidden-size': String(8192 * 64) })).toThrow(/cp-plan plans at most 4096 query heads a GPU .*got 8192: give fewer heads or a larger --tensor-model-parallel-size/);
    expect(parseCpPlan({ ...plain, 'num-attention-heads': '8192', 'hidden-size': String(8192 * 64), 'tensor-model-parallel-size': '2' }).shape.Hq).toBe(4096);
    expect(() => parseCpPlan({ ...plain, 'tensor-model-parallel-size': '4', 'num-query-groups': '2' })).toThrow(/K\/V heads \(2\)/);
    expect(() => parseCpPlan({ ...base, 'no-causal': true })).toThrow(/contradict/);
    // hierarchical sizes mean something only for a2a+p2p: refused with another scheme, not ignored
    expect(() => parseCpPlan({ ...base, 'cp-comm-type': 'p2p', 'hierarchical-context-parallel-sizes': '2,2' })).toThrow(/applies only to --cp-comm-type a2a\+p2p \(this run is p2p\)/);
    const shape = { B: 1, Hq: 4, Hkv: 4, Nq: 64, Nk: 64, D: 16 };
    expect(() => checkRingArgs({ R: 4, layout: 'zigzag', scheme: 'a2a', hierarchicalSizes: '2,2', mode: 'one-device' }, shape)).toThrow(/applies only to --cp-comm-type a2a\+p2p \(this run is a2a\)/);
    expect(checkRingArgs({ R: 4, layout: 'zigzag', scheme: 'a2a+p2p', hierarchicalSizes: '2,2', mode: 'one-device' }, shape).hierarchicalSizes).toBe('2,2');
  });

  it('the table lines up whatever its figures: a rate of 1e-6 TFLOP/s (its 10-character cell pushed the column past its header) and one of hundreds', async () => {
    for (const rate of ['0.000001', '400']) {
      const r = await cli(['--context-parallel-size', '4', '--seq-length', '4096', '--heads', '8', '--head-dim', '64', '--compute-tflops', rate]);
      expect(r.code, r.err).toBe(0);
      const lines = r.out.split('\n');
      const head = lines.findIndex((l) => l.startsWith('scheme ')), table = lines.slice(head, head + 5);
      expect(table[0]).toMatch(/^scheme +sizes +forward\(ms\) +backward\(ms\) +comm% +TFLOP\/s per GPU +attention buffers per rank$/);
      // Each row as long as the header, and its TFLOP/s ending where the header's does (numbers padded on the left).
      const end = table[0].indexOf('TFLOP/s per GPU') + 'TFLOP/s per GPU'.length;
      for (const row of table.slice(1)) {
        expect(row.length, row).toBe(table[0].length);
        expect(row.slice(0, end), row).toMatch(rate === '400' ? / \d{3}$/ : / 0\.000001$/);
      }
    }
  });

  it('--cp 1 --cp-mode multi-adapter runs as one-device (one rank is one device), with a note; processes and R > 1 keep their mode', () => {
    const shape = { B: 1, Hq: 4, Hkv: 4, Nq: 64, Nk: 64, D: 16 };
    const notes: string[] = [];
    const err = vi.spyOn(console, 'error').mockImplementation((...a) => void notes.push(a.join(' ')));
    try {
      const ring = (R: number, mode: RingArgs['mode']) => checkRingArgs({ R, layout: 'zigzag', scheme: 'p2p', mode }, shape).mode;
      expect(ring(1, 'multi-adapter')).toBe('one-device');
      expect(notes).toEqual(['note: --cp 1 is one rank on one device (no ring, nothing sent): it runs as --cp-mode one-device, not multi-adapter']);
      expect([ring(1, 'one-device'), ring(1, 'processes'), ring(2, 'multi-adapter')]).toEqual(['one-device', 'processes', 'multi-adapter']);
      expect(notes).toHaveLength(1);
    } finally {
      err.mockRestore();
    }
  });

  it('reads Megatron-LM shape flags and plans every scheme the shape allows', async () => {
    const req = parseCpPlan({ ...base, 'compute-tflops': '200' });
    expect(req.shape).toEqual({ B: 1, Hq: 16, Hkv: 16, Nq: 8192, Nk: 8192, D: 128 });
    // a2a+p2p without sizes: the largest a2a group below R that divides the heads (as the page).
    expect(req.schemes).toEqual(['p2p', 'all_gather', 'a2a', 'a2a+p2p']);
    expect([req.sizes, req.sizesChosen]).toEqual(['2,2', true]);
    const plans = await planSchemes(req, 200);
    for (const p of plans) {
      expect(p.predicted.tflopsPerGpu).toBeGreaterThan(0);
      expect(p.predicted.tflopsPerGpu).toBeLessThanOrEqual(200 + 1e-9);
      expect(p.predicted.commFraction).toBeGreaterThanOrEqual(0);
      expect(p.predicted.commFraction).toBeLessThan(1);
    }
    // A slower link can only add exposed communication.
    const slow = await planSchemes(parseCpPlan({ ...base, link: 'custom', 'link-gbps': '1', 'link-latency-us': '100' }), 200);
    slow.forEach((p, i) => expect(p.predicted.commFraction).toBeGreaterThan(plans[i].predicted.commFraction));
    expect(parseCpPlan({ ...base, 'hierarchical-context-parallel-sizes': '2,2' })).toMatchObject({ sizes: '2,2', sizesChosen: false });
    // A scheme the heads cannot take is not planned, and says why; a2a+p2p takes groups of 4.
    const gqa = parseCpPlan({ ...base, 'context-parallel-size': '8', 'num-query-groups': '4' });
    expect(gqa.schemes).toEqual(['p2p', 'all_gather', 'a2a+p2p']);
    expect(gqa.sizes).toBe('4,2');
    expect(gqa.skipped.map((x) => x.scheme)).toEqual(['a2a']);
    expect(gqa.skipped[0].reason).toMatch(/key\/value heads \(4\)/);
    // No group between 1 and R: not planned, with why.
    const two = parseCpPlan({ ...base, 'context-parallel-size': '2' });
    expect(two.skipped).toEqual([{ scheme: 'a2a+p2p', reason: expect.stringMatching(/at R = 2 there is none\. --hierarchical-context-parallel-sizes 1,2 \(the same as --cp-comm-type p2p\)( or 2,1 \(the same as a2a\))? runs it anyway/) }]);
    // One rank: 1,1 is both p2p and a2a, offered once (not '1,1 (… p2p) or 1,1 (… a2a)').
    const one = parseCpPlan({ ...base, 'context-parallel-size': '1' }).skipped[0].reason;
    expect(one).toMatch(/at R = 1 there is none\. --hierarchical-context-parallel-sizes 1,1 \(one rank: the same as p2p and a2a\) runs it anyway;/);
    expect(one.match(/1,1/g)).toHaveLength(1);
  });

  it('plans the bytes of the precision asked: p2p moves (R−1)·2·Hkv·(N/R)·D·(2 bytes f16, 4 f32) per rank forward', async () => {
    // A link of 1 byte per ms without latency, and compute ~1e-9 ms a step: a step's time is the bytes its ranks
    // move (every rank moves the same under zigzag at an even N). R = 4, N = 1024, Hkv = 4, D = 64.
    const flags = { 'context-parallel-size': '4', 'seq-length': '1024', heads: '8', 'num-query-groups': '4', 'head-dim': '64', causal: true,
      'cp-comm-type': 'p2p', link: 'custom', 'link-gbps': '8e-6', 'link-latency-us': '0' };
    const forwardMs = (p: { predicted: { phases: { phase: string; stepMs: number[] }[] } }) => p.predicted.phases.find((x) => x.phase === 'forward')!.stepMs.reduce((a, b) => a + b, 0);
    const f16 = parseCpPlan(flags), f32 = parseCpPlan({ ...flags, precision: 'f32' });
    expect([f16.precision, f32.precision]).toEqual(['f16', 'f32']); // f16 by default
    const [p16] = await planSchemes(f16, 1e9), [p32] = await planSchemes(f32, 1e9);
    // (4 − 1) steps of K and V: 3 · 2 · 4 · 256 · 64 · 2 bytes = 786432 in f16, twice that in f32.
    expect(forwardMs(p16)).toBeCloseTo(3 * 2 * 4 * 256 * 64 * 2, 3);
    expect(forwardMs(p32)).toBeCloseTo(3 * 2 * 4 * 256 * 64 * 4, 3);
    // The rank's own buffers (Q, K, V, O, the K/V in flight, gradients) are held in the precision too.
    expect(p16.rankPeakBytes).toBeLessThan(p32.rankPeakBytes);
    expect(p16.rankPeakBytes).toBeGreaterThan(0.5 * p32.rankPeakBytes - 1);
  });

  it('bad input is an InputError naming it', () => {
    const bad: [Record<string, string | boolean>, RegExp][] = [
      [{ link: 'tin-can' }, /unknown link 'tin-can'/],
      [{ link: 'custom', 'link-gbps': '-5', 'link-latency-us': '1' }, /^--link-gbps must be from 0\.000001 to 1000000 \(Gbit\/s per direction: 1 kbit\/s to 1 Pbit\/s\), got '-5'$/],
      [{ link: 'custom', 'link-latency-us': '1' }, /^--link custom needs --link-gbps, from 0\.000001 to 1000000 \(Gbit\/s per direction: 1 kbit\/s to 1 Pbit\/s\): none given$/],
      [{ 'link-gbps': '100' }, /describe --link custom/],
      [{ 'cp-comm-type': 'a2a', 'num-attention-heads': '6', 'hidden-size': '768' }, /divisible by 4/],
      [{ 'cp-comm-type': 'a2a+p2p', 'hierarchical-context-parallel-sizes': '2,4' }, /multiply to 8/],
      [{ 'cp-comm-type': 'ring' }, /unknown cp-comm-type 'ring'/],
      [{ 'compute-tflops': '0' }, /--compute-tflops must be from 0\.000001 to 10000000/],
      // K/V heads that do not divide the heads: named by their flag (it came from the kernels' shape check, 'key/value heads (64)').
      [{ 'num-query-groups': '64' }, /^--num-query-groups 64 must divide the heads \(16\): each K\/V head serves a whole group of query heads$/],
      [{ 'compute-tflops': '1e-300' }, /--compute-tflops must be from 0\.000001 to 10000000 \(TFLOP\/s a GPU\), got '1e-300'/],
      [{ 'context-parallel-size': 'x' }, /--context-parallel-size must be a positive integer up to 2\^31, got 'x'/],
      [{ 'context-parallel-size': '0x4' }, /--context-parallel-size must be a positive integer/],
      [{ 'seq-length': '1e300' }, /--seq-length must be a positive integer up to 2\^31, got '1e300'/],
      // Past the kernels' positions: said as the flag, not as a rank's qPos (it read 'qPos: the last of 1000000000 positions would be …').
      [{ 'seq-length': '1000000000' }, /^--seq-length 1000000000: at most 536870912 tokens \(2\^29: the kernels hold token positions in 32-bit integers\)$/],
      [{ 'compute-tflops': 'Infinity' }, /--compute-tflops must be from 0\.000001 to 10000000 \(TFLOP\/s a GPU\), got 'Infinity'/],
      [{ 'compute-tflops': 'abc' }, /--compute-tflops must be from 0\.000001 to 10000000 \(TFLOP\/s a GPU\), got 'abc'/],   // as attention --cp words it (computeTflopsArg)
      [{ link: 'pcie5', 'link-gbps': '100' }, /'pcie5' is a preset \(512 Gbit\/s, 3 µs\)/],
      [{ 'cp-comm-type': 'a2a+p2p', 'context-parallel-size': '2' }, /at R = 2 there is none/],
      [{ 'num-attention-heads': undefined as unknown as string, 'hidden-size': undefined as unknown as string, heads: '16' }, /give the head dim: --head-dim D, or --hidden-size E/],
      [{ heads: '16', 'head-dim': '64' }, /--hidden-size 2048 is not 16 heads × --head-dim 64 \(= 1024\)/],
      [{ heads: '8', 'head-dim': '256' }, /--heads 8 and --num-attention-heads 16 disagree/],
      [{ 'num-attention-heads': undefined as unknown as string }, /give the heads: --heads H with --head-dim D/],
    ];
    for (const [flags, re] of bad) expect(() => parseCpPlan({ ...base, ...flags }), String(re)).toThrow(re);
    expect(() => parseCpPlan({ ...base, link: 'x' })).toThrow(InputError);
  });

  it('end to end: --json with --compute-tflops; bad input exits 2 with one line', async () => {
    const ok = await cli(['--context-parallel-size', '8', '--seq-length', '131072', '--heads', '16', '--head-dim', '128', '--causal',
      '--cp-comm-type', 'p2p', '--link', 'ib-ndr', '--compute-tflops', '300', '--json']);
    expect(ok.code, ok.err).toBe(0);
    const j = JSON.parse(ok.out);
    expect(j.kind).toBe('flashring.cp-plan');
    expect(j.schemes[0].predicted.stepMs).toHaveLength(8 + 9);
    const bad = await cli(['--context-parallel-size', '4', '--seq-length', '64', '--heads', '2', '--head-dim', '16', '--link', 'custom', '--link-gbps=-1', '--link-latency-us', '1']);
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
    expect(bad.err).toMatch(/^flashring cp-plan: --link-gbps must be from 0\.000001 to 1000000 \(Gbit\/s per direction: 1 kbit\/s to 1 Pbit\/s\), got '-1'$/m);
  });

  it('the table says what its columns are and that they are predicted, under the rows and before any scheme not planned', async () => {
    const r = await cli(['--context-parallel-size', '4', '--seq-length', '256', '--heads', '2', '--head-dim', '16', '--compute-tflops', '100']);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trim().split('\n');
    const at = lines.findIndex((l) => l.startsWith('columns (predicted by the link model for R GPUs on the link, the attention alone): sizes = '));
    expect(at).toBeGreaterThan(lines.findIndex((l) => l.startsWith('a2a+p2p    2,2')));
    expect(lines.slice(at, at + 3).join(' ')).toMatch(/forward, backward = each phase's time in ms; comm% = communication not hidden behind compute, .*TFLOP\/s per GPU = .*buffers = each rank's peak/);
    expect(at).toBeLessThan(lines.findIndex((l) => l.startsWith('a2a        not planned:')));
    expect(lines[0]).toMatch(/^cp-plan: B=1 H=2 N=256 D=16 /);
  });

  it("the header names grouped K/V heads in words (it read 'H=4/2')", async () => {
    const r = await cli(['--context-parallel-size', '2', '--seq-length', '64', '--heads', '4', '--num-query-groups', '2', '--head-dim', '16', '--compute-tflops', '100']);
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^cp-plan: B=1 H=4 \(K\/V heads 2\) N=64 D=16 /);
  });

  it("under --tensor-model-parallel-size the header and the JSON say the heads are one GPU's, of the model's over TP (it read 'H=16' for 32 heads given)", async () => {
    const args = ['--context-parallel-size', '2', '--seq-length', '64', '--num-attention-heads', '32', '--hidden-size', '512', '--num-query-groups', '8', '--tensor-model-parallel-size', '2', '--compute-tflops', '100'];
    const r = await cli(args);
    expect(r.code, r.err).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^cp-plan: B=1 H=16 \(K\/V heads 4\) a GPU \(32, K\/V 8 over TP=2\) N=64 D=16 /);
    const j = JSON.parse((await cli([...args, '--json'])).out);
    expect([j.shape.Hq, j.shape.Hkv, j.tensorParallel]).toEqual([16, 4, 2]);
    expect(JSON.parse((await cli([...args.slice(0, -4), '--compute-tflops', '100', '--json'])).out).tensorParallel).toBe(1);
  });

  it('without --compute-tflops it times the kernels on the local adapter, and says so where that is a CPU', async () => {
    const args = ['--context-parallel-size', '2', '--seq-length', '64', '--heads', '2', '--head-dim', '16', '--causal'];
    const r = await cli([...args, '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.compute.source).toBe('measured');
    expect(j.compute.tflops.forward).toBeGreaterThan(0);
    expect(j.compute.tflops.backward).toBeGreaterThan(0);
    // The table's second line names the adapter; on a CPU one (the tests' lavapipe) the third says its times are its own.
    const t = await cli(args);
    expect(t.code, t.err).toBe(0);
    const lines = t.out.split('\n');
    expect(lines[1]).toMatch(/ \(measured on .+ at N=64\)$/);
    expect(lines[2] === CPU_RATE_NOTE).toBe(/llvmpipe|lavapipe|swiftshader/i.test(lines[1]));
    expect((await cli([...args, '--compute-tflops', '100'])).out).not.toContain(CPU_RATE_NOTE);
  });
});
