#!/usr/bin/env node
// The `flashring` command: runs src/cli/main.ts through tsx, with WGSL `?raw` imports.
//
// Dawn's Vulkan backend prints two lines to stderr from native code each time an adapter is
// created on some drivers (Mesa lavapipe: "Warning: maxDynamic{Uniform,Storage}BuffersPerPipelineLayout
// artificially reduced from 1000000 to 16 …"). They say nothing to a user and native output cannot
// be caught in-process, so the command runs in a child process whose stderr passes through a
// filter that drops exactly those lines (bin/dawn-noise.mjs); everything else (errors, progress) passes unchanged.
// FLASHRING_RAW_STDERR=1 runs in-process with Dawn's output untouched.
import { withoutDawnNoise } from './dawn-noise.mjs';
import { registerLoaders } from './loaders.mjs';

await withoutDawnNoise(import.meta.url, '__FLASHRING_CHILD', async () => {
  await registerLoaders('flashring');
  const { main } = await import('../src/cli/main.ts');
  process.exitCode = await main(process.argv.slice(2));
});
