// Runs bench/cp.ts (the context-parallel bench: `node bench/cp-run.mjs --help`) through tsx, with
// WGSL `?raw` imports, in a child process whose stderr drops Dawn's two native warning lines, as
// bin/flashring.mjs (bin/dawn-noise.mjs: withoutDawnNoise). FLASHRING_RAW_STDERR=1 runs it
// in-process with Dawn's output untouched.
import { withoutDawnNoise } from '../bin/dawn-noise.mjs';
import { registerLoaders } from '../bin/loaders.mjs';

await withoutDawnNoise(import.meta.url, '__FLASHRING_CP_CHILD', async () => {
  await registerLoaders('bench/cp-run.mjs');
  const { setProcessTuning, tuningFromEnv } = await import('../src/kernels/tuning.ts');
  setProcessTuning(tuningFromEnv(process.env)); // kernel pins (FLASHRING_PATH, …), as the CLI reads them
  const { cpBench } = await import('./cp.ts');
  process.exitCode = await cpBench(process.argv.slice(2));
  (await import('../src/gpu/node.ts')).releaseNodeGPU();
});
