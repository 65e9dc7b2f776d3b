/**
 * Readers that cost more than their input (review "nothing lost", items 11 and 12): the CSV reader
 * builds each field as a slice (not a character at a time, ~35× the text in memory), with the same
 * rows and errors as before; the Megatron-LM log reader's argument-dump patterns are linear on a
 * long line of dashes.
 */
import { describe, expect, it } from 'vitest';
import { splitCsv } from '../src/memory/csv.js';
import { parseMegatronLogs, shown } from '../src/memory/megatron.js';

/** The reader before the fix (a character at a time), as the reference of what a CSV splits into. */
function splitCsvBefore(text: string, name: string): { cells: string[]; line: number }[] {
  const rows: { cells: string[]; line: number }[] = [];
  let row: string[] = [], f = '', q = false, closed = false, line = 1, rowLine = 1, quoteLine = 0, start = 0;
  const bad = (at: number, what: string): never => { throw new Error(`${name} line ${at}: ${what}`); };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === '"' && text[i + 1] === '"') { f += '"'; i++; }
      else if (c === '"') { q = false; closed = true; }
      // A line break inside quotes counts as outside them: LF, CRLF once, a CR alone (the CR-only count was fixed since).
      else { if (c === '\n' || (c === '\r' && text[i + 1] !== '\n')) line++; f += c; }
      continue;
    }
    if (c === ',') { row.push(f); f = ''; closed = false; start = i + 1; continue; }
    if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(f); f = ''; closed = false;
      if (row.some((x) => x !== '')) rows.push({ cells: row, line: rowLine });
      row = []; line++; rowLine = line; start = i + 1;
      continue;
    }
    if (closed && !/\s/.test(c)) bad(line, `text after a closing quote in field ${row.length + 1} ('${shown(text.slice(start, i + 1), 40)}')`);
    if (c === '"') {
      if (text.slice(start, i).trim() !== '') bad(line, `a quote inside an unquoted field ${row.length + 1} ('${shown(text.slice(start, i + 1), 40)}'): quote the whole field and double the quotes in it`);
      q = true; quoteLine = line; f = '';
    } else if (!closed) f += c;
  }
  if (q) bad(quoteLine, `a quote opened here is never closed (the file ends inside field ${row.length + 1})`);
  row.push(f);
  if (row.some((x) => x !== '')) rows.push({ cells: row, line: rowLine });
  return rows;
}

const outcome = (f: () => unknown) => {
  try {
    return { rows: f() };
  } catch (e) {
    return { error: (e as Error).message };
  }
};

describe('CSV fields by slicing', () => {
  it('splits as the character-at-a-time reader did: quotes, doubled quotes, CRLF, BOM, blanks, errors', () => {
    const fixed = ['\uFEFFseq_len,total_gib\r\n1,2\r\n', 'a,"b ""c"" d",e\n', '  "x" ,y\n', '"multi\nline\r\nfield",2\n3,4', 'a,"open', 'a,b"c', '"a"b', '\r\r\n\n,,\n', '', '"""",""\n', ' "a"\t, "b"  \n'];
    let seed = 12345;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const alphabet = ['a', 'b', ' ', '\t', ',', '"', '"', '\n', '\r', '\uFEFF', '7'];
    const random = Array.from({ length: 4000 }, () => Array.from({ length: Math.floor(rnd() * 24) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join(''));
    for (const text of [...fixed, ...random]) expect(outcome(() => splitCsv(text, 'x.csv')), JSON.stringify(text)).toEqual(outcome(() => splitCsvBefore(text, 'x.csv')));
  });

  it('a field of 4 million characters costs about its size, not dozens of times it', () => {
    const n = 4_000_000;
    for (const text of [`seq_len,total_gib\n${'a'.repeat(n)},1\n`, `seq_len,total_gib\n"${'a'.repeat(n / 2)}""${'b'.repeat(n / 2)}",1\n`]) {
      const before = process.memoryUsage().heapUsed;
      const rows = splitCsv(text, 'long.csv');
      const grew = process.memoryUsage().heapUsed - before;
      expect(rows[1].cells[0].length).toBeGreaterThanOrEqual(n);
      expect(grew).toBeLessThan(3 * n); // before: ~30 bytes a character (a chain of one-character strings)
    }
  });
});

describe('Megatron-LM logs: long lines of dashes', () => {
  it('a line of 20000 dashes (and one ending in "arguments") is read in well under a second', () => {
    const text = `${'-'.repeat(20_000)}\n${'-'.repeat(20_000)} arguments\n${'-'.repeat(20_000)} end of arguments\n`;
    const t = performance.now();
    outcome(() => parseMegatronLogs(text, 'dashes.log'));
    expect(performance.now() - t).toBeLessThan(1000); // before: seconds (each pattern retried -{3,} at every dash)
  });

  it('the dump lines are still found wherever they are in a line', () => {
    const log = (start: string, end: string) =>
      [start, '  seq_length ...................................... 4096', end, ' [2024-01-01] iteration        1/      10 | consumed samples: 1 | elapsed time per iteration (ms): 100.0 |'].join('\n');
    const a = outcome(() => parseMegatronLogs(log('------------------------ arguments ------------------------', '-------------------- end of arguments ---------------------'), 'a.log'));
    const b = outcome(() => parseMegatronLogs(log('[rank0]: ---arguments---', 'x ---  end of arguments  --- y'), 'b.log'));
    const json = (o: object) => JSON.stringify(o).replaceAll('b.log', 'a.log');
    expect(json(b)).toBe(json(a));
    expect(JSON.stringify(a)).toMatch(/4096/);
  });
});
