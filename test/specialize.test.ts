import { describe, expect, it, vi } from 'vitest';
import { constantBounds, rtCalls, specialize } from '../src/kernels/specialize.js';
import { PORTABLE_BWD_CANDIDATES, PORTABLE_FWD_RR, planTiles, portableValues, workgroupBytes, describePlan, defaultPrefetch, stagingWords } from '../src/kernels/tiles.js';
import { attentionSource, attentionValues } from '../src/kernels/source.js';
import { FORWARD_BINDINGS } from '../src/kernels/flashForward.js';
import { BACKWARD_BINDINGS } from '../src/kernels/flashBackward.js';
import { kernelKey, legacySgmmSpelling } from '../src/kernels/pipeline.js';
import { SHADERS } from '../src/kernels/shaders.js';
import { InputError, LimitError } from '../src/errors.js';
import { toHalfBits, fromHalfBits } from '../src/f16.js';
import { tuningFromEnv } from '../src/kernels/tuning.js';
import { thrown } from './thrown.js';

/** A tuning as the pins' variables spell it (FLASHRING_PORTABLE_*), passed as options: the environment is left alone. */
const pins = (env: Record<string, string>) => tuningFromEnv(env);

describe('specializer', () => {
  it('fills every placeholder and rejects missing or unused values', () => {
    expect(specialize('const D: u32 = {{D}}u; alias T = {{ T }};', { D: 64, T: 'f16' })).toBe('const D: u32 = 64u; alias T = f16;');
    expect(() => specialize('{{D}} {{BR}}', { D: 1 })).toThrow(/no value for \{\{BR\}\}/);
    expect(() => specialize('{{D}}', { D: 1, X: 2 })).toThrow(/never used: X/);
  });
  it('unrolls {{#for}} loops, nested and with a divided bound, and rejects bad ones', () => {
    expect(specialize('{{#for i < D/16}}q{{i}};{{/for}}', { D: 48 })).toBe('q0;q1;q2;');
    expect(specialize('{{#for i < 2}}[{{#for j < N}}{{i}}{{j}}{{/for}}]{{/for}}', { N: 3 })).toBe('[000102][101112]');
    expect(specialize('a{{#for i < 0}}x{{/for}}b', {})).toBe('ab');
    expect(() => specialize('{{#for i < M}}x{{/for}}', {})).toThrow(/no value for loop bound/);
    expect(() => specialize('{{#for i < D/16}}x{{/for}}', { D: 40 })).toThrow(/not a count/);
    expect(() => specialize('{{#for i < 2}}x', {})).toThrow(/unbalanced/);
    expect(() => specialize('{{#for D < 2}}x{{/for}}', { D: 1 })).toThrow(/shadows/);
  });
  it('unrolls {{#loop}} on GPUs into every iteration, and rolls it on CPU adapters into one loop through rt()', () => {
    // (a review dropped the last iteration of an unrolled {{#loop}}, and every test still passed)
    expect(specialize('{{#loop k < N}}s += a[{{k}}];{{/loop}}', { N: 4 })).toBe('s += a[0];s += a[1];s += a[2];s += a[3];');
    expect(specialize('{{#loop k < D/16}}x{{k}}u;{{/loop}}', { D: 48 })).toBe('x0u;x1u;x2u;');
    expect(specialize('{{#loop k < N}}s += a[{{k}}u];{{/loop}}', { N: 4 }, { roll: true })).toBe('for (var k_i = 0u; k_i < rt(4u); k_i++) {s += a[k_i];}');
    expect(specialize('a{{#loop k < 0}}x{{/loop}}b', {})).toBe('ab');
  });
  it('unrolled code writes rt(X) as (X), keeping rt\'s definition; rolled code keeps the call', () => {
    const src = 'fn rt(x: u32) -> u32 { return x{{RT}}; }\nfor (var d = 0u; d < rt(DC); d++) { a.rt(1); }\nfor (var x = 0u; x < rt(D / 4u); x++) {}';
    const unrolled = specialize(src, { RT: '' });
    expect(unrolled).toBe('fn rt(x: u32) -> u32 { return x; }\nfor (var d = 0u; d < (DC); d++) { a.rt(1); }\nfor (var x = 0u; x < (D / 4u); x++) {}');
    expect(specialize(src, { RT: ' + P.zero' }, { roll: true })).toContain('d < rt(DC)');
    expect(constantBounds('sqrt(x) + part(y) + rt(N)')).toBe('sqrt(x) + part(y) + (N)');
    expect(() => constantBounds('for (var i = 0u; i < rt(min(A, B)); i++) {}')).toThrow(/parentheses inside/);
    expect(constantBounds('// rt(min(A, B)) in a comment\nfn rt(x: u32) -> u32 { return x; }')).toContain('fn rt(x: u32)');
    // The portable kernels as GPUs get them: no call left; as CPU adapters get them: every bound through it.
    for (const unroll of [true, false]) {
      const plan = planTiles('fwd', 64, 'f32', 32768, 256, 32);
      const code = attentionSource(SHADERS.flashFwd[plan.reduce!], attentionValues(64, plan, { precision: 'f32', out: 'f32', grad: 'f32' }, unroll, portableValues('fwd', 64, plan, 'f32')), FORWARD_BINDINGS, ['subgroups']);
      const calls = rtCalls(code);
      if (unroll) expect(calls).toEqual([]); else expect(calls.length).toBeGreaterThan(4);
    }
  });
});

