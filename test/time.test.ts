/**
 * The iteration-time model (src/memory/time/, issue 36) against every stored real run that is time
 * data, and by name the ones that are not:
 *  - bench/results/2026-12-02-megatron-timing: Megatron-LM runs alone on the H200 (configurations of
 *    the 2026-12-02 campaign, its build / held-out split); the profile's fitted figures come from the
 *    build half only and are re-fitted here;
 *  - bench/results/2026-12-02-time-heldout: a fresh draw (seed 3602) run after the model of da2c0e0 was
 *    frozen and predicted once with it: the held-out judgement of that model;
 *  - bench/results/2026-12-03-time-repeats: every stored log the model misses by 15% or more, and two
 *    hits, run again alone in a later call (which misses were the measurement's, which the model's);
 *  - the PyTorch harness's points (bench/torchcp: one H200, and CP = 2 on 2 × H200);
 *  - not time data: the campaign's own 47 logs (up to 7 runs at a time on one GPU) and the 10 logs of
 *    bench/results/memory-h200-2026-12-01/megatron (waves of 4-5 at once, 3 iterations each).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { FIT_RUNS, TERMS_DIR, TIMING_DIR, buildFit, buildFitPoints, freshRows, launchesOf, outOfMemory, scoreRates, termRuns, timeRows, timeSummary, torchRows } from '../bench/megatron/timeTable.js';
import { configFromArgs, parseMegatronLog } from '../src/memory/megatron.js';
import { MLP_RECOMPUTE_WITH_BIAS, untrainable } from '../src/memory/untrainable.js';
import { predictFromLog } from '../src/memory/compare.js';
import { notTimeData, predictTimeFromLog, steadyIterMs } from '../src/memory/time/fromLog.js';
import { H200, timeCheckedLines } from '../src/memory/time/devices.js';
import { bmmTflops, flashTflops, gemmMs } from '../src/memory/time/rates.js';
import { iterationTime } from '../src/memory/time/step.js';
import { collectiveMs, cpCommMs, groupLinks } from '../src/memory/time/iteration.js';
import { moeDispatchMs, moeOps } from '../src/memory/time/moe.js';
import { attentionOps, maskPieces, timeDims } from '../src/memory/time/ops.js';
import { torchRingCommMs, torchRingOps } from '../src/memory/time/torchAmp.js';
import { LINKS } from '../src/cp/plan/linkModel.js';
import { DEFAULT_PARALLEL, PRESETS, stageParameters, type ParallelConfig } from '../src/memory/model.js';
import { median } from '../src/stats.js';
import { MISS, TIMING_SETS, storedRows, supersededRows } from '../bench/megatron/repeats.js';

const rows = timeRows();
const MOE = new Set(['r02', 'r03', 'r07', 'r11', 'r16', 'r19', 'r27', 'r40', 'r44']);

describe('the H200 profile is the measured data', () => {
  const prof = JSON.parse(readFileSync(`${TIMING_DIR}/profile.json`, 'utf8')) as {
    gemm: { dtype: string; m: number; n: number; k: number; tflops: number }[]; bmm: { d: number; s: number; tflops: number }[];
    elementwise: { op: 'copy' | 'softmax' | 'dropout'; gbps: number }[];
  };
  it('every GEMM, batched GEMM and bandwidth of profile.json, to 0.1%', () => {
    for (const g of prof.gemm) {
      const mine = (g.dtype === 'bfloat16' ? H200.gemmBf16 : H200.gemmFp32).find((x) => x.m === g.m && x.n === g.n && x.k === g.k)!;
      expect(Math.abs(mine.tflops / g.tflops - 1), `${g.dtype} ${g.m}×${g.n}×${g.k}`).toBeLessThan(1e-3);
    }
    for (const b of prof.bmm) expect(H200.bmm.some((x) => x.d === b.d && x.s === b.s && Math.abs(x.tflops / b.tflops - 1) < 1e-3)).toBe(true);
    for (const e of prof.elementwise) expect(Math.abs(H200.bandwidthGBs[e.op] / e.gbps - 1)).toBeLessThan(1e-3);
  });

  it("the unfused attention core's per-score rates are the profiled steps' (scoreRates(), to 0.1%), the mask copy's rate core_attention.py's", () => {
    const r = scoreRates(), s = H200.scores;
    for (const k of ['maskFill', 'maskFillContiguous', 'dropoutFwd', 'dropoutBwd'] as const) expect(Math.abs(s[k] / r[k] - 1), k).toBeLessThan(1e-3);
    for (const k of ['softmaxFwd', 'softmaxBwd', 'gradCopies'] as const) {
      expect(s[k].map((p) => p.s), k).toEqual(r[k].map((p) => p.s));
      for (const [i, p] of s[k].entries()) expect(Math.abs(p.ms / r[k][i].ms - 1), `${k} s=${p.s}`).toBeLessThan(1e-3);
    }
    // The masked_fill_ in contiguous pieces (s = 32768: one head a 32-bit piece) runs 2.4x faster than strided.
    expect(s.maskFill / s.maskFillContiguous).toBeGreaterThan(2.3);
    const head = JSON.parse(readFileSync('bench/results/2026-12-02-time-heldout/core_attention.jsonl', 'utf8').split('\n')[0]) as { htodGBs: number };
    expect(Math.abs(H200.htodGBs / head.htodGBs - 1)).toBeLessThan(1e-3);
  });

  it('the GEMM time model (FLOPs at a peak + bytes, fitted to the six shapes) within 20% of each measured bf16 shape', () => {
    for (const g of H200.gemmBf16) {
      const measuredMs = (2 * g.m * g.n * g.k) / (g.tflops * 1e9);
      expect(Math.abs(gemmMs(H200, g.m, g.n, g.k) / measuredMs - 1), `${g.m}×${g.n}×${g.k}`).toBeLessThan(0.2);
    }
  });

  it('rates between and beyond the measured points: interpolated in log, clamped at the ends', () => {
    expect(bmmTflops(H200, 64)).toBeCloseTo((179.89 + 177.71) / 2, 1);
    expect(bmmTflops(H200, 96)).toBeGreaterThan(bmmTflops(H200, 64));
    expect(bmmTflops(H200, 96)).toBeLessThan(bmmTflops(H200, 128));
    expect(flashTflops(H200, 128, 16384, true, 'fwd')).toBeCloseTo(318.7, 1);
    expect(flashTflops(H200, 128, 1 << 20, true, 'bwd')).toBeCloseTo(315.0, 1);
  });
});

describe('fitted on the build half only', () => {
  it('the shipped figures are the fit of the build half timed before them (re-fitted here, within 1%); later build runs are checked, not fitted', () => {
    const pts = buildFitPoints();
    expect(pts.map((p) => p.id).sort()).toEqual([...FIT_RUNS].sort());
    expect(rows.filter((r) => r.split === 'build' && !FIT_RUNS.includes(r.id)).map((r) => r.id)).toEqual(['r03', 'r19', 'r28', 'r38', 'r39', 'r42']);
    expect(pts.every((p) => rows.find((r) => r.id === p.id)!.split === 'build')).toBe(true);
    const f = buildFit();
    expect(Math.abs(f.launchUs / H200.host.launchUs - 1)).toBeLessThan(0.01);
    expect(Math.abs(f.moeExpertUs - H200.host.moeExpertUs)).toBeLessThan(1);
    expect(Math.abs(f.iterationMs / H200.host.iterationMs - 1)).toBeLessThan(0.01);
  });
  it('every fitted run has one micro batch a step: the fit prices every kernel at launchUs, so a run of several fitted there would count its later micro batches twice (microBatchLaunchUs adds to them)', () => {
    for (const id of FIT_RUNS) {
      const args = parseMegatronLog(readFileSync(`${TIMING_DIR}/runs/${id}.log`, 'utf8'), id).args;
      expect(Number(args.micro_batch_size), id).toBeGreaterThan(0);
      expect(Number(args.global_batch_size), id).toBe(Number(args.micro_batch_size) * Number(args.data_parallel_size));
    }
  });
});

describe('Megatron-LM runs alone on the H200 (bench/results/2026-12-02-megatron-timing)', () => {
  it('47 runs (every configuration of the campaign that ran): 25 build, 22 held-out, each with a steady median after the 2 warm-up iterations', () => {
    expect(rows.map((r) => r.split).filter((s) => s === 'build')).toHaveLength(25);
    expect(rows.map((r) => r.split).filter((s) => s === 'heldout')).toHaveLength(22);
    for (const r of rows) expect([4, 18, 38].includes(r.iterations), r.id).toBe(true);
  });

  // Both halves have been looked at (the held-out half by the model before da2c0e0): the judgement of
  // the shipped model is the fresh draw below. What it gives here, named.
  it('NOT MET, dense: all within 15% but two 2K runs (r20 −28%, r30 −21%: fast); the five 32K runs without a loader wait within 7% (the masked_fill_ priced by its kernel)', () => {
    const dense = rows.filter((r) => !MOE.has(r.id));
    expect(dense).toHaveLength(38);
    for (const r of dense) expect(Math.abs(r.error), r.id).toBeLessThan(0.3);
    const misses = dense.filter((r) => Math.abs(r.error) >= 0.15);
    expect(misses.map((r) => r.id).sort()).toEqual(['r20', 'r30']);
    for (const r of misses) {
      expect(r.config, r.id).toContain('s2048');
      expect(r.error, r.id).toBeLessThan(-0.15);
      expect(r.error, r.id).toBeGreaterThan(-0.29);
    }
    // Before the masked_fill_ had its contiguous rate (3a3599f) four of these were 21-28% slow.
    const noWait32 = dense.filter((r) => r.config.includes('s32768') && !r.predicted.terms.some((t) => t.name === 'data-loader'));
    expect(noWait32.map((r) => r.id).sort()).toEqual(['r04', 'r09', 'r24', 'r29', 'r34']);
    for (const r of noWait32) expect(Math.abs(r.error), r.id).toBeLessThan(0.07);
  });

  it('MoE runs: NOT MET for two of nine (r03 −15%, r40 −21%: measured slower than the model); each within 25%, named', () => {
    const moe = rows.filter((r) => MOE.has(r.id));
    expect(moe.map((r) => r.id).sort()).toEqual([...MOE].sort());
    for (const r of moe) expect(Math.abs(r.error), r.id).toBeLessThan(0.25);
    expect(moe.filter((r) => Math.abs(r.error) >= 0.15).map((r) => r.id).sort()).toEqual(['r03', 'r40']);
  });

  it("the data loader's attention mask is a term measured on its own: r39 with it waits for the loader, without it runs at the model's compute", () => {
    const log = (f: string) => parseMegatronLog(readFileSync(`${TIMING_DIR}/terms/${f}`, 'utf8'), f);
    const withMask = log('r39.timers.log'), without = log('r39.nomask.log');
    expect(withMask.args.create_attention_mask_in_dataloader).toBe('True');
    expect(without.args.create_attention_mask_in_dataloader).toBe('False');
    const gb = (32768 ** 2 * 4) / 1e9;
    // The profile's figure is this run's with-mask step per GB of mask, to the rounding shipped.
    expect(Math.abs(steadyIterMs(withMask).ms! / gb / H200.loaderMaskMsPerGB - 1)).toBeLessThan(0.01);
    const p = predictTimeFromLog(without), q = predictTimeFromLog(withMask);
    if ('error' in p || 'error' in q) throw new Error('no prediction');
    expect(p.terms.some((t) => t.name === 'data-loader')).toBe(false);
    // Without the mask (L2 at 32K) the model is within 5% of the step.
    expect(Math.abs(p.iterMs / steadyIterMs(without).ms! - 1)).toBeLessThan(0.05);
    expect(q.terms.find((t) => t.name === 'data-loader')!.ms).toBeGreaterThan(150);
    // Four measured iterations or fewer: the loader's prefetched batches (2 workers × 2) cover them.
    const r43 = rows.find((r) => r.id === 'r43')!;
    expect(r43.iterations).toBe(4);
    expect(r43.predicted.terms.some((t) => t.name === 'data-loader')).toBe(false);
  });

  it('the summary as the README states it (both halves, MoE included)', () => {
    expect(timeSummary(rows, 'build').maxAbs).toBeLessThan(0.21);
    expect(timeSummary(rows, 'heldout').maxAbs).toBeLessThan(0.29);
    expect(timeSummary(rows, 'build').median).toBeLessThan(0.077);
    expect(timeSummary(rows, 'heldout').median).toBeLessThan(0.07);
  });

  it('the terms add up to the prediction, and the attention core dominates at 32K', () => {
    for (const r of rows) expect(r.predicted.terms.reduce((s, t) => s + t.ms, 0)).toBeCloseTo(r.predicted.iterMs, 6);
    const r24 = rows.find((r) => r.id === 'r24')!;
    const attn = r24.predicted.terms.find((t) => t.name === 'attention')!.ms + r24.predicted.terms.find((t) => t.name === 'recompute')!.ms;
    expect(attn / r24.predicted.iterMs).toBeGreaterThan(0.8);
  });
});

describe('the PyTorch harness (bench/torchcp, --stack torch-amp, FlashAttention through SDPA)', () => {
  const pts = torchRows();
  it('41 measured points (13 on one H200, 28 at CP = 1 and 2 on 2 × H200)', () => {
    expect(pts).toHaveLength(13 + 28 - 4);
  });
  it('NOT MET: 33 of 37 within 15%, the misses CP = 2 at 4K and 8K; each within 35%; every one-GPU point within 15%', () => {
    expect(pts.filter((r) => Math.abs(r.error) < 0.15)).toHaveLength(33);
    for (const r of pts) expect(Math.abs(r.error), r.config).toBeLessThan(0.35);
    const one = pts.filter((r) => r.config.includes(' CP1 '));
    for (const r of one) expect(Math.abs(r.error), r.config).toBeLessThan(0.15);
  });
  it("CP = 2 on 2 × H200: PyTorch's ring as its source runs it (f32 merges, copies, the last dK/dV exchange exposed) and DDP's buckets; still 18-34% low (too little time) at 4K-8K (24-39 ms a step unaccounted), within 14% from 16K", () => {
    const two = pts.filter((r) => r.config.includes(' CP2 '));
    expect(two).toHaveLength(14);
    for (const r of two) {
      const s = Number(/ s(\d+) /.exec(r.config)![1]);
      if (s <= 8192) {
        expect(r.error, r.config).toBeLessThan(-0.17);
        expect(r.measuredMs - r.predicted.iterMs, r.config).toBeGreaterThan(20);
        expect(r.measuredMs - r.predicted.iterMs, r.config).toBeLessThan(45);
      } else expect(Math.abs(r.error), r.config).toBeLessThan(0.14);
      expect(r.predicted.terms.find((t) => t.name === 'cp-comm')!.ms, r.config).toBeGreaterThan(0);
    }
  });
  it("the harness's attention is SDPA's default (cuDNN on the H200), priced at its measured rate: 1.6-1.8x the flash backend from 16K on", () => {
    for (const s of [16384, 65536]) {
      const ratio = flashTflops(H200, 128, s, true, 'fwd', 'sdpa') / flashTflops(H200, 128, s, true, 'fwd');
      expect(ratio).toBeGreaterThan(1.6);
      expect(ratio).toBeLessThan(1.9);
    }
  });
});

describe('terms measured on their own (terms/, terms/kernels: the MoE misses taken apart)', () => {
  const runs = new Map(termRuns().map((r) => [r.name, r]));
  const prof = termRuns(`${TERMS_DIR}/kernels`);
  const at = (name: string) => runs.get(name)!;
  const err = (name: string) => at(name).predicted.iterMs / at(name).measuredMs - 1;
  it('NOT MET: r03, r07, r40 are 12-29% fast with their recomputation and without it (norc): the miss is in the step, not in recompute', () => {
    for (const id of ['r03', 'r07', 'r40'])
      for (const tag of ['timers', 'norc']) {
        expect(err(`${id}.${tag}`), `${id}.${tag}`).toBeLessThan(-0.11);
        expect(err(`${id}.${tag}`), `${id}.${tag}`).toBeGreaterThan(-0.3);
      }
    // What recomputing costs, measured (with − without) against the model's extra: r03 148 against 101 ms, r07 16.2
    // against 16.4, r40 26 against 9 (its full recompute re-runs 16 experts' modules: host time the launches do not carry).
    const cost = (id: string) => [at(`${id}.timers`).measuredMs - at(`${id}.norc`).measuredMs, at(`${id}.timers`).predicted.iterMs - at(`${id}.norc`).predicted.iterMs];
    expect(cost('r03')[1] / cost('r03')[0]).toBeGreaterThan(0.65);
    expect(Math.abs(cost('r07')[1] / cost('r07')[0] - 1)).toBeLessThan(0.05);
    expect(cost('r40')[1] / cost('r40')[0]).toBeLessThan(0.4);
  });
  it("the dispatcher is not it: alltoall for allgather changes the model's time by nothing and the measured one by under 13%", () => {
    for (const id of ['r07', 'r40', 'r44']) {
      expect(at(`${id}.a2a`).predicted.iterMs).toBeCloseTo(at(`${id}.timers`).predicted.iterMs, 6);
      expect(Math.abs(at(`${id}.a2a`).measuredMs / at(`${id}.timers`).measuredMs - 1), id).toBeLessThan(0.13);
    }
  });

  // The same configurations unprofiled: the step's measured time less the profiled GPU busy time is the host's exposed time.
  const unprofiled: Record<string, string> = {
    'r02.prof': `${TIMING_DIR}/runs/r02.log`, 'r03.norc': `${TERMS_DIR}/r03.norc.log`, 'r07.norc': `${TERMS_DIR}/r07.norc.log`, 'r11.prof': `${TIMING_DIR}/runs/r11.log`,
    'r23.prof': `${TIMING_DIR}/runs/r23.log`, 'r40.norc': `${TERMS_DIR}/r40.norc.log`, 'r43.prof': `${TIMING_DIR}/runs/r43.log`,
  };
  const hostOf = (r: (typeof prof)[number]) => ({
    measured: steadyIterMs(parseMegatronLog(readFileSync(unprofiled[r.name], 'utf8'), r.name)).ms! - r.profile!.gpuBusyMs,
    model: r.predicted.terms.filter((t) => t.name === 'host').reduce((s, t) => s + t.ms, 0),
  });

  it("terms: the model's GPU side within 11% of the profiled GPU busy time in six of the seven profiled steps (not r40 at 2K: 0.6x, its kernels tiny); the mask copy 0.9-1x of the profiled host-to-device copies (tokens, labels and positions are the rest)", () => {
    expect(prof.map((r) => r.name)).toEqual(Object.keys(unprofiled));
    for (const r of prof) {
      const ratio = r.gpuMs / r.profile!.gpuBusyMs;
      if (r.name === 'r40.norc') expect(ratio).toBeLessThan(0.65);
      else expect(Math.abs(ratio - 1), r.name).toBeLessThan(0.11);
      const htod = r.profile!.kernels.filter((k) => /Memcpy HtoD/.test(k.name)).reduce((s, k) => s + k.ms, 0);
      const mask = r.predicted.terms.find((t) => t.name === 'mask-copy')!.ms;
      expect(mask, r.name).toBeLessThanOrEqual(htod);
      expect(mask / htod, r.name).toBeGreaterThan(0.9);
    }
    // The kernel launches (the runtime's launch calls) are 0.74-1.2x the model's count: the count is not what is off.
    for (const r of prof) {
      const launches = launchesOf(r.profile!);
      expect(launches / r.predicted.kernels, r.name).toBeGreaterThan(0.74);
      expect(launches / r.predicted.kernels, r.name).toBeLessThan(1.2);
    }
  });

  it('NOT MET (terms): the MoE misses are on the host side: r03 and r07 spend 1.3-1.6x the host time the model gives them (unprofiled step less GPU busy), r40 1.25x; r02 0.75x; the dense steps and r11 0.75-1.02x', () => {
    const h = new Map(prof.map((r) => [r.name, hostOf(r)]));
    const ratio = (n: string) => h.get(n)!.measured / h.get(n)!.model;
    const want: Record<string, [number, number]> = {
      'r03.norc': [1.55, 1.65], 'r07.norc': [1.3, 1.4], 'r40.norc': [1.2, 1.3], 'r02.prof': [0.7, 0.8], 'r11.prof': [0.98, 1.06], 'r23.prof': [0.93, 1.01], 'r43.prof': [0.7, 0.8],
    };
    for (const [n, [lo, hi]] of Object.entries(want)) {
      expect(ratio(n), n).toBeGreaterThan(lo);
      expect(ratio(n), n).toBeLessThan(hi);
    }
    // The host is added to the GPU's time in the MoE steps (their layers read token counts on the host), overlapped in the dense ones.
    for (const r of prof) expect(r.predicted.hostSerial, r.name).toBe(!['r23.prof', 'r43.prof'].includes(r.name));
  });
});

describe('the fresh held-out draw (bench/results/2026-12-02-time-heldout): r00-r23 predicted once at da2c0e0, r25-r29 once at 29e51b4', () => {
  const FRESH = 'bench/results/2026-12-02-time-heldout';
  const LATER = ['r25', 'r26', 'r27', 'r28', 'r29'];
  const all = timeRows(H200, FRESH, false, `${FRESH}/draw.json`), fresh = all.filter((r) => !LATER.includes(r.id));
  it('30 configurations drawn before either model; 27 ran (r07, r21, r24 out of the 139.8 GiB); r24-r29 ran after 29e51b4 was frozen', () => {
    expect(JSON.parse(readFileSync(`${FRESH}/draw.json`, 'utf8')).kept).toHaveLength(30);
    expect(outOfMemory(FRESH)).toEqual(['r07', 'r21', 'r24']);
    expect(fresh.map((r) => r.id)).toEqual(['r00', 'r01', 'r02', 'r03', 'r04', 'r05', 'r06', 'r08', 'r09', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'r16', 'r17', 'r18', 'r19', 'r20', 'r22', 'r23']);
    expect(all.filter((r) => LATER.includes(r.id)).map((r) => r.id)).toEqual(LATER);
    for (const r of all) expect(r.iterations, r.id).toBe(22);
  });

  it('r25-r29 (judged once at 29e51b4: 4 of 5 within 15%, r26 +21.5%, README): with the shipped model all five within 15%', () => {
    const later = all.filter((r) => LATER.includes(r.id));
    for (const r of later) expect(Math.abs(r.error), r.id).toBeLessThan(0.15);
  });

  it('a host-bound step is not repeatable to 15% (repeats/: r15, r20, r26 run three times more, alone, 21:50-21:57 UTC): r15 28.9-40.0 ms, r26 38.8-47.1', () => {
    const steady = (f: string) => steadyIterMs(parseMegatronLog(readFileSync(f, 'utf8'), f)).ms!;
    const spread: Record<string, number[]> = {};
    for (const id of ['r15', 'r20', 'r26']) {
      spread[id] = [steady(`${FRESH}/runs/${id}.log`), ...[1, 2, 3].map((k) => steady(`${FRESH}/repeats/rep${k}/${id}.log`))];
    }
    const ratio = (xs: number[]) => Math.max(...xs) / Math.min(...xs);
    expect(ratio(spread.r15)).toBeGreaterThan(1.35);
    expect(ratio(spread.r26)).toBeGreaterThan(1.2);
    expect(ratio(spread.r20)).toBeLessThan(1.15);
    // The shipped model against each of the 12 runs: within 15% of 11; r15's own runs span 1.39x (+20% against its fastest).
    const model = (id: string) => all.find((x) => x.id === id)!.predicted.iterMs;
    const within = Object.entries(spread).flatMap(([id, ms]) => ms.map((m) => Math.abs(model(id) / m - 1) < 0.15));
    expect(within.filter(Boolean)).toHaveLength(11);
    for (const id of ['r20', 'r26']) for (const m of spread[id]) expect(Math.abs(model(id) / m - 1), id).toBeLessThan(0.15);
  });

  it('NOT MET: judged at da2c0e0, 16 of 22 within 15% (README); the shipped model, 18 (all of them seen by now): r00 +31%, r02 −33% (MoE), r06 −15%, r16 +17% miss', () => {
    // da2c0e0 (the judgement): 16 within 15%, median 10.35%. Since then r09, r16, r20 profiled (29e51b4: the masked_fill_
    // at 32K) and the host overlapped in dense steps (964a1c9): neither is a held-out judgement of these runs.
    expect(fresh.filter((r) => Math.abs(r.error) < 0.15)).toHaveLength(18);
    const misses = fresh.filter((r) => Math.abs(r.error) >= 0.15);
    expect(misses.map((r) => r.id)).toEqual(['r00', 'r02', 'r06', 'r16']);
    const want: Record<string, [number, number]> = { r00: [0.29, 0.33], r02: [-0.35, -0.31], r06: [-0.16, -0.15], r16: [0.15, 0.19] };
    for (const r of misses) {
      expect(r.error, r.id).toBeGreaterThan(want[r.id][0]);
      expect(r.error, r.id).toBeLessThan(want[r.id][1]);
    }
    expect(Math.abs(fresh.find((r) => r.id === 'r09')!.error)).toBeLessThan(0.03);
    expect(median(fresh.map((r) => Math.abs(r.error)))!).toBeCloseTo(0.0958, 3);
  });

  it("terms (terms/: r09, r16, r20 profiled again): the model's GPU side 0.8-1.05x the busy time; a host-bound step's own time moves 21% between two runs (r20: 69.8 ms, then 55.2)", () => {
    const runs = termRuns(`${FRESH}/terms`);
    expect(runs.map((r) => r.name)).toEqual(['r09.prof', 'r16.prof', 'r20.prof']);
    for (const r of runs) {
      const ratio = r.gpuMs / r.profile!.gpuBusyMs;
      expect(ratio, r.name).toBeGreaterThan(0.8);
      expect(ratio, r.name).toBeLessThan(1.05);
    }
    const r20 = fresh.find((r) => r.id === 'r20')!, again = runs.find((r) => r.name === 'r20.prof')!;
    expect(r20.measuredMs / again.measuredMs).toBeGreaterThan(1.2);
    // The GPU is 16 ms of either: what moved is the host.
    expect(again.profile!.gpuBusyMs).toBeLessThan(17);
  });
});

/** A fresh draw's rows, predicted by the model: `kept` configurations drawn, `ids` ran, each 22 iterations after warm-up. */
function drawRows(dir: string, kept: number, ids: string[]) {
  expect(JSON.parse(readFileSync(`${dir}/draw.json`, 'utf8')).kept).toHaveLength(kept);
  const rows = timeRows(H200, dir, false, `${dir}/draw.json`);
  expect(rows.map((r) => r.id)).toEqual(ids);
  for (const r of rows) expect(r.iterations, r.id).toBe(22);
  return rows;
}

