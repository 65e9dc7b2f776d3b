/**
 * Progress on stderr: on a terminal one line rewritten in place; elsewhere (a log, a pipe) whole
 * lines only, so a captured log holds no carriage returns.
 */

/** Whether stderr ends at a terminal. Under bin/flashring.mjs it is a pipe to the parent, which says whether its own is one. */
export const progressOnTerminal = (): boolean =>
  process.env.FLASHRING_STDERR_TTY !== undefined ? process.env.FLASHRING_STDERR_TTY === '1' : !!process.stderr.isTTY;
