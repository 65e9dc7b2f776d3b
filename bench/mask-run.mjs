// Runs bench/mask.ts (sliding window and packed documents on the GPU) through tsx, with WGSL `?raw` imports.
import { registerLoaders } from '../bin/loaders.mjs';

await registerLoaders('bench/mask-run.mjs');
const { maskBench } = await import('./mask.ts');
process.exitCode = await maskBench(process.argv.slice(2));
(await import('../src/gpu/node.ts')).releaseNodeGPU();
