/**
 * Progress on stderr: on a terminal one line rewritten in place; elsewhere (a log, a pipe) whole
 * lines only, so a captured log holds no carriage returns.
 */
import { counted } from '../plural.js';

/** Whether stderr ends at a terminal. Under bin/flashring.mjs it is a pipe to the parent, which says whether its own is one. */
export const progressOnTerminal = (): boolean =>
  process.env.FLASHRING_STDERR_TTY !== undefined ? process.env.FLASHRING_STDERR_TTY === '1' : !!process.stderr.isTTY;

/**
 * The width of the terminal stderr ends at now, or null where none is known: read at each call, so a window resized during
 * a run is followed. Under bin/flashring.mjs the parent passes its own (FLASHRING_STDERR_COLUMNS, with FLASHRING_STDERR_TTY;
 * set again on each resize: bin/dawn-noise.mjs); in-process, stderr's (kept current by Node on a terminal).
 */
export function progressColumns(): number | null {
  const columns = process.env.FLASHRING_STDERR_TTY !== undefined ? Number(process.env.FLASHRING_STDERR_COLUMNS || NaN) : process.stderr.columns;
  return Number.isSafeInteger(columns) && columns > 1 ? columns : null;
}

/**
 * A line to draw over on a terminal `columns` wide (null: not known), cut with an ellipsis to leave the last column free:
 * `\r` goes back to the start of the cursor's row only, so a line that wraps is redrawn in its last row alone.
 */
export function fitLine(text: string, columns: number | null): string {
  const chars = Array.from(text);
  return columns === null || chars.length < columns ? text : `${chars.slice(0, columns - 2).join('')}…`;
}

/** A phase's progress within it: `done` of `total` (of the phase's unit, e.g. K/V heads). */
export type PhaseTick = (done: number, total: number) => void;

/**
 * A phase of a long run (a forward pass, a backward pass, writing the outputs) on stderr: a line when it
 * starts and one when it ends, with its time. On a terminal the end rewrites the start's line in place;
 * elsewhere each is a whole line (`  forward: started`, `  forward: done in 812.4 ms`). `run` may say how
 * far it is through its `tick`: on a terminal the line shows it (`  forward… 40% (6 of 16 K/V heads)`);
 * elsewhere a line each time another tenth is done, before the last. Where `run` fails on a terminal the
 * open line is ended, so the error starts a line of its own. Returns what `run` returns and its milliseconds.
 */
export async function timedPhase<T>(what: string, run: (tick: PhaseTick) => Promise<T>, unit = 'parts'): Promise<{ value: T; ms: number }> {
  const tty = progressOnTerminal(), lines = progressLines();   // on a terminal: drawn over, cut to its width
  let tenths = 0;
  lines.over(tty ? `  ${what}…` : `  ${what}: started`);
  const tick: PhaseTick = (done, total) => {
    const pct = Math.floor((100 * done) / total), of = `${pct}% (${done} of ${total} ${unit})`;
    if (tty) lines.over(`  ${what}… ${of}`);
    else if (done < total && Math.floor((10 * done) / total) > tenths) {
      tenths = Math.floor((10 * done) / total);
      lines.over(`  ${what}: ${of}`);
    }
  };
  const t0 = performance.now();
  let value: T;
  try {
    value = await run(tick);
  } catch (e) {
    lines.end();
    throw e;
  }
  const ms = performance.now() - t0;
  lines.over(`  ${what}: done in ${ms.toFixed(1)} ms`);
  lines.end();
  return { value, ms };
}

/**
 * Progress lines on stderr, some of which a terminal draws over: on a terminal `over` rewrites one line in place (`\r`,
 * padded over what it showed, cut to the terminal's width as it is at that draw: fitLine, progressColumns) and `line` ends that line and writes a whole one; elsewhere (a log, a pipe) each is a
 * whole line. `end` ends a drawn line (call it however the run ends, so that an error or what follows on stdout starts
 * a line of its own); once, and nothing where none is drawn.
 */
export function progressLines(): { over: (text: string) => void; line: (text: string) => void; end: () => void } {
  const tty = progressOnTerminal();
  let drawn: string | null = null;
  const end = () => {
    if (drawn !== null) process.stderr.write('\n');
    drawn = null;
  };
  return {
    over: (text) => {
      if (!tty) return void process.stderr.write(`${text}\n`);
      // The width read at each draw (a window resized during a long run): cut to it, and padded over what was drawn no
      // further than it (a line drawn at a wider width, padded to its length, would wrap).
      const columns = progressColumns(), shown = fitLine(text, columns);
      process.stderr.write(`\r${shown.padEnd(Math.min(drawn?.length ?? 0, columns === null ? Infinity : columns - 1))}`);
      drawn = shown;
    },
    line: (text) => {
      end();
      process.stderr.write(`${text}\n`);
    },
    end,
  };
}

/** A ring's step, as its onStep reports it: `step` (from 0) of `steps` in `phase` ended on every rank. */
export interface RingStep { phase: string; step: number; steps: number }

/**
 * A ring's progress on stderr (`attention --cp`): on a terminal one line rewritten per step, which `end` closes
 * (call it however the run ends, so an error starts a line of its own); elsewhere (a log, a pipe) a line each
 * time another tenth of a phase's steps is done (`  forward: step 3 of 8 done`), and one when its last is.
 */
export function ringProgress(): { tick: (p: RingStep) => void; end: () => void } {
  const tty = progressOnTerminal(), lines = progressLines();
  let phaseNow = '', tenths = 0;
  const tick = ({ phase, step, steps }: RingStep) => {
    if (tty) return lines.over(`  ${phase} step ${step + 1}/${steps}   `);
    if (phase !== phaseNow) [phaseNow, tenths] = [phase, 0];
    const done = step + 1, t = Math.floor((10 * done) / steps);
    if (done === steps) process.stderr.write(`  ${phase}: ${counted(steps, 'step')} done\n`);
    else if (t > tenths) {
      tenths = t;
      process.stderr.write(`  ${phase}: step ${done} of ${steps} done\n`);
    }
  };
  return { tick, end: lines.end };
}
