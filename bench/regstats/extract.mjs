#!/usr/bin/env node
// Each SPIR-V module of a log Dawn wrote with dump_shaders (FLASHRING_DAWN_FLAGS='enable-dawn-features=dump_shaders'),
// as OUTDIR/mNN.spvasm, and one JSON line per module on stdout: its file, entry point, bindings (LAYOUT for regstats:
// U uniform, S storage, in binding order of descriptor set 0), and what the WGSL it came from says of the kernel
// (its family by a function only it has, and its specialized constants).
// Usage: node bench/regstats/extract.mjs LOG OUTDIR
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';

const FAMILY = [['tile_scores', 'flash_fwd'], ['fn dkdv', 'flash_bwd'], ['subgroup_matrix', 'tensor-core'], ['fn preprocess(', 'flash_bwd_pre'], ['fn finalize(', 'merge']];
const CONSTS = ['D', 'BR', 'BC', 'WG', 'RR', 'DC', 'NCH', 'PF', 'LQ', 'LK', 'DU'];

/** The kernel a WGSL dump specializes: family and constants. */
function describe(wgsl) {
  const family = FAMILY.find(([mark]) => wgsl.includes(mark))?.[1] ?? 'other';
  const consts = {};
  for (const m of wgsl.matchAll(/^const (\w+): u32 = (\d+)u;/gm)) if (CONSTS.includes(m[1])) consts[m[1]] = Number(m[2]);
  const st = /^alias ST = (\w+);/m.exec(wgsl)?.[1];
  return { family, consts, sharedP: /var<workgroup> Qs: array<array<vec4<\w+>, \d+>, BR>;\s*\/\/ Q's chunk, then P~/.test(wgsl), st };
}

/** Descriptor set 0's bindings of a module, in binding order: U (Uniform) or S (StorageBuffer). */
function layout(asm) {
  const set = new Map([...asm.matchAll(/OpDecorate (%\w+) DescriptorSet (\d+)/g)].map((m) => [m[1], Number(m[2])]));
  const binding = new Map([...asm.matchAll(/OpDecorate (%\w+) Binding (\d+)/g)].map((m) => [m[1], Number(m[2])]));
  const kinds = [];
  for (const m of asm.matchAll(/^\s*(%\w+) = OpVariable %\w+ (Uniform|StorageBuffer)\b/gm)) {
    if (set.get(m[1]) !== 0) throw new Error(`${m[1]}: descriptor set ${set.get(m[1])}, regstats handles set 0 only`);
    kinds[binding.get(m[1])] = m[2] === 'Uniform' ? 'U' : 'S';
  }
  if (kinds.includes(undefined)) throw new Error('bindings with gaps: regstats needs 0..n-1');
  return kinds.join('');
}

const [log, outDir] = process.argv.slice(2);
if (!log || !outDir) { console.error('usage: node bench/regstats/extract.mjs LOG OUTDIR'); process.exit(2); }
mkdirSync(outDir, { recursive: true });
// Dawn may print a module's SPIR-V after the next module's WGSL: each SPIR-V goes with the latest WGSL dumped so far
// whose workgroup size (WG) is its LocalSize, and says so where none is (`wgslOf`: "unmatched").
const seen = [];
let n = 0;
for (const part of readFileSync(log, 'utf8').split('// Dumped WGSL:').slice(1)) {
  const [wgsl, ...dumps] = part.split('/* Dumped SPIRV disassembly */');
  seen.push(describe(wgsl));
  for (const d of dumps) {
    // spirv-as of Debian bookworm (SPIRV-Tools 2023.1) does not know maximal reconvergence: dropped (it orders how
    // diverged invocations meet again, not what registers hold).
    const lines = d.trim().split('\n');
    const end = lines.findIndex((l) => !/^\s*(;|%|Op)/.test(l));   // the disassembly ends where other output begins
    const asm = lines.slice(0, end < 0 ? lines.length : end).join('\n').replace(/^\s*OpExecutionMode %\w+ MaximallyReconvergesKHR\n/m, '').replace(/^\s*OpExtension "SPV_KHR_maximal_reconvergence"\n/m, '');
    if (!asm.startsWith('; SPIR-V')) continue;
    const file = `${outDir}/m${String(n++).padStart(2, '0')}.spvasm`;
    writeFileSync(file, asm + '\n');
    const entry = /OpEntryPoint GLCompute %\w+ "(\w+)"/.exec(asm)?.[1];
    const size = Number(/OpExecutionMode %\w+ LocalSize (\d+) 1 1/.exec(asm)?.[1]);
    const info = [...seen].reverse().find((w) => w.consts.WG === size || (w.consts.WG === undefined && w === seen[seen.length - 1]));
    const version = /^; Version: (\d+\.\d+)/m.exec(asm)?.[1] ?? '1.0';
    console.log(JSON.stringify({ file, entry, layout: layout(asm), version, localSize: size, ...(info ?? { family: 'unmatched' }) }));
  }
}