describe('subgroup-matrix spelling', () => {
  it('rewrites template-layout builtins to the older bool form', () => {
    const src = 'let a = subgroupMatrixLoad<LM, row_major>(&Qs, r0 * D + kk * 16u, D);\n' +
      'let b = subgroupMatrixLoad<RM, col_major>(&Ks, cb * 16u * D, D);\n' +
      'subgroupMatrixStore<row_major>(&S, r0 * BC, acc, BC);';
    expect(legacySgmmSpelling(src)).toBe(
      'let a = subgroupMatrixLoad<LM>(&Qs, r0 * D + kk * 16u, false, D);\n' +
        'let b = subgroupMatrixLoad<RM>(&Ks, cb * 16u * D, true, D);\n' +
        'subgroupMatrixStore(&S, r0 * BC, acc, false, BC);',
    );
  });
  it('every subgroup-matrix call in the shaders is in a form the rewrite understands', () => {
    for (const src of [SHADERS.flashFwdSgmm, SHADERS.flashBwdSgmm]) {
      const calls = src.match(/subgroupMatrix(Load|Store)<[^>]*>/g) ?? [];
      expect(calls.length).toBeGreaterThan(4);
      expect(legacySgmmSpelling(src)).not.toMatch(/(row|col)_major/);
    }
  });
});

