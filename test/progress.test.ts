/** Progress on stderr (src/cli/progress.ts): a phase's start and end lines, on a terminal and in a log. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { progressLines, ringProgress, timedPhase } from '../src/cli/progress.js';

/** What `f` writes to stderr with FLASHRING_STDERR_TTY set to `tty` (as bin/flashring.mjs sets it for the command). */
async function stderrOf(tty: '0' | '1', f: () => Promise<unknown>): Promise<string> {
  const chunks: string[] = [];
  vi.stubEnv('FLASHRING_STDERR_TTY', tty);
  const w = vi.spyOn(process.stderr, 'write').mockImplementation((s) => (chunks.push(String(s)), true));
  try {
    await f().catch(() => {});
  } finally {
    w.mockRestore();
  }
  return chunks.join('');
}

describe('timedPhase', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('in a log: a whole line when the phase starts and one when it ends, with its time; no carriage return', async () => {
    let ms = -1;
    const err = await stderrOf('0', async () => ({ ms } = await timedPhase('forward (f32)', async () => 7)));
    expect(err).toMatch(/^ {2}forward \(f32\): started\n {2}forward \(f32\): done in \d+\.\d ms\n$/);
    expect(ms).toBeGreaterThanOrEqual(0);
  });

  it('on a terminal: the end rewrites the start line in place', async () => {
    const err = await stderrOf('1', () => timedPhase('backward (f16)', async () => 7));
    expect(err).toMatch(/^\r {2}backward \(f16\)…\r {2}backward \(f16\): done in \d+\.\d ms\n$/);
  });

  it('progress within a phase: on a terminal the line shows it, and the end line covers it; in a log a line a tenth, none at the end', async () => {
    const steps = async (tick: (d: number, t: number) => void) => { for (const d of [1, 2, 5, 6, 11, 16]) tick(d, 16); };
    const tty = await stderrOf('1', () => timedPhase('forward (f32)', steps, 'K/V heads'));
    const shown = tty.split('\r').slice(1);   // each drawn line starts with \r (progressLines)
    expect(shown.slice(0, 3)).toEqual(['  forward (f32)…', '  forward (f32)… 6% (1 of 16 K/V heads)', '  forward (f32)… 12% (2 of 16 K/V heads)']);
    expect(shown[6]).toBe('  forward (f32)… 100% (16 of 16 K/V heads)');
    expect(shown[7]).toMatch(/^ {2}forward \(f32\): done in \d+\.\d ms +\n$/);
    expect(shown[7].length - 1).toBeGreaterThanOrEqual(shown[6].length);   // no tail of the progress left on the line
    const log = await stderrOf('0', () => timedPhase('forward (f32)', steps, 'K/V heads'));
    expect(log.split('\n').slice(0, -1).map((l) => l.replace(/done in .*/, 'done'))).toEqual([
      '  forward (f32): started', '  forward (f32): 12% (2 of 16 K/V heads)', '  forward (f32): 31% (5 of 16 K/V heads)',
      '  forward (f32): 68% (11 of 16 K/V heads)', '  forward (f32): done',   // 6 of 16 is still the third tenth: no line
    ]);
  });

  it('returns what the phase returns; a failure ends the open terminal line and is thrown as it is', async () => {
    vi.stubEnv('FLASHRING_STDERR_TTY', '0');
    const w = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect((await timedPhase('x', async () => 42)).value).toBe(42);
      await expect(timedPhase('x', async () => { throw new RangeError('boom'); })).rejects.toThrow(RangeError);
    } finally {
      w.mockRestore();
    }
    const err = await stderrOf('1', () => timedPhase('forward (f32)', async () => { throw new Error('lost'); }));
    expect(err).toBe('\r  forward (f32)…\n');
  });

  it('on a terminal each drawn line is cut to its width (FLASHRING_STDERR_COLUMNS, as the parent passes it), the last column left free', async () => {
    vi.stubEnv('FLASHRING_STDERR_COLUMNS', '24');
    const steps = async (tick: (d: number, t: number) => void) => { tick(3, 16); };
    const shown = (await stderrOf('1', () => timedPhase('forward (f32)', steps, 'K/V heads'))).split('\r').slice(1).map((x) => x.trimEnd());
    expect(shown[1]).toBe('  forward (f32)… 18% (…');
    for (const x of shown) expect(Array.from(x).length).toBeLessThan(24);
  });
});

