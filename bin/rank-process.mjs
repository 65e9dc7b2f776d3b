// One rank of a process-per-rank ring (src/ring/processRanks.ts spawns it with an IPC channel):
// runs src/ring/rankProcess.ts through tsx, with WGSL `?raw` imports.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('./raw-loader.mjs', import.meta.url);
const { rankProcessMain } = await import('../src/ring/rankProcess.ts');
rankProcessMain();
