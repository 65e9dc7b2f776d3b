/**
 * Dawn for Node waits for GPU work by polling: while any of its promises is pending it re-queues
 * a native callback with `setImmediate` that processes events and queues itself again
 * (dawn/node AsyncRunner, crbug.com/dawn/1127), so a waiting process keeps a whole core busy.
 * On a CPU adapter (lavapipe) that core is the one that compiles and runs the shaders: with two
 * processes on two cores, the spinning halved the compile rate of a cold shader cache.
 * easeDawnPolling() lets such a streak of polls (native callbacks re-queued with no break)
 * run for STREAK_MS, then re-queues them with `setTimeout(…, 1)`: a wait of seconds costs a
 * millisecond more at most and no core. Installed once per process, for CPU adapters only
 * (device.ts): GPU waits keep Dawn's own latency. A no-op where there is no setImmediate (browsers).
 */

/** Polling without a break for this long (ms) before the polls are spaced. */
const STREAK_MS = 4;
/**
 * A poll queued from outside a poll after a gap this long (ms) starts a new streak. A poll queued from
 * within a poll (Dawn re-queuing itself) always continues its streak, however late it runs: a busy
 * machine keeps a process off its core for tens of milliseconds, and such a gap must not start another
 * STREAK_MS of spinning.
 */
const GAP_MS = 20;

let installed = false;

/** Whether each callback seen is native, remembered: every setImmediate of the process passes here. */
const nativeOf = new WeakMap<object, boolean>();
const isNative = (f: unknown) => {
  if (typeof f !== 'function') return false;
  let n = nativeOf.get(f);
  if (n === undefined) nativeOf.set(f, (n = /\{\s*\[native code\]\s*\}\s*$/.test(Function.prototype.toString.call(f))));
  return n;
};

/** Spaces Dawn's event polling once it has spun for STREAK_MS (see above); idempotent. */
export function easeDawnPolling(): void {
  const g = globalThis as { setImmediate?: (cb: (...a: unknown[]) => void, ...a: unknown[]) => unknown };
  if (installed || typeof g.setImmediate !== 'function') return;
  installed = true;
  const immediate = g.setImmediate;
  let last = -Infinity, streakStart = 0, polling = 0;
  // A poll runs through here, so that what it queues is known to come from a poll.
  const run = (cb: (...a: unknown[]) => void, args: unknown[]) => {
    last = performance.now();
    polling++;
    try {
      cb(...args);
    } finally {
      polling--;
    }
  };
  const eased = (cb: (...a: unknown[]) => void, ...args: unknown[]) => {
    if (!isNative(cb)) return immediate(cb, ...args);
    const now = performance.now();
    if (!polling && now - last > GAP_MS) streakStart = now;
    last = now;
    if (now - streakStart > STREAK_MS) return setTimeout(() => run(cb, args), 1);
    return immediate(() => run(cb, args));
  };
  g.setImmediate = Object.assign(eased, immediate);
}