describe('tile planner', () => {
  it('picks the largest tile that fits workgroup memory, and says when nothing fits', () => {
    expect(planTiles('fwd', 64, 'f32', 49152, 1024, 32)).toMatchObject({ BR: 128, BC: 32, WG: 256, chunk: 32, reduce: 'subgroup' });
    expect(planTiles('fwd', 64, 'f32', 49152, 64, 32)).toMatchObject({ BR: 32, BC: 32, chunk: 64 }); // 64 invocations: whole rows
    // P~ in Q's array (Q staged every tile): twice the chunk fits above D = 64, half the staging points a tile. By default
    // only where that widens the chunk of a tile that fits unshared; pinned 1 wherever it can, pinned 0 nowhere.
    const shared = pins({ FLASHRING_PORTABLE_FWD_SHARED_P: '1' }), apart = pins({ FLASHRING_PORTABLE_FWD_SHARED_P: '0' });
    for (const pin of [{}, shared]) {
      expect(planTiles('fwd', 256, 'f32', 49152, 1024, 32, pin)).toMatchObject({ BR: 128, BC: 32, chunk: 64, sharedP: true }); // four chunks
      expect(planTiles('fwd', 128, 'f32', 49152, 1024, 32, pin)).toMatchObject({ BR: 128, BC: 32, chunk: 64, sharedP: true, workgroupBytes: 43520 });
    }
    expect(planTiles('fwd', 256, 'f32', 49152, 1024, 32, apart)).toMatchObject({ BR: 128, BC: 32, chunk: 32 }); // eight
    expect(planTiles('fwd', 128, 'f32', 49152, 1024, 32, apart)).toMatchObject({ chunk: 32, workgroupBytes: 41472 });
    expect(planTiles('fwd', 128, 'f32', 49152, 1024, 32, apart).sharedP).toBeUndefined();
    // A pinned tile shares by default where its chunk needs it (the default's own plan pinned), also where it fits only
    // shared; pinned apart, the refusal says that pin is why.
    const tile = (t: string, more = {}) => pins({ FLASHRING_PORTABLE_FWD: t, ...more });
    expect(planTiles('fwd', 128, 'f32', 49152, 1024, 32, tile('128x32x64'))).toMatchObject({ chunk: 64, sharedP: true, workgroupBytes: 43520 });
    expect(planTiles('fwd', 128, 'f32', 49152, 1024, 32, tile('64x64'))).toMatchObject({ BR: 64, BC: 64, chunk: 64, sharedP: true, workgroupBytes: 34816 });
    expect(planTiles('fwd', 128, 'f32', 49152, 1024, 32, tile('128x32x32')).sharedP).toBeUndefined();   // fits apart: the same chunk, no barrier more
    expect((thrown(() => planTiles('fwd', 128, 'f32', 49152, 1024, 32, tile('64x64', { FLASHRING_PORTABLE_FWD_SHARED_P: '0' }))) as Error).message)
      .toMatch(/52224 bytes at chunk 64.*It fits with P~ in Q's workgroup array: unset FLASHRING_PORTABLE_FWD_SHARED_P=0/);
    expect((thrown(() => planTiles('fwd', 128, 'f32', 32768, 1024, 32, tile('128x32x64', { FLASHRING_PORTABLE_FWD_SHARED_P: '0' }))) as Error).message).not.toMatch(/It fits with P~/);   // 43520 shared: no fit either way
    // f16 words widened as staged by a pin where the pinned tile fits only staged as f16 (D = 64, whole rows: 40192 bytes
    // as f16, 61952 widened): the refusal says that pin is why; where neither fits (32 KiB), it does not.
    expect(planTiles('fwd', 64, 'f16', 49152, 1024, 32, tile('128x32x64'))).toMatchObject({ chunk: 64, workgroupBytes: 40192 });
    expect((thrown(() => planTiles('fwd', 64, 'f16', 49152, 1024, 32, tile('128x32x64', { FLASHRING_PORTABLE_FWD_WIDE: '1' }))) as Error).message)
      .toMatch(/61952 bytes at chunk 64.*It fits with f16 words staged as f16: unset FLASHRING_PORTABLE_FWD_WIDE=1/);
    expect((thrown(() => planTiles('fwd', 64, 'f16', 32768, 1024, 32, tile('128x32x64', { FLASHRING_PORTABLE_FWD_WIDE: '1' }))) as Error).message).not.toMatch(/It fits with f16/);
    // Never where the wider chunk would turn the default prefetch off (more than PREFETCH_MAX_WORDS registers) while the
    // narrower one keeps it. With the default prefetch of K and V only where Q is staged per tile, no tile does so: f16
    // storage with f16 products at D = 256 shares at 128 columns (K's 4 words; with Q's too it would be 20, and it kept
    // 64-column chunks apart before), and over every tile a user can pin, no default plan loses the prefetch by sharing.
    const pk = { portableProducts: 'f16' as const };
    expect(planTiles('fwd', 256, 'f16', 49152, 1024, 32, pk)).toMatchObject({ chunk: 128, sharedP: true });
    expect(defaultPrefetch(planTiles('fwd', 256, 'f16', 49152, 1024, 32, pk), 256, false)).toBe(2);
    expect(planTiles('fwd', 256, 'f16', 49152, 1024, 32, { ...pk, forwardSharedP: 0 })).toMatchObject({ chunk: 64 });
    const sizes = [4, 8, 16, 32, 64, 128];
    for (const limit of [16384, 32768, 49152, 65536]) for (const D of [64, 128, 192, 256]) for (const [p, t] of [['f32', {}], ['f16', {}], ['f16', pk]] as const)
      for (const rows of [...sizes, 256]) for (const cols of sizes) {
        const pin = { ...t, portableForward: { rows, cols } };
        const plan = (x: object) => { try { return planTiles('fwd', D, p, limit, 256, 32, { ...pin, ...x }); } catch { return undefined; } };
        const byDefault = plan({}), apart = plan({ forwardSharedP: 0 });
        if (byDefault?.sharedP && apart) expect(defaultPrefetch(byDefault, D, false) > 0 || defaultPrefetch(apart, D, false) === 0, `${limit} D${D} ${p} ${rows}x${cols}`).toBe(true);
      }
    // Whole rows (Q staged once) are never shared: at D = 64 the pin takes the next chunk, shared (the default keeps
    // 32-column chunks apart, which fit); on 32 KiB it makes 128×32 fit, which the default does not take (64×32:
    // 128×32 fits apart at no chunk).
    expect(planTiles('fwd', 64, 'f32', 49152, 1024, 32, shared)).toMatchObject({ chunk: 32, sharedP: true, workgroupBytes: 23040 });
    expect(planTiles('fwd', 64, 'f32', 49152, 1024, 32).sharedP).toBeUndefined();
    expect(planTiles('fwd', 64, 'f32', 32768, 1024, 32)).toMatchObject({ BR: 64, BC: 32, chunk: 32 });
    expect(planTiles('fwd', 64, 'f32', 32768, 1024, 32).sharedP).toBeUndefined();
    expect(planTiles('fwd', 64, 'f32', 32768, 1024, 32, shared)).toMatchObject({ BR: 128, BC: 32, chunk: 32, sharedP: true, workgroupBytes: 23040 });
    expect(planTiles('fwd', 64, 'f16', 49152, 1024, 32, { portableProducts: 'f16', forwardSharedP: 1 })).toMatchObject({ chunk: 64 });   // whole rows
    expect(planTiles('fwd', 64, 'f16', 49152, 1024, 32, { portableProducts: 'f16', forwardSharedP: 1 }).sharedP).toBeUndefined();
    // f16 storage with f32 products keeps P~ in f32: a type of its own, never shared with f16 words; with the words
    // widened to f32 as staged (the default there), shared.
    expect(planTiles('fwd', 256, 'f16', 49152, 1024, 32, { ...shared, forwardWideStage: 0 }).sharedP).toBeUndefined();
    expect(planTiles('fwd', 256, 'f16', 49152, 1024, 32, shared).sharedP).toBe(true);
    expect(planTiles('fwd', 64, 'f32', 16384, 256)).toMatchObject({ BR: 32, BC: 32, chunk: 32, reduce: 'workgroup' }); // 16 KiB: two chunks
    expect(planTiles('fwd', 64, 'f32', 49152, 1024, 4)).toMatchObject({ reduce: 'workgroup' }); // subgroups smaller than a row block
    expect(planTiles('fwd', 8, 'f32', 49152, 1024, 32)).toMatchObject({ BC: 8 }); // Bc/4 must divide D/4
    // Backward: the most invocations first, each with the widest head-dim chunk that fits.
    expect(planTiles('bwd', 64, 'f32', 49152, 1024)).toMatchObject({ BR: 64, BC: 64, streamRows: 32, chunk: 32, WG: 128 });
    expect(planTiles('bwd', 128, 'f32', 49152, 1024)).toMatchObject({ BR: 64, streamRows: 32, chunk: 32, WG: 128 });
    expect(planTiles('bwd', 64, 'f32', 49152, 64)).toMatchObject({ BR: 32, streamRows: 32, chunk: 64 }); // whole rows when they fit
    expect(planTiles('bwd', 64, 'f32', 16384, 256)).toMatchObject({ BR: 32, streamRows: 16, chunk: 16, WG: 32 });
    expect(planTiles('bwd', 80, 'f32', 49152, 1024)).toMatchObject({ BR: 32, streamRows: 16, chunk: 80 }); // CT/4 must divide the chunk's D/4
    const p = planTiles('bwd', 256, 'f32', 32768);
    expect(p.workgroupBytes).toBeLessThanOrEqual(32768);
    expect(workgroupBytes('bwd', 16, 16, 256)).toBeGreaterThan(32768); // whole rows at D = 256 do not fit; chunks do
    expect(workgroupBytes('bwd', 16, 16, 256, 16)).toBeLessThanOrEqual(32768);
    expect(() => planTiles('bwd', 256, 'f32', 512)).toThrow(LimitError);
    expect(() => planTiles('bwd', 256, 'f32', 512)).toThrow(/maxComputeWorkgroupStorageSize/);
  });

  it('64×64 (a candidate for autotune and pins) is no default anywhere: 64×32 ahead of it fits wherever it does', () => {
    let seen = 0;
    for (const D of [16, 32, 64, 128, 256]) for (const p of ['f32', 'f16'] as const) for (const limit of [8192, 16384, 32768, 49152, 65536, 98304])
      for (const maxWG of [128, 256, 1024]) for (const sub of [0, 32]) for (const t of [{}, { forwardSharedP: 1 as const }, { portableProducts: 'f16' as const, forwardSharedP: 1 as const }]) {
        let plan;
        try { plan = planTiles('fwd', D, p, limit, maxWG, sub, t); } catch { continue; }
        seen++;
        expect([plan.BR, plan.BC], `D=${D} ${p} ${limit} ${maxWG} ${JSON.stringify(t)}`).not.toEqual([64, 64]);
      }
    expect(seen).toBeGreaterThan(500);
  });
  it('a pinned tile that does not fit says to pin a smaller tile or unset the pin, not to shrink the head dim', () => {
    // FLASHRING_PORTABLE_FWD=128x32 at D = 64 on 32 KiB (lavapipe) with P~ apart: 41472 bytes; the default tile fits.
    const pin = tuningFromEnv({ FLASHRING_PORTABLE_FWD: '128x32', FLASHRING_PORTABLE_FWD_SHARED_P: '0' });
    expect(() => planTiles('fwd', 64, 'f32', 32768, 1024, 8, pin)).toThrow(LimitError);
    expect(() => planTiles('fwd', 64, 'f32', 32768, 1024, 8, pin)).toThrow(/pinned tile 128x32 .*FLASHRING_PORTABLE_FWD.*41472 bytes at chunk 32.*Pin a smaller tile or unset the pin/);
    expect(() => planTiles('fwd', 64, 'f32', 32768, 1024, 8, pin)).not.toThrow(/head dim\./);
    const bwd = tuningFromEnv({ FLASHRING_PORTABLE_BWD: '64x32' });
    expect(() => planTiles('bwd', 64, 'f32', 32768, 1024, 8, bwd)).toThrow(/backward's pinned tile 64x32 .*FLASHRING_PORTABLE_BWD/);
    // unpinned, the head dim is what to change
    expect(() => planTiles('bwd', 256, 'f32', 512)).toThrow(/Use a smaller head dim\.$/);
  });

  it('a pinned chunk that cannot stage the head dim says so, with the chunk, not that the tile does not fit', () => {
    // 32x32x48 at D = 64: 17920 bytes, well within 32 KiB, but 48 columns do not divide 64; 32x32x8: 8 is no multiple of 32.
    const at = (pin: string) => () => planTiles('fwd', 64, 'f32', 32768, 1024, 8, tuningFromEnv({ FLASHRING_PORTABLE_FWD: pin }));
    expect(at('32x32x48')).toThrow(/^the forward's pinned tile 32x32x48 \(FLASHRING_PORTABLE_FWD, .*\) cannot run at head dim 64: tried 32x32x48: chunk 48 does not divide head dim 64\. Pin a chunk that divides 64 and is a multiple of 32/);
    expect(at('32x32x8')).toThrow(/tried 32x32x8: chunk 8 is not a multiple of 32 /);
    expect(at('32x32x48')).not.toThrow(/does not fit|bytes at chunk|smaller tile/);
    // a pinned chunk that is valid but too large still reads as the size, named with its chunk
    expect(() => planTiles('fwd', 64, 'f32', 32768, 1024, 8, tuningFromEnv({ FLASHRING_PORTABLE_FWD: '128x32x32', FLASHRING_PORTABLE_FWD_SHARED_P: '0' })))
      .toThrow(/pinned tile 128x32x32 .*does not fit this device.*tried 128x32x32: 41472 bytes at chunk 32, 256 invocations\. Pin a smaller tile/);
  });

  it('a tile that does not fit carries each tile tried, why, and what it needs against the device\'s figures, as data (the message unchanged)', () => {
    const err = (f: () => unknown) => thrown(f) as LimitError;
    // (P~ apart pinned: shared, the pinned tile fits; the message says so.)
    const pinned = err(() => planTiles('fwd', 64, 'f32', 32768, 1024, 8, tuningFromEnv({ FLASHRING_PORTABLE_FWD: '128x32', FLASHRING_PORTABLE_FWD_SHARED_P: '0' })));
    expect(pinned.message).toBe("the forward's pinned tile 128x32 (FLASHRING_PORTABLE_FWD, or the tuning's portableForward) does not fit this device at head dim 64 in f32: " +
      '32768 bytes of workgroup memory (maxComputeWorkgroupStorageSize), 1024 invocations (maxComputeInvocationsPerWorkgroup, maxComputeWorkgroupSizeX); tried 128x32: 41472 bytes at chunk 32, 256 invocations. ' +
      'Pin a smaller tile or unset the pin (flashring info lists the tiles chosen without one). ' +
      "It fits with P~ in Q's workgroup array: unset FLASHRING_PORTABLE_FWD_SHARED_P=0 (or the tuning's forwardSharedP).");
    // Unset, the same pin fits shared (23040 bytes).
    expect(planTiles('fwd', 64, 'f32', 32768, 1024, 8, tuningFromEnv({ FLASHRING_PORTABLE_FWD: '128x32' }))).toMatchObject({ BR: 128, chunk: 32, sharedP: true, workgroupBytes: 23040 });
    expect(pinned.tried).toEqual([{ tile: '128x32', why: '41472 bytes at chunk 32, 256 invocations', need: { bytes: 41472, chunk: 32, invocations: 256, maxBytes: 32768, maxInvocations: 1024 } }]);
    // too many invocations, the bytes within the limit: the figures say which limit refused it
    const wide = err(() => planTiles('fwd', 64, 'f32', 49152, 128, 8, tuningFromEnv({ FLASHRING_PORTABLE_FWD: '128x32' })));
    expect(wide.tried[0].need).toEqual({ bytes: 41472, chunk: 32, invocations: 256, maxBytes: 49152, maxInvocations: 128 });
    // unpinned: every candidate, in order, in the message as in the data
    const none = err(() => planTiles('bwd', 16, 'f32', 512));
    expect(none.tried.map((t) => t.tile)).toEqual(PORTABLE_BWD_CANDIDATES.map(([a, b]) => `${a}x${b}`));
    expect(none.message).toBe(`the backward with head dim 16 in f32 has no tile that fits this device: 512 bytes of workgroup memory (maxComputeWorkgroupStorageSize), 256 invocations (maxComputeInvocationsPerWorkgroup, maxComputeWorkgroupSizeX); tried ${none.tried.map((t) => `${t.tile}: ${t.why}`).join('; ')}. Use a smaller head dim.`);
    expect(none.tried[0]).toEqual({ tile: '64x32', why: '8 invocations across a row divide no chunk of D/4 = 4' }); // no chunk, whatever the device: no figures
    expect(none.tried.at(-1)).toEqual({ tile: '4x4', why: '832 bytes at chunk 4, 1 invocations', need: { bytes: 832, chunk: 4, invocations: 1, maxBytes: 512, maxInvocations: 256 } });
    // a pinned chunk wrong on every device is no limit of this one's: nothing tried against it
    expect(err(() => planTiles('fwd', 64, 'f32', 32768, 1024, 8, tuningFromEnv({ FLASHRING_PORTABLE_FWD: '32x32x48' }))).tried).toEqual([]);
  });

  it('counts the forward\'s staged words in the storage type (8-byte vec4<f16>), so f16 takes wider chunks', () => {
    // 49152 bytes, subgroups of 32 (the H200): f32 stages 32 columns at a time, f16 64. f16
    // products (opt-in, with f16 storage) keep P~ in f16 (9216 bytes less) and two words a
    // chunk of maxima; f32 products (the default), P~ in f32.
    expect(planTiles('fwd', 64, 'f32', 49152, 1024, 32)).toMatchObject({ BR: 128, BC: 32, chunk: 32, workgroupBytes: 41472 });
    const f16p = { portableProducts: 'f16' } as const;
    expect(planTiles('fwd', 64, 'f16', 49152, 1024, 32, f16p)).toMatchObject({ BR: 128, BC: 32, chunk: 64, workgroupBytes: 30984, products: 'f16' }); // whole rows
    expect(planTiles('fwd', 128, 'f16', 49152, 1024, 32, f16p)).toMatchObject({ BR: 128, BC: 32, chunk: 64, workgroupBytes: 30992 });
    expect(planTiles('fwd', 128, 'f16', 49152, 1024, 32, { forwardWideStage: 0 })).toMatchObject({ BR: 128, BC: 32, chunk: 64, workgroupBytes: 40192, products: 'f32' });
    expect(planTiles('fwd', 64, 'f16', 49152, 1024, 32)).toMatchObject({ BR: 128, BC: 32, chunk: 64, workgroupBytes: 40192, products: 'f32' }); // whole rows
    expect(planTiles('fwd', 64, 'f32', 49152, 1024, 32).products).toBeUndefined();
    expect(workgroupBytes('fwd', 128, 32, 64, 64, 'f32', 'subgroup')).toBe(61952);
    expect(workgroupBytes('fwd', 128, 32, 64, 32, 'f32', 'workgroup')).toBe(45568); // + one word per invocation
    // The count is the shader's: the workgroup arrays of the specialized source, summed (pinned
    // tiles too: the workgroup row reduction holds one word per invocation, Br·Bc bytes).
    for (const [D, precision, limit, sg, tile, products, shared] of [[64, 'f16', 49152, 32, '', ''], [128, 'f16', 49152, 0, '', ''], [64, 'f32', 49152, 32, '', ''], [128, 'f32', 16384, 0, '', ''], [32, 'f16', 32768, 8, '', ''],
      [64, 'f32', 49152, 0, '128x32x32', ''], [128, 'f16', 49152, 32, '64x64x64', 'f16'], [64, 'f32', 32768, 0, '16x8x32', ''], [128, 'f16', 49152, 0, '', 'f16'], [256, 'f16', 49152, 32, '', 'f16'], [64, 'f16', 49152, 32, '', 'f16'],
      // P~ in Q's array (sharedP, pinned): f32, f16 products, a P~ row wider than Q's chunk.
      [128, 'f32', 49152, 32, '', '', '1'], [256, 'f32', 49152, 0, '', '', '1'], [128, 'f16', 49152, 32, '', 'f16', '1'], [128, 'f32', 32768, 0, '64x32x32', '', '1']] as const) {
      const plan = planTiles('fwd', D, precision, limit, 1024, sg, pins({ FLASHRING_PORTABLE_FWD: tile, FLASHRING_PORTABLE_FWD_PRODUCTS: products, FLASHRING_PORTABLE_FWD_SHARED_P: shared ?? '' }));
      const extra = portableValues('fwd', D, plan, precision);
      for (const unroll of [true, false]) {
        const values = attentionValues(D, plan, { precision, out: precision, grad: precision }, unroll, extra);
        const src = attentionSource(SHADERS.flashFwd[plan.reduce!], values, FORWARD_BINDINGS, plan.reduce === 'subgroup' ? ['subgroups'] : []);
        expect([...src.matchAll(/var<workgroup>/g)].length).toBe((plan.reduce === 'workgroup' ? 4 : 3) + (plan.products === 'f16' ? 2 : 0) - (plan.sharedP ? 1 : 0));
        expect(declaredWorkgroupBytes(src), `D=${D} ${precision} ${plan.reduce} ${tile} ${products}`).toBe(plan.workgroupBytes);
        expect(src).toContain(`const RR: u32 = ${PORTABLE_FWD_RR}u;`);
      }
    }
  });

  it('plans the forward\'s prefetch (default or pinned) and takes tile pins of two or three numbers', () => {
    const fwd = (tile: string) => pins({ FLASHRING_PORTABLE_FWD: tile });
    const p4 = planTiles('fwd', 64, 'f32', 49152, 1024, 32);
    expect(p4).toMatchObject({ BR: 128, BC: 32, WG: 256, chunk: 32 });
    expect(portableValues('fwd', 64, p4, 'f32')).toEqual({ DC: 8, NCH: 2, DU: 1, RR: 4, LOG2TX: 3, PF: 0, LQ: 4, LK: 1, PK: 0, NPK: 1, PT: 'f32', STALE: '8.0', IW: 'vec4<f32>', QP: 0, NQP: 1, PV: 'Ps', WT: 'ST' });
    // f16 storage's words: a pair of u32 each (flash_fwd.wgsl h4), the same 8 bytes as a vec4<f16>.
    expect(portableValues('fwd', 64, p4, 'f16')).toMatchObject({ IW: 'vec2<u32>' });
    // The portable backward reads its Q, K, V and dO words the same way (flash_bwd_tiles.wgsl h4).
    const b4 = planTiles('bwd', 64, 'f16', 49152, 1024, 32);
    expect([portableValues('bwd', 64, b4, 'f16').IW, portableValues('bwd', 64, b4, 'f32').IW]).toEqual(['vec2<u32>', 'vec4<f32>']);
    expect(portableValues('fwd', 64, { ...p4, wideStage: true }, 'f16')).toMatchObject({ WT: 'f32' });
    // f16 words widened as staged: workgroup memory planned as f32's (D = 128 on 48 KiB: 64-column chunks with P~ in Q's
    // array), f16 storage's prefetch rule; pinned off, 64-column chunks too, P~ apart (8-byte words). By default (wideRule)
    // where Q is staged every tile and the chunk stays: D = 128 and 256 on 48 KiB; not D = 64 (f16 words: whole rows,
    // f32 words: 32-column chunks), nor where f32 words would narrow the chunk (D = 128 on 32 KiB), nor with f16 products.
    const f16At = (D: number, limit: number, env: Record<string, string> = {}) => planTiles('fwd', D, 'f16', limit, 1024, 32, pins(env));
    const wide = f16At(128, 49152), f32 = planTiles('fwd', 128, 'f32', 49152, 1024, 32);
    expect(wide).toMatchObject({ chunk: 64, sharedP: true, wideStage: true, workgroupBytes: f32.workgroupBytes, products: 'f32' });
    expect(f16At(128, 49152, { FLASHRING_PORTABLE_FWD_WIDE: '1' })).toEqual(wide);
    const own = f16At(128, 49152, { FLASHRING_PORTABLE_FWD_WIDE: '0' });
    expect([own.chunk, own.workgroupBytes, own.wideStage, own.sharedP]).toEqual([64, 40192, undefined, undefined]);
    expect(describePlan(wide)).toMatch(/shared-P f32-staged$/);
    // The prefetch of K and V only (2) for the widened words, as for f32's; Q's chunks too (1) for f16 words staged as f16.
    expect([defaultPrefetch(wide, 128, false), defaultPrefetch(f32, 128, false), defaultPrefetch(own, 128, false)]).toEqual([2, 2, 1]);
    expect(f16At(256, 49152)).toMatchObject({ chunk: 64, wideStage: true });
    expect([f16At(64, 49152).chunk, f16At(64, 49152).wideStage]).toEqual([64, undefined]);
    expect(f16At(64, 49152, { FLASHRING_PORTABLE_FWD_WIDE: '1' })).toMatchObject({ chunk: 32, wideStage: true });
    expect([f16At(128, 32768).chunk, f16At(128, 32768).wideStage]).toEqual([32, undefined]);
    expect(f16At(128, 49152, { FLASHRING_PORTABLE_FWD_PRODUCTS: 'f16' }).wideStage).toBeUndefined();
    expect(portableValues('fwd', 64, { ...p4, sharedP: true }, 'f32')).toMatchObject({ QP: 1, NQP: 0, PV: 'Qs', QW: 9 });   // max(CS, PS) = max(8 + 1, 8 + 1)
    // The prefetch: on GPUs by default where it takes at most PREFETCH_MAX_WORDS registers, of K and V only (2) where
    // Q is staged per tile (p4: two chunks), never on CPU adapters; a pin wins (and names itself in the plan's line).
    expect(defaultPrefetch(p4, 64, false)).toBe(2);
    expect(defaultPrefetch({ ...p4, chunk: 64 }, 64, false)).toBe(1);   // whole rows: Q staged once, 1 and 2 the same kernel
    expect(defaultPrefetch(p4, 64, true)).toBe(0);
    expect(defaultPrefetch({ ...p4, WG: 8 }, 64, false)).toBe(0);   // K's 32·8/8 = 32 words: too many registers
    expect(defaultPrefetch({ ...p4, WG: 16 }, 64, false)).toBe(2);   // K's 16 words (Q's 64 more would be too many for 1)
    expect(defaultPrefetch({ ...p4, WG: 16, chunk: 64 }, 64, false)).toBe(0);   // whole rows: K's 32 words
    // f16 storage with f32 products (its default) staged as f16 words (pinned so; widened by default at D = 128): Q's
    // chunks too (1) where Q's and K's words fit, else as f32; widened as staged, as f32 (2).
    const h128 = planTiles('fwd', 128, 'f16', 49152, 1024, 32, pins({ FLASHRING_PORTABLE_FWD_WIDE: '0' }));
    expect(h128).toMatchObject({ BR: 128, BC: 32, chunk: 64, products: 'f32' });
    expect(h128.wideStage).toBeUndefined();
    expect(stagingWords(h128, 128).prefetchWords).toBe(10);
    expect(defaultPrefetch(h128, 128, false)).toBe(1);
    expect(defaultPrefetch({ ...h128, wideStage: true }, 128, false)).toBe(2);
    expect(defaultPrefetch(h128, 128, true)).toBe(0);
    expect(defaultPrefetch({ ...h128, products: 'f16' }, 128, false)).toBe(2);   // f16 products keep K and V only
    expect(defaultPrefetch({ ...h128, WG: 64 }, 128, false)).toBe(2);   // Q's 32 words and K's 8: K's only
    expect(defaultPrefetch({ ...h128, WG: 16 }, 128, false)).toBe(0);   // K's 32 words: none
    // Registers held: K/V words, and Q's only where Q is staged per tile (more than one chunk).
    expect(stagingWords(p4, 64)).toEqual({ LQ: 4, LK: 1, prefetchWords: 5 });
    expect(stagingWords({ ...p4, chunk: 64 }, 64)).toEqual({ LQ: 8, LK: 2, prefetchWords: 2 });
    const pf1 = { ...p4, prefetch: 1 as const }, pf2 = { ...p4, prefetch: defaultPrefetch(p4, 64, false) };
    expect(portableValues('fwd', 64, pf1, 'f32')).toMatchObject({ PF: 1 });
    expect(portableValues('fwd', 64, pf2, 'f32')).toMatchObject({ PF: 2 });
    expect(describePlan(pf1)).toBe('Br128 Bc32 WG256 chunk32 subgroup prefetch1');
    expect(describePlan(pf2)).toBe('Br128 Bc32 WG256 chunk32 subgroup prefetch2');
    expect(planTiles('fwd', 64, 'f32', 49152, 1024, 32, { forwardPrefetch: 0 }).prefetch).toBe(0);
    expect(planTiles('fwd', 64, 'f32', 49152, 1024, 32, { forwardPrefetch: 2 }).prefetch).toBe(2);
    const key = (p: typeof p4) => kernelKey('fwd-scalar-subgroup', attentionValues(64, p, { precision: 'f32', out: 'f32', grad: 'f32' }, true, portableValues('fwd', 64, p, 'f32')));
    expect(new Set([key(p4), key(pf1), key(pf2)]).size).toBe(3);
    // 256 rows (256 invocations); the limits still apply.
    expect(planTiles('fwd', 64, 'f32', 49152, 1024, 32, fwd('256x16x16'))).toMatchObject({ BR: 256, BC: 16, WG: 256, chunk: 16, workgroupBytes: 42240 });
    expect(() => planTiles('fwd', 64, 'f32', 49152, 64, 32, fwd('128x32x32'))).toThrow(/128x32x32: .* 256 invocations/);
    // Three numbers: the chunk.
    expect(planTiles('fwd', 64, 'f32', 49152, 1024, 32, fwd('64x8x8'))).toMatchObject({ chunk: 8, WG: 32 });
    for (const bad of ['64x32x32x4', '64x32x32x8', '4x4x4x8', '64x32x0', '64x32x', '512x16x16', '64x256x64'])
      expect(() => fwd(bad), bad).toThrow(/^FLASHRING_PORTABLE_FWD='.*': give BRxBC/);
    // 256 rows are the forward's only.
    for (const bad of ['64x32x32x8', '256x32']) expect(() => pins({ FLASHRING_PORTABLE_BWD: bad }), bad).toThrow(InputError);
  });
});

/**
 * Bytes of the workgroup variables a specialized source declares: their types resolved through
 * its aliases, array lengths through its u32 constants (+ − * / and parentheses).
 */
function declaredWorkgroupBytes(src: string): number {
  const consts: Record<string, number> = {};
  const aliases: Record<string, string> = {};
  const evalU32 = (expr: string): number => {
    const tok = expr.match(/\w+|[-+*/()]/g) ?? [];
    let i = 0;
    const atom = (): number => {
      const t = tok[i++];
      if (t === '(') { const v = sum(); i++; return v; }
      if (/^\d+u?$/.test(t)) return parseInt(t, 10);
      if (!(t in consts)) throw new Error(`no constant ${t} in '${expr}'`);
      return consts[t];
    };
    const product = (): number => {
      let v = atom();
      while (tok[i] === '*' || tok[i] === '/') v = tok[i++] === '*' ? v * atom() : Math.floor(v / atom());
      return v;
    };
    const sum = (): number => {
      let v = product();
      while (tok[i] === '+' || tok[i] === '-') v = tok[i++] === '+' ? v + product() : v - product();
      return v;
    };
    return sum();
  };
  for (const m of src.matchAll(/^\s*alias\s+(\w+)\s*=\s*([^;]+);/gm)) aliases[m[1]] = m[2].trim();
  for (const m of src.matchAll(/^\s*const\s+(\w+)\s*:\s*u32\s*=\s*([^;]+);/gm)) consts[m[1]] = evalU32(m[2]);
  const size = (t: string): number => {
    t = t.trim();
    if (t in aliases) return size(aliases[t]);
    if (t === 'f32' || t === 'u32' || t === 'i32') return 4;
    if (t === 'f16') return 2;
    if (/^atomic<[iu]32>$/.test(t)) return 4;
    const v = /^vec4<(\w+)>$/.exec(t);
    if (v) return 4 * size(v[1]);
    const a = /^array<(.+),\s*([^,<>]+)>$/.exec(t);
    if (a) return size(a[1]) * evalU32(a[2]);
    throw new Error(`declaredWorkgroupBytes: type ${t}`);
  };
  let bytes = 0;
  for (const m of src.matchAll(/var<workgroup>\s+\w+\s*:\s*([^;]+);/g)) bytes += size(m[1]);
  return bytes;
}

describe('portable backward tiles', () => {
  it('counts the staged words in the storage type (8-byte vec4<f16>), so f16 takes wider chunks', () => {
    // 49152 bytes (the H200): f32 stages 32 columns at a time; f16 whole rows at D = 64 and
    // 64-column chunks at D = 128. 32768 (lavapipe): f16 fits 64×32 (f32 32×32).
    expect(planTiles('bwd', 64, 'f32', 49152, 1024)).toMatchObject({ BR: 64, streamRows: 32, chunk: 32, workgroupBytes: 46592 });
    expect(planTiles('bwd', 128, 'f32', 49152, 1024)).toMatchObject({ BR: 64, streamRows: 32, chunk: 32, workgroupBytes: 46592 });
    expect(planTiles('bwd', 64, 'f16', 49152, 1024)).toMatchObject({ BR: 64, streamRows: 32, chunk: 64, workgroupBytes: 45056 });
    expect(planTiles('bwd', 128, 'f16', 49152, 1024)).toMatchObject({ BR: 64, streamRows: 32, chunk: 64, workgroupBytes: 45056 });
    expect(planTiles('bwd', 64, 'f32', 32768, 1024)).toMatchObject({ BR: 32, streamRows: 32, chunk: 32, workgroupBytes: 28160 });
    expect(planTiles('bwd', 64, 'f16', 32768, 1024)).toMatchObject({ BR: 64, streamRows: 32, chunk: 32, workgroupBytes: 32768 });
    expect(workgroupBytes('bwd', 64, 32, 64, 64, 'f32')).toBe(71168);
    // The count is the shader's: the workgroup variables of the specialized source, summed.
    const cases = [[64, 'f16', 49152, ''], [128, 'f16', 49152, ''], [64, 'f32', 49152, ''], [128, 'f32', 49152, ''], [64, 'f16', 32768, ''],
      [256, 'f16', 49152, '32x16x32'], [80, 'f32', 49152, ''], [32, 'f16', 16384, ''], [64, 'f32', 49152, '8x4x4']] as const;
    for (const [D, precision, limit, tile] of cases) for (const unroll of [true, false]) {
      const plan = planTiles('bwd', D, precision, limit, 1024, 0, pins({ FLASHRING_PORTABLE_BWD: tile }));
      const values = attentionValues(D, plan, { precision, out: precision, grad: precision }, unroll, portableValues('bwd', D, plan, precision));
      const src = attentionSource(SHADERS.flashBwd, values, BACKWARD_BINDINGS);
      expect([...src.matchAll(/var<workgroup>/g)].length).toBe(7);
      expect(declaredWorkgroupBytes(src), `D=${D} ${precision} ${limit} ${tile}`).toBe(plan.workgroupBytes);
      expect(src).toContain(`alias ST = ${precision};`);
    }
    expect(portableValues('bwd', 64, planTiles('bwd', 64, 'f32', 49152, 1024), 'f32')).toMatchObject({ CT: 32, DC: 8, NCH: 2, DU: 1 });
  });
});

describe('f16 conversion', () => {
  it('rounds to nearest even and round-trips every finite half', () => {
    for (let h = 0; h < 0x10000; h++) {
      const x = fromHalfBits(h);
      if (Number.isNaN(x)) continue;
      expect(toHalfBits(x)).toBe(h);
    }
    expect(toHalfBits(1 + 2 ** -11)).toBe(0x3c00); // tie -> even
    expect(toHalfBits(1 + 3 * 2 ** -11)).toBe(0x3c02);
    expect(toHalfBits(1e6)).toBe(0x7c00);
  });
});

describe('kernel pins from the environment', () => {
  it('a variable in the pins\' namespaces that is no pin (a removed ablation, a typo) is named once and ignored, not silently dropped', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      expect(tuningFromEnv({ FLASHRING_PORTABLE_FWD_SKIP: 'pv', FLASHRING_SGMM_FWDD: '64x32' })).toEqual({});
      const said = warn.mock.calls.map((c) => String(c[0]));
      expect(said.some((m) => /^FLASHRING_PORTABLE_FWD_SKIP is not a kernel pin .*FLASHRING_PORTABLE_FWD,/.test(m))).toBe(true);
      expect(said.some((m) => /^FLASHRING_SGMM_FWDD is not a kernel pin/.test(m))).toBe(true);
      // a real pin passes without a word
      warn.mockClear();
      expect(tuningFromEnv({ FLASHRING_PORTABLE_REDUCE: 'workgroup' })).toEqual({ rowReduce: 'workgroup' });
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});
