/**
 * The parent's half of the process transport (processComm.ts is the ranks' half): the spool folder
 * the rank processes exchange bytes through, from its creation to its removal, and the routing of
 * each data message to the process of the rank it is for. The launcher (src/cp/launch/processRanks.ts)
 * hands it the ranks' channels and every data message, and never looks into one.
 */
import { existsSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { atExit } from '../../exit.js';
import { internalError } from '../../errors.js';
import { DataMessage } from './processComm.js';

export class ProcessLink {
  private peers: ((m: DataMessage) => void)[] = [];

  private constructor(readonly spool: string, private forget: () => void) {}

  /**
   * A spool on /dev/shm (memory) where there is one, else in the temporary folder; removed at exit
   * too if the process ends mid-ring (a signal, its parent gone: the CLI turns both into an exit),
   * and by each rank process as it ends once this one has let go of it (this one killed: rankProcess.ts).
   */
  static async open(): Promise<ProcessLink> {
    const spool = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'flashring-ring-'));
    return new ProcessLink(spool, atExit(() => rmSync(spool, { recursive: true, force: true })));
  }

  /** Each rank's channel, by rank. */
  connect(peers: ((m: DataMessage) => void)[]): void {
    this.peers = peers;
  }

  /** A data message from one rank process, to the process of the rank it is for. */
  route(m: DataMessage): void {
    const to = this.peers[m.to];
    if (!to) throw internalError(`a data message for rank ${m.to} of ${this.peers.length} ('${m.tag}' from rank ${m.from})`, 'the process link');
    to(m);
  }

  /**
   * Removes the spool with whatever a failure left in it. One that cannot be removed now stays
   * registered (tried again at exit), and no error is thrown: the ring's own error, if any, is the one to see.
   */
  async close(): Promise<void> {
    await rm(this.spool, { recursive: true, force: true }).then(this.forget, () => {});
  }
}