describe('the second fresh draw (bench/results/2026-12-02-time-heldout2, seed 3603): drawn after 964a1c9 was frozen, predicted once by it (README), here the shipped model', () => {
  const D2 = 'bench/results/2026-12-02-time-heldout2';
  const rows2 = timeRows(H200, D2, false, `${D2}/draw.json`);
  it('12 configurations; 11 ran, r00 out of memory (selective mlp with linear biases: untrainable, as named before it ran)', () => {
    drawRows(D2, 12, ['r01', 'r02', 'r03', 'r04', 'r05', 'r06', 'r07', 'r08', 'r09', 'r10', 'r11']);
    expect(outOfMemory(D2)).toEqual(['r00']);
  });
  it('NOT MET: 7 of 11 within 15% (judged at 964a1c9: median 6.98%; shipped: 7.30%, the mask copy now hiding host time as the fit assumes); r04 +38% and r09 +18% (32K: the loader handed batches faster than r39 measured it), r06 +22% (MoE, 4K), r11 +19% (4K) miss', () => {
    expect(rows2.filter((r) => Math.abs(r.error) < 0.15)).toHaveLength(7);
    const misses = rows2.filter((r) => Math.abs(r.error) >= 0.15);
    expect(misses.map((r) => r.id)).toEqual(['r04', 'r06', 'r09', 'r11']);
    const want: Record<string, [number, number]> = { r04: [0.37, 0.38], r06: [0.22, 0.23], r09: [0.17, 0.18], r11: [0.18, 0.19] };
    for (const r of misses) {
      expect(r.error, r.id).toBeGreaterThan(want[r.id][0]);
      expect(r.error, r.id).toBeLessThan(want[r.id][1]);
    }
    // Both 32K misses are the loader's floor (456.1 ms: r39's pace in an earlier session), not the GPU's work.
    for (const id of ['r04', 'r09']) expect(rows2.find((r) => r.id === id)!.predicted.terms.some((t) => t.name === 'data-loader'), id).toBe(true);
    expect(median(rows2.map((r) => Math.abs(r.error)))!).toBeCloseTo(0.073, 3);
  });
});

