import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configFromArgs, parseMegatronLog, unmodelledArgs } from '../src/memory/megatron.js';
import { parseCsv, toCsv, measuredRow, measuredRows, sweepRows } from '../src/memory/csv.js';
import { DEFAULT_PARALLEL, PRESETS, defaultLines, memoryBreakdown, peakActivationBytes, sweep } from '../src/memory/model.js';
import { predictTimeFromLog } from '../src/memory/time/fromLog.js';
import { memoryDiff, setupDiff } from '../src/memory/compare.js';
import { InputError } from '../src/errors.js';

const fx = (n: string) => readFileSync(join(__dirname, 'fixtures/megatron', n), 'utf8');

describe('Megatron-LM log replay', () => {
  it('core 0.4: no timestamps, unrounded memory, no CP argument, no throughput', () => {
    const r = parseMegatronLog(fx('core_0.4_tp8.log'), 'core_0.4_tp8.log');
    expect(r.point).toMatchObject({ seqLength: 32768, tp: 8, cp: 1, pp: 1, sp: false, recompute: 'none', microBatch: 1, numLayers: 32, flashAttention: true });
    expect(r.iterations).toHaveLength(20);
    expect(r.point.window).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
    // elapsed = 4000 + it % 3 over iterations 11..20 → median of {2,0,1,2,0,1,2,0,1,2} + 4000
    expect(r.point.iterMs).toBe(4001);
    expect(r.point.tflopsPerGpu).toBeNull();
    expect(r.point.peakMaxAllocatedGiB).toBeCloseTo((60123.456789 + 10.5) / 1024, 9);
    expect(r.warnings.join('\n')).toMatch(/context_parallel_size not found/);
    expect(r.warnings.join('\n')).toMatch(/--log-throughput/);
    expect(r.warnings.join('\n')).toMatch(/Theoretical memory footprints/);
  });

  it('core 0.10: timestamps, CP=2 with SP, theoretical weight-and-optimizer only, peak over 4 ranks', () => {
    const r = parseMegatronLog(fx('core_0.10_tp4_cp2_sp.log'), 'mid');
    expect(r.point).toMatchObject({ seqLength: 131072, tp: 4, cp: 2, sp: true, recompute: 'none' });
    expect(r.memory).toHaveLength(4);
    expect(r.point.peakMaxAllocatedGiB).toBeCloseTo((70321.98765 + 300) / 1024, 9);
    expect(r.point.iterMs).toBe(9015.5);
    expect(r.point.tflopsPerGpu).toBe(365.5);
    expect(r.point.theoretical).toEqual({ weightAndOptimizerMiB: 14336.5, activationMiB: null, totalMiB: null });
  });

  it('core 0.16: microsecond timestamps, 2-decimal memory, full theoretical line, selective recompute', () => {
    const r = parseMegatronLog(fx('core_0.16_tp4_cp2_sp_selective.log'), 'new');
    expect(r.point).toMatchObject({ cp: 2, tp: 4, recompute: 'selective' });
    expect(r.point.theoretical).toEqual({ weightAndOptimizerMiB: 14336.5, activationMiB: 38000.25, totalMiB: 52336.75 });
    expect(r.point.peakMaxAllocatedGiB).toBeCloseTo(58001.5 / 1024, 9);
    expect(r.warnings).toEqual([]);
  });

  it('a dump at odds with itself (world_size ≠ TP × CP × PP × DP) and a 0.0 ms iteration are said in the warnings, the values kept', () => {
    const log = fx('core_0.16_tp4_cp2_sp_selective.log');
    const w = parseMegatronLog(log.replace(/(data_parallel_size \.+) 1$/m, '$1 2'), 'dp2');
    expect(w.warnings).toEqual([expect.stringMatching(/^world_size 8 is not TP × CP × PP × DP = 4 × 2 × 1 × 2 = 16: /)]);
    const noDp = parseMegatronLog(log.replace(/^ {2}data_parallel_size .*\n/m, '').replace(/(world_size \.+) 8$/m, '$1 16'), 'nodp');
    expect(noDp.warnings).toEqual([expect.stringMatching(/^world_size 16 is not TP × CP × PP × DP = 4 × 2 × 1 × 1 = 8 \(no data_parallel_size in the dump: DP taken as 1\): /)]);
    const z = parseMegatronLog(log.replace(/elapsed time per iteration \(ms\): 9902\.0/, 'elapsed time per iteration (ms): 0.0'), 'zero');
    expect(z.warnings).toEqual([expect.stringMatching(/^elapsed time per iteration 0\.0 ms at iteration 2: no step takes no time .* a median that counts it reads low/)]);
  });

  it('a truncated run: reports the OOM and what is missing, invents nothing', () => {
    const r = parseMegatronLog(fx('truncated_oom.log'), 'oom');
    expect(r.point.outOfMemory).toBe(true);
    expect(r.point.iterMs).toBeNull();
    expect(r.point.peakMaxAllocatedGiB).toBeNull();
    const w = r.warnings.join('\n');
    // It ran its 6 iterations (6 of 6): a short window by design is no warning (replay's line says it); the out-of-memory is one.
    expect(w).not.toMatch(/warm-up/);
    expect(w).toMatch(/no "\[Rank N\]/);
    expect(w).toMatch(/out of memory/);
    const row = measuredRow(r.point)!;
    expect(row.fits).toBe(false);
    expect(row.total_gib).toBeNull();
  });

  it("an out-of-memory other processes caused (PyTorch's message: capacity − free − this process) is no verdict on the run: said, and its row has no fits and no peak", () => {
    const failed = (n: string) => readFileSync(`bench/results/memory-h200-2026-12-01/megatron-failed/${n}.log`, 'utf8');
    // Beside B's run (pid 3494, 120.65 GiB): this process 18.99 GiB of the 139.80, 8.00 GiB asked for with 141.50 MiB free.
    const r = parseMegatronLog(failed('A-s16384-none'), 'a');
    expect(r.point.outOfMemory).toBe(true);
    expect(r.point.outOfMemoryOthers).toMatchObject({ capacityGiB: 139.8, processGiB: 18.99, requestedGiB: 8, line: 1006 });
    expect(r.point.outOfMemoryOthers!.otherGiB).toBeCloseTo(139.8 - 141.5 / 1024 - 18.99, 9);
    expect(r.warnings).toContain("the log reports CUDA out of memory with other processes holding 120.67 GiB of the GPU's 139.80 GiB (this process 18.99 GiB, 8.00 GiB asked for, line 1006): " +
      "not a verdict on the run's configuration, which is not compared on it");
    const row = measuredRow(r.point)!;
    expect([row.fits, row.total_gib]).toEqual([null, null]);
    expect(row.source).toMatch(/out of memory with other processes holding 120\.67 GiB of the GPU: no verdict\)$/);
    // Its own out-of-memory (this process held 139.75 of the 139.80 GiB) stays a verdict.
    const own = parseMegatronLog(readFileSync('bench/results/2026-12-02-time-heldout/runs/r21.log', 'utf8'), 'r21');
    expect([own.point.outOfMemory, own.point.outOfMemoryOthers]).toEqual([true, null]);
    expect(measuredRow(own.point)!.fits).toBe(false);
  });

  it("an out-of-memory is the run's own where one rank's message says so, where others held too little to have covered the allocation, or in PyTorch's older message", () => {
    const log = fx('truncated_oom.log').replace(/^torch\.OutOfMemoryError: .*$/m, ''); // its own message, without the figures: the run's own
    const msg = (free: string, mine: string, ask = '2.00 GiB') => `[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${ask}. GPU 0 has a total capacity of 79.15 GiB of which ${free} is free. ` +
      `Including non-PyTorch memory, this process has ${mine} memory in use. Of the allocated memory 50.00 GiB is allocated by PyTorch`;
    const others = (lines: string[]) => parseMegatronLog(`${log}\n${lines.join('\n')}\n`, 'x').point.outOfMemoryOthers;
    expect(others([msg('1.05 GiB', '20.00 GiB')])!.otherGiB).toBeCloseTo(58.1, 9);
    expect(others([msg('1.05 GiB', '20.00 GiB'), msg('10.00 MiB', '79.13 GiB')])).toBeNull(); // a second rank ran out on its own
    expect(others([msg('1.05 GiB', '77.60 GiB')])).toBeNull(); // 0.50 GiB of others: a CUDA context, not what stopped it
    expect(others([msg('100.00 MiB', '76.05 GiB', '8.00 GiB')])).toBeNull(); // 3 GiB of others, 8 asked for: it ran out all the same
    expect(others(['RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity; 20.00 GiB already allocated; 1.05 GiB free; 20.50 GiB reserved in total by PyTorch)'])).toBeNull();
    // A traceback's echo without the figures changes nothing.
    expect(others([msg('1.05 GiB', '20.00 GiB'), 'torch.OutOfMemoryError']))!.not.toBeNull();
  });

  it("the position embedding is the dump's as Megatron-LM reads it: learned_absolute when it names none (its default, SwiGLU or not, said), the 2023 releases' rotary flags, a bad type refused", () => {
    // r00: SwiGLU with position_embedding_type rope, and (as every release since 2023 prints it) use_rotary_position_embeddings False beside it.
    const log = readFileSync('bench/results/2026-12-02-megatron-campaign/runs/r00.log', 'utf8');
    const type = /^( {2}position_embedding_type \.+) rope$/m;
    const pe = (text: string) => {
      const c = configFromArgs(parseMegatronLog(text, 'r00').args);
      if ('error' in c) throw new Error(c.error);
      return { pe: c.model.positionEmbedding, notes: c.notes.filter((n) => /position/.test(n)) };
    };
    expect(pe(log)).toEqual({ pe: 'rope', notes: [] });
    // No type in the dump: Megatron-LM ran learned_absolute (the model's own default for SwiGLU is rope).
    const none = log.replace(type, '').replace(/^ {2}(use_rotary_position_embeddings|add_position_embedding) \.+ \w+$/gm, '');
    expect(pe(none)).toEqual({ pe: 'learned_absolute', notes: ["no position_embedding_type in the dump: learned_absolute assumed (Megatron-LM's default, whatever --swiglu)"] });
    // A release before position_embedding_type (2023): --use-rotary-position-embeddings with --no-position-embedding is RoPE; the rotary flag alone kept the learned table too.
    const old = (rotary: string, table: string) => log.replace(type, '').replace(/(use_rotary_position_embeddings \.+) False/, `$1 ${rotary}`).replace(/(add_position_embedding \.+) True/, `$1 ${table}`);
    expect(pe(old('True', 'False'))).toEqual({ pe: 'rope', notes: [] });
    expect(pe(old('False', 'False'))).toEqual({ pe: 'none', notes: [] });
    expect(pe(old('False', 'True'))).toEqual({ pe: 'learned_absolute', notes: [] });
    expect(pe(old('True', 'True'))).toEqual({ pe: 'learned_absolute', notes: [expect.stringMatching(/^use_rotary_position_embeddings True with add_position_embedding True: .*learned position table beside the rotary/)] });
    // Types the model does not take are named as such; YaRN is RoPE; a damaged value is refused with its line.
    expect(unmodelledArgs(parseMegatronLog(log.replace(type, '$1 relative'), 'r').args)).toEqual(['--position-embedding-type relative']);
    expect(pe(log.replace(type, '$1 yarn')).pe).toBe('rope');
    // What sizes RoPE's cached table and the token dispatcher's kept tensors, at values the model does not take: named.
    expect(unmodelledArgs(parseMegatronLog(log, 'r').args)).toEqual([]);
    const set = (name: string, v: string) => log.replace(new RegExp(`^( {2}${name} \\.+) \\S+$`, 'm'), `$1 ${v}`);
    expect(unmodelledArgs(parseMegatronLog(set('rotary_percent', '0.5'), 'r').args)).toEqual(['--rotary-percent 0.5']);
    expect(unmodelledArgs(parseMegatronLog(set('rotary_percent', '1.00'), 'r').args)).toEqual([]);
    expect(unmodelledArgs(parseMegatronLog(set('moe_router_dtype', 'fp32'), 'r').args)).toEqual(['--moe-router-dtype fp32']);
    expect(unmodelledArgs(parseMegatronLog(set('moe_permute_fusion', 'True'), 'r').args)).toEqual(['--moe-permute-fusion']);
    expect(() => parseMegatronLog(log.replace(type, '$1 rotary'), 'r00')).toThrow("r00 line 661: argument position_embedding_type 'rotary' is not one of learned_absolute, rope, yarn, mrope, relative, none");
  });

  it("the learned position table has max_position_embeddings rows, as Megatron-LM sizes it: a stored run's dump at 4 × seq_length predicts 3·s·h more parameters, priced as parameters, in memory and in the optimizer step", () => {
    // r01: learned_absolute, s = 4096, h = 768, TP = PP = 1, no distributed optimizer (18 B a parameter), max_position_embeddings = seq_length.
    const log = readFileSync('bench/results/2026-12-02-megatron-campaign/runs/r01.log', 'utf8');
    const max = /^( {2}max_position_embeddings \.+) 4096$/m;
    expect(log).toMatch(max);
    const predict = (text: string) => {
      const res = parseMegatronLog(text, 'r01'), c = configFromArgs(res.args);
      if ('error' in c) throw new Error(c.error);
      const t = predictTimeFromLog(res);
      if ('error' in t) throw new Error(t.error);
      return { b: memoryBreakdown(c.model, c.par), notes: c.notes, optimizer: t.terms.find((x) => x.name === 'optimizer')!.what };
    };
    const one = predict(log), four = predict(log.replace(max, '$1 16384'));
    const extra = (16384 - 4096) * 768;
    expect(four.b.parameters - one.b.parameters).toBe(extra);
    expect(four.b.parametersPerGpu - one.b.parametersPerGpu).toBe(extra);
    // bf16 weight, fp32 gradient, fp32 master weight and two Adam moments: 2 + 4 + 12 bytes each; activations untouched.
    expect([four.b.weightBytes - one.b.weightBytes, four.b.gradientBytes - one.b.gradientBytes, four.b.optimizerBytes - one.b.optimizerBytes]).toEqual([2 * extra, 4 * extra, 12 * extra]);
    expect(four.b.totalBytes - one.b.totalBytes).toBe(18 * extra);
    expect(peakActivationBytes(four.b)).toBe(peakActivationBytes(one.b));
    // The time model's optimizer step runs Adam over the same parameters.
    const adam = (what: string) => Number(/Adam over ([\d,]+) /.exec(what)![1].replace(/,/g, ''));
    expect(adam(four.optimizer) - adam(one.optimizer)).toBe(extra);
    // RoPE has no table: its max_position_embeddings weighs nothing.
    const rope = (text: string) => predict(text.replace(/^( {2}position_embedding_type \.+) learned_absolute$/m, '$1 rope')).b.totalBytes;
    expect(rope(log.replace(max, '$1 16384'))).toBe(rope(log));
    // Below seq_length (which Megatron-LM refuses): an edited dump, said, and the table taken as the sequence's.
    const short = predict(log.replace(max, '$1 2048'));
    expect(short.b.totalBytes).toBe(one.b.totalBytes);
    expect(short.notes).toContain('max_position_embeddings 2048 is less than seq_length 4096: Megatron-LM refuses that, so the dump was edited or is of two runs; the position table is taken as 4096 rows, the least Megatron-LM runs (check the log)');
    expect(one.notes.filter((n) => /max_position/.test(n))).toEqual([]);
    // replay --compare names the table where it is the difference, and not where it is the sequence's own (the default).
    const setup = (text: string) => {
      const c = configFromArgs(parseMegatronLog(text, 'r01').args);
      if ('error' in c) throw new Error(c.error);
      return { model: c.model, parallel: c.par };
    };
    const own = setup(log), row = measuredRow(parseMegatronLog(log, 'r01').point)!;
    const unset = { ...own, model: { ...own.model, maxPositionEmbeddings: undefined } };
    expect(memoryDiff(row, setup(log.replace(max, '$1 16384')), unset, 'compared')).toEqual(['--max-position-embeddings 16384 (compared: no --max-position-embeddings)']);
    expect([memoryDiff(row, own, unset, 'compared'), setupDiff(own, unset, 'planner')]).toEqual([[], []]);
  });

  it('a short window is a warning where the log stops before the run\'s own total (in the singular for one iteration), not where the run was that short', () => {
    const log = fx('truncated_oom.log'), of100 = log.replace(/(iteration\s+\d+\/)\s+6 \|/g, '$1     100 |');   // iterations 1-6 of 100
    const warned = (text: string, warmup?: number) => parseMegatronLog(text, 'oom', { warmup }).warnings.filter((w) => w.includes('warm-up')).join('\n');
    expect(warned(of100)).toBe("the log stops at iteration 6 of the run's 100, within the 10 warm-up iterations: the point has no iter time");
    expect(warned(of100, 5)).toBe("the log stops at iteration 6 of the run's 100: only 1 iteration after the 5 warm-up (wanted 10)");
    expect(warned(of100, 4)).toBe("the log stops at iteration 6 of the run's 100: only 2 iterations after the 4 warm-up (wanted 10)");
    for (const w of [undefined, 5, 4]) expect(warned(log, w), `warm-up ${w}`).toBe('');   // 6 of 6: all it was asked for
    expect(parseMegatronLog(log, 'oom', { warmup: 4 }).point.window).toEqual([5, 6]);   // the window taken all the same
  });

  it('a log whose every line a launcher prefixed (torchrun --tee, srun --label, a time stamp) reads as the plain log', () => {
    // The argument lines were read only from the line's start: a prefixed dump gave no arguments, no point and no prediction.
    const log = fx('core_0.16_tp4_cp2_sp_selective.log'), plain = parseMegatronLog(log, 'x.log');
    const prefixes: ((n: number) => string)[] = [() => '[default0]:', () => '0: ', () => '[rank0]: ', (n) => `[2026-01-01 00:00:${String(n % 60).padStart(2, '0')}] `];
    for (const prefix of prefixes) {
      const r = parseMegatronLog(log.split('\n').map((l, n) => prefix(n) + l).join('\n'), 'x.log');
      expect(r.args, prefix(7)).toEqual(plain.args);
      expect(r.point, prefix(7)).toEqual(plain.point);
    }
  });

  it('a dump none of whose lines reads as an argument says so once, not that each argument is missing', () => {
    const r = parseMegatronLog('---- arguments ----\nseq_length: 4096\nnum_layers: 2\n---- end of arguments ----\n', 'yaml.log');
    expect(r.warnings.filter((w) => /argument/.test(w))).toEqual(['the argument dump ("---- arguments ----") holds no line read as "  name ....... value": the run configuration is unknown']);
  });

  it('garbage in: every field reported missing', () => {
    const r = parseMegatronLog('hello\nworld\n', 'x.log');
    expect(r.point.seqLength).toBeNull();
    expect(r.warnings.length).toBeGreaterThanOrEqual(4);
    expect(measuredRow(r.point)).toBeNull();
  });
});

