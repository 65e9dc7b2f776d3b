/**
 * The reader contract (issue 34, item 2): a Megatron-LM log of several runs gives one point per run
 * (or is refused by name); a dump cut off, an argument repeated with another value and impossible
 * values are refused with the line number; activation_memory.csv's quoting, header and empty cells
 * are checked; large inputs are read without recursion or spread.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseMegatronLog, parseMegatronLogs } from '../src/memory/megatron.js';
import { measuredRow, parseCsv, toCsv } from '../src/memory/csv.js';
import { InputError } from '../src/errors.js';

const fx = (n: string) => readFileSync(join(__dirname, 'fixtures/megatron', n), 'utf8');
const A = fx('core_0.16_tp4_cp2_sp_selective.log'); // 47 lines, dump at line 2, seq_length at line 14
const B = fx('core_0.10_tp4_cp2_sp.log'); // 49 lines, dump at line 2
/** The text with line n (1-based) replaced. */
const withLine = (text: string, n: number, line: string) => text.split('\n').map((l, i) => (i === n - 1 ? line : l)).join('\n');

describe('Megatron-LM logs: one point per run', () => {
  it('two runs appended to one file: two points, each with its own dump, iterations and memory, named file.log#1 and #2', () => {
    const runs = parseMegatronLogs(A + B, 'two.log');
    expect(runs).toHaveLength(2);
    const one = parseMegatronLog(A, 'a'), two = parseMegatronLog(B, 'b');
    expect(runs.map((r) => r.point.source)).toEqual(['two.log#1', 'two.log#2']);
    expect(runs.map((r) => r.startLine)).toEqual([2, 49]);
    expect({ ...runs[0].point, source: 'a' }).toEqual(one.point);
    expect({ ...runs[1].point, source: 'b' }).toEqual(two.point);
    expect(runs[0].point.peakMaxAllocatedGiB).toBeCloseTo(58001.5 / 1024, 9); // not the peak over both runs
    expect(runs[1].point.peakMaxAllocatedGiB).toBeCloseTo((70321.98765 + 300) / 1024, 9);
    expect(runs[0].point.recompute).toBe('selective');
    expect(runs[1].point.recompute).toBe('none');
    expect(runs[1].iterations).toEqual(two.iterations);
  });

  it('parseMegatronLog (one point) refuses a log of several runs by name, with the lines of its dumps', () => {
    expect(() => parseMegatronLog(A + B, 'two.log')).toThrow(InputError);
    expect(() => parseMegatronLog(A + B, 'two.log')).toThrow(/^two\.log holds 2 runs \(argument dumps at lines 2, 49\), not one: split it into one file per run$/);
  });

  it('every stored log (fixtures, real runs, the campaign) is one run', () => {
    const dirs = ['test/fixtures/megatron', 'bench/results/memory-h200-2026-12-01/megatron', 'bench/results/memory-h200-2026-12-01/megatron-failed', 'bench/results/2026-12-02-megatron-campaign/runs'];
    let n = 0;
    for (const d of dirs)
      for (const f of readdirSync(d).filter((x) => x.endsWith('.log'))) {
        expect(parseMegatronLogs(readFileSync(join(d, f), 'utf8'), f)).toHaveLength(1);
        n++;
      }
    expect(n).toBeGreaterThanOrEqual(60);
  });
});