describe('the third fresh draw (bench/results/2026-12-02-time-heldout3, seed 3604): drawn after e54139f, predicted once by it', () => {
  const D3 = 'bench/results/2026-12-02-time-heldout3';
  it('8 configurations, all ran (r00-r03 on 2026-12-02, r04-r07 on 2026-12-03, judged then by adc436b): 8 of 8 within 15%, median |error| 4.3%', () => {
    const rows3 = drawRows(D3, 8, ['r00', 'r01', 'r02', 'r03', 'r04', 'r05', 'r06', 'r07']);
    for (const r of rows3) expect(Math.abs(r.error), r.id).toBeLessThan(0.15);
    // The two largest: r05 a short host-bound step (2K, b2: host 36 of 55 ms), r04 a 32K step whose loader builds a 4.3 GB mask.
    expect(rows3.filter((r) => Math.abs(r.error) > 0.08).map((r) => r.id)).toEqual(['r04', 'r05']);
    expect(median(rows3.map((r) => Math.abs(r.error)))!).toBeCloseTo(0.0428, 3);
  });
});

describe('the fourth fresh draw (bench/results/2026-12-03-time-heldout4, seed 3605): drawn after 7842593, predicted once by it', () => {
  const D4 = 'bench/results/2026-12-03-time-heldout4';
  it('8 configurations, all ran: 8 of 8 within 15%, median |error| 1.6%, largest 6.8% (four MoE steps, a loader-bound 32K step)', () => {
    const rows4 = drawRows(D4, 8, ['r00', 'r01', 'r02', 'r03', 'r04', 'r05', 'r06', 'r07']);
    for (const r of rows4) expect(Math.abs(r.error), r.id).toBeLessThan(0.07);
    expect(median(rows4.map((r) => Math.abs(r.error)))!).toBeCloseTo(0.0161, 3);
    expect(rows4.find((r) => r.id === 'r04')!.predicted.terms.find((t) => t.name === 'data-loader')!.ms).toBeGreaterThan(150);
  });
});

