// One rank of a process-per-rank ring (src/cp/launch/processRanks.ts spawns it with an IPC channel):
// runs src/cp/launch/rankProcess.ts through tsx, with WGSL `?raw` imports.
import { registerLoaders } from './loaders.mjs';

await registerLoaders('bin/rank-process.mjs');
// Kernel pins come from the parent in the init message (ProcessRingOptions.tuning), not from this environment.
const { rankProcessMain } = await import('../src/cp/launch/rankProcess.ts');
rankProcessMain();
