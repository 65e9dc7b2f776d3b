/**
 * The communicators' errors are typed (errors.ts): a failure the user can act on is a
 * TransportError saying what to do; a broken invariant of the rank programs is an InternalError
 * to report. Fake devices: every error here comes before anything reaches a GPU.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FlashDevice } from '../src/gpu/device.js';
import { InternalError, TransportError } from '../src/errors.js';
import { BufRange, InProcessCommunicator, gpuAlone } from '../src/cp/transport/communicator.js';
import { ProcessCommunicator } from '../src/cp/transport/processComm.js';

const fakeDev = (index: number) => ({ index, device: { queue: { onSubmittedWorkDone: async () => {} } } }) as unknown as FlashDevice;
const range = (bytes: number): BufRange[] => [{ buffer: {} as GPUBuffer, bytes }];
const noMover = async () => { throw new Error('no transfer should start'); };

describe('in-process communicator', () => {
  it('an exchange posted twice is an internal error', () => {
    const c = new InProcessCommunicator([fakeDev(0), fakeDev(1)], noMover);
    c.sendRecv(0, 1, range(8), 1, [], 't').catch(() => {});
    expect(() => c.sendRecv(0, 1, range(8), 1, [], 't')).toThrow(InternalError);
    expect(() => c.sendRecv(0, 1, range(8), 1, [], 't')).toThrow(/^internal error: communicator: send 0>1:t posted twice.*please report it/);
  });

  it('a receive of another size than the send is an internal error', async () => {
    const c = new InProcessCommunicator([fakeDev(0), fakeDev(1)], noMover);
    const send = c.sendRecv(0, 1, range(8), 1, [], 't');
    const recv = c.sendRecv(1, 0, [], 0, range(4), 't');
    for (const p of [send, recv]) await expect(p).rejects.toThrow(InternalError);
  });

  it('gpuAlone after the run failed: a TransportError pointing at the first error', async () => {
    const e = await gpuAlone(fakeDev(0), () => false, 'rank 1 forward step 2').catch((x) => x);
    expect(e).toBeInstanceOf(TransportError);
    expect(e.message).toMatch(/^rank 1 forward step 2 abandoned: .*its first error is the one to act on/);
  });
});

describe('process communicator', () => {
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  it('a spool file cut short is a TransportError saying to check its file system', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flashring-spool-test-'));
    dirs.push(dir);
    const file = join(dir, '1-0-t');
    await writeFile(file, new Uint8Array(4));
    const c = new ProcessCommunicator(2, fakeDev(0), () => {});
    const p = c.sendRecv(0, 1, [], 1, range(8), 't');
    c.deliver({ type: 'data', tag: 't', from: 1, to: 0, bytes: [8], parts: [], file });
    const e = await p.catch((x) => x);
    expect(e).toBeInstanceOf(TransportError);
    expect(e.message).toContain(`holds 4 bytes, not 8`);
    expect(e.message).toContain(`check that its file system (${dir}) has free space`);
  });

  it("a spool file that cannot be read (gone, the file system full or cleaned) is a TransportError saying what to do, not an internal error", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flashring-spool-test-'));
    dirs.push(dir);
    const file = join(dir, '1-0-gone');
    const c = new ProcessCommunicator(2, fakeDev(0), () => {});
    const p = c.sendRecv(0, 1, [], 1, range(8), 't');
    c.deliver({ type: 'data', tag: 't', from: 1, to: 0, bytes: [8], parts: [], file });
    const e = await p.catch((x) => x);
    expect(e).toBeInstanceOf(TransportError);
    expect(e.message).toContain(`cannot read the spool file ${file} (ENOENT`);
    expect(e.message).toContain(`free space in ${dir}`);
  });

  it('a message of another size than the receive is an internal error', async () => {
    const c = new ProcessCommunicator(2, fakeDev(0), () => {});
    const p = c.sendRecv(0, 1, [], 1, range(8), 't');
    c.deliver({ type: 'data', tag: 't', from: 1, to: 0, bytes: [4], parts: [new Uint8Array(4)] });
    await expect(p).rejects.toThrow(InternalError);
  });
});

describe('an InternalError at the command line', () => {
  it('keeps its stack (a bug to report), not one line as a mistake', async () => {
    const { userMistake } = await import('../src/cli/main.js');
    const { internalError, TransportError: T } = await import('../src/errors.js');
    expect(await userMistake(internalError('a broken invariant', 'rank 1'))).toBeNull();
    expect(await userMistake(new T('the spool is full: free /dev/shm'))).toBe('the spool is full: free /dev/shm');
  });
});