describe('the fifth fresh draws (bench/results/2026-12-03-time-heldout5, seed 3607; …-heldout5-deep, seed 3608: 8-16 layers at 2K/4K, where the dense misses were): drawn at 40979dd, run before their logs were read, predicted once by the shipped model', () => {
  const D5 = 'bench/results/2026-12-03-time-heldout5', DD = 'bench/results/2026-12-03-time-heldout5-deep';
  it('6 configurations, 5 ran: 5 of 5 within 15%, median |error| 4.8%; r05 out of memory (selective mlp with linear biases: untrainable, as named before it ran)', () => {
    const rows = drawRows(D5, 6, ['r00', 'r01', 'r02', 'r03', 'r04']);
    for (const r of rows) expect(Math.abs(r.error), r.id).toBeLessThan(0.15);
    expect(median(rows.map((r) => Math.abs(r.error)))!).toBeCloseTo(0.0482, 3);
    expect(outOfMemory(D5)).toEqual(['r05']);
  });
  it('the deep draw, 4 of 4 ran: 4 of 4 within 15% (−11.1% to +3.6%), median |error| 6.0%; the model fast for its 8- and 12-layer steps, as for the dense misses, but within 15% here', () => {
    const rows = drawRows(DD, 4, ['r00', 'r01', 'r02', 'r03']);
    for (const r of rows) expect(Math.abs(r.error), r.id).toBeLessThan(0.15);
    expect(median(rows.map((r) => Math.abs(r.error)))!).toBeCloseTo(0.060, 3);
    expect(rows.filter((r) => r.error < -0.08).map((r) => r.id)).toEqual(['r00', 'r01']);
  });
});

describe('the sixth fresh draw (bench/results/2026-12-03-time-heldout6, seed 3609): drawn and committed at 6a7728a before it ran, predicted once by the shipped model', () => {
  const D6 = 'bench/results/2026-12-03-time-heldout6';
  it('6 configurations (3 MoE, 2K-32K), 6 ran: 6 of 6 within 15% (−11.2% to +12.2%), median |error| 10.6%', () => {
    const rows = drawRows(D6, 6, ['r00', 'r01', 'r02', 'r03', 'r04', 'r05']);
    for (const r of rows) expect(Math.abs(r.error), r.id).toBeLessThan(0.15);
    expect(median(rows.map((r) => Math.abs(r.error)))!).toBeCloseTo(0.1058, 3);
    expect(rows.filter((r) => Math.abs(r.error) > 0.1).map((r) => r.id)).toEqual(['r00', 'r01', 'r04', 'r05']);
    expect(outOfMemory(D6)).toEqual([]);
  });
  it('the memory model on the same six held-out logs: every peak within 2% (−1.4% to 0.0% then; −0.8% to +0.0% since the MoE checkpoints\' leftovers are counted)', () => {
    const errs = ['r00', 'r01', 'r02', 'r03', 'r04', 'r05'].map((id) => {
      const p = predictFromLog(parseMegatronLog(readFileSync(`${D6}/runs/${id}.log`, 'utf8'), id), null);
      if ('error' in p) throw new Error(`${id}: ${p.error}`);
      return p.totalError!;
    });
    for (const e of errs) expect(Math.abs(e)).toBeLessThan(0.02);
    // held out, −1.4% (r02: MoE, full recompute of 10 one-layer chunks) to 0.0%; since 2026-12-07 r02 is +0.0% (beside its
    // last chunk recomputed, the 9 chunks before hold their inputs' gradients, 24 MiB each: checkpointLeftover), and r05
    // (block/5 of 8, its 3 stored MoE layers' input once, moe_utils.py:1382) −0.7% → −0.8% the lowest
    expect(Math.min(...errs)).toBeCloseTo(-0.008, 3);
    expect(Math.max(...errs)).toBeCloseTo(0.000, 3);
  });
});

describe('the seventh fresh draw (bench/results/2026-12-06-time-heldout7, seed 3610, 2-4 micro batches a step): drawn and committed at d9546d9 before it ran, on an H100', () => {
  const D7 = 'bench/results/2026-12-06-time-heldout7';
  it('memory, held out: the five that ran within 2% (−0.2% to +1.7% then; −0.3% to +1.0% since a MoE layer\'s input is counted once); r02 out of memory, untrainable as named before it ran', () => {
    const read = (id: string) => parseMegatronLog(readFileSync(`${D7}/runs/${id}.log`, 'utf8'), id);
    const errs = ['r00', 'r01', 'r03', 'r04', 'r05'].map((id) => {
      const res = read(id);
      expect(Number(res.args.global_batch_size) / Number(res.args.micro_batch_size), id).toBeGreaterThanOrEqual(2);
      const p = predictFromLog(res, null);
      if ('error' in p) throw new Error(`${id}: ${p.error}`);
      return p.totalError!;
    });
    for (const e of errs) expect(Math.abs(e)).toBeLessThan(0.02);
    // held out, the model of d9546d9 gave −0.2% to +1.7%; r01 (MoE, stored) +1.7% → +1.0% and r05 −0.2% → −0.3% once
    // the MoE layer's input was counted once (2026-12-07, moe_utils.py:1382)
    expect(Math.max(...errs)).toBeCloseTo(0.010, 3);
    expect(Math.min(...errs)).toBeCloseTo(-0.003, 3);
    const r02 = read('r02'), c = configFromArgs(r02.args);
    if ('error' in c) throw new Error(c.error);
    expect([r02.point.outOfMemory, r02.point.outOfMemoryOthers, r02.iterations.length]).toEqual([true, null, 0]);
    expect(untrainable(c.model, c.par)).toBe(MLP_RECOMPUTE_WITH_BIAS);
    expect(readFileSync(`${D7}/gpu.txt`, 'utf8')).toMatch(/^NVIDIA H100/);
  });
  it('its H100 step times are in no stored timing set (the profile is the H200\'s)', () => {
    expect(TIMING_SETS.some((t) => t.dir.includes('heldout7'))).toBe(false);
  });
});

describe('several micro batches a step, on H100s (the eighth draw\'s r05 and r01 again with one micro batch, …-heldout8-followup; the ninth draw\'s r00 and r01 and the tenth\'s four with both)', () => {
  const step = (f: string) => {
    const res = parseMegatronLog(readFileSync(f, 'utf8'), f), t = predictTimeFromLog(res);
    if ('error' in t) throw new Error(`${f}: ${t.error}`);
    return { measured: steadyIterMs(res).ms!, model: t.iterMs, m: Number(res.args.global_batch_size) / Number(res.args.micro_batch_size) };
  };
  const R = 'bench/results/2026-12-06-';
  const pairs = [
    ...(['r05', 'r01'] as const).map((id) => ({ id: `8-${id}`, one: step(`${R}heldout8-followup/runs/${id}-mb1.log`), many: step(`${R}time-heldout8/runs/${id}.log`) })),
    ...(['r00', 'r01'] as const).map((id) => ({ id: `9-${id}`, one: step(`${R}time-heldout9/runs/${id}-mb1.log`), many: step(`${R}time-heldout9/runs/${id}.log`) })),
    ...(['r00', 'r01', 'r02', 'r03'] as const).map((id) => ({ id: `10-${id}`, one: step(`${R}time-heldout10/runs/${id}-mb1.log`), many: step(`${R}time-heldout10/runs/${id}.log`) })),
  ];
  it("what advise says (timeChecked.microBatches): with one micro batch 10-31% slower than the model; each dense one past the first costs 0.7-1.3× the model's, the MoE one 1.7×", () => {
    const ratios = pairs.map(({ id, one, many }) => {
      expect([one.m, many.m > 1], id).toEqual([1, true]);
      const e = (one.model - one.measured) / one.measured;
      expect(e, id).toBeLessThan(-0.09);
      expect(e, id).toBeGreaterThan(-0.32);
      // each micro batch past the first, measured and modelled
      const measured = (many.measured - one.measured) / (many.m - 1), model = (many.model - one.model) / (many.m - 1);
      return { id, measured, model, ratio: measured / model };
    });
    expect(ratios.map((r) => [Math.round(r.measured), Math.round(r.model)])).toEqual([[41, 32], [210, 124], [32, 28], [51, 40], [73, 66], [44, 35], [480, 421], [48, 67]]);
    expect(ratios.map((r) => r.ratio.toFixed(2))).toEqual(['1.31', '1.69', '1.12', '1.28', '1.11', '1.25', '1.14', '0.72']);
    expect(H200.timeChecked!.microBatches!.found).toContain('0.7-1.3× what the model gives it (41 ms against 32; 48 against 67)');
    expect(H200.timeChecked!.microBatches!.found).toContain('the MoE one 1.7× (210 ms against 124)');
  });
  it("the README's words on the change: before it, the first three dense pairs' micro batches got 1.8-3.4× too little; per counted kernel the tenth's r03 took 60 µs, the ninth's r00 102 and the eighth's r05 119", () => {
    const before = { ...H200, host: { ...H200.host, microBatchLaunchUs: H200.host.launchUs } };
    const at = (f: string, profile = H200) => {
      const t = predictTimeFromLog(parseMegatronLog(readFileSync(f, 'utf8'), f), { profile });
      if ('error' in t) throw new Error(t.error);
      return t;
    };
    const files = (id: string) => {
      const [d, r] = id.split('-'), one = d === '8' ? `${R}heldout8-followup/runs/${r}-mb1.log` : `${R}time-heldout${d}/runs/${r}-mb1.log`;
      return { one, many: `${R}time-heldout${d}/runs/${r}.log` };
    };
    const old = ['8-r05', '9-r00', '9-r01'].map((id) => {
      const p = pairs.find((x) => x.id === id)!, f = files(id);
      return (p.many.measured - p.one.measured) / (at(f.many, before).iterMs - at(f.one, before).iterMs);
    });
    const words = `${Math.min(...old).toFixed(1)}–${Math.max(...old).toFixed(1)}× too little time in the first three dense pairs`;
    expect(words).toBe('1.8–3.4× too little time in the first three dense pairs');
    expect(readFileSync('README.md', 'utf8').replace(/\s+/g, ' ')).toContain(words);
    const usPerKernel = ['10-r03', '9-r00', '8-r05'].map((id) => {
      const p = pairs.find((x) => x.id === id)!, f = files(id);
      return Math.round((1e3 * (p.many.measured - p.one.measured)) / (at(f.many).kernels - at(f.one).kernels));
    });
    expect(usPerKernel).toEqual([60, 102, 119]);
    expect(readFileSync('README.md', 'utf8').replace(/\s+/g, ' ')).toContain('(60 µs a counted kernel on that host, where two earlier pairs took 102 and 119 µs)');
    expect(readFileSync(`${R}time-heldout10/README.md`, 'utf8').replace(/\s+/g, ' ')).toContain("the ninth draw's r00 took 102 µs and the eighth's r05 119 µs on H100s");
  });
  it('memory, held out: the ninth draw\'s two runs and the tenth\'s four, each with its one-micro-batch twin, within 0.5% (−0.3% to +0.5%) at a tenth of a point; the tenth\'s r02-mb1 +0.51% since RoPE\'s table is counted', () => {
    const runs = [...['r00', 'r01'].map((id) => `time-heldout9/runs/${id}`), ...['r00', 'r01', 'r02', 'r03'].map((id) => `time-heldout10/runs/${id}`)];
    for (const id of runs.flatMap((r) => [r, `${r}-mb1`])) {
      const p = predictFromLog(parseMegatronLog(readFileSync(`${R}${id}.log`, 'utf8'), id), null);
      if ('error' in p) throw new Error(`${id}: ${p.error}`);
      // r02-mb1: +0.486% until the model counted RoPE's cached table (4 MiB, 2026-12-07), +0.508% since
      if (id === 'time-heldout10/runs/r02-mb1') expect((100 * p.totalError!).toFixed(2), id).toBe('0.51');
      else expect(Math.abs(p.totalError!), id).toBeLessThan(0.005);
    }
  });
  it('the H100 runs are in no stored timing set (the profile is the H200\'s)', () => {
    expect(TIMING_SETS.some((t) => /heldout(8|9|10)/.test(t.dir))).toBe(false);
    for (const d of ['heldout8-followup', 'time-heldout8', 'time-heldout9', 'time-heldout10']) expect(readFileSync(`${R}${d}/gpu.txt`, 'utf8')).toMatch(/^NVIDIA H100/);
  });
  it('timeTable.ts --fresh takes a draw with twins (its runs.json names the -mb1 runs draw.json does not): the tenth draw\'s eight rows, as its README gives them', () => {
    const rows = freshRows(`${R}time-heldout10`);
    expect(rows.map((r) => r.id)).toEqual(['r00', 'r00-mb1', 'r01', 'r01-mb1', 'r02', 'r02-mb1', 'r03', 'r03-mb1']);
    expect(rows.map((r) => (100 * r.error).toFixed(1))).toEqual(['-10.2', '-10.8', '-16.7', '-10.3', '-12.0', '-11.7', '2.0', '-30.3']);
    expect(freshRows(`${R}time-heldout9`).map((r) => r.id)).toEqual(['r00', 'r00-mb1', 'r01', 'r01-mb1', 'r03']);   // r03 (MoE) ran later, without its twin
    // a pair's rows differ in their configuration column only by the micro batches a step (b2×3 against b2)
    expect(rows.filter((r) => r.id.startsWith('r00')).map((r) => r.config)).toEqual(['L4 h4096 a32 SwiGLU s2048 b2×3 none', 'L4 h4096 a32 SwiGLU s2048 b2 none']);
  });
});

