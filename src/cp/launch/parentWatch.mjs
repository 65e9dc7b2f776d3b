// A rank process's watchdog on its parent (rankProcess.ts watchParent starts it on a worker thread): the thread
// has its own event loop, so it runs while the rank's main thread is stuck in a synchronous driver call, which
// never sees the IPC channel close. Plain JavaScript: it needs none of the loaders, and runs before they would.
// Once the parent (the command, pid `parent`) is gone it removes the ring's spool folder (created by that parent
// for its ranks, used by nothing once it is gone: what the rank's exit handler would remove) and ends the whole
// process with SIGKILL (`process.exit` here would end only this thread). One timer, every `pollMs`; once it is set,
// the thread says so (a message: the rank does no GPU work before).
import { rmSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const { parent, spool, pollMs } = workerData;
// A child of the parent itself (no wrapper, or one that execs) is reparented the moment the parent ends: exact even
// while the parent is a zombie not yet reaped, and a pid reused since cannot mislead it. Behind a wrapper that stays
// between them, the parent's pid is asked after instead.
const direct = process.ppid === parent;

function parentGone() {
  if (direct) return process.ppid !== parent;
  try {
    process.kill(parent, 0);
    return false;
  } catch (e) {
    return e.code === 'ESRCH';   // EPERM: there, another user's
  }
}

setInterval(() => {
  if (!parentGone()) return;
  if (spool) rmSync(spool, { recursive: true, force: true });
  process.kill(process.pid, 'SIGKILL');
}, pollMs);
parentPort.postMessage('watching');
