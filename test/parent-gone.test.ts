/**
 * The rank watchdog's test of its parent (src/cp/launch/parentGone.mjs) on crafted /proc stat text: behind a wrapper,
 * a zombie parent (ended, not yet reaped) and a pid reused since are gone, which process.kill(pid, 0) took for there;
 * a direct child goes by its parent pid; without /proc, the signal is asked.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parentGone, statFields } from '../src/cp/launch/parentGone.mjs';

/** /proc/<pid>/stat text of a process named `name` in `state`, started at `start` ticks (its 52 fields). */
const stat = (pid: number, name: string, state: string, start: number) =>
  [pid, `(${name})`, state, 1, pid, pid, 0, -1, 4194304, ...Array(12).fill(0), start, ...Array(30).fill(0)].join(' ') + '\n';

const WRAPPER = 300, PARENT = 200, SELF = 400;

/** The test for PARENT from SELF behind WRAPPER, /proc as `procs` says (pid → its text, a function of the poll). */
function watch(procs: Record<number, () => string | undefined>) {
  return parentGone(PARENT, { pid: SELF, ppid: WRAPPER }, (pid) => {
    const t = procs[pid]?.();
    if (t === undefined) throw Object.assign(new Error(`ENOENT /proc/${pid}/stat`), { code: 'ENOENT' });
    return t;
  });
}

describe("the rank watchdog's test of its parent", () => {
  it('reads the state and the start time past a name with spaces and parentheses', () => {
    expect(statFields(stat(7, 'a) b (c', 'Z', 12345))).toEqual({ state: 'Z', start: '12345' });
    expect(statFields(readFileSync('/proc/self/stat', 'utf8'))?.state).toBe('R');
    expect(statFields('7 (short) S 1 2')).toBeNull();
  });

  it('behind a wrapper: the parent there is not gone; a zombie, one gone from /proc, or its pid reused is', () => {
    let parent: string | undefined = stat(PARENT, 'node', 'S', 100);
    const gone = watch({ [SELF]: () => stat(SELF, 'node', 'R', 150), [PARENT]: () => parent });
    expect(gone()).toBe(false);
    parent = stat(PARENT, 'node', 'Z', 100);
    expect(gone(), 'a zombie').toBe(true);
    parent = stat(PARENT, 'sleep', 'S', 900);
    expect(gone(), 'its pid reused').toBe(true);
    parent = stat(PARENT, 'node', 'S', 100);
    expect(gone()).toBe(false);
  });

  it('a parent that started after this process (its pid reused before the watch began) is gone from the start', () => {
    const gone = watch({ [SELF]: () => stat(SELF, 'node', 'R', 150), [PARENT]: () => stat(PARENT, 'sleep', 'S', 160) });
    expect(gone()).toBe(true);
  });

  it('a direct child goes by its parent pid, whatever /proc says', () => {
    const self = { pid: SELF, ppid: PARENT };
    const gone = parentGone(PARENT, self, () => stat(PARENT, 'node', 'Z', 100));
    expect(gone()).toBe(false);
    self.ppid = 1;
    expect(gone()).toBe(true);
  });

  it('without /proc, the signal: this process is there', () => {
    const none = () => { throw new Error('no /proc'); };
    expect(parentGone(process.pid, { pid: SELF, ppid: WRAPPER }, none)()).toBe(false);
  });
});