describe('MoE steps held out (the campaign\'s held-out half, every MoE step of the fresh draws): each no further off than now', () => {
  // |error| in % as the shipped model gives it (2026-12-05), rounded up at a tenth of a point: a bound on accuracy,
  // so a change that moves a MoE term (the unpermute's bytes, the router's launches) fails here, not only in replay's text.
  const NOW: Record<string, number> = {
    'c-r11': 4.8, 'c-r27': 7.5, 'c-r40': 20.9, 'c-r44': 11.5, 'h1-r02': 33.3, 'h1-r04': 14.1, 'h1-r13': 2.7, 'h1-r14': 11.4, 'h1-r23': 2.4, 'h2-r03': 3.6, 'h2-r06': 22.5,
    'h2-r08': 1.1, 'h3-r00': 4.0, 'h3-r03': 8.0, 'h4-r02': 0.5, 'h4-r04': 1.5, 'h4-r05': 6.1, 'h4-r06': 0.9, 'h6-r02': 7.2, 'h6-r04': 11.1, 'h6-r05': 10.2,
  };
  it('21 MoE steps, each |error| within its bound', () => {
    const moe = storedRows().filter((r) => /MoE/.test(r.config) && (r.key.startsWith('c-') ? r.split === 'heldout' : true));
    expect(moe.map((r) => r.key).sort()).toEqual(Object.keys(NOW).sort());
    for (const r of moe) expect(Math.abs(r.error) * 100, `${r.key} ${r.config}`).toBeLessThanOrEqual(NOW[r.key]);
  });
});

describe("the misses run again (bench/results/2026-12-03-time-repeats, selected at 12ed8e1 before any ran): the measurement's or the model's", () => {
  const DR = 'bench/results/2026-12-03-time-repeats';
  type Entry = { id: string; iters: number; first: { why: 'miss' | 'hit'; measuredMs: number; error: number } };
  const draw = JSON.parse(readFileSync(`${DR}/draw.json`, 'utf8')) as { seed: number; kept: Entry[] };
  const again = new Map(timeRows(H200, DR, false, `${DR}/draw.json`).map((r) => [r.id, r]));
  const ratio = (e: Entry) => again.get(e.id)!.measuredMs / e.first.measuredMs;

  it('the 12 stored timing logs (of 101) the model missed by 15% or more when they were selected, and two hits; all 14 ran again, alone, as many iterations as the first time', () => {
    // The selection as frozen (draw.json's errors, from the model at 12ed8e1), not as today's model would make it.
    // The 101 stored when they were selected (the fifth and sixth draws came later); with them, 116, and still the same 12 miss.
    const stored = storedRows();
    expect(stored.filter((r) => !r.set.includes('heldout5') && !r.set.includes('heldout6'))).toHaveLength(101);
    expect(stored).toHaveLength(116);
    expect(stored.filter((r) => Math.abs(r.error) >= MISS).map((r) => r.key).sort()).toEqual(draw.kept.filter((e) => e.first.why === 'miss').map((e) => e.id).sort());
    const misses = draw.kept.filter((e) => e.first.why === 'miss');
    expect(misses).toHaveLength(12);
    for (const e of misses) expect(Math.abs(e.first.error), e.id).toBeGreaterThanOrEqual(MISS);
    const hits = draw.kept.filter((e) => e.first.why === 'hit');
    expect(hits).toHaveLength(2);
    for (const e of hits) expect(Math.abs(e.first.error), e.id).toBeLessThan(MISS);
    expect([...again.keys()].sort()).toEqual(draw.kept.map((e) => e.id).sort());
    for (const e of draw.kept) expect(again.get(e.id)!.iterations + 2, e.id).toBe(e.iters);
  });

  it('the six misses where the model was slow came back at or past the model (the same step measured 1.18-1.59x apart between calls; a hit too)', () => {
    const slow = draw.kept.filter((e) => e.first.why === 'miss' && e.first.error > 0);
    expect(slow.map((e) => e.id).sort()).toEqual(['h1-r00', 'h1-r16', 'h2-r04', 'h2-r06', 'h2-r09', 'h2-r11']);
    for (const e of slow) {
      expect(ratio(e), e.id).toBeGreaterThan(1.17);
      expect(again.get(e.id)!.error, e.id).toBeLessThan(0.01);
    }
    const hit = draw.kept.find((e) => e.id === 'h2-r05')!;
    expect(hit.first.why).toBe('hit');
    expect(ratio(hit)).toBeGreaterThan(1.3);
  });

  it('NOT MET, the model: the six misses where it was fast came back fast again (three dense, three MoE)', () => {
    const fast = draw.kept.filter((e) => e.first.why === 'miss' && e.first.error < 0);
    expect(fast.map((e) => e.id).sort()).toEqual(['c-r03', 'c-r20', 'c-r30', 'c-r40', 'h1-r02', 'h1-r06']);
    for (const e of fast) {
      expect(again.get(e.id)!.error, e.id).toBeLessThan(-MISS);
      expect(Math.abs(ratio(e) - 1), e.id).toBeLessThan(0.15);
    }
  });

  it("the dense ones profiled: the model's GPU side is 0.90-0.96x the GPU busy time; the GPU idles 25-54 ms a step, more than the model's host, over 78-119 host synchronisations", () => {
    const prof = termRuns(`${DR}/terms`);
    expect(prof.map((r) => r.name)).toEqual(['c-r20.prof', 'c-r30.prof', 'h1-r06.prof']);
    for (const r of prof) {
      const id = r.name.split('.')[0], k = r.profile!;
      expect(r.gpuMs / k.gpuBusyMs, id).toBeGreaterThan(0.9);
      expect(r.gpuMs / k.gpuBusyMs, id).toBeLessThan(0.97);
      const host = r.predicted.terms.find((t) => t.name === 'host')!.ms;
      const first = draw.kept.find((e) => e.id === id)!.first.measuredMs;
      for (const step of [first, again.get(id)!.measuredMs]) expect(step - k.gpuBusyMs, id).toBeGreaterThan(host + 5);
      const syncs = k.runtime.filter((x) => x.name === 'cudaStreamSynchronize').reduce((s, x) => s + x.count, 0);
      expect(syncs, id).toBeGreaterThanOrEqual(78);
      expect(syncs, id).toBeLessThanOrEqual(119);
    }
  });
});

