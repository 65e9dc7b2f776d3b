// Entry scripts whose stderr drops Dawn's per-adapter noise (src/gpu/dawnNoise.mjs: the pattern,
// shared with src/cp/launch/processRanks.ts and bench/cp-run.mjs).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DAWN_NOISE } from '../src/gpu/dawnNoise.mjs';

/**
 * An entry script's two lives. Native output cannot be caught in-process, so the script runs
 * itself again as a child (marked by the environment variable `childFlag`) whose stderr passes
 * through a filter that drops exactly DAWN_NOISE lines; everything else (errors, progress bars
 * drawn with \r) passes unchanged. In the child (or with FLASHRING_RAW_STDERR=1: in-process,
 * Dawn's output untouched) `work` runs, with output piped into a reader that stops early (`… |
 * head`) ending it quietly, as Unix tools do. Ctrl-C reaches the child through the terminal's
 * process group; a signal sent to the parent alone (`timeout`) is passed on; the parent exits as
 * the child did.
 */
const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/**
 * The command's process ends as an exit (so 'exit' handlers remove half-written outputs:
 * src/cli/files.ts) when it is told to stop, and when its parent is gone: a parent killed with
 * SIGKILL cannot pass anything on, but the IPC channel it opened closes with it. Nothing is
 * written after that.
 */
function endWithParent() {
  for (const [sig, n] of Object.entries(SIGNALS)) process.on(sig, () => process.exit(128 + n));
  if (process.channel) {
    process.channel.unref(); // the lifeline must not keep the process alive on its own
    process.on('disconnect', () => process.exit(process.exitCode || 1));
    // The parent's terminal resized: its new width, read by each line drawn over (src/cli/progress.ts progressColumns).
    process.on('message', (m) => {
      if (typeof m?.stderrColumns === 'string') process.env.FLASHRING_STDERR_COLUMNS = m.stderrColumns;
    });
  }
}

/** The width of this process's stderr as the child is told it: its columns on a terminal, else '' (none). */
const stderrColumns = () => (process.stderr.isTTY && process.stderr.columns ? String(process.stderr.columns) : '');

export async function withoutDawnNoise(entryUrl, childFlag, work) {
  if (process.env[childFlag] === '1' || process.env.FLASHRING_RAW_STDERR === '1') {
    endWithParent();
    for (const out of [process.stdout, process.stderr])
      out.on('error', (e) => {
        if (e.code !== 'EPIPE') throw e;
        process.exit(0);
      });
    return work();
  }
  // The IPC channel is the child's lifeline: it closes when this process ends, SIGKILL included.
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(entryUrl), ...process.argv.slice(2)], {
    // The child's stderr is this pipe: whether ours is a terminal is passed on (progress drawn with \r only there), and
    // its width (a line drawn over is cut to it: one that wraps is redrawn only in its last row); none inherited.
    env: { ...process.env, [childFlag]: '1', FLASHRING_STDERR_TTY: process.stderr.isTTY ? '1' : '0', FLASHRING_STDERR_COLUMNS: stderrColumns() },
    stdio: ['inherit', 'inherit', 'pipe', 'ipc'],
  });
  // And its width again each time the terminal is resized (a long run's window made narrower or wider), over the lifeline.
  const passWidth = () => {
    if (child.connected) child.send({ stderrColumns: stderrColumns() }, () => {}); // gone meanwhile: nothing to tell
  };
  process.stderr.on('resize', passWidth);
  // Our stderr read by something that stops early (`2>&1 >/dev/null | head`): stop the child
  // quietly, as a closed stdout does in it.
  process.stderr.on('error', (e) => {
    if (e.code !== 'EPIPE') throw e;
    child.kill('SIGTERM');
    process.exit(0);
  });
  // The signal passed on, if any: the child ends by it through process.exit (its outputs removed by
  // 'exit' handlers), but Dawn's native threads (a driver still compiling, say) may then crash the
  // exiting process (SIGSEGV, about one time in three on lavapipe). The command was stopped as asked
  // either way, so this process ends by the signal it was sent.
  let told = null;
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => { told = sig; child.kill(sig); });
  let pending = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop();
    const keep = lines.filter((l) => !DAWN_NOISE.test(l));
    if (keep.length) process.stderr.write(keep.map((l) => l + '\n').join(''));
    // A partial line that cannot become the warning (a progress bar drawn with \r) goes out now.
    if (pending && !'Warning: maxDynamic'.startsWith(pending.slice(0, 19))) {
      process.stderr.write(pending);
      pending = '';
    }
  });
  child.on('close', (code, signal) => {
    process.stderr.off('resize', passWidth);
    if (pending && !DAWN_NOISE.test(pending)) process.stderr.write(pending);
    const end = told && (signal || code === 128 + SIGNALS[told] || code > 128) ? told : signal;
    if (end) {
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeAllListeners(sig);
      process.kill(process.pid, end);
    }
    process.exitCode = code ?? 1;
  });
}
