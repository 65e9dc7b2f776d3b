#!/usr/bin/env node
// Validates every tiling of the ceiling's tensor-core GEMM on Dawn's null backend (no GPU
// needed), as bin/validate-shaders.mjs validates the attention kernels (src/kernels/validate.ts
// validateModules); prints a JSON report and exits 1 on any error. Used by test/shaders.test.ts.
import { registerLoaders } from '../../bin/loaders.mjs';

await registerLoaders('bench/ceiling/validate.mjs');
const { validateModules } = await import('../../src/kernels/validate.ts');
const { GEMM_TILINGS, gemmSource, tilingName } = await import('./gemm.ts');
const EXT = ['chromium_experimental_subgroup_matrix', 'subgroups'];
const report = await validateModules(GEMM_TILINGS.map((t) => [`gemm ${tilingName(t)}`, gemmSource(t, EXT)]));
process.stdout.write(JSON.stringify(report) + '\n');
process.exit(report.errors.length ? 1 : 0);