describe('logs that are not time data, by name', () => {
  it("the campaign's 47 runs shared one GPU with up to 7 others: against the same configurations alone, up to 61% slower", () => {
    const campaign = 'bench/results/2026-12-02-megatron-campaign';
    expect(readFileSync(`${campaign}/README.md`, 'utf8')).toMatch(/up to 8\s+at once/);
    const ratios = rows.map((r) => {
      const shared = steadyIterMs(parseMegatronLog(readFileSync(`${campaign}/runs/${r.id}.log`, 'utf8'), r.id)).ms!;
      const alone = steadyIterMs(parseMegatronLog(readFileSync(`${TIMING_DIR}/runs/${r.id}.log`, 'utf8'), r.id), 2).ms!;
      return shared / alone;
    });
    expect(ratios.filter((x) => x > 1.1).length).toBeGreaterThanOrEqual(10);
    expect(Math.max(...ratios)).toBeGreaterThan(1.4);
    // The rule replay's note uses (notTimeData): it takes every campaign log and no stored timing log.
    const text = (f: string) => readFileSync(f, 'utf8');
    const campaignLogs = readdirSync(`${campaign}/runs`).filter((f) => f.endsWith('.log'));
    expect(campaignLogs).toHaveLength(48);
    for (const f of campaignLogs) expect(notTimeData(parseMegatronLog(text(`${campaign}/runs/${f}`), f)), f).toMatch(/^not time data: /);
    const timing = [...TIMING_SETS.map((s) => `${s.dir}/runs`), `${TIMING_DIR}/superseded`];
    let n = 0;
    for (const d of timing)
      for (const f of readdirSync(d).filter((x) => x.endsWith('.log'))) {
        expect(notTimeData(parseMegatronLog(text(`${d}/${f}`), f)), `${d}/${f}`).toBeNull();
        n++;
      }
    expect(n).toBeGreaterThanOrEqual(119);
  });

  it('bench/results/memory-h200-2026-12-01/megatron: 10 logs run in waves of 4-5 at once, 3 iterations each (1 after warm-up)', () => {
    const dir = 'bench/results/memory-h200-2026-12-01/megatron';
    const logs = readdirSync(dir).filter((f) => f.endsWith('.log'));
    expect(logs).toHaveLength(10);
    for (const f of logs) expect(parseMegatronLog(readFileSync(`${dir}/${f}`, 'utf8'), f).iterations.length, f).toBe(3);
    expect(readFileSync('bench/megatron/h200_memory.sh', 'utf8')).toMatch(/wave 2/);
  });
});

describe('the model, term by term', () => {
  const seed = PRESETS['seed-32L-4096h'].model;
  const base: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 32768, tensorParallel: 8, sequenceParallel: true };
  const term = (p: ParallelConfig, name: string) => iterationTime(seed, p).terms.find((t) => t.name === name)?.ms ?? 0;

  it("the masked_fill_'s pieces as PyTorch splits them (32-bit byte offsets, halving the largest extent): contiguous within one head", () => {
    const dims = (a: number, s: number, b = 1, t = 1) => timeDims({ ...PRESETS['seed-32L-4096h'].model, numAttentionHeads: a, hiddenSize: 64 * a }, { ...DEFAULT_PARALLEL, seqLength: s, microBatchSize: b, tensorParallel: t, flashAttention: false }, { biasDropout: true, biasActivation: true });
    // r09 of the fresh draw, profiled: 4 heads at 32K, 60 masked_fill launches for 15 calls, the vectorised kernel.
    expect(maskPieces(dims(4, 32768))).toEqual({ pieces: 4, contiguous: 1 });
    // 16K, 8 heads (2^31 scores, 2^32 bytes): two strided pieces of 4 heads; 4 heads fit as one strided call.
    expect(maskPieces(dims(8, 16384))).toEqual({ pieces: 2, contiguous: 0 });
    expect(maskPieces(dims(4, 16384))).toEqual({ pieces: 1, contiguous: 0 });
    // Past sl·s = 2^29 two heads do not fit: one-head pieces at 24K.
    expect(maskPieces(dims(8, 24576))).toEqual({ pieces: 8, contiguous: 1 });
    // Three heads at 20K: one head, then two (which fit): a mix.
    const mix = maskPieces(dims(3, 20480));
    expect(mix.pieces).toBe(2);
    expect(mix.contiguous).toBeCloseTo(1 / 3, 12);
    // One head a GPU (TP = heads): contiguous at any length; 64K splits within the head.
    expect(maskPieces(dims(8, 4096, 1, 8))).toEqual({ pieces: 1, contiguous: 1 });
    expect(maskPieces(dims(8, 65536, 1, 8))).toEqual({ pieces: 4, contiguous: 1 });
  });

  it('unfused attention counts every score; FlashAttention the causal half', () => {
    const local = { ...base, flashAttention: false }, flash = base;
    const a = term(local, 'attention'), b = term(flash, 'attention');
    expect(a).toBeGreaterThan(b);
    expect(term({ ...local, seqLength: 65536 }, 'attention') / a).toBeGreaterThan(3.5);
  });

  it('recompute: selective re-runs the core (the attention forward), full re-runs every layer', () => {
    const sel = term({ ...base, recompute: 'selective' }, 'recompute');
    const full = term({ ...base, recompute: 'full', recomputeMethod: 'uniform', recomputeNumLayers: 1 }, 'recompute');
    const attnFwd = term(base, 'attention') / (1 + 2.5 * 318.7 / 297.7); // forward share at the flash rates
    expect(sel).toBeGreaterThan(0.8 * attnFwd);
    expect(sel).toBeLessThan(1.2 * attnFwd);
    expect(full).toBeGreaterThan(sel);
    const block4 = term({ ...base, recompute: 'full', recomputeMethod: 'block', recomputeNumLayers: 4 }, 'recompute');
    expect(block4 / full).toBeCloseTo(4 / 32, 6);
  });

  it('TP communication: none at TP = 1; sequence parallelism moves the same bytes in 4 + 6 collectives instead of 2 + 2 all-reduces, its backward partly behind the GEMMs', () => {
    expect(term({ ...base, tensorParallel: 1, sequenceParallel: false }, 'tp-comm')).toBe(0);
    const sp = term(base, 'tp-comm'), ar = term({ ...base, sequenceParallel: false }, 'tp-comm');
    // SP exposes the row-parallel linears' backward all-gather (the all-reduce's backward is an identity); the
    // column-parallel linears' backward collectives run behind their GEMMs either way (test/time-terms.test.ts by hand).
    expect(sp).toBeGreaterThan(ar);
    expect(sp / ar).toBeLessThan(10 / 8 - 0.01);
  });

  it("TFLOP/s per GPU is the model's FLOPs over every GPU: a step of the same global batch does the same FLOPs at any PP (the output layer is one stage's)", () => {
    // Llama-3 8B at 16K on 16 GPUs, global batch 16: FLOPs a step = TFLOP/s/GPU × GPUs × step time.
    const llama = PRESETS['llama3-8b'].model;
    const flops = (pp: number) => {
      const dp = 16 / pp, t = iterationTime(llama, { ...DEFAULT_PARALLEL, seqLength: 16384, pipelineParallel: pp, dataParallel: dp, distributedOptimizer: true }, { microBatches: 16 / dp });
      return t.tflopsPerGpu * 1e12 * 16 * (t.iterMs / 1e3);
    };
    const one = flops(1);
    // (the output layer counted on every stage gave PP = 16 1.79× PP = 1's FLOPs, and advise's TFLOP/s/GPU as much too high)
    for (const pp of [2, 4, 8, 16]) expect(flops(pp) / one, `PP = ${pp}`).toBeCloseTo(1, 9);
  });

  it('CP p2p hides the ring behind attention at long sequences; all_gather and a2a expose theirs', () => {
    const cp = { ...base, tensorParallel: 1, sequenceParallel: false, contextParallel: 4, seqLength: 131072 };
    expect(term({ ...cp, cpCommType: 'p2p' }, 'cp-comm')).toBe(0);
    expect(term({ ...cp, cpCommType: 'all_gather' }, 'cp-comm')).toBeGreaterThan(0);
    expect(term({ ...cp, cpCommType: 'a2a' }, 'cp-comm')).toBeGreaterThan(0);
  });

  it('expert parallelism: E/EP experts a rank, the tokens there and back, expert gradients over DP·CP/EP ranks, the optimizer shard as the memory model\'s', () => {
    // An 8-expert top-2 model (an adversarial review's case) at 32K on 8 GPUs, DP = 8, EP = 8, alltoall dispatcher.
    const moeModel = { numLayers: 32, hiddenSize: 4096, numAttentionHeads: 32, numQueryGroups: 8, swiglu: true, biasLinear: false, ffnHiddenSize: 14336,
      moe: { numExperts: 8, routerTopk: 2, dispatcher: 'alltoall' as const } };
    const link = { name: 'test', gbps: 8, latencyUs: 0 };   // 1 GB/s: ms = bytes / 1e6
    const par = (ep: number): ParallelConfig => ({ ...DEFAULT_PARALLEL, seqLength: 32768, dataParallel: 8, expertParallel: ep, distributedOptimizer: true });
    const x = timeDims(moeModel, par(8), { biasDropout: true, biasActivation: true });
    // Each call moves 7/8 of this rank's T·k bf16 token copies: 32768 · 2 · 4096 · 2 bytes; two calls forward, two backward.
    const one = ((7 / 8) * 32768 * 2 * 4096 * 2) / 1e6;
    expect(moeDispatchMs(x, moeModel.moe, 8, { ep: link, tp: link })).toEqual({ fwd: 2 * one, bwd: 2 * one });
    expect(moeDispatchMs(x, moeModel.moe, 1, { ep: link, tp: link })).toEqual({ fwd: 0, bwd: 0 });
    // The allgather dispatcher (Megatron-LM's default) gathers every EP rank's T tokens: 7/8 of 8 · T · h · 2 bytes a call.
    expect(moeDispatchMs(x, { ...moeModel.moe, dispatcher: undefined }, 8, { ep: link, tp: link }).fwd).toBeCloseTo((2 * 7 * 32768 * 4096 * 2) / 1e6, 6);
    const t = (ep: number) => iterationTime(moeModel, par(ep), { link });
    const term = (ep: number, name: string) => t(ep).terms.find((y) => y.name === name)?.ms ?? 0;
    expect(term(8, 'ep-comm')).toBeCloseTo(32 * 4 * one, 6);
    expect(term(1, 'ep-comm')).toBe(0);
    // One local expert a layer at EP = 8: 32 layers × (forward, backward) module passes, not 8 experts' worth.
    expect(t(8).expertPasses).toBe(32 * 2);
    expect(t(1).expertPasses).toBe(32 * 2 * 8);
    // The experts' FLOPs a rank are the same at EP = 8 as at EP = 1 (T·k routed copies either way), in bigger GEMMs.
    const moeFlops = (ep: number) => moeOps(x, moeModel.moe, ep).filter((o) => o.kind === 'gemm').reduce((a, o) => a + o.fwd, 0);
    expect(moeFlops(8)).toBeCloseTo(moeFlops(1), -3);
    // Gradients: the dense ones over DP·CP = 8 ranks, the experts' over 8/8 = 1 (nothing to reduce); Adam's shard likewise.
    const { perGpu, experts } = stageParameters(moeModel, par(8));
    const reduce = (n: number, ranks: number) => collectiveMs(link, 4 * n, ranks) + collectiveMs(link, 2 * n, ranks);
    expect(term(8, 'dp-comm')).toBeCloseTo(reduce(perGpu - experts, 8), 6);
    // Adam's 98 B a parameter over the shard; the gradient buffer's zeroing, 4 B, over every parameter the GPU holds.
    const adam = term(8, 'optimizer') / term(1, 'optimizer');
    const bytes = (ep: number) => { const q = stageParameters(moeModel, par(ep)); return 98 * ((q.perGpu - q.experts) / 8 + q.experts / (8 / ep)) + 4 * q.perGpu; };
    expect(adam).toBeCloseTo(bytes(8) / bytes(1), 6);
  });

  it("each group of ranks talks over the node's link while its GPUs fit one node, else the link between nodes (Megatron-LM's rank order: TP, CP, DP, PP; experts TP, EP)", () => {
    const nv = LINKS['nvlink-h200'], ib = LINKS['ib-ndr'];
    const links = (tp: number, cp: number, dp: number, pp: number, ep = 1, gpusPerNode?: number) =>
      groupLinks({ tensorParallel: tp, contextParallel: cp, dataParallel: dp, pipelineParallel: pp, expertParallel: ep }, { gpusPerNode });
    expect(links(8, 1, 1, 1)).toEqual({ tp: nv, cp: nv, ep: nv, dp: nv, pp: nv });
    expect(links(4, 4, 2, 2)).toEqual({ tp: nv, cp: ib, ep: nv, dp: ib, pp: ib });
    expect(links(2, 4, 1, 2)).toEqual({ tp: nv, cp: nv, ep: nv, dp: nv, pp: ib });
    expect(links(2, 2, 4, 1, 8)).toEqual({ tp: nv, cp: nv, ep: ib, dp: ib, pp: ib });
    expect(links(4, 4, 1, 1, 1, 16)).toEqual({ tp: nv, cp: nv, ep: nv, dp: nv, pp: nv });
    // Blocks that do not divide the node straddle two (TP pairs on nodes of 3 GPUs; CP groups of 6 on nodes of 8).
    expect(links(2, 1, 3, 1, 1, 3).tp).toEqual(ib);
    expect(links(2, 3, 4, 1)).toEqual({ tp: nv, cp: ib, ep: nv, dp: ib, pp: ib });
    // A step at 16 GPUs: the CP ring and the gradients over InfiniBand cost more than inside one 16-GPU node.
    const par: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 16384, tensorParallel: 2, sequenceParallel: true, contextParallel: 8, dataParallel: 1, cpCommType: 'all_gather' };
    const term = (o: { gpusPerNode?: number }, name: string) => iterationTime(PRESETS['seed-32L-4096h'].model, par, o).terms.find((t) => t.name === name)!;
    expect(term({}, 'cp-comm').ms / term({ gpusPerNode: 16 }, 'cp-comm').ms).toBeGreaterThan(5);
    expect(term({}, 'dp-comm').what).toMatch(/\(ib-ndr\)$/);
    expect(term({ gpusPerNode: 16 }, 'dp-comm').what).toMatch(/\(nvlink-h200\)$/);
    expect(term({}, 'tp-comm').ms).toBeCloseTo(term({ gpusPerNode: 16 }, 'tp-comm').ms, 9);
  });

  it('the pipeline sends each micro batch\'s activations (bf16, T·h/t with SP) once per model chunk a rank holds, the gradients back, and a tied embedding\'s gradient between the first and last stages', () => {
    const link = { name: 'test', gbps: 8, latencyUs: 0 };
    const par = (vp: number): ParallelConfig => ({ ...DEFAULT_PARALLEL, seqLength: 8192, pipelineParallel: 4, virtualStages: vp });
    const seed = PRESETS['seed-32L-4096h'].model;
    const pp = (vp: number, m = seed) => iterationTime(m, par(vp), { link, microBatches: 4 }).terms.find((t) => t.name === 'pp-comm')!.ms;
    const sends = (2 * 4 * 8192 * 4096 * 2) / 1e6;   // forward and backward, 4 micro batches, 8192 × 4096 bf16
    const tied = (2 * (1 / 2) * 4 * 128256 * 4096) / 1e6;   // an all-reduce (2 × (n−1)/n) over 2 ranks of the fp32 word-embedding gradient, V·h
    expect(pp(1)).toBeCloseTo(sends + tied, 6);
    expect(pp(2)).toBeCloseTo(2 * sends + tied, 6);
    expect(pp(1, { ...seed, untieEmbeddings: true })).toBeCloseTo(sends, 6);
  });

  it("TP's collectives by hand: 2 more a layer where selective recompute re-runs the MLP, none more for the core", () => {
    const link = { name: 'test', gbps: 8, latencyUs: 0 };
    const par: ParallelConfig = { ...DEFAULT_PARALLEL, seqLength: 8192, tensorParallel: 4, sequenceParallel: true };
    const one = ((3 / 4) * 2 * 8192 * 4096) / 1e6;   // (t−1)/t of T·h bf16
    const tp = (p: ParallelConfig) => iterationTime(PRESETS['seed-32L-4096h'].model, p, { link }).terms.find((t) => t.name === 'tp-comm')!.ms;
    // The step's whole (32·10 + 5 collectives, less what the column-parallel linears' backward GEMMs hide) is checked by
    // hand in test/time-terms.test.ts; recomputing the MLP adds its two forward collectives a layer, exposed.
    expect(tp({ ...par, recompute: 'selective', recomputeModules: ['core_attn', 'mlp'] }) - tp(par)).toBeCloseTo(32 * 2 * one, 6);
    expect(tp({ ...par, recompute: 'selective', recomputeModules: ['core_attn'] })).toBeCloseTo(tp(par), 9);
  });

  it("CP's collectives by hand: all_gather moves (R−1) chunks of K/V forward and twice that backward (gathered again, dK/dV reduce-scattered); a2a (R−1)/R of this rank's Q, K, V, O each way", () => {
    // A 1 GB/s link without latency: ms = bytes / 1e6. Seed model at 32K over CP = 4: T = 8192 tokens a rank, h = hk = 4096, bf16.
    const link = { name: 'test', gbps: 8, latencyUs: 0 }, R = 4;
    const x = timeDims(PRESETS['seed-32L-4096h'].model, { ...DEFAULT_PARALLEL, seqLength: 32768, contextParallel: R }, { biasDropout: true, biasActivation: true });
    const kv = 2 * 2 * 8192 * 4096, qo = kv;
    const ag = cpCommMs(x, { ...DEFAULT_PARALLEL, contextParallel: R, cpCommType: 'all_gather' }, link, 0, 0);
    expect(ag.fwd).toBeCloseTo(((R - 1) * kv) / 1e6, 6);
    expect(ag.bwd).toBeCloseTo((2 * (R - 1) * kv) / 1e6, 6);
    const a2a = cpCommMs(x, { ...DEFAULT_PARALLEL, contextParallel: R, cpCommType: 'a2a' }, link, 0, 0);
    expect(a2a.fwd).toBeCloseTo((((R - 1) / R) * (qo + kv)) / 1e6, 6);
    expect(a2a.bwd).toBeCloseTo(a2a.fwd, 6);
  });
});

