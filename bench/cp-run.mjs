// Runs bench/cp.ts (context-parallel sweep and scale run) through tsx, with WGSL `?raw` imports.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('../bin/raw-loader.mjs', import.meta.url);
const { cpBench } = await import('./cp.ts');
process.exitCode = await cpBench(process.argv.slice(2));
(await import('../src/gpu/node.ts')).releaseNodeGPU();
