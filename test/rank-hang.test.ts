/**
 * A rank process that hangs (stopped here with SIGSTOP, as one stuck in a driver call stays): the ring's
 * watchdog names it (processRanks.ts silentRank), and no rank process outlives the command, however it ends
 * (its step timeout, or a signal to the command: killAtExit); the command's process killed outright, its ranks
 * remove the spool folder as they end (rankProcess.ts removeSpoolAtExit), and one whose main thread is blocked
 * (as in a synchronous driver call) is ended by its watchdog thread (rankProcess.ts watchParent). Should that thread
 * not run (test/fixtures/watchdog-swap.mjs breaks it), the rank says so once and watches from its main thread.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { encodeNpy } from '../src/cli/npy.js';
import { ringAttentionProcesses } from '../src/cp/launch/processRanks.js';
import { WATCH_START_MS } from '../src/cp/launch/rankProcess.js';
import { DeviceLostError } from '../src/errors.js';
import { BIN } from './cli-run.js';
import { makeInputs, AttentionShape } from './cases.js';

const preload = pathToFileURL(fileURLToPath(new URL('./fixtures/rank-stop.mjs', import.meta.url))).href;
const swap = pathToFileURL(fileURLToPath(new URL('./fixtures/watchdog-swap.mjs', import.meta.url))).href;
const ringParent = fileURLToPath(new URL('./fixtures/ring-parent.mjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'flashring-rank-hang-'));
const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 16, Nk: 16, D: 16 };

/** Whether process `pid` still runs (a zombie, ended but not yet reaped, does not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Waits until `test` holds (polled), at most `ms`; whether it did. */
async function until(test: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) if (test()) return true;
  return test();
}

/** The stopped rank's pid, once its file is there (killed at the end whatever the test found). */
const stoppedPid = (file: string) => Number(readFileSync(file, 'utf8').split('\n')[0]);

const f = (n: string) => join(dir, n);

/** A wrapper that stays the rank process's parent (the API's wrapper): bash runs it as its child and waits (a command after it: no exec). */
const WRAPPER = ['bash', '-c', '"$0" "$@"; exit $?'];

/**
 * `flashring attention --cp <cp> --cp-mode processes` on fresh inputs (`seed`) into `out`, its rank 1 (or
 * FLASHRING_TEST_STOP_RANK) stopping itself once running and writing its pid (and the spool) to `pidFile`; `env`
 * over the test's environment.
 */
function attentionStopped(seed: number, out: string, pidFile: string, env: Record<string, string> = {}, cp = 2) {
  const x = makeInputs(s, seed);
  for (const n of ['q', 'k', 'v'] as const) writeFileSync(f(`${n}.npy`), encodeNpy({ dtype: 'f4', shape: [2, 16, 16], data: Float32Array.from(x[n]) }));
  const cmd = spawn(process.execPath, [BIN, 'attention', '--q', f('q.npy'), '--k', f('k.npy'), '--v', f('v.npy'), '--out', f(out), '--cp', String(cp), '--cp-mode', 'processes'],
    { env: { ...process.env, NODE_OPTIONS: `--import=${preload}`, FLASHRING_TEST_STOP_RANK: '1', FLASHRING_TEST_STOP_FILE: f(pidFile), ...env }, stdio: 'ignore' });
  return cmd;
}

/**
 * The environment that blocks rank `rank`'s main thread on the parent's message `at` (by default once its checks are
 * done; 'init': before its own handler sees the first message), its pid and spool in `file`.
 */
function blocked(rank: number, file: string, at = 'proceed'): Record<string, string> {
  return { NODE_OPTIONS: `--import=${preload}`, FLASHRING_TEST_STOP_RANK: String(rank), FLASHRING_TEST_STOP_FILE: f(file), FLASHRING_TEST_STOP_AT: at, FLASHRING_TEST_STOP_HOW: 'block' };
}

/**
 * `env` (its NODE_OPTIONS preloading rank-stop.mjs or none) with every rank's watchdog thread failing as `how` says
 * (test/fixtures/watchdog-swap.mjs: throw, silent, exit, missing).
 */
function brokenWatchdog(how: string, env: Record<string, string> = {}): Record<string, string> {
  return { ...env, FLASHRING_TEST_WATCHDOG: how, NODE_OPTIONS: `${env.NODE_OPTIONS ?? ''} --import=${swap}`.trim() };
}

/** `parent` killed with SIGKILL, once it has ended. */
function killed(parent: ChildProcess): () => Promise<void> {
  const ended = new Promise<void>((r) => parent.on('exit', () => r()));
  return () => {
    parent.kill('SIGKILL');
    return ended;
  };
}

/**
 * A ring's parent process ended by `kill` once the rank whose pid and spool are in `file` has blocked: that rank, alive
 * until then, has ended within 5 s, and the spool is gone.
 */