describe('replay --json', () => {
  it('prediction.iterMs beside prediction.totalBytes', () => {
    const out = execFileSync('node', ['bin/flashring.mjs', 'replay', `${TIMING_DIR}/runs/r24.log`, '--json'], { encoding: 'utf8' });
    const j = JSON.parse(out) as { reports: { prediction: { iterMs: number; totalBytes: number } }[] };
    const p = j.reports[0].prediction;
    expect(p.totalBytes).toBeGreaterThan(40 * 2 ** 30);
    expect(p.iterMs).toBeCloseTo(rows.find((r) => r.id === 'r24')!.predicted.iterMs, 6);
  });
});

describe("PyTorch's context_parallel ring, as its source runs it (torchAmp.ts), and attention rates by a call's work", () => {
  const model = { numLayers: 8, hiddenSize: 4096, numAttentionHeads: 32, vocabSize: 8192, untieEmbeddings: true, attentionDropout: 0, hiddenDropout: 0, positionEmbedding: 'none' as const };
  const par = (cp: number, s = 16384): ParallelConfig => ({ ...DEFAULT_PARALLEL, seqLength: s, microBatchSize: 1, contextParallel: cp, stack: 'torch-amp' });
  const dims = (cp: number) => timeDims(model, par(cp), { biasDropout: true, biasActivation: true });

  it('the ring\'s memory-bound work per element of one of Q, K, V: 66 B forward and 144 backward at CP = 2, 158 and 264 at CP = 4; none at CP = 1', () => {
    expect(torchRingOps(dims(1))).toEqual([]);
    for (const [cp, f, b] of [[2, 66, 144], [4, 158, 264]]) {
      const x = dims(cp), n = x.T * x.h, [op] = torchRingOps(x);
      expect(op.fwd / n).toBe(f);
      expect(op.bwd / n).toBe(b);
      expect(op.module).toBe('core_attn');
    }
  });

  it("its transfers: the all-gather hides behind step 0's attention when that is long; the last dK/dV exchange (8 B per element) never does", () => {
    const x = dims(2), n = x.T * x.h, link = LINKS['nvlink-h200'];
    const dkv = (8 * n) / (link.gbps / 8) / 1e6 + link.latencyUs / 1e3;
    const long = torchRingCommMs(x, link, 1e3, 1e3), none = torchRingCommMs(x, link, 0, 0);
    expect(long.fwd).toBe(0);
    expect(long.bwd).toBeCloseTo(dkv, 6);
    expect(none.bwd).toBeGreaterThan(2 * dkv);
  });

  it('selective recompute of the core runs its CP transfers again; DDP moves 16 B per parameter only where there are ranks to reduce over', () => {
    const at = (p: ParallelConfig, name: string) => iterationTime(model, p).terms.find((t) => t.name === name)?.ms ?? 0;
    // over InfiniBand the forward's all-gather outlasts step 0's attention, so recomputing the core shows it again
    const slow = LINKS['ib-ndr'], small = par(2, 4096);
    const cpComm = (p: ParallelConfig) => iterationTime(model, p, { link: slow }).terms.find((t) => t.name === 'cp-comm')!.ms;
    const again = cpComm({ ...small, recompute: 'selective' }) - cpComm(small);
    expect(again).toBeGreaterThan(1);
    const x = timeDims(model, small, { biasDropout: true, biasActivation: true });
    expect(again).toBeLessThan(8 * torchRingCommMs(x, slow, 0, 0).fwd);
    const grads = (cp: number) => at(par(cp, 4096), 'gradients');
    const params = 1678155776;
    expect(grads(2) - grads(1)).toBeCloseTo((16 * params) / (H200.bandwidthGBs.copy * 1e6), 3);
  });

  it("DDP's buckets, priced before they were measured (16 B per parameter: 6.34 ms), against DDP on one H200 (no peer to reduce with): 6.28 and 5.79 ms", () => {
    const rows = readFileSync('bench/results/torchcp-ddp-h200-2026-12-03/ddp-check.jsonl', 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { engine: string; seq_len: number; iter_ms: number });
    const params = 1678155776, modelMs = (params * 16) / (H200.bandwidthGBs.copy * 1e6);
    expect(modelMs).toBeCloseTo(6.34, 2);
    for (const s of [4096, 16384]) {
      const at = (ddp: boolean) => rows.find((r) => r.seq_len === s && r.engine.endsWith(', DDP') === ddp)!.iter_ms;
      const added = at(true) - at(false);
      expect(Math.abs(added / modelMs - 1), `s=${s}: DDP adds ${added.toFixed(2)} ms`).toBeLessThan(0.1);
    }
  });

  it("the ring's half calls (T/2 × T, T × T/2) run at 0.85-1.12× a causal T × T call's time (measured on the H200, cuDNN; they are in the profile as non-causal points)", () => {
    const rows = JSON.parse(readFileSync('bench/results/torch-ring-calls-h200-2026-12-03/ring_calls.json', 'utf8')).rows as { call: string; T: number; fwd_ms: number; bwd_ms: number }[];
    const causal = new Map(rows.filter((r) => r.call === 'causal').map((r) => [r.T, r]));
    expect(causal.size).toBe(6);
    for (const r of rows.filter((q) => q.call !== 'causal'))
      for (const k of ['fwd_ms', 'bwd_ms'] as const) {
        const ratio = r[k] / causal.get(r.T)![k];
        expect(ratio, `${r.call} ${r.T} ${k}`).toBeGreaterThan(0.85);
        expect(ratio, `${r.call} ${r.T} ${k}`).toBeLessThan(1.12);
      }
  });

  it("a call's rate read by its work (heads·q·k): the H16 points, H32 held out, give the H32 forward within 13% (by s alone 26%); the backward within 23%, no better than by s", () => {
    const h16 = { ...H200, sdpaDefault: H200.sdpaDefault.filter((p) => (p.heads ?? 16) === 16) };
    const h32 = H200.sdpaDefault.filter((p) => p.heads === 32 && p.causal && p.s >= 4096); // within the H16 points' range
    expect(h32.map((p) => p.s)).toEqual([4096, 8192, 16384, 32768, 65536]);
    const errs = (pass: 'fwd' | 'bwd', heads: number) =>
      h32.map((p) => flashTflops(h16, 128, p.s, true, pass, 'sdpa', heads) / (pass === 'fwd' ? p.fwdTflops : p.bwdTflops) - 1);
    const mean = (v: number[]) => v.reduce((a, b) => a + Math.abs(b), 0) / v.length, max = (v: number[]) => Math.max(...v.map(Math.abs));
    expect(max(errs('fwd', 32))).toBeLessThan(0.135);
    expect(max(errs('fwd', 16))).toBeGreaterThan(0.25);
    expect(mean(errs('fwd', 32))).toBeLessThan(0.6 * mean(errs('fwd', 16)));
    expect(max(errs('bwd', 32))).toBeLessThan(0.235);
    expect(mean(errs('bwd', 32))).toBeGreaterThan(mean(errs('bwd', 16)));
  });

  it("Megatron-LM's CP layouts call FlashAttention differently: p2p a causal call of T and R − 1 calls of T × T/2, a2a one call of s over heads/R, all_gather two bottom-right calls (keys R·T/2 and (R + 1)·T/2, read as squares of equal pairs); the same FLOPs", () => {
    const seed = PRESETS['seed-32L-4096h'].model;
    const p = (cpCommType: 'p2p' | 'a2a' | 'all_gather'): ParallelConfig => ({ ...DEFAULT_PARALLEL, seqLength: 32768, contextParallel: 4, cpCommType });
    const core = (t: 'p2p' | 'a2a' | 'all_gather') => timeDims(seed, p(t), { biasDropout: true, biasActivation: true });
    const flash = (t: 'p2p' | 'a2a' | 'all_gather') => attentionOps(core(t)).filter((o) => o.kind === 'flash');
    expect(flash('p2p').map((o) => [o.s, o.sk, o.heads, o.causal, o.kernels[0]])).toEqual([[8192, 8192, 32, true, 1], [8192, 4096, 32, false, 3]]);
    expect(flash('a2a').map((o) => [o.s, o.sk, o.heads, o.causal])).toEqual([[32768, 32768, 8, true]]);
    expect(flash('all_gather').map((o) => [o.s, o.sk, o.heads])).toEqual([[4096, 16384, 32], [4096, 20480, 32]]);
    const flops = (t: 'p2p' | 'a2a' | 'all_gather') => flash(t).reduce((a, o) => a + o.fwd, 0);
    expect(flops('a2a')).toBeCloseTo(flops('p2p'), -3);
    expect(flops('all_gather')).toBeCloseTo(flops('p2p'), -3);
    // one long call with a quarter of the heads is priced differently from a ring's short calls
    const ms = (t: 'p2p' | 'a2a' | 'all_gather') => iterationTime(seed, p(t)).terms.find((x) => x.name === 'attention')!.ms;
    expect(ms('a2a')).not.toBeCloseTo(ms('p2p'), 0);
  });
});