describe('activation_memory.csv', () => {
  it('round-trips model sweeps and measured points, quoting sources with commas', () => {
    const pts = sweep(PRESETS['seed-32L-4096h'].model, { ...DEFAULT_PARALLEL, tensorParallel: 8, sequenceParallel: true }, [4096, 8192], defaultLines(PRESETS['seed-32L-4096h'].model), 80);
    const meas = measuredRow(parseMegatronLog(fx('core_0.10_tp4_cp2_sp.log'), 'a, b.log').point)!;
    const rows = [...sweepRows(pts, 80), meas];
    const back = parseCsv(toCsv(rows));
    expect(back).toHaveLength(rows.length);
    expect(back[0]).toMatchObject({ seq_len: 4096, tp: 8, cp: 1, sp: true, recompute: 'none', source: 'model', line: 'CP=1' });
    expect(back.at(-1)!.source).toBe('measured: Megatron-LM log a, b.log (32L h=4096 a=32; peak max allocated over ranks)');
    expect(back.at(-1)!.total_gib).toBeCloseTo(meas.total_gib!, 4);
  });

  it('reads a hand-written seed-format file and rejects bad ones clearly', () => {
    const seed = 'seq_len,cp,recompute,total_gib\n32768,1,none,61.2\n131072,4,selective,55\n';
    expect(parseCsv(seed, 'seed.csv').map((r) => [r.seq_len, r.cp, r.total_gib, r.source])).toEqual([
      [32768, 1, 61.2, 'measured: seed.csv'], [131072, 4, 55, 'measured: seed.csv'],
    ]);
    expect(() => parseCsv('a,b\n1,2\n', 'x.csv')).toThrow(/missing columns seq_len, total_gib/);
    expect(() => parseCsv('seq_len,total_gib\n4096,lots\n', 'x.csv')).toThrow(InputError);
    expect(() => parseCsv('seq_len,total_gib\n4096,lots\n', 'x.csv')).toThrow(/line 2: total_gib 'lots'/);
    expect(() => parseCsv('', 'x.csv')).toThrow(/empty/);
  });

  it('replay compares measurements only: the model\'s own rows (source model) are left out, a file of nothing else is refused', () => {
    const pts = sweep(PRESETS['seed-32L-4096h'].model, { ...DEFAULT_PARALLEL, tensorParallel: 8, sequenceParallel: true }, [4096, 8192], defaultLines(PRESETS['seed-32L-4096h'].model), 80);
    const model = parseCsv(toCsv(sweepRows(pts, 80)), 'export.csv');
    // The page's export and memory --sweep --csv: fits=false there is a prediction, not an OOM that happened.
    expect(() => measuredRows(model, 'export.csv')).toThrow(/export\.csv holds the model's own output \(source 'model'/);
    const seed = parseCsv('seq_len,cp,recompute,total_gib\n32768,1,none,61.2\n', 'seed.csv');
    expect(measuredRows([...model, ...seed], 'mix.csv')).toEqual({ rows: seed, modelRows: model.length });
    expect(() => measuredRows(parseCsv('seq_len,total_gib\n', 'h.csv'), 'h.csv')).toThrow(/h\.csv: no rows, only a header/);
  });
});
