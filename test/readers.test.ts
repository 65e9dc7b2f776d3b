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
import { notTimeData } from '../src/memory/time/fromLog.js';

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

  it("each run of a log of several is judged time data or not on its own lines: a traced run does not mark an untimed one, and a run's command line ('# …', above its dump) is its own", () => {
    // A timing run (pretrain_gpt.py) and a memory campaign run (bench/megatron/trace.py) appended, in both orders.
    const timed = readFileSync('bench/results/2026-12-02-time-heldout/runs/r00.log', 'utf8');
    const traced = readFileSync('bench/results/2026-12-02-megatron-campaign/runs/r01.log', 'utf8');
    for (const [text, tracedRun] of [[timed + traced, 1], [traced + timed, 0]] as const) {
      const runs = parseMegatronLogs(text, 'both.log');
      expect(runs).toHaveLength(2);
      expect(runs.map((r) => r.commands.length)).toEqual([1, 1]);
      expect(runs[tracedRun].commands[0]).toMatch(/\/bench\/megatron\/trace\.py /);
      expect(runs[1 - tracedRun].commands[0]).toMatch(/\/pretrain_gpt\.py /);
      expect(notTimeData(runs[tracedRun])).toMatch(/^not time data: this step ran under the saved-tensor tracer/);
      expect(notTimeData(runs[1 - tracedRun])).toBeNull();
      // Each run's point is the one of its log alone.
      const alone = [timed, traced].map((t) => parseMegatronLog(t, 'x').point);
      expect(runs.map((r) => ({ ...r.point, source: 'x' }))).toEqual(tracedRun === 1 ? alone : [alone[1], alone[0]]);
    }
  });

  it("a run's 'Falling back to Torch optimizers' (written at import, above its dump) is its own, not the run before it's", () => {
    // Runs appended without command lines: the second's warning stands after the first's last iteration.
    const warning = '/mlm/megatron/core/optimizer/__init__.py:25: UserWarning: Transformer Engine and Apex are not installed. Falling back to Torch optimizers.\n  warnings.warn(\n';
    const runs = parseMegatronLogs(A + warning + B, 'two.log');
    expect(runs.map((r) => r.torchOptimizer)).toEqual([false, true]);
    expect(runs.map((r) => r.startLine)).toEqual([2, 51]);
    expect(parseMegatronLogs(warning + A + B, 'two.log').map((r) => r.torchOptimizer)).toEqual([true, false]);
    // With its command line above the warning, the run opens at the command line.
    const withCommand = parseMegatronLogs(`${A}# torchrun pretrain_gpt.py\n${warning}${B}`, 'two.log');
    expect(withCommand.map((r) => [r.torchOptimizer, r.commands])).toEqual([[false, []], [true, ['# torchrun pretrain_gpt.py']]]);
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

describe('Megatron-LM logs: only decimal numbers are read (a log never prints hex)', () => {
  const refuses = (text: string, re: RegExp) => expect(() => parseMegatronLogs(text, 'x.log')).toThrow(re);
  it('a hex token where a log prints a number is refused with its line, not read as one (0x1000 was 4096)', () => {
    const mem = (ma: string) => withLine(A, 25, `[Rank 0] (after 1 iterations) memory (MB) | allocated: 45000.00 | max allocated: ${ma} | reserved: 60000.00 | max reserved: 61000.00`);
    refuses(mem('0xE290'), /^x\.log line 25: memory max allocated '0xE290' is not a decimal number$/);
    refuses(mem('0b1111'), /^x\.log line 25: memory max allocated '0b1111' is not a decimal number$/);
    const it12 = A.split('\n')[37];
    refuses(withLine(A, 38, it12.replace('9900.0', '0x26AC')), /^x\.log line 38: elapsed time per iteration \(ms\) '0x26AC' is not a decimal number$/);
    refuses(withLine(A, 23, 'Theoretical memory footprints: weight and optimizer=0x3800 MB, activation=38000.25 MB, total=52336.75 MB'), /^x\.log line 23: theoretical weight and optimizer '0x3800' is not a decimal number$/);
    refuses(withLine(A, 6, '  global_batch_size ............................... 0x8'), /^x\.log line 6: argument global_batch_size '0x8' is not a positive integer$/);
    refuses(withLine(A, 6, '  attention_dropout ............................... 0x0'), /^x\.log line 6: argument attention_dropout '0x0' is not a probability/);
    // Decimal in scientific notation is a log's own form: read.
    expect(parseMegatronLogs(withLine(A, 38, it12.replace('9900.0', '9.9e3')), 'x.log')[0].iterations.find((r) => r.iteration === 12)!.elapsedMs).toBe(9900);
  });
  it("a loss printed as a hex token is no loss (it was read as its leading '0')", () => {
    const it12 = A.split('\n')[37];
    const loss = (v: string) => parseMegatronLogs(withLine(A, 38, it12.replace('8.800000E+00', v)), 'x.log')[0].iterations.find((r) => r.iteration === 12)!.loss;
    expect(loss('8.800000E+00')).toBe(8.8);
    expect(loss('0x1')).toBeNull();
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
  it('a row with fewer fields than the header (a file cut short) is refused with its line; trailing unnamed columns need none', () => {
    expect(() => parseCsv('seq_len,tp,cp,total_gib,fits,source\n4096,1,1,10,true,a\n8192,1,1,20\n', 'x.csv'))
      .toThrow(/^x\.csv line 3: 4 fields where the header has 6 \(up to 'source'\): a short row, the file cut short\? Give every column a field \(an empty one for an unknown value\)$/);
    expect(() => parseCsv('seq_len,total_gib\n4096\n', 'x.csv')).toThrow(/^x\.csv line 2: 1 field where the header has 2/);
    // Empty fields are fields; a header ending in an unnamed column (a trailing comma) asks for none there.
    expect(parseCsv('seq_len,total_gib,fits,\n4096,10,\n8192,,false\n', 'x.csv').map((r) => [r.total_gib, r.fits])).toEqual([[10, null], [null, false]]);
  });
  it('a row with more fields than the header has columns is refused with its line (a decimal comma split a value); empty ones (trailing commas) are not', () => {
    // '10,5' (a decimal comma) was read as total_gib 10, the 5 dropped: a silent wrong number.
    expect(() => parseCsv('seq_len,total_gib\n4096,10,5\n', 'x.csv'))
      .toThrow(/^x\.csv line 2: 3 fields where the header has 2 columns: field 3 \('5'\) has no column/);
    expect(() => parseCsv('seq_len,tp,total_gib,source\n4096,1,10,a\n8192,1,2,5,b\n', 'x.csv')).toThrow(/^x\.csv line 3: 5 fields where the header has 4 columns: field 5 \('b'\)/);
    expect(parseCsv('seq_len,total_gib\n4096,10,,\n8192,"20",\n', 'x.csv').map((r) => r.total_gib)).toEqual([10, 20]);
  });
  it('numeric cells are decimal, as on the command line: hex, binary and octal refused with the line; scientific notation read', () => {
    const csv = (cells: string) => () => parseCsv(`seq_len,tp,total_gib\n4096,1,10\n${cells}\n`, 'x.csv');
    expect(csv('8192,1,0x10')).toThrow(/^x\.csv line 3: total_gib '0x10' is not a decimal number$/);
    expect(csv('0x2000,1,10')).toThrow(/^x\.csv line 3: seq_len '0x2000' is not a decimal number$/);
    expect(csv('8192,0b10,10')).toThrow(/^x\.csv line 3: tp '0b10' is not a decimal number$/);
    expect(csv('8192,0o2,10')).toThrow(/^x\.csv line 3: tp '0o2' is not a decimal number$/);
    expect(csv('8192,1,Infinity')).toThrow(/^x\.csv line 3: total_gib 'Infinity' is not a number$/);
    expect(csv('8.192e3,1,1.5E1')().map((r) => [r.seq_len, r.total_gib])).toEqual([[4096, 10], [8192, 15]]);
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
    // Long figures keep their whole part, without an exponent; short fractions 6 significant digits.
    const long = toCsv([{ ...row, iter_ms: 1234567.5, tflops_per_gpu: 0.0123456789, total_gib: 58.59375 }]).split('\n')[1];
    expect(long).toMatch(/,58\.5938,.*,1234568,0\.0123457,$/);   // tight: empty, a measured row's
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
    expect(comparisonTable(many)).toContain('300000 points: largest total error 1.0%, largest activation error 2.0%');
  });
});

/**
 * What the readers' fuzz (test/fuzz-readers.test.ts, issue 34 item 7) found, each as the input that
 * showed it: damaged values read as something else instead of refused, a message on two lines, a
 * log whose line ends became CRs dropped whole, a prediction of NaN bytes.
 */
describe('found by the readers\' fuzz', () => {
  const refusesLog = (text: string, re: RegExp) => {
    expect(() => parseMegatronLogs(text, 'x.log')).toThrow(InputError);
    expect(() => parseMegatronLogs(text, 'x.log')).toThrow(re);
  };
  /** A with the argument set (its line replaced, or a line added at the top of the dump), and its line number. */
  const arg = (name: string, value: string, text = A) => {
    const ls = text.split('\n'), at = ls.findIndex((l) => new RegExp(`^\\s*${name} \\.`).test(l));
    const line = `  ${name} ${'.'.repeat(20)} ${value}`;
    if (at >= 0) ls[at] = line; else ls.splice(2, 0, line);
    return { n: at >= 0 ? at + 1 : 3, text: ls.join('\n') };
  };

  it('a CSV boolean damaged (fits \'false\' made \'fals\', \'TRUE\' made \'maybe\' or cut by a stray byte) is refused, never read as an out-of-memory', () => {
    const hand = 'seq_len,total_gib,fits,iter_ms,source\n4096,1.5,true,,a\n8192,,false,,oom\n16384,,TRUE,12.5,timing\n';
    expect(parseCsv(hand, 'x.csv').map((r) => r.fits)).toEqual([true, false, true]);
    expect(() => parseCsv(hand.replace('false', 'fals'), 'x.csv')).toThrow(/^x\.csv line 3: fits 'fals' is not true or false$/);
    expect(() => parseCsv(hand.replace('TRUE', 'maybe'), 'x.csv')).toThrow(/^x\.csv line 4: fits 'maybe' is not true or false$/);
    expect(() => parseCsv(hand.replace('TRUE', 'TRU\uFFFDE'), 'x.csv')).toThrow(/^x\.csv line 4: fits 'TRU\uFFFDE' is not true or false$/);
    expect(() => parseCsv('seq_len,total_gib,sp\n4096,1,Flase\n', 'x.csv')).toThrow(/^x\.csv line 2: sp 'Flase' is not true or false$/);
    const spellings = parseCsv('seq_len,total_gib,fits,sp\n1,1,False,YES\n2,1,0,1\n3,1,no,true\n', 'x.csv');
    expect(spellings.map((r) => [r.fits, r.sp])).toEqual([[false, true], [false, true], [false, true]]);
  });

  it('CSV sizes are positive integers and memory, times and HBM what can be (seq_len 81.2 and 0.5536 were read)', () => {
    const one = (cells: string) => () => parseCsv(`seq_len,tp,cp,pp,micro_batch,activation_gib,total_gib,hbm_gib,iter_ms,tflops_per_gpu\n${cells}\n`, 'x.csv');
    expect(one('4096,1,2,1,1,5,10,80,100,300')()).toHaveLength(1);
    expect(one('81.2,1,2,1,1,5,10,80,100,300')).toThrow(/^x\.csv line 2: seq_len '81\.2' is not a positive integer$/);
    expect(one('4e96,1,2,1,1,5,10,80,100,300')).toThrow(/^x\.csv line 2: seq_len '4e96' is not a positive integer$/);
    expect(one('4096,0,2,1,1,5,10,80,100,300')).toThrow(/^x\.csv line 2: tp '0' is not a positive integer$/);
    expect(one('4096,1,-2,1,1,5,10,80,100,300')).toThrow(/^x\.csv line 2: cp '-2' is not a positive integer$/);
    expect(one('4096,1,2,1,1,5,-10,80,100,300')).toThrow(/^x\.csv line 2: total_gib '-10' is not positive$/);
    expect(one('4096,1,2,1,1,5,0,80,100,300')).toThrow(/^x\.csv line 2: total_gib '0' is not positive$/);
    expect(one('4096,1,2,1,1,5,1e30,80,100,300')).toThrow(/^x\.csv line 2: total_gib 1e30 GiB is more than any GPU holds \(1 PiB\)$/);
    expect(one('4096,1,2,1,1,-5,10,80,100,300')).toThrow(/^x\.csv line 2: activation_gib '-5' is not a non-negative number$/);
    expect(one('4096,1,2,1,1,5,10,0,100,300')).toThrow(/^x\.csv line 2: hbm_gib '0' is not positive$/);
    expect(one('4096,1,2,1,1,5,10,80,-100,300')).toThrow(/^x\.csv line 2: iter_ms '-100' is not a non-negative number$/);
  });

  it('a CSV recompute that is no recompute setting is refused; a module the model lacks is the comparison\'s to say', () => {
    expect(() => parseCsv('seq_len,total_gib,recompute\n4096,1,fell\n', 'x.csv')).toThrow(/^x\.csv line 2: recompute 'fell' is not a recompute setting/);
    expect(() => parseCsv('seq_len,total_gib,recompute\n4096,1,full:None/None\n', 'x.csv')).toThrow(/line 2: recompute 'full:None\/None'/);
    expect(parseCsv('seq_len,total_gib,recompute\n4096,1,selective:moe_act\n', 'x.csv')[0].recompute).toBe('selective:moe_act');
  });

  it('a refusal is one line: quoted newlines and control characters in the text it quotes are escaped', () => {
    const msg = (f: () => unknown) => { try { f(); } catch (e) { return (e as Error).message; } return ''; };
    const after = msg(() => parseCsv('seq_len,total_gib,source\n4096,1,"a\nb"c\n', 'x.csv'));
    expect(after).toBe("x.csv line 3: text after a closing quote in field 3 ('\"a\\x0ab\"c')");
    expect(msg(() => parseCsv('seq_len,total_gib\n"40\r\n96",1\n', 'x.csv'))).toBe("x.csv line 2: seq_len '40\\x0d\\x0a96' is not a number");
    const nul = msg(() => parseMegatronLogs(withLine(A, 14, '  seq_length ...................................... 13\u000072'), 'x.log'));
    expect(nul).toBe("x.log line 14: argument seq_length '13\\x0072' is not a positive integer");
    for (const m of [after, nul]) expect(m).not.toMatch(/[\n\r\0]/);
  });

  it('what replay writes it reads back: a cell with a CR is quoted (a bare CR ends a CSV line)', () => {
    const row = { seq_len: 4096, tp: 1, cp: 1, pp: 1, sp: false, recompute: 'none', micro_batch: 1, activation_gib: null, total_gib: 2, fits: true, source: 'measured: a\rb' };
    expect(toCsv([row])).toContain('"measured: a\rb"');
    expect(parseCsv(toCsv([row]), 'back.csv')[0].source).toBe('measured: a\rb');
  });

  it('a log whose line ends became CRs (one "line" before) reads as the log, line numbers and all; it was dropped whole as a cut-off last line', () => {
    const one = parseMegatronLog(A, 'a').point;
    expect({ ...parseMegatronLog(A.replace(/\n/g, '\r'), 'a').point }).toEqual(one);
    expect(parseMegatronLog(A.replace(/\n/g, '\r'), 'a').warnings.join()).not.toMatch(/ends mid-line/);
    const neg = A.replace('max allocated: 58000.50', 'max allocated: -58000.50');
    refusesLog(neg.replace(/\n/g, '\r'), /^x\.log line 25: memory max allocated '-58000\.50'/);
    refusesLog(neg.replace(/\n/g, '\r\n'), /^x\.log line 25: memory max allocated '-58000\.50'/);
  });

  it('an argument the model reads that cannot be (expert_model_parallel_size \'e\' gave a prediction of NaN bytes) is refused with its line', () => {
    for (const [name, value, why] of [
      ['expert_model_parallel_size', 'e', 'is not a positive integer'], ['expert_model_parallel_size', '.', 'is not a positive integer'],
      ['ffn_hidden_size', '0', 'is not a positive integer'], ['seq_length', '99999999999999999999', 'is not a positive integer'],
      ['sequence_parallel', 'Trve', 'is not True or False'], ['swiglu', '', 'is not True or False'],
      ['attention_dropout', '1.5', 'is not a probability between 0 and 1'], ['hidden_dropout', '-0.1', 'is not a probability between 0 and 1'],
      ['recompute_granularity', 'selectiv', 'is not one of None, selective, full'], ['recompute_modules', "['core_attn', 'm\u0000lp']", 'is not a list of module names'],
    ]) {
      const { n, text } = arg(name, value);
      refusesLog(text, new RegExp(`^x\\.log line ${n}: argument ${name} '.*' ${why.replace(/[()[\]]/g, '\\$&')}`));
    }
    for (const [name, value] of [['ffn_hidden_size', 'None'], ['expert_model_parallel_size', '2'], ['attention_dropout', '0.1'], ['recompute_modules', "['core_attn', 'mlp']"], ['recompute_modules', '[]']])
      expect(parseMegatronLogs(arg(name, value).text, 'x.log')).toHaveLength(1);
  });

  it('full recomputation without a method and a layer count (full:None/None was written, and refused on reading back) is refused', () => {
    const { n, text } = arg('recompute_granularity', 'full');
    refusesLog(text, new RegExp(`^x\\.log line ${n}: recompute_granularity full without a recompute_method \\(uniform or block\\) and a recompute_num_layers \\(got none and none\\)`));
    const ok = parseMegatronLog(arg('recompute_num_layers', '2', arg('recompute_method', 'block', text).text).text, 'x');
    expect(ok.point.recompute).toBe('full:block/2');
  });

  it('a memory value above what any GPU holds (1 PiB) is refused', () => {
    refusesLog(A.replace('max allocated: 58000.50', 'max allocated: 58000e50'), /^x\.log line 25: memory max allocated 58000e50 MB is more than any GPU holds \(1 PiB\)$/);
    refusesLog(withLine(A, 23, 'Theoretical memory footprints: weight and optimizer=1e12 MB'), /^x\.log line 23: theoretical weight and optimizer 1e12 MB is more than any GPU holds/);
  });
});

describe('a log without an argument dump', () => {
  it('predicts nothing and says the dump is missing, not one argument of it', async () => {
    const { configFromArgs, parseMegatronLog } = await import('../src/memory/megatron.js');
    expect(configFromArgs(parseMegatronLog('hello\n', 'x.log').args)).toEqual({ error: 'no argument of the log was read: no argument dump, or none of its lines read (the model and its layout are unknown)' });
    expect(configFromArgs({ hidden_size: '64' })).toEqual({ error: 'the argument dump has no num_layers' });
  });
});
