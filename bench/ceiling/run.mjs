// Runs the GEMM ceiling probe (bench/ceiling/run.ts: `node bench/ceiling/run.mjs --help`) through
// tsx, with WGSL `?raw` imports; an ordinary mistake is one line and exit code 2, as the flashring
// command's (src/cli/main.ts userMistake).
import { registerLoaders } from '../../bin/loaders.mjs';

await registerLoaders('bench/ceiling/run.mjs');
const { ceilingBench } = await import('./run.ts');
const { userMistake } = await import('../../src/cli/main.ts');
try {
  process.exitCode = await ceilingBench(process.argv.slice(2));
} catch (e) {
  const line = await userMistake(e);
  if (line === null) throw e;
  console.error(`ceiling: ${line}`);
  process.exitCode = 2;
} finally {
  (await import('../../src/gpu/node.ts')).releaseNodeGPU();
}
