/**
 * The parent's half of the process transport (src/cp/transport/ipc.ts): the spool's lifetime and
 * the routing of data messages, without spawning a rank.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProcessLink } from '../src/cp/transport/ipc.js';
import { DataMessage } from '../src/cp/transport/processComm.js';

const msg = (from: number, to: number): DataMessage => ({ type: 'data', tag: 't', from, to, bytes: [4], parts: [new Uint8Array(4)] });

describe('ProcessLink', () => {
  it('a spool folder in memory where there is /dev/shm, removed by close with what a failure left in it', async () => {
    const link = await ProcessLink.open();
    expect(existsSync(link.spool)).toBe(true);
    if (existsSync('/dev/shm')) expect(link.spool.startsWith('/dev/shm/flashring-ring-')).toBe(true);
    writeFileSync(join(link.spool, 'left-by-a-rank'), 'x');
    await link.close();
    expect(existsSync(link.spool)).toBe(false);
    await link.close(); // twice: nothing to do, no error
  });

  it('each data message goes to the channel of the rank it is for; one for a rank that is not there is an error', async () => {
    const link = await ProcessLink.open();
    const got: [number, DataMessage][] = [];
    link.connect([0, 1, 2].map((r) => (m: DataMessage) => got.push([r, m])));
    const a = msg(0, 2), b = msg(2, 1);
    link.route(a);
    link.route(b);
    expect(got).toEqual([[2, a], [1, b]]);
    expect(() => link.route(msg(1, 3))).toThrow(/internal error in the process link: a data message for rank 3 of 3 \('t' from rank 1\); please report/);
    await link.close();
  });
});