describe('ringProgress (attention --cp)', () => {
  afterEach(() => vi.unstubAllEnvs());
  const eightSteps = (tick: ReturnType<typeof ringProgress>['tick']) => {
    for (const phase of ['forward', 'backward']) for (let step = 0; step < 8; step++) tick({ phase, step, steps: 8 });
  };

  it('in a log: a line each time another tenth of a phase is done, not only when the phase ends (a long ring said nothing for a whole phase)', async () => {
    const log = await stderrOf('0', async () => eightSteps(ringProgress().tick));
    const lines = log.split('\n').slice(0, -1);
    expect(lines.slice(0, 8)).toEqual([
      '  forward: step 1 of 8 done', '  forward: step 2 of 8 done', '  forward: step 3 of 8 done', '  forward: step 4 of 8 done',
      '  forward: step 5 of 8 done', '  forward: step 6 of 8 done', '  forward: step 7 of 8 done', '  forward: 8 steps done',
    ]);
    expect(lines[8]).toBe('  backward: step 1 of 8 done'); // counted afresh each phase
    expect(await stderrOf('0', async () => ringProgress().tick({ phase: 'forward', step: 0, steps: 1 }))).toBe('  forward: 1 step done\n'); // not '1 step(s)'
    expect(log).not.toContain('\r');
    // Many steps: about one line a tenth.
    const many = await stderrOf('0', async () => { const p = ringProgress(); for (let step = 0; step < 64; step++) p.tick({ phase: 'forward', step, steps: 64 }); });
    expect(many.split('\n').slice(0, -1)).toHaveLength(10);
  });

  it('on a terminal: one line rewritten per step, closed by end() however the run ends (an error then starts its own line)', async () => {
    const tty = await stderrOf('1', async () => {
      const p = ringProgress();
      p.tick({ phase: 'forward', step: 0, steps: 2 });
      p.end(); // as ringCommand does when the ring throws
      p.end(); // once
    });
    expect(tty).toBe('\r  forward step 1/2   \n');
    expect(await stderrOf('1', async () => ringProgress().end())).toBe(''); // nothing drawn: nothing to close
  });
});

describe('progressLines (tune\'s candidates)', () => {
  afterEach(() => vi.unstubAllEnvs());
  const draw = (p: ReturnType<typeof progressLines>) => {
    p.line('tuning D=16');
    p.over('  fwd 1/2 FLASHRING_PORTABLE_FWD=16x8: 0.171 ms');
    p.over('  fwd 2/2 FLASHRING_PORTABLE_FWD=4x4: skipped (too large)');
    p.over('  bwd 1/1 X: 1.000 ms');
    p.line('  kept the defaults');
    p.over('  fwd 1/1 Y: 2.000 ms');
    p.end();
    p.end();
  };

  it('on a terminal: the lines drawn over are one line rewritten in place, padded over a longer one; a whole line and end() close it, once', async () => {
    const tty = await stderrOf('1', async () => draw(progressLines()));
    expect(tty).toBe('tuning D=16\n' +
      '\r  fwd 1/2 FLASHRING_PORTABLE_FWD=16x8: 0.171 ms' +
      '\r  fwd 2/2 FLASHRING_PORTABLE_FWD=4x4: skipped (too large)' +
      `\r${'  bwd 1/1 X: 1.000 ms'.padEnd('  fwd 2/2 FLASHRING_PORTABLE_FWD=4x4: skipped (too large)'.length)}\n` +
      '  kept the defaults\n' +
      '\r  fwd 1/1 Y: 2.000 ms\n');
    expect(await stderrOf('1', async () => progressLines().end())).toBe(''); // nothing drawn: nothing to close
  });

  it('in a log: every line whole, no carriage return', async () => {
    expect(await stderrOf('0', async () => draw(progressLines()))).toBe([
      'tuning D=16', '  fwd 1/2 FLASHRING_PORTABLE_FWD=16x8: 0.171 ms', '  fwd 2/2 FLASHRING_PORTABLE_FWD=4x4: skipped (too large)',
      '  bwd 1/1 X: 1.000 ms', '  kept the defaults', '  fwd 1/1 Y: 2.000 ms', ''].join('\n'));
  });
});