describe('Megatron-LM logs: refused with the line number', () => {
  const refuses = (text: string, re: RegExp) => {
    expect(() => parseMegatronLogs(text, 'x.log')).toThrow(InputError);
    expect(() => parseMegatronLogs(text, 'x.log')).toThrow(re);
  };
  it('an argument dump cut inside a value (no end of arguments), at the end of the file or before the next run', () => {
    const cut = A.split('\n').slice(0, 14).join('\n').replace(/131072$/, '1310');
    refuses(cut, /^x\.log line 2: the argument dump opened here has no '---- end of arguments ----' \(the file ends at line 14\): it is cut off$/);
    refuses(A.split('\n').slice(0, 14).join('\n') + '\n' + B, /^x\.log line 2: the argument dump opened here has no '---- end of arguments ----' \(the run ends at line 15\)/);
  });
  it('an argument repeated in one dump with another value (the same value again is harmless)', () => {
    refuses(withLine(A, 15, '  seq_length ...................................... 4096'), /^x\.log line 15: argument seq_length is given twice in one argument dump with different values \('131072' at line 14, '4096' here\)$/);
    const same = parseMegatronLogs(withLine(A, 15, '  seq_length ...................................... 131072'), 'x.log');
    expect(same[0].point.seqLength).toBe(131072);
  });
  it('size arguments that are not positive integers', () => {
    refuses(withLine(A, 14, '  seq_length ...................................... -4096'), /^x\.log line 14: argument seq_length '-4096' is not a positive integer$/);
  });
  it('impossible memory lines: negative, non-finite, zero peaks; allocated above max allocated', () => {
    const mem = (a: string, ma: string, r = '60000.00', mr = '61000.00') => withLine(A, 25, `[Rank 0] (after 1 iterations) memory (MB) | allocated: ${a} | max allocated: ${ma} | reserved: ${r} | max reserved: ${mr}`);
    refuses(mem('45000.00', '-58000.50'), /^x\.log line 25: memory max allocated '-58000\.50' is not a non-negative finite number$/);
    refuses(mem('45000.00', '1e999'), /^x\.log line 25: memory max allocated '1e999' is not a non-negative finite number$/);
    refuses(mem('45000.00', 'nan'), /^x\.log line 25: memory max allocated 'nan'/);
    refuses(mem('45000.00', 'inf'), /^x\.log line 25: memory max allocated 'inf'/);
    refuses(mem('0', '0', '0', '0'), /^x\.log line 25: memory max allocated is 0 MB/);
    refuses(mem('59000.00', '58000.50'), /^x\.log line 25: memory allocated 59000\.00 MB exceeds max allocated 58000\.50 MB/);
    refuses(mem('45000.00', '58000.50', '62000.00'), /^x\.log line 25: memory reserved 62000\.00 MB exceeds max reserved 61000\.00 MB/);
  });
  it('negative or non-finite iteration times, throughputs and theoretical sizes', () => {
    const it12 = A.split('\n')[37];
    refuses(withLine(A, 38, it12.replace('9900.0', '-9900.0')), /^x\.log line 38: elapsed time per iteration \(ms\) '-9900\.0' is not a non-negative finite number$/);
    refuses(withLine(A, 38, it12.replace('320.0', 'inf')), /^x\.log line 38: throughput per GPU \(TFLOP\/s\/GPU\) 'inf'/);
    refuses(withLine(A, 23, 'Theoretical memory footprints: weight and optimizer=1.2.3 MB, activation=38000.25 MB, total=52336.75 MB'), /^x\.log line 23: theoretical weight and optimizer '1\.2\.3'/);
  });
});

