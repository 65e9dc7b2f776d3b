#!/usr/bin/env node
// The `flashring` command: runs src/cli/main.ts through tsx, with WGSL `?raw` imports.
//
// Dawn's Vulkan backend prints two lines to stderr from native code each time an adapter is
// created on some drivers (Mesa lavapipe: "Warning: maxDynamic{Uniform,Storage}BuffersPerPipelineLayout
// artificially reduced from 1000000 to 16 …"). They say nothing to a user and native output cannot
// be caught in-process, so the command runs in a child process whose stderr passes through a
// filter that drops exactly those lines (bin/dawn-noise.mjs); everything else (errors, progress) passes unchanged.
// FLASHRING_RAW_STDERR=1 runs in-process with Dawn's output untouched.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { DAWN_NOISE } from './dawn-noise.mjs';

const CHILD = '__FLASHRING_CHILD';

if (process.env[CHILD] === '1' || process.env.FLASHRING_RAW_STDERR === '1') {
  // Output piped into a reader that stops early (`… | head`): a closed pipe ends the command
  // quietly, as Unix tools do, rather than as an unhandled 'error' event with a stack trace.
  process.stdout.on('error', (e) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(0);
  });
  const { register } = await import('node:module');
  const { register: registerTsx } = await import('tsx/esm/api');
  registerTsx();
  register('./raw-loader.mjs', import.meta.url);
  const { main } = await import('../src/cli/main.ts');
  process.exitCode = await main(process.argv.slice(2));
} else {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    env: { ...process.env, [CHILD]: '1' },
    stdio: ['inherit', 'inherit', 'pipe'],
  });
  // Ctrl-C reaches the child through the terminal's process group; the parent waits for it.
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
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
    if (pending && !DAWN_NOISE.test(pending)) process.stderr.write(pending);
    if (signal) {
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeAllListeners(sig);
      process.kill(process.pid, signal);
    }
    process.exitCode = code ?? 1;
  });
}
