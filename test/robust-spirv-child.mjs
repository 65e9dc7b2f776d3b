#!/usr/bin/env node
// Compiles one portable kernel (test/robust-spirv.ts) on the first adapter with Dawn's robustness
// on and `dump_shaders`, so that Dawn prints the SPIR-V its robustness transform produced; prints
// `moved N` (the loop bounds the rt form puts back). Used by test/robust-spirv.test.ts, one
// process a kernel and form (Dawn writes the dump itself, so one module a process keeps it apart).
// Usage: node test/robust-spirv-child.mjs fwd|bwd shipped|rt|plain
import { registerLoaders } from '../bin/loaders.mjs';

await registerLoaders('test/robust-spirv-child.mjs');
const { portableSource } = await import('./robust-spirv.ts');
const { create, globals } = await import('webgpu');
Object.assign(globalThis, globals);
const { code, entries, moved } = portableSource(process.argv[2], process.argv[3]);
const gpu = create(['enable-dawn-features=allow_unsafe_apis,dump_shaders']);
const adapter = await gpu.requestAdapter();
if (!adapter) { process.stdout.write('\nno WebGPU adapter\n'); process.exit(3); }
const { maxStorageBuffersPerShaderStage, maxComputeWorkgroupStorageSize } = adapter.limits;
const dev = await adapter.requestDevice({ requiredLimits: { maxStorageBuffersPerShaderStage, maxComputeWorkgroupStorageSize } });
dev.pushErrorScope('validation');
const module = dev.createShaderModule({ code });
for (const entryPoint of entries) dev.createComputePipeline({ layout: 'auto', compute: { module, entryPoint } });
const err = await dev.popErrorScope();
if (err) throw new Error(err.message);
await dev.queue.onSubmittedWorkDone();
process.stdout.write(`\nmoved ${moved}\n`);
process.exit(0);
