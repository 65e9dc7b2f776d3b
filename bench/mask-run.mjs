// Runs bench/mask.ts (sliding window and packed documents on the GPU) through tsx, with WGSL `?raw` imports.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('../bin/raw-loader.mjs', import.meta.url);
const { maskBench } = await import('./mask.ts');
process.exitCode = await maskBench(process.argv.slice(2));
(await import('../src/gpu/node.ts')).releaseNodeGPU();
