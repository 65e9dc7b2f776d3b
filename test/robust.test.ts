/**
 * Without Dawn's robustness transform (the default in Node, src/gpu/node.ts) every kernel must
 * compute exactly what it computes with it: its indices are in range by construction, so the
 * clamps never fire. test/robust-child.mjs runs every kernel family on the same inputs once
 * per mode, each in its own process (FLASHRING_ROBUST=1 or not; two Dawn instances inside one
 * Vitest worker aborted Dawn), and the outputs are compared bit for bit (SHA-256 of their bytes).
 */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SEED } from './cases.js';
import type { RobustReport } from './robust-kernels.js';
import { dawnFlags, dawnFlagsFromEnv, keepsRobustness, robustShaders } from '../src/gpu/node.js';
import { InputError } from '../src/errors.js';

async function run(robust: boolean): Promise<RobustReport> {
  const env = { ...process.env, FLASHRING_ROBUST: robust ? '1' : '' };
  const r = await promisify(execFile)(process.execPath, ['test/robust-child.mjs', String(SEED)], { env, encoding: 'utf8', timeout: 300_000, maxBuffer: 1 << 24 });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (!line.startsWith('{')) throw new Error(`test/robust-child.mjs printed no report: ${r.stderr.slice(-2000)}`);
  return JSON.parse(line);
}

describe('Dawn flags', () => {
  it('FLASHRING_ROBUST: 1 on; unset, empty or 0 off; anything else refused by name (not silently off)', () => {
    const was = process.env.FLASHRING_ROBUST;
    try {
      for (const [v, on] of [[undefined, false], ['', false], ['0', false], ['1', true]] as const) {
        if (v === undefined) delete process.env.FLASHRING_ROBUST; else process.env.FLASHRING_ROBUST = v;
        expect(robustShaders(), String(v)).toBe(on);
      }
      for (const bad of ['true', 'yes', '2', ' 1']) {
        process.env.FLASHRING_ROBUST = bad;
        expect(() => robustShaders(), bad).toThrow(InputError);
        expect(() => robustShaders(), bad).toThrow(/^FLASHRING_ROBUST='/);
      }
    } finally {
      if (was === undefined) delete process.env.FLASHRING_ROBUST; else process.env.FLASHRING_ROBUST = was;
    }
  });
  it('FLASHRING_DAWN_FLAGS: key=value entries separated by ;, anything else refused by name (Dawn would throw its own exception)', () => {
    expect(dawnFlagsFromEnv('enable-dawn-features=a,b;;adapter=x')).toEqual(['enable-dawn-features=a,b', 'adapter=x']);
    for (const bad of ['oops', 'a=1;oops', '=x', ' a=1'])
      expect(() => dawnFlagsFromEnv(bad), bad).toThrow(/^FLASHRING_DAWN_FLAGS='.*': each entry is a Dawn flag as key=value/);
    expect(() => dawnFlagsFromEnv('a=1;oops')).toThrow(InputError);
  });

  it('one enable-dawn-features entry: disable_robustness unless robust, extra toggles merged in, not replacing', () => {
    const off = dawnFlags(false, ['enable-dawn-features=use_dxc', 'adapter=nvidia', 'disable-dawn-features=lazy_clear_resource_on_first_use']);
    expect(off.filter((f) => f.startsWith('enable-dawn-features='))).toEqual(['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness,use_dxc']);
    expect(off.filter((f) => f.startsWith('disable-dawn-features='))).toEqual(['disable-dawn-features=timestamp_quantization,lazy_clear_resource_on_first_use']);
    expect(off).toContain('adapter=nvidia');
    expect(dawnFlags(true, [])).toEqual(['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia', 'disable-dawn-features=timestamp_quantization']);
  });
  it('the devices\' mark follows the flags Dawn gets, FLASHRING_DAWN_FLAGS included', () => {
    expect(keepsRobustness(dawnFlags(false, []))).toBe(false);
    expect(keepsRobustness(dawnFlags(true, []))).toBe(true);
    expect(keepsRobustness(dawnFlags(true, ['enable-dawn-features=disable_robustness']))).toBe(false);
    expect(keepsRobustness(dawnFlags(false, ['disable-dawn-features=disable_robustness']))).toBe(true);
  });
});

describe('kernels are bitwise identical with and without robustness', () => {
  it('forward, backward (f32, f16; scalar and tensor-core where offered), the add, a ring step (its forward merging)', async () => {
    const [on, off] = await Promise.all([run(true), run(false)]);
    expect(on.robust).toBe(true);
    expect(off.robust).toBe(false);
    // The devices know their mode (the planner reads it: sgmmTiles.ts).
    expect(on.deviceRobust).toBe(true);
    expect(off.deviceRobust).toBe(false);
    // The modes really differ: only the robust process clamps the probe's out-of-range index.
    expect(on.probe, 'robust mode clamps w[5] to w[3]').toBe(99);
    expect(off.probe, 'disable_robustness leaves w[3] alone').not.toBe(99);
    const names = Object.keys(on.outputs);
    // 2 shapes × 2 maskings × (f32, f16 where offered) × 5 outputs (+ the tensor-core path), 2 add outputs, 5 of a ring step.
    expect(names.length).toBeGreaterThanOrEqual(2 * 2 * 5 + 2 + 5);
    expect(names.filter((k) => k.startsWith('ring step')).length).toBeGreaterThanOrEqual(5);
    expect(Object.keys(off.outputs)).toEqual(names);
    const differ = names.filter((k) => on.outputs[k] !== off.outputs[k]);
    expect(differ, `outputs that differ between modes on ${on.adapter}`).toEqual([]);
    console.log(`robust vs disable_robustness on ${on.adapter}: ${names.length} outputs bitwise identical`);
  }, 600_000);
});
