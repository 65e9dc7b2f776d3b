#!/usr/bin/env node
// The `flashring` command: runs src/cli/main.ts through tsx, with WGSL `?raw` imports.
//
// Dawn's Vulkan backend prints two lines to stderr from native code each time an adapter is
// created on some drivers (Mesa lavapipe: "Warning: maxDynamic{Uniform,Storage}BuffersPerPipelineLayout
// artificially reduced from 1000000 to 16 …"). They say nothing to a user and native output cannot
// be caught in-process, so the command runs in a child process whose stderr passes through a
// filter that drops exactly those lines (bin/dawn-noise.mjs); everything else (errors, progress) passes unchanged.
// FLASHRING_RAW_STDERR=1 runs in-process with Dawn's output untouched.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withoutDawnNoise } from './dawn-noise.mjs';

/**
 * What the command needs before any of its code loads: Node's module.register (Node 20.6) and the
 * npm packages (tsx first). Without them, one line saying what to do and exit code 2, as any
 * mistake of setup: a fresh clone run before `npm ci` printed Node's stack trace.
 */
async function loaders() {
  const { register } = await import('node:module');
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  if (typeof register !== 'function') return stop(`Node 20.6 or later is needed (package.json engines; it registers its loaders with module.register); this is Node ${process.versions.node}`);
  try {
    return { register, registerTsx: (await import('tsx/esm/api')).register };
  } catch (e) {
    if (e?.code !== 'ERR_MODULE_NOT_FOUND' || !/'tsx'/.test(e.message)) throw e;
    return stop(`the npm packages are not installed (no tsx in ${join(root, 'node_modules')}): run npm ci in ${root} (npm start and npm test run it first)`);
  }
}

function stop(message) {
  process.stderr.write(`flashring: ${message}\n`);
  process.exit(2);
}

await withoutDawnNoise(import.meta.url, '__FLASHRING_CHILD', async () => {
  const { register, registerTsx } = await loaders();
  registerTsx();
  register('./raw-loader.mjs', import.meta.url);
  const { main } = await import('../src/cli/main.ts');
  process.exitCode = await main(process.argv.slice(2));
});
