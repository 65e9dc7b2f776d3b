// A rank process's watchdog on its parent (rankProcess.ts watchParent starts it on a worker thread): the thread
// has its own event loop, so it runs while the rank's main thread is stuck in a synchronous driver call, which
// never sees the IPC channel close. Plain JavaScript: it needs none of the loaders, and runs before they would.
// Once the parent (the command, pid `parent`) is gone (parentGone.mjs) it removes the ring's spool folder (created by
// that parent for its ranks, used by nothing once it is gone: what the rank's exit handler would remove) and ends the
// whole process with SIGKILL (`process.exit` here would end only this thread). One timer, every `pollMs`; once it is set,
// the thread says so (a message: the rank does no GPU work before).
import { rmSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { parentGone } from './parentGone.mjs';

const { parent, spool, pollMs } = workerData;
const gone = parentGone(parent);

setInterval(() => {
  if (!gone()) return;
  if (spool) rmSync(spool, { recursive: true, force: true });
  process.kill(process.pid, 'SIGKILL');
}, pollMs);
parentPort.postMessage('watching');
