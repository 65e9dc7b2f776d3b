// One rank of a process-per-rank ring (src/cp/launch/processRanks.ts spawns it with an IPC channel):
// runs src/cp/launch/rankProcess.ts through tsx, with WGSL `?raw` imports.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('./raw-loader.mjs', import.meta.url);
// Kernel pins (FLASHRING_PATH, …) from the environment the parent passed on, as the CLI reads them.
const { setProcessTuning, tuningFromEnv } = await import('../src/kernels/tuning.ts');
setProcessTuning(tuningFromEnv(process.env));
const { rankProcessMain } = await import('../src/cp/launch/rankProcess.ts');
rankProcessMain();
