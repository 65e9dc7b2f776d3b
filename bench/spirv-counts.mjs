#!/usr/bin/env node
// What Dawn's robustness transform left in each shader of a log that Dawn wrote with `dump_shaders`
// (FLASHRING_DAWN_FLAGS='enable-dawn-features=dump_shaders'): per module, its entry points, head dim
// and kind (tensor-core or portable), the index clamps (UMin: the shader's own min() calls on u32
// count too), the infinite-loop guards (loops whose counter starts at Tint's all-ones vec2), and the
// subgroup-matrix loads and stores, and of them the checked ones (Tint predicates each unless it can
// prove it in bounds, e.g. constant offset, stride and array length: a checked one's stride is a select,
// not a constant).
// Used by test/robust-spirv.test.ts.
// Usage: node bench/spirv-counts.mjs LOG   (LOG plain, or .xz: decompressed with xz -dc)
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Loops one SPIR-V module guards: stores of Tint's all-ones vec2, each a guarded loop's counter start. */
function guards(spirv) {
  const id = /(%\w+) = OpConstantComposite %v2uint %uint_4294967295 %uint_4294967295/.exec(spirv)?.[1];
  return id ? (spirv.match(new RegExp(`OpStore %\\w+ ${id}\\b`, 'g')) ?? []).length : 0;
}

/** Subgroup-matrix loads and stores whose stride is not a constant: those Tint checks at run time. */
function checkedMatrixOps(spirv) {
  const strides = [...spirv.matchAll(/OpCooperativeMatrixLoadKHR %\w+ %\w+ %\w+ (%\w+)|OpCooperativeMatrixStoreKHR %\w+ %\w+ %\w+ (%\w+)/g)];
  return strides.filter((m) => !/^%uint_\d+$/.test(m[1] ?? m[2])).length;
}

/**
 * @param {string} log Dawn's output with its "Dumped WGSL" / "Dumped SPIRV disassembly" sections
 * @returns {{ entries: string[], D: number | null, kind: string, clamps: number, guards: number, matrixLoads: number, matrixStores: number, matrixChecked: number, modules: number }[]}
 */
export function spirvCounts(log) {
  const out = [];
  for (const part of log.split('// Dumped WGSL:').slice(1)) {
    const [wgsl, ...dumps] = part.split('Dumped SPIRV disassembly');
    const spirv = dumps.join('\n');   // every SPIR-V printed before the next WGSL (one per pipeline of the module)
    if (!spirv.trim()) continue;   // a pipeline whose SPIR-V Dawn printed after the next module's WGSL (counted there)
    out.push({
      entries: [...wgsl.matchAll(/@compute[^\n]*\n\s*fn (\w+)/g)].map((m) => m[1]),
      D: Number(/const D: u32 = (\d+)u;/.exec(wgsl)?.[1] ?? NaN) || null,
      kind: wgsl.includes('subgroup_matrix') ? 'tensor-core' : 'portable',
      clamps: (spirv.match(/ UMin /g) ?? []).length,
      guards: dumps.reduce((t, one) => t + guards(one), 0),
      matrixLoads: (spirv.match(/OpCooperativeMatrixLoadKHR/g) ?? []).length,
      matrixStores: (spirv.match(/OpCooperativeMatrixStoreKHR/g) ?? []).length,
      matrixChecked: checkedMatrixOps(spirv),
      modules: spirv.split('; SPIR-V').length - 1,
    });
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) { console.error('usage: node bench/spirv-counts.mjs LOG'); process.exit(2); }
  const log = file.endsWith('.xz') ? execFileSync('xz', ['-dc', file], { encoding: 'utf8', maxBuffer: 1 << 28 }) : readFileSync(file, 'utf8');
  console.log('kind         entries          D    SPIR-V modules  clamps guards matrix-loads matrix-stores checked');
  for (const r of spirvCounts(log)) console.log(`${r.kind.padEnd(12)} ${r.entries.join(',').padEnd(16)} ${String(r.D).padEnd(4)} ${String(r.modules).padStart(14)} ${String(r.clamps).padStart(7)} ${String(r.guards).padStart(6)} ${String(r.matrixLoads).padStart(12)} ${String(r.matrixStores).padStart(13)} ${String(r.matrixChecked).padStart(7)}`);
}
