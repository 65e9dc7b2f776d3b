// A rank process's watchdog on its parent (rankProcess.ts watchParent starts it on a worker thread): the thread
// has its own event loop, so it runs while the rank's main thread is stuck in a synchronous driver call, which
// never sees the IPC channel close. Plain JavaScript: it needs none of the loaders, and runs before they would.
// Once the parent (the command, pid `parent`) is gone it removes the ring's spool folder and ends the whole process
// (parentGone.mjs endOnceParentGone). One timer, every `pollMs`; once it is set, the thread says so (a message: the
// rank does no GPU work before, and watches from its main thread instead should the message not come).
import { parentPort, workerData } from 'node:worker_threads';
import { endOnceParentGone } from './parentGone.mjs';

const { parent, spool, pollMs } = workerData;
setInterval(endOnceParentGone(parent, spool), pollMs);
parentPort.postMessage('watching');
