#!/usr/bin/env node
// Runs every kernel family once on deterministic inputs in the robustness mode this process
// was started in (FLASHRING_ROBUST), and prints one JSON line: the probe's reading and a
// SHA-256 of each output's bytes. Used by test/robust.test.ts, once per mode, each in its own
// process (two Dawn instances in one Vitest worker aborted Dawn 0.6.2: std::system_error).
// Usage: node test/robust-child.mjs SEED
import { registerLoaders } from '../bin/loaders.mjs';

await registerLoaders('test/robust-child.mjs');
const { runKernels } = await import('./robust-kernels.ts');
const report = await runKernels(Number(process.argv[2] ?? 1));
process.stdout.write(JSON.stringify(report) + '\n');
process.exit(0);
