#!/usr/bin/env node
// Validates every tensor-core shader specialization, and the portable forward's candidate tiles
// unrolled as GPUs compile them, on Dawn's null backend (no GPU needed);
// prints a JSON report and exits 1 on any error. `--break` removes the uniformity directive
// first, to show that the check can fail (tensor-core shaders at D = 64 only). Used by test/shaders.test.ts.
import { registerLoaders } from './loaders.mjs';

await registerLoaders('bin/validate-shaders.mjs');
const { validateSgmmShaders } = await import('../src/kernels/validate.ts');
const broken = process.argv.includes('--break');
// Broken, one head size is enough to show the check fails (every specialization of it must).
const report = await validateSgmmShaders(broken ? [64] : undefined, broken ? (c) => c.replace('diagnostic(off, chromium.subgroup_matrix_uniformity);', '') : undefined, !broken);
process.stdout.write(JSON.stringify(report) + '\n');
process.exit(report.errors.length ? 1 : 0);