describe('activation_memory.csv: refused with the line number', () => {
  it('a quote never closed, a quote inside an unquoted field, text after a closing quote', () => {
    expect(() => parseCsv('seq_len,total_gib,source\n4096,1,ok\n8192,2,"measured: a\n', 'x.csv')).toThrow(/^x\.csv line 3: a quote opened here is never closed \(the file ends inside field 3\)$/);
    expect(() => parseCsv('seq_len,total_gib,source\n4096,1,ab"c"\n', 'x.csv')).toThrow(/^x\.csv line 2: a quote inside an unquoted field 3/);
    expect(() => parseCsv('seq_len,total_gib,source\n4096,1,"ab"c\n', 'x.csv')).toThrow(/^x\.csv line 2: text after a closing quote in field 3/);
    // Quoted newlines, doubled quotes and blank lines keep the line numbers right.
    const ok = parseCsv('seq_len,total_gib,source\n\n4096,1, "a\nb ""c""" \n8192,2,z\n', 'x.csv');
    expect(ok.map((r) => r.source)).toEqual(['a\nb "c"', 'z']);
  });
  it('line numbers count blank lines and quoted newlines', () => {
    expect(() => parseCsv('seq_len,total_gib,source\n\n4096,1,"a\nb"\n8192,x,z\n', 'x.csv')).toThrow(/^x\.csv line 5: total_gib 'x' is not a number$/);
  });
  it('a column named twice in the header', () => {
    expect(() => parseCsv('seq_len,total_gib,Total_GiB\n4096,1,2\n', 'x.csv')).toThrow(/^x\.csv line 1: column 'total_gib' is named twice in the header \(columns 2 and 3\)$/);
  });
  it('an empty total_gib is an unknown peak, never an OOM: without fits (or a timing) the row is refused', () => {
    expect(() => parseCsv('seq_len,total_gib\n4096,1\n8192,\n', 'x.csv')).toThrow(/^x\.csv line 3: total_gib is empty and fits is not given: the row measures nothing/);
    expect(() => parseCsv('seq_len,total_gib,fits\n8192,,\n', 'x.csv')).toThrow(/line 2: total_gib is empty/);
    const oom = parseCsv('seq_len,total_gib,fits\n8192,,false\n', 'x.csv')[0];
    expect(oom).toMatchObject({ total_gib: null, fits: false });
    const ran = parseCsv('seq_len,total_gib,fits\n8192,,true\n', 'x.csv')[0];
    expect(ran).toMatchObject({ total_gib: null, fits: true });
    const timing = parseCsv('seq_len,total_gib,iter_ms\n8192,,1234.5\n', 'x.csv')[0];
    expect(timing).toMatchObject({ total_gib: null, fits: null, iter_ms: 1234.5 });
  });
  it('what replay writes it reads back: a log with iteration times and no memory lines; a log that measured nothing gives no row', () => {
    const noMem = A.split('\n').filter((l) => !/memory \(MB\)/.test(l)).join('\n');
    const row = measuredRow(parseMegatronLog(noMem, 'nomem.log').point)!;
    expect(row).toMatchObject({ total_gib: null, fits: null });
    expect(parseCsv(toCsv([row]), 'back.csv')[0].iter_ms).toBeCloseTo(row.iter_ms!, 3);
    const nothing = A.split('\n').filter((l) => !/memory \(MB\)|iteration\s+\d+\//.test(l)).join('\n');
    expect(measuredRow(parseMegatronLog(nothing, 'nothing.log').point)).toBeNull();
  });
  it('300k rows: read without recursion or spread', () => {
    const rows = Array.from({ length: 300_000 }, (_, k) => `${4096 + k},${(k % 97) + 0.5},"measured: row ${k}, quoted"`);
    const got = parseCsv(['seq_len,total_gib,source', ...rows].join('\n') + '\n', 'big.csv');
    expect(got).toHaveLength(300_000);
    expect(got[299_999]).toMatchObject({ seq_len: 4096 + 299_999, source: 'measured: row 299999, quoted' });
  });
});

describe('comparing measured rows', () => {
  it('an empty total with fits=true is an unknown peak that ran, never an OOM; --compare over 300k rows needs no spread', async () => {
    const { compareOne, comparisonTable } = await import('../src/memory/compare.js');
    const { DEFAULT_PARALLEL } = await import('../src/memory/model.js');
    const m = { numLayers: 2, hiddenSize: 512, numAttentionHeads: 4, vocabSize: 8192 };
    const [row] = parseCsv('seq_len,total_gib,fits\n4096,,true\n', 'x.csv');
    const c = compareOne(row, m, DEFAULT_PARALLEL, 80);
    expect(c.verdict).toBe('right');
    expect(c.totalError).toBeNull();
    expect(comparisonTable([c]).split('\n')[2]).toMatch(/^\|  \| 4096 \| \? \| \? \| \? \| /); // measured total unknown: '?', not OOM
    expect(comparisonTable([c])).not.toContain('| OOM |');
    const many = Array.from({ length: 300_000 }, () => ({ ...c, totalError: 0.01, activationError: 0.02 }));
    expect(comparisonTable(many)).toContain('300000 point(s): largest total error 1.0%, largest activation error 2.0%');
  });
});
