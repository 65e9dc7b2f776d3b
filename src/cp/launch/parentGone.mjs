// Whether a rank process's parent (the command, pid `parent`) is gone: the test parentWatch.mjs polls. Plain
// JavaScript, as that thread is (no loaders). A child of the parent itself (no wrapper, or one that execs) is
// reparented the moment the parent ends: exact even while the parent is a zombie not yet reaped, and a pid reused
// since cannot mislead it. Behind a wrapper that stays between them the parent's pid is asked after: on Linux its
// /proc/<pid>/stat, whose state tells a zombie (ended, not yet reaped by its own parent) and whose start time, taken
// now, a pid reused since; elsewhere (no /proc, or the parent not seen there) process.kill(parent, 0), which both
// mislead. endOnceParentGone is what a watch does with that test: the thread's (parentWatch.mjs) and, where that thread
// is not running, the rank's main thread's (rankProcess.ts watchParent).
import { readFileSync, rmSync } from 'node:fs';

/** Field 3 (state) and field 22 (start time, clock ticks since boot) of /proc/<pid>/stat's `text`, or null. */
export function statFields(text) {
  // Field 2, the command's name in parentheses, may hold spaces and parentheses itself: the last ')' ends it.
  const close = text.lastIndexOf(')');
  const f = close < 0 ? [] : text.slice(close + 2).trim().split(' ');
  return f.length < 20 ? null : { state: f[0], start: f[19] };
}

const readStat = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8');

/** process.kill(parent, 0): ESRCH is gone; EPERM is there, another user's. */
function signalGone(parent) {
  try {
    process.kill(parent, 0);
    return false;
  } catch (e) {
    return e.code === 'ESRCH';
  }
}

/**
 * The test, () => whether `parent` is gone, for this process (`self`: its pid and parent pid); `read` gives a
 * process's /proc stat text (throws where there is none).
 */
export function parentGone(parent, self = process, read = readStat) {
  if (self.ppid === parent) return () => self.ppid !== parent;
  let own, first;
  try {
    [own, first] = [statFields(read(self.pid)), statFields(read(parent))];
  } catch {
    return () => signalGone(parent);
  }
  if (!own || !first) return () => signalGone(parent);
  // The parent started this process: one of that pid started after it is another, the parent gone before now.
  const born = Number(first.start) <= Number(own.start) ? first.start : null;
  return () => {
    let now;
    try {
      now = statFields(read(parent));
    } catch {
      return signalGone(parent);
    }
    return !now || now.state === 'Z' || now.state === 'X' || now.start !== born;
  };
}

/**
 * One look of a watch on the parent (pid `parent`): once it is gone, removes the ring's spool folder (`spool`, or null;
 * created by that parent for its ranks, used by nothing once it is gone: what the rank's exit handler would remove)
 * and ends the whole process with SIGKILL (`process.exit` on a worker thread would end only that thread), the folder's
 * removal failing or not. Call it every poll.
 */
export function endOnceParentGone(parent, spool) {
  const gone = parentGone(parent);
  return () => {
    if (!gone()) return;
    try {
      if (spool) rmSync(spool, { recursive: true, force: true });
    } finally {
      process.kill(process.pid, 'SIGKILL');
    }
  };
}