async function orphanEnds(kill: () => Promise<void>, file: string): Promise<void> {
  expect(await until(() => existsSync(f(file)) && readFileSync(f(file), 'utf8').includes('\n'), 20_000)).toBe(true);
  const pid = stoppedPid(f(file)), spool = readFileSync(f(file), 'utf8').split('\n')[1];
  try {
    expect(existsSync(spool)).toBe(true);
    await new Promise((r) => setTimeout(r, 1500));
    expect(alive(pid), 'the blocked rank runs on while its parent lives').toBe(true);
    await kill();
    expect(await until(() => !alive(pid), 5000), `the blocked rank's process ${pid} still there`).toBe(true);
    expect(await until(() => !existsSync(spool), 2000), spool).toBe(true);
  } finally {
    if (alive(pid)) process.kill(pid, 'SIGKILL');
    rmSync(spool, { recursive: true, force: true });
  }
}

describe('a hung rank process', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("the watchdog names the rank that went silent, and the run's end kills it", async () => {
    const file = join(dir, 'api.pid');
    const env = ['env', `NODE_OPTIONS=--import=${preload}`, 'FLASHRING_TEST_STOP_RANK=1', `FLASHRING_TEST_STOP_FILE=${file}`];
    const x = makeInputs(s, 7);
    const run = ringAttentionProcesses(s, x, { ranks: 2, wrapper: env, stepTimeoutMs: 3000 });
    await expect(run).rejects.toThrow(/rank 1's process has sent nothing for \d+ s/);
    await expect(run).rejects.toBeInstanceOf(DeviceLostError);
    await expect(run).rejects.toMatchObject({ rank: 1 });
    const pid = stoppedPid(file);
    try {
      expect(await until(() => !alive(pid), 3000)).toBe(true);
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 30_000);

  it('attention --cp-mode processes ended by SIGTERM leaves no rank process behind, a stopped one included', async () => {
    const cmd = attentionStopped(8, 'out', 'cli.pid');
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => cmd.on('exit', (code, signal) => r({ code, signal })));
    expect(await until(() => existsSync(f('cli.pid')) && readFileSync(f('cli.pid'), 'utf8') !== '', 20_000)).toBe(true);
    const pid = stoppedPid(f('cli.pid'));
    try {
      cmd.kill('SIGTERM');
      const end = await ended;
      expect(end.signal === 'SIGTERM' || end.code === 143, JSON.stringify(end)).toBe(true);
      expect(await until(() => !alive(pid), 3000)).toBe(true);
      expect(existsSync(f('out'))).toBe(false);
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  }, 30_000);

  it("the command's process killed (SIGKILL: no exit handler runs) leaves no spool folder: the ranks remove it as they end", async () => {
    // In-process (FLASHRING_RAW_STDERR=1): the process SIGKILL ends is the ring's parent.
    const cmd = attentionStopped(9, 'out2', 'kill.pid', { FLASHRING_RAW_STDERR: '1' });
    const ended = new Promise<void>((r) => cmd.on('exit', () => r()));
    expect(await until(() => existsSync(f('kill.pid')) && readFileSync(f('kill.pid'), 'utf8').includes('\n'), 20_000)).toBe(true);
    const pid = stoppedPid(f('kill.pid')), spool = readFileSync(f('kill.pid'), 'utf8').split('\n')[1];
    try {
      expect(existsSync(spool)).toBe(true);
      cmd.kill('SIGKILL');
      await ended;
      process.kill(pid, 'SIGCONT');   // the stopped rank goes on, finds its parent gone and ends
      expect(await until(() => !alive(pid), 5000)).toBe(true);
      expect(await until(() => !existsSync(spool), 2000), spool).toBe(true);
    } finally {
      if (alive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(spool, { recursive: true, force: true });
    }
  }, 30_000);

  // Its main thread blocked (as in a synchronous driver call that never returns), the rank never sees its channel
  // close: its watchdog thread (rankProcess.ts watchParent) sees the parent gone, removes the spool and ends it.
  // At --cp 1 the blocked rank is the only one, so the spool's removal is its watchdog's alone.
  it.each([1, 2])("the command's process killed (SIGKILL) while a rank's main thread is blocked (--cp %i): that rank ends within seconds, no spool left", async (cp) => {
    const file = `block${cp}.pid`, env = blocked(cp - 1, file);
    await orphanEnds(killed(attentionStopped(11 + cp, `out-block${cp}`, file, { FLASHRING_RAW_STDERR: '1', ...env }, cp)), file);
  }, 40_000);

  // The earliest a rank can block: on its first message, before its own handler runs (the watchdog must already be
  // there: it starts with the process, not with the init message).
  it("the command's process killed (SIGKILL) while a rank's main thread blocked on its init message: that rank ends too", async () => {
    const file = 'block-init.pid', env = blocked(0, file, 'init');
    await orphanEnds(killed(attentionStopped(14, 'out-block-init', file, { FLASHRING_RAW_STDERR: '1', ...env }, 1)), file);
  }, 40_000);

  it("a blocked rank behind a wrapper that stays its parent (the API's wrapper) ends once the ring's parent is killed", async () => {
    const file = 'wrapped.pid', env = { ...process.env, ...blocked(0, file) };
    await orphanEnds(killed(spawn(process.execPath, [ringParent, JSON.stringify(s), '1', ...WRAPPER], { env, stdio: 'ignore' })), file);
  }, 40_000);

  it('a blocked rank behind a wrapper ends once the ring\'s parent is killed, though that parent stays a zombie (never reaped)', async () => {
    const file = 'zombie.pid', env = { ...process.env, ...blocked(0, file) }, parentPid = f('zombie-parent.pid');
    // sh starts the ring's parent in the background and becomes sleep, which never reaps it: killed, it stays a zombie,
    // which process.kill(pid, 0) finds there.
    const holder = spawn('sh', ['-c', '"$@" & echo $! > "$0"; exec sleep 60', parentPid, process.execPath, ringParent, JSON.stringify(s), '1', ...WRAPPER],
      { env, stdio: 'ignore' });
    try {
      await orphanEnds(async () => {
        const pid = Number(readFileSync(parentPid, 'utf8'));
        process.kill(pid, 'SIGKILL');
        expect(await until(() => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z'), 5000), 'the parent a zombie').toBe(true);
      }, file);
    } finally {
      holder.kill('SIGKILL');
    }
  }, 40_000);

  // The watchdog thread not running (its module failing at load, not there, never saying it watches, or ending): the
  // ring runs on, the rank saying once, marked with its rank, that it watches from its main thread instead, and why.
  it.each([
    ['throw', /failed \(the stand-in watchdog fails at load\)/],
    ['missing', /failed \(Cannot find module '.*no-such-watchdog\.mjs'/],
    ['silent', new RegExp(`did not say it was watching within ${WATCH_START_MS / 1000} s`)],
    ['exit', /ended \(code 0\)/],
  ])('a watchdog thread that does not run (%s): the command runs to its end, its rank saying once that its main thread watches', async (how, why) => {
    const x = makeInputs(s, 20);
    for (const n of ['q', 'k', 'v'] as const) writeFileSync(f(`w${how}-${n}.npy`), encodeNpy({ dtype: 'f4', shape: [2, 16, 16], data: Float32Array.from(x[n]) }));
    const args = ['attention', ...['q', 'k', 'v'].flatMap((n) => [`--${n}`, f(`w${how}-${n}.npy`)]), '--out', f(`w${how}-out`), '--cp', '1', '--cp-mode', 'processes'];
    const r = await promisify(execFile)(process.execPath, [BIN, ...args], { timeout: 60_000, env: { ...process.env, ...brokenWatchdog(how) } })
      .then((o) => ({ code: 0, err: o.stderr }), (e) => ({ code: e.code as number, err: e.stderr as string }));
    expect(r.code, r.err).toBe(0);
    expect(existsSync(f(`w${how}-out`))).toBe(true);
    const said = r.err.split('\n').filter((l) => /watchdog thread/.test(l));
    expect(said, r.err).toHaveLength(1);
    expect(said[0]).toMatch(/^\[rank 0\] the watchdog thread on the parent process /);
    expect(said[0]).toMatch(why);
    expect(said[0]).toMatch(/watching it from the main thread instead, .* end process \d+ yourself$/);
  }, 60_000);

  // The main thread's watch alone (the rank deaf to its channel's close): its parent killed, the rank still ends.
  it("a watchdog thread that fails at load: a rank deaf to its channel's close still ends once the command's process is killed", async () => {
    const file = 'deaf.pid', env = brokenWatchdog('throw', { ...blocked(0, file), FLASHRING_TEST_STOP_HOW: 'deaf' });
    await orphanEnds(killed(attentionStopped(21, 'out-deaf', file, { FLASHRING_RAW_STDERR: '1', ...env }, 1)), file);
  }, 40_000);

  it('a rank process killed from outside: the run rejects naming the rank and what to do', async () => {
    const file = join(dir, 'killed.pid');
    const env = ['env', `NODE_OPTIONS=--import=${preload}`, 'FLASHRING_TEST_STOP_RANK=1', `FLASHRING_TEST_STOP_FILE=${file}`];
    const run = ringAttentionProcesses(s, makeInputs(s, 10), { ranks: 2, wrapper: env });
    run.catch(() => {});
    expect(await until(() => existsSync(file) && readFileSync(file, 'utf8').includes('\n'), 20_000)).toBe(true);
    process.kill(stoppedPid(file), 'SIGKILL');
    await expect(run).rejects.toThrow(/^rank 1's process exited \(signal SIGKILL\) before it finished: killed from outside, or by the system \(out of memory\? dmesg says\); run again$/);
  }, 30_000);
});
