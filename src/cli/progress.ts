/**
 * Progress on stderr: on a terminal one line rewritten in place; elsewhere (a log, a pipe) whole
 * lines only, so a captured log holds no carriage returns.
 */

/** Whether stderr ends at a terminal. Under bin/flashring.mjs it is a pipe to the parent, which says whether its own is one. */
export const progressOnTerminal = (): boolean =>
  process.env.FLASHRING_STDERR_TTY !== undefined ? process.env.FLASHRING_STDERR_TTY === '1' : !!process.stderr.isTTY;

/**
 * A phase of a long run (a forward pass, a backward pass, writing the outputs) on stderr: a line when it
 * starts and one when it ends, with its time. On a terminal the end rewrites the start's line in place;
 * elsewhere each is a whole line (`  forward: started`, `  forward: done in 812.4 ms`). Where `run` fails
 * on a terminal the open line is ended, so the error starts a line of its own. Returns what `run` returns
 * and its milliseconds.
 */
export async function timedPhase<T>(what: string, run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const tty = progressOnTerminal();
  process.stderr.write(tty ? `  ${what}…` : `  ${what}: started\n`);
  const t0 = performance.now();
  let value: T;
  try {
    value = await run();
  } catch (e) {
    if (tty) process.stderr.write('\n');
    throw e;
  }
  const ms = performance.now() - t0;
  process.stderr.write(`${tty ? '\r' : ''}  ${what}: done in ${ms.toFixed(1)} ms${tty ? '   ' : ''}\n`);
  return { value, ms };
}