describe('progressLines on a narrow terminal', () => {
  afterEach(() => vi.unstubAllEnvs());
  const long = '  fwd 12/40 FLASHRING_SGMM_FWD=8x32x1 FLASHRING_SGMM_FWD_PIPE=1: 0.171 ms';

  it('a line drawn over is cut to the width the parent passes, with an ellipsis, the last column left free (a wrapped line is redrawn only in its last row)', async () => {
    vi.stubEnv('FLASHRING_STDERR_COLUMNS', '30');
    const tty = await stderrOf('1', async () => {
      const p = progressLines();
      p.over(long);
      p.over('  bwd 1/1 X: 1.000 ms');
      p.line(long);   // a whole line is never cut: it is not drawn over
      p.over('exactly twenty-nine columns..');
      p.end();
    });
    const cut = `${long.slice(0, 28)}…`;
    expect(cut).toHaveLength(29);
    expect(tty).toBe(`\r${cut}\r${'  bwd 1/1 X: 1.000 ms'.padEnd(29)}\n${long}\n\rexactly twenty-nine columns..\n`);
  });

  it('the width is read at each draw: a window resized during a run is followed, and a line is padded over the last no wider than the window now is', async () => {
    const short = '  bwd 1/1 X: 1.000 ms';
    const tty = await stderrOf('1', async () => {
      const p = progressLines();
      vi.stubEnv('FLASHRING_STDERR_COLUMNS', '80');   // as the parent sets it again on each resize (bin/dawn-noise.mjs)
      p.over(long);
      vi.stubEnv('FLASHRING_STDERR_COLUMNS', '30');   // narrower: cut to 29, and padded to 29, not to the long line's length (it would wrap)
      p.over(short);
      p.over(long);
      vi.stubEnv('FLASHRING_STDERR_COLUMNS', '100');  // wider again: the long line whole
      p.over(long);
      p.end();
    });
    expect(long.length).toBeLessThan(79);
    expect(tty).toBe(`\r${long}\r${short.padEnd(29)}\r${long.slice(0, 28)}…\r${long}\n`);
  });

  it('in-process (no parent: FLASHRING_STDERR_TTY unset), a terminal stderr whose columns change between draws is followed too', async () => {
    let columns = 80;
    const had = Object.getOwnPropertyDescriptors(process.stderr);
    Object.defineProperties(process.stderr, { isTTY: { value: true, configurable: true }, columns: { get: () => columns, configurable: true } });
    const chunks: string[] = [];
    vi.stubEnv('FLASHRING_STDERR_TTY', undefined);
    const w = vi.spyOn(process.stderr, 'write').mockImplementation((x) => (chunks.push(String(x)), true));
    try {
      const p = progressLines();
      p.over(long);
      columns = 30;
      p.over(long);
      p.end();
    } finally {
      w.mockRestore();
      for (const k of ['isTTY', 'columns'] as const) {
        if (had[k]) Object.defineProperty(process.stderr, k, had[k]);
        else delete (process.stderr as unknown as Record<string, unknown>)[k];
      }
    }
    expect(chunks.join('')).toBe(`\r${long}\r${long.slice(0, 28)}…\n`);
  });

  it('in a log, or with no width known, nothing is cut', async () => {
    vi.stubEnv('FLASHRING_STDERR_COLUMNS', '30');
    expect(await stderrOf('0', async () => progressLines().over(long))).toBe(`${long}\n`);
    for (const columns of ['', 'wide', '0']) {
      vi.stubEnv('FLASHRING_STDERR_COLUMNS', columns);
      expect(await stderrOf('1', async () => { const p = progressLines(); p.over(long); p.end(); }), columns).toBe(`\r${long}\n`);
    }
  });
});
