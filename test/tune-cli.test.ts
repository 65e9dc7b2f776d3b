/**
 * `flashring tune`: its store (a JSON file; an entry is reused), its table and --json, and bad
 * input in one line with exit code 2. The search itself: test/tune.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDevice } from './gpu.js';
import { flashring } from './cli-run.js';
import { tuneKey, type TuneEntry } from '../src/bench/tune.js';
import { defaultStorePath } from '../src/bench/tuneStore.js';

const cli = flashring('tune');
const bench = flashring('bench');

describe('flashring tune', () => {
  const dir = mkdtempSync(join(tmpdir(), 'flashring-tune-'));
  it('reuses a stored entry (no search), as a table and as JSON', async () => {
    const dev = await testDevice();
    const key = tuneKey(dev, 'scalar', { D: 16, precision: 'f32', causal: false, robust: false });
    const entry: TuneEntry = {
      key, path: 'scalar', tuning: { portableForward: { rows: 16, cols: 8 } }, defaultMs: [2, 4], tunedMs: [1, 4], N: 64, heads: 2,
      checkErr: 3e-7, date: '2026-12-02T16:00:00.000Z', trials: [],
    };
    const store = join(dir, 'store.json');
    writeFileSync(store, JSON.stringify({ version: 1, entries: { [key]: entry } }));
    const t = await cli(['--D', '16', '--precision', 'f32', '--causal', 'false', '--store', store]);
    expect(t.code, t.err).toBe(0);
    expect(t.err).toMatch(/1 entry from the store, tuned at another N or heads .*--fresh searches again at N=4096, 16 heads/);
    expect(t.out).toMatch(/\| 16 \| f32 \| false \| scalar \| 64 \| 2\.000 \/ 4\.000 \| 1\.000 \/ 4\.000 \| 1\.200× \| FLASHRING_PORTABLE_FWD=16x8 \| 3\.0e-7 \| store \(2026-12-02\) \|/);
    const j = await cli(['--D', '16', '--precision', 'f32', '--causal', 'false', '--store', store, '--json']);
    expect(j.code, j.err).toBe(0);
    expect(JSON.parse(j.out)).toEqual([{ ...entry, fromStore: true }]);
    // --json keeps stdout for the JSON alone; the notes still go to stderr (they were dropped).
    expect(j.err).toMatch(/1 entry from the store, tuned at another N or heads/);
    expect(JSON.parse(readFileSync(store, 'utf8')).entries[key]).toEqual(entry); // read, not rewritten
    // flashring bench --tuned: the stored pins where the store has the point (checked against float64 first, as every point).
    const out = join(dir, 'bench');
    const b = await bench(['--quick', '--no-ring', '--no-memory', '--N', '64', '--D', '16', '--precision', 'f32', '--causal', 'false,true', '--tuned', store, '--out', out]);
    expect(b.code, b.err).toBe(0);
    const csv = readFileSync(join(out, readdirSync(out).find((f) => f.endsWith('-kernels.csv'))!), 'utf8').trim().split('\n').slice(1);
    expect(csv).toHaveLength(6);
    // The causal point has no entry in the store: said (it ran the defaults; it was silent), the other one not named.
    expect(b.err).toMatch(/^--tuned .*store\.json has no entry for D=16 f32 causal on this adapter with these kernels \(.*\): those points ran the default tiles; flashring tune --store .*store\.json tunes them$/m);
    // --no-ring: no -ring.csv written, none named in the summary.
    expect(readdirSync(out).filter((f) => f.endsWith('-ring.csv'))).toEqual([]);
    expect(b.out).toMatch(/^results: .*bench-.*\.json \(\+ -kernels\.csv\)$/m);
    // The table names the path whole and says what checkErr is (one spot check per D, precision and mask).
    expect(b.out).toMatch(/^fwd +64 +16 +false +f32 +scalar +[\d.]+ .* \d\.\de-\d+$/m);
    expect(b.out).toMatch(/^\* checkErr: the float64 spot check of the row's D, precision and mask, made once at N = 67 \(the same on each of its rows\)$/m);
    for (const line of csv) expect(line, b.err).toMatch(line.includes(',false,f32,') ? /fwd Br16 Bc8 / : /fwd Br(?!16 Bc8 )/);
    // An entry whose pins the kernels do not take: exit 2 naming --tuned and the file, before any timing (after the device: the key holds the adapter).
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify({ version: 1, entries: { [key]: { ...entry, tuning: { portableForward: { rows: 3, cols: 8 } } } } }));
    const bb = await bench(['--quick', '--no-ring', '--no-memory', '--N', '64', '--D', '16', '--precision', 'f32', '--causal', 'false', '--tuned', broken, '--out', join(dir, 'bench2')]);
    expect(bb.code).toBe(2);
    expect(bb.err).toMatch(/^flashring bench: --tuned .*broken\.json: the entry for D=16 f32 holds pins the kernels do not take \(FLASHRING_PORTABLE_FWD='3x8'.*run flashring tune --fresh/m);
  });

  it('--json: the JSON alone on stdout, the search\'s progress on stderr, each candidate counted; the store written drops what this flashring can never use on this adapter', async () => {
    const store = join(dir, 'fresh.json');
    // This adapter's entries: one under an older kernels' hash and one damaged (dropped), one sound (kept); another adapter's, kept.
    const dev = await testDevice();
    const mine = tuneKey(dev, 'scalar', { D: 32, precision: 'f32', causal: true, robust: false }), old = mine.replace(/\|shaders [0-9a-f]+\|/, '|shaders 0badc0de|');
    const other = `Another vendor|arch|device|another GPU|${old.split('|').slice(4).join('|')}`;
    const at = (key: string, more: Partial<TuneEntry> = {}): TuneEntry => ({ key, path: 'scalar', tuning: {}, defaultMs: [2, 4], tunedMs: [2, 4], N: 64, heads: 2, checkErr: 3e-7, date: '2026-12-02T16:00:00.000Z', trials: [], ...more });
    const damaged = mine.replace('|causal', '|full');
    writeFileSync(store, JSON.stringify({ version: 1, entries: { [mine]: at(mine), [old]: at(old), [damaged]: at(damaged, { tunedMs: [0, 4] }), [other]: at(other) } }));
    const r = await cli(['--D', '16', '--precision', 'f32', '--causal', 'false', '--N', '32', '--heads', '1', '--reps', '1', '--store', store, '--json']);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/^tuning D=16 f32 not causal on the \S+ path at N=32, 1 head: /m);
    expect(r.err).toMatch(/^ {2}fwd 1\/\d+ FLASHRING_\w+=\S+/m);
    expect(r.err).toMatch(/^ {2}bwd 1\/\d+ FLASHRING_\w+=\S+/m);
    const [e] = JSON.parse(r.out) as (TuneEntry & { fromStore: boolean })[];
    expect(e.fromStore).toBe(false);
    expect(Object.keys(JSON.parse(readFileSync(store, 'utf8')).entries).sort()).toEqual([mine, other, e.key].sort());
    expect(r.err).toMatch(/^dropped 2 entries of this adapter from the store that this flashring can never use \(another kernels' hash, damaged, or pins the kernels do not take\); other adapters' entries kept$/m);
  }, 300_000);

  it('on a terminal: the candidates are one progress line drawn over (\\r), ended before the next whole line', async () => {
    // In-process (FLASHRING_RAW_STDERR=1), told its stderr is a terminal as bin/flashring.mjs tells its child.
    vi.stubEnv('FLASHRING_RAW_STDERR', '1');
    vi.stubEnv('FLASHRING_STDERR_TTY', '1');
    try {
      const r = await cli(['--D', '16', '--precision', 'f32', '--causal', 'false', '--N', '32', '--heads', '1', '--reps', '1', '--store', join(dir, 'tty.json'), '--json']);
      expect(r.code, r.err).toBe(0);
      const err = r.err.split('\n').filter((l) => !l.startsWith('Warning')).join('\n');
      expect(err).toMatch(/^tuning D=16 f32 not causal on the \S+ path at N=32, 1 head: [^\r]*\n\r {2}fwd 1\/\d+ /m);
      expect(err).toMatch(/\r {2}fwd 2\/\d+ FLASHRING_\w+=\S+/);
      expect(err).toMatch(/\r {2}bwd 1\/\d+ FLASHRING_\w+=\S+/);
      expect(err).not.toMatch(/\n {2}(fwd|bwd) \d/);   // no candidate on a line of its own
      expect(err.endsWith('\n'), err).toBe(true);   // the drawn line ended
      expect(JSON.parse(r.out)).toHaveLength(1);
    } finally {
      vi.unstubAllEnvs();
    }
  }, 300_000);

  it('bad input: one line, exit code 2, before any search', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"entries": 3}');
    for (const [args, msg] of [
      [['--N', '0'], /^flashring tune: --N: '0' is not a positive integer/],
      [['--reps', '2,3'], /^flashring tune: --reps takes one value, got '2,3'/],
      [['--causal', 'maybe'], /^flashring tune: --causal: 'maybe' is not one of false, true/],
      [['--store', bad], /^flashring tune: --store .*bad\.json is not a flashring tune store .*delete it .*or give another --store/],
      [['--D', '12'], /^flashring tune: D=12, N=4096, heads 16: head dim D=12 is not supported/],   // not 'tune: tune: D=12' (the error's own prefix dropped)
      [['--D', '7'], /^flashring tune: D=7, N=4096, heads 16: head dim D=7 is not supported: it must be a multiple of 8, at most 256$/],
      [['--bogus'], /^flashring tune: unknown option '--bogus'/],
    ] as const) {
      const r = await cli([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err.split('\n').filter((l) => l && !l.startsWith('Warning')), args.join(' ')).toHaveLength(1);
      expect(r.err.split('\n').find((l) => l.startsWith('flashring')), args.join(' ')).toMatch(msg);
    }
  });

  it("an error's own command prefix is said once, whichever command (tune's library errors, notes' data errors): nothing else of the line is cut", async () => {
    const { mistakeLine } = await import('../src/cli/main.js');
    expect(mistakeLine('tune', 'tune: D=7, N=4096, heads 16: head dim D=7 is not supported')).toBe('flashring tune: D=7, N=4096, heads 16: head dim D=7 is not supported');
    expect(mistakeLine('notes', 'notes: cannot read bench/results/x.csv (ENOENT)')).toBe('flashring notes: cannot read bench/results/x.csv (ENOENT)');
    // Another command's name, or the command's name without ': ', is part of the message.
    expect(mistakeLine('bench', 'tune: D=7')).toBe('flashring bench: tune: D=7');
    expect(mistakeLine('tune', 'tuned pins are stale')).toBe('flashring tune: tuned pins are stale');
  });

  it('--help names the store and every option', async () => {
    const h = await cli(['--help']);
    expect(h.code).toBe(0);
    for (const f of ['--D', '--precision', '--causal', '--N', '--heads', '--reps', '--fresh', '--store', '--json']) expect(h.out).toContain(f);
    // The entries a search drops, as docs/cli.md and the note on stderr name them: pins the kernels do not take too.
    expect(h.out.replace(/\s+/g, ' ')).toContain("drops this adapter's entries this flashring can never use (another kernels' hash, damaged, or pins the kernels do not take);");
    expect(defaultStorePath({ XDG_CACHE_HOME: '/x' })).toBe('/x/flashring/tune.json');
    expect(defaultStorePath({ HOME: '/h' })).toMatch(/\.cache\/flashring\/tune\.json$/);
  });
});