describe("the H200 profile's record of how its step times were checked (devices.ts timeChecked, printed by advise and the page's advisor)", () => {
  const c = H200.timeChecked!;
  const pct = (x: number) => Math.round(1000 * x) / 10;
  it('the held-out runs: the fresh draws since the model was frozen (fourth to sixth), recomputed from their logs; the sixth alone', () => {
    const sets = ['2026-12-03-time-heldout4', '2026-12-03-time-heldout5', '2026-12-03-time-heldout5-deep', '2026-12-03-time-heldout6'];
    const err = (d: string) => timeRows(H200, `bench/results/${d}`, false, `bench/results/${d}/draw.json`).map((r) => Math.abs(r.error));
    const e = sets.flatMap(err), e6 = err(sets[3]);
    expect(c.heldOut).toEqual({ draws: 'the fourth to sixth fresh draws', runs: e.length, within15: e.filter((x) => x < MISS).length, medianPct: pct(median(e)!), largestPct: pct(Math.max(...e)) });
    expect(c.latest).toEqual({ draw: 'sixth', runs: e6.length, within15: e6.filter((x) => x < MISS).length, medianPct: pct(median(e6)!) });
  });
  it('every stored timing log, and the CP = 2 steps on 2 × H200, recomputed', () => {
    const s = storedRows(), first = supersededRows();
    expect(c.stored).toEqual({ runs: s.length, within15: s.filter((r) => Math.abs(r.error) < MISS).length });
    // The first logs that re-runs replaced, counted too: every one of them a miss, so the count of hits stays and the runs grow.
    expect(first.map((r) => r.id)).toEqual(['r07', 'r11', 'r40']);
    expect(c.replaced).toEqual({ runs: first.length, within15: first.filter((r) => Math.abs(r.error) < MISS).length });
    const stated = (n: number, of: number) => `${of - n} of the ${of}`;
    const doc = (f: string) => readFileSync(f, 'utf8').replace(/\s+/g, ' ');
    for (const f of ['README.md', 'docs/memory.md']) {
      expect(doc(f), f).toContain(`${stated(c.stored.within15, c.stored.runs)} stored logs miss`);
      expect(doc(f), f).toContain(`${stated(c.stored.within15 + c.replaced.within15, c.stored.runs + c.replaced.runs)} counting the ${c.replaced.runs} first logs that re-runs replaced`);
    }
    const p = (x: number, d: number) => `${x < 0 ? '−' : '+'}${Math.abs(100 * x).toFixed(d)}%`;
    const again = first.map((r) => s.find((x) => x.key === `c-${r.id}`)!);
    expect(doc('docs/memory.md')).toContain(`${first.map((r) => `${r.id} ${p(r.error, 1)}`).join(', ')}, against ${again.map((r) => p(r.error, 1)).join(', ')} re-run`);
    expect(doc('README.md')).toContain(`(r07, r11, r40: ${first.map((r) => p(r.error, 0)).join(', ')} the first time)`);
    const cp2 = torchRows().filter((r) => / CP2 /.test(r.config));
    expect(cp2.every((r) => r.source.includes('2xh200'))).toBe(true);
    expect([c.multiGpu.runs, c.multiGpu.within15]).toEqual([cp2.length, cp2.filter((r) => Math.abs(r.error) < MISS).length]);
    const misses = cp2.filter((r) => Math.abs(r.error) >= MISS);
    expect(misses.every((r) => r.error < -0.18 && r.error > -0.34 && /s(4096|8192) /.test(r.config))).toBe(true);
  });
  it('advise prints it under its header, and it says on what it was checked and what was not', () => {
    const r = execFileSync('node', ['bin/flashring.mjs', 'advise', '--num-layers', '4', '--hidden-size', '1024', '--num-attention-heads', '16', '--seq-length', '8192', '--gpus', '2', '--top', '1'], { encoding: 'utf8' });
    const lines = timeCheckedLines(H200);
    expect(r.split('\n').slice(1, 1 + lines.length)).toEqual(lines);
    expect(lines[0]).toMatch(/^step times checked: 23 of 23 runs drawn after the model was frozen \(the fourth to sixth fresh draws\) within 15%, median 4.8%, largest 12.2% \(the sixth alone: 6 of 6, median 10.6%\)/);
    expect(lines[1]).toContain('(unfused attention), 2K-32K tokens, one micro batch');
    expect(lines[3]).toMatch(/^  several micro batches a step, on H100s .*: each dense micro batch past the first costs 0\.7-1\.3× what the model gives it/);
    expect(lines[4]).toMatch(/^  not checked: Megatron-LM's tensor-, context-, pipeline- and data-parallel communication/);
    expect(lines[4]).not.toContain('micro batches');
    expect(timeCheckedLines({ ...H200, timeChecked: undefined })).toEqual([`step times: the NVIDIA H200 profile's have not been checked against real training steps`]);
  });
});
