/**
 * One registry of what to undo when the process exits before finishing (temporaries, folders it created,
 * a ring's spool, a store's lock). The command's process (bin/dawn-noise.mjs) turns signals and a lost
 * parent into an exit, so these run then too. Each runs once, newest first, synchronously (an 'exit'
 * handler cannot wait), and its errors are swallowed: exiting is best effort.
 */
const undo = new Set<{ fn: () => void }>(); // an entry a registration: the same function twice runs twice
let installed = false;

function runAll(): void {
  for (const entry of [...undo].reverse()) {
    undo.delete(entry);
    try {
      entry.fn();
    } catch { /* best effort while exiting */ }
  }
}

/** Runs `fn` at exit unless the returned function (call it once the work is done) withdraws it first. */
export function atExit(fn: () => void): () => void {
  if (!installed) {
    installed = true;
    process.on('exit', runAll);
  }
  const entry = { fn };
  undo.add(entry);
  return () => void undo.delete(entry);
}
