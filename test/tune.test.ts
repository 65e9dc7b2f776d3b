/**
 * Autotune (src/bench/tune.ts): the candidates are the kernels' own lists, as pins; a search
 * times them on the device, keeps the fastest forward and backward only if together they pass
 * the float64 check and beat the defaults, and stores the entry, which the next call reuses.
 * On lavapipe the search runs on two candidates per kernel (each is a pipeline to compile);
 * `flashring tune` on the H200: bench/results (the folder its README names).
 */
import { describe, expect, it } from 'vitest';
import { testDevice } from './gpu.js';
import { TUNE_MARGIN, TUNE_PRUNE, autotune, pruned, keptPins, showPins, skipped, sourceHash, storedTuning, tuneCandidates, tuneKey, unusableOn, type TuneEntry, type TuneStore } from '../src/bench/tune.js';
import { SGMM_FWD_PIPES, SGMM_PAD, planSgmm, sgmmBwdWorkgroupBytes, sgmmFwdTurns, sgmmWorkgroupBytes } from '../src/kernels/sgmmTiles.js';
import { FlashForward } from '../src/kernels/flashForward.js';
import { FlashBackward } from '../src/kernels/flashBackward.js';
import { createCalls, sgmmDevice } from './sgmm-device.js';
import { PORTABLE_BWD_CANDIDATES, PORTABLE_FWD_CANDIDATES, planTiles } from '../src/kernels/tiles.js';
import { resolveTuning, tuningFromEnv, type KernelTuning } from '../src/kernels/tuning.js';
import type { FlashDevice } from '../src/gpu/device.js';
import { InputError, LimitError } from '../src/errors.js';
import { withTuning } from '../src/gpu/device.js';
import { TOL } from '../src/reference/compare.js';
import { thrown } from './thrown.js';

function memoryStore(): TuneStore & { entries: Map<string, TuneEntry>; gets: number } {
  const entries = new Map<string, TuneEntry>();
  const s = { entries, gets: 0, get: async (k: string) => { s.gets++; return entries.get(k); }, set: async (e: TuneEntry) => (entries.set(e.key, e), 0) };
  return s;
}

describe('autotune candidates (data)', () => {
  it("are the kernels' own lists: every portable tile without the prefetch, with it and with it of K and V only, every tensor-core tile in each step order (taking turns and not where it can), the backward's with one spill block and two", () => {
    // f32: each tile without the prefetch, with it and with it of K and V only, P~ in Q's array and apart.
    const f32 = tuneCandidates('scalar', 'fwd', 64);
    expect(f32).toHaveLength(6 * PORTABLE_FWD_CANDIDATES.length);
    expect(f32.filter((t) => t.forwardSharedP === 1)).toHaveLength(3 * PORTABLE_FWD_CANDIDATES.length);
    expect(new Set(f32.map((t) => t.forwardPrefetch))).toEqual(new Set([0, 1, 2]));
    // With f16 storage and f32 products, its words staged as f16 or widened to f32; P~ shares Q's array only where P~ has
    // Q's word type (widened words, or f16 products). The products too (f16 where the range allows, or f32), only where
    // the user opted in.
    const plain16 = tuneCandidates('scalar', 'fwd', 64, false, 'f16');
    expect(plain16).toHaveLength(9 * PORTABLE_FWD_CANDIDATES.length);
    expect(plain16.filter((t) => t.forwardWideStage === 0)).toEqual(f32.filter((t) => t.forwardSharedP === 0).map(({ forwardSharedP: _, ...t }) => ({ ...t, forwardWideStage: 0 })));
    expect(plain16.filter((t) => t.forwardWideStage === 1)).toEqual(f32.map((t) => ({ ...t, forwardWideStage: 1 })));
    const f16 = tuneCandidates('scalar', 'fwd', 64, false, 'f16', true);
    expect(f16).toHaveLength(15 * PORTABLE_FWD_CANDIDATES.length);
    expect(new Set(f16.map((t) => t.portableProducts))).toEqual(new Set(['f16', 'f32']));
    expect(f16.filter((t) => t.forwardSharedP !== undefined).every((t) => t.portableProducts === 'f16' || t.forwardWideStage === 1)).toBe(true);
    expect(f16.filter((t) => t.forwardWideStage !== undefined).every((t) => t.portableProducts === 'f32')).toBe(true);
    for (const t of f16) expect(() => resolveTuning(t)).not.toThrow();
    expect(tuneCandidates('scalar', 'bwd', 64).map((t) => t.portableBackward)).toEqual(PORTABLE_BWD_CANDIDATES.map(([rows, cols]) => ({ rows, cols })));
    const fwd64 = tuneCandidates('subgroup-matrix', 'fwd', 64), fwd128 = tuneCandidates('subgroup-matrix', 'fwd', 128);
    expect(fwd64.some((t) => t.sgmmForward!.rowBlocks === 2)).toBe(true);
    expect(fwd128.some((t) => t.sgmmForward!.rowBlocks === 2)).toBe(false); // RB = 2 spills at D = 128 (sgmmTiles.ts)
    expect(new Set(fwd64.map((t) => t.sgmmForwardPipe))).toEqual(new Set(SGMM_FWD_PIPES));
    // Taking turns: both ways for the two-row-block, 16-key tiles only (4×16×2 and 8×16×2 at D = 64), in each order.
    const turning = fwd64.filter((t) => t.sgmmForwardTurns !== undefined);
    expect(turning.map((t) => `${t.sgmmForward!.subgroups}x${t.sgmmForward!.rows}x${t.sgmmForward!.rowBlocks}`).sort()).toEqual(
      ['4x16x2', '4x16x2', '4x16x2', '4x16x2', '8x16x2', '8x16x2', '8x16x2', '8x16x2']);
    expect(fwd128.some((t) => t.sgmmForwardTurns !== undefined)).toBe(false);
    const bwd64 = tuneCandidates('subgroup-matrix', 'bwd', 64);
    expect(bwd64.filter((t) => t.sgmmDqSpill === 'one' && t.sgmmKvSpill === 'one')).toHaveLength(bwd64.length / 2);
    expect(showPins({ sgmmForwardTurns: 0, sgmmKvSpill: 'two' })).toBe('FLASHRING_SGMM_FWD_TURN=0 FLASHRING_SGMM_KV_SPILL=two');
    for (const t of [...fwd64, ...fwd128, ...tuneCandidates('subgroup-matrix', 'bwd', 128)]) expect(() => resolveTuning(t)).not.toThrow();
    expect(showPins({ sgmmForward: { subgroups: 8, rows: 32, rowBlocks: 1 }, sgmmForwardPipe: 2 })).toBe('FLASHRING_SGMM_FWD=8x32x1 FLASHRING_SGMM_FWD_PIPE=2');
    expect(showPins({})).toBe('(defaults)');
    // The forward's D split (two subgroups a 16-row block) comes first at D = 128 only (measured there; sgmmTiles.ts).
    expect(fwd128[0].sgmmForward).toEqual({ subgroups: 16, rows: 32, rowBlocks: 1, dSplit: 2 });
    expect(fwd64.some((t) => t.sgmmForward!.dSplit)).toBe(false);
    expect(showPins({ sgmmForward: { subgroups: 16, rows: 32, rowBlocks: 1, dSplit: 2 } })).toBe('FLASHRING_SGMM_FWD=16x32x1x2');
    expect(showPins({ sgmmForward: { subgroups: 16, rows: 32, dSplit: 2 } })).toBe('FLASHRING_SGMM_FWD=16x32x1x2');   // not 16x32x2 (RB = 2)
    // The backward's order depends on D: 4×16 first up to D = 64, 8×16 above (sgmmTiles.ts, measured on the H200).
    expect(tuneCandidates('subgroup-matrix', 'bwd', 64)[0].sgmmBackward).toMatchObject({ subgroups: 4, rows: 16 });
    expect(tuneCandidates('subgroup-matrix', 'bwd', 128)[0].sgmmBackward).toMatchObject({ subgroups: 8, rows: 16 });
    expect(sourceHash()).toMatch(/^[0-9a-f]{8}$/);
    expect(TUNE_MARGIN).toBe(0.02);
  });
});

describe('the tensor-core forward pin (FLASHRING_SGMM_FWD)', () => {
  it('takes a D split of 2 with RB = 1, an even subgroup count and tiles of a multiple of 32 rows, and refuses the rest naming what to give', () => {
    expect(tuningFromEnv({ FLASHRING_SGMM_FWD: '16x32x1x2' }).sgmmForward).toEqual({ subgroups: 16, rows: 32, rowBlocks: 1, dSplit: 2 });
    expect(tuningFromEnv({ FLASHRING_SGMM_FWD: '8x32x2' }).sgmmForward).toEqual({ subgroups: 8, rows: 32, rowBlocks: 2, dSplit: undefined });
    for (const bad of ['16x32x2x2', '16x16x1x2', '8x48x1x2', '1x32x1x2', '16x32x1x3', '16x32x1x2x1'])
      expect(() => tuningFromEnv({ FLASHRING_SGMM_FWD: bad }), bad).toThrow(new RegExp(`^FLASHRING_SGMM_FWD='${bad}': give SGxT\\[xRB\\[xDS\\]\\]`));
    expect(() => tuningFromEnv({ FLASHRING_SGMM_BWD: '8x16x1' })).toThrow(InputError);
  });

  it('is planned where D/32 is whole and it fits 48 KiB, first at D = 128 without the robustness transform; elsewhere the reason names the head dim', () => {
    // An adapter as the H200's, as far as the planner reads one (sgmmTiles.ts planSgmm).
    const h200 = (tuning: KernelTuning, robustShaders = false) => ({
      hasSubgroupMatrix: true, tuning, robustShaders, adapter: { subgroupMinSize: 32, subgroupMaxSize: 32, subgroupMatrixConfigs: [] },
      device: { limits: { maxComputeWorkgroupStorageSize: 49152, maxComputeInvocationsPerWorkgroup: 1024 } },
    }) as unknown as FlashDevice;
    expect(planSgmm(h200({}), 128, 'f16')).toMatchObject({ BR: 128, BC: 32, WG: 512, dSplit: 2, workgroupBytes: 46624 });
    // With the robustness transform (browsers) it was half as fast: 8×32×1 there.
    expect(planSgmm(h200({}, true), 128, 'f16')).toMatchObject({ BR: 128, BC: 32, WG: 256, dSplit: 1 });
    expect(planSgmm(h200({}), 64, 'f16')).toMatchObject({ BR: 128, BC: 16, WG: 128, rowBlocks: 2, dSplit: 1 });
    const pinned = h200(tuningFromEnv({ FLASHRING_SGMM_FWD: '16x32x1x2' }));
    expect(planSgmm(pinned, 48, 'f16')).toMatchObject({ tried: [{ tile: '16x32x1x2', why: "head dim 48 is not a multiple of 32, which the forward's D split 2 ways needs" }] });
    expect(planSgmm(pinned, 256, 'f16')).toMatchObject({ why: expect.stringMatching(/^the pinned tile 16x32x1x2 .* does not fit this device at head dim 256/), tried: [{ need: { bytes: 63008, maxBytes: 49152 } }] });
  });
});

describe('a skipped candidate\'s trial', () => {
  const need = { bytes: 41472, chunk: 32, invocations: 256, maxBytes: 32768, maxInvocations: 1024 };
  it('is what the tile needs, without the advice to the user (a smaller head dim, another pin) that a search trying every tile has no use for', () => {
    const e = planTilesError('fwd', { FLASHRING_PORTABLE_FWD: '128x32', FLASHRING_PORTABLE_FWD_SHARED_P: '0' });
    expect(skipped('fwd', 'P', e)).toEqual({ kind: 'fwd', pins: 'P', ms: null, error: '41472 bytes at chunk 32, 256 invocations', need });
    expect(skipped('bwd', 'P', planTilesError('bwd', { FLASHRING_PORTABLE_BWD: '64x32' })))
      .toEqual({ kind: 'bwd', pins: 'P', ms: null, error: '46592 bytes at chunk 32, 128 invocations', need: { ...need, bytes: 46592, invocations: 128 } });
    // several tiles tried (an unpinned plan): each named with why
    expect(skipped('bwd', 'P', thrown(() => planTiles('bwd', 256, 'f32', 512))).error).toMatch(/^64x32: 46592 bytes at chunk 32, 128 invocations; 32x32: 28160 bytes /);
    expect(skipped('fwd', 'P', new Error('WebGPU error in forward: bad\nmore'))).toEqual({ kind: 'fwd', pins: 'P', ms: null, error: 'WebGPU error in forward: bad' }); // any other error: its first line
  });

  it('is read from the error\'s data, not its text: a message worded otherwise keeps the figures, and one that only reads alike is no tile\'s', () => {
    const reworded = new LimitError('the tile is too big for this GPU (see above)', [{ tile: '128x32', why: '41472 bytes at chunk 32, 256 invocations', need }]);
    expect(skipped('fwd', 'P', reworded)).toMatchObject({ error: '41472 bytes at chunk 32, 256 invocations', need });
    const alike = new InputError('the store is damaged; tried tune.json: 3 entries unreadable. Remove the file');
    expect(skipped('fwd', 'P', alike)).toEqual({ kind: 'fwd', pins: 'P', ms: null, error: alike.message });
  });
});

describe("a tensor-core candidate the device's limits refuse", () => {
  it('is a skipped trial holding what its tile needs (the byte formulas, 32 invocations a subgroup), from the kernel\'s refusal before any pipeline', async () => {
    const dev = sgmmDevice(4096, 1024), D = 64, f16 = { precision: 'f16', out: 'f16', grad: 'f16' } as const;
    const create = (kind: 'fwd' | 'bwd', d: FlashDevice) => (kind === 'fwd' ? FlashForward.create(d, D, f16) : FlashBackward.create(d, D, f16));
    for (const kind of ['fwd', 'bwd'] as const) {
      for (const c of tuneCandidates('subgroup-matrix', kind, D)) {
        // As the search times a candidate (tune.ts timeWith): the device with the candidate's pins, on the path searched.
        const e = await create(kind, withTuning(dev, { ...dev.tuning, ...c, path: 'subgroup-matrix' })).then(() => new Error('it built'), (x: unknown) => x);
        const f = c.sgmmForward, b = c.sgmmBackward;
        const bytes = f
          ? sgmmWorkgroupBytes(f.subgroups, f.rows, D, f.rowBlocks, SGMM_PAD, f.dSplit, false, sgmmFwdTurns(f.rowBlocks ?? 1, f.dSplit ?? 1, f.rows, c.sgmmForwardTurns))
          : sgmmBwdWorkgroupBytes(b!.subgroups, b!.rows, D, SGMM_PAD, c.sgmmDqSpill === 'one', c.sgmmKvSpill === 'one');
        const invocations = 32 * (f ?? b)!.subgroups;
        expect(skipped(kind, showPins(c), e), showPins(c)).toEqual({
          kind, pins: showPins(c), ms: null, error: `${bytes} bytes, ${invocations} invocations`, need: { bytes, chunk: D, invocations, maxBytes: 4096, maxInvocations: 1024 },
        });
      }
    }
    expect(createCalls(dev)).toBe(0);
  });
});


/** The error planTiles throws for a pinned tile at D = 64 on 32 KiB (lavapipe's limit). */
const planTilesError = (kind: 'fwd' | 'bwd', env: Record<string, string>) => thrown(() => planTiles(kind, 64, 'f32', 32768, 1024, 8, tuningFromEnv(env)));

describe('autotune on this device', () => {
  const few = (path: Parameters<typeof tuneCandidates>[0], kind: 'fwd' | 'bwd', D: number) =>
    kind === 'fwd' ? [{ portableForward: { rows: 16, cols: 8 } }, { portableForward: { rows: 4, cols: 4 } }] : [{ portableBackward: { rows: 8, cols: 8 } }, { portableBackward: { rows: 128, cols: 128 } }];
  it('a candidate whose probing run takes over TUNE_PRUNE× the fastest so far is not timed further, and says why', () => {
    expect(TUNE_PRUNE).toBe(3);
    expect(pruned(18, 6)).toBeUndefined();   // at the bound: timed
    expect(pruned(18.01, 6)).toBe('18.010 ms in one run, over 3× the fastest candidate so far (6.000 ms): not timed further');
    expect(pruned(1678.037, 5.797)).toMatch(/^1678\.037 ms in one run, over 3× the fastest candidate so far \(5\.797 ms\)/);
    for (const ms of [NaN, 0, -1, Infinity]) expect(pruned(ms, 6), String(ms)).toBeUndefined();   // no time: trialOf says so when timed
  });
  it('searches, keeps a pair that passes the float64 check and is not slower, stores it, and reuses it', async () => {
    const dev = await testDevice({ tuning: { path: 'scalar' } });
    const store = memoryStore(), lines: string[] = [];
    const r = { robust: false, D: 16, precision: 'f32' as const, causal: true, N: 48, heads: 1, reps: 1 };
    const e = await autotune(dev, r, store, { candidates: few, progress: (l) => lines.push(l) });
    expect(e.fromStore).toBe(false);
    expect(e.path).toBe('scalar');
    expect(e.key).toBe(tuneKey(dev, 'scalar', r));
    expect(e.trials.map((t) => t.kind)).toEqual(['fwd', 'fwd', 'bwd', 'bwd']);
    // 128×128 does not fit: a trial with the reason, not a failure of the search.
    const big = e.trials.find((t) => t.pins === 'FLASHRING_PORTABLE_BWD=128x128')!;
    expect(big.ms).toBeNull();
    expect(big.error).toMatch(/\S/);
    expect(big.error).not.toMatch(/smaller|unset/); // why it does not fit, without planTiles' advice to the user
    expect(big.need).toBeUndefined(); // no chunk of D = 16 takes its 32 invocations across a row: no limit of the device's, so no figures against one
    expect(e.trials.filter((t) => t.ms !== null).every((t) => t.ms! > 0)).toBe(true);
    expect(e.trials.filter((t) => /in one run/.test(t.error ?? ''))).toEqual([]);   // no pruning on a CPU adapter (its single runs are noise)
    expect(lines[0]).toMatch(/^tuning D=16 f32 causal on the scalar path at N=48, 1 head: defaults/);
    // On a CPU adapter the header says why the first candidate's line may be long in coming.
    expect(lines[0].endsWith('; on this CPU adapter each kernel compiles as it first runs, seconds to minutes each')).toBe(dev.isCPU);
    // Each candidate's line counted within its kernel's, so a long search says how far it is.
    expect(lines[1]).toMatch(/^ {2}fwd 1\/2 FLASHRING_PORTABLE_FWD=16x8: [\d.]+ ms, \d+\.\d s with its build and runs$/);
    expect(lines[4]).toMatch(/^ {2}bwd 2\/2 FLASHRING_PORTABLE_BWD=128x128: skipped \(/);
    // A last line says what was not kept, unless both kernels' pins were.
    expect(lines).toHaveLength(1 + 4 + (e.tuning.portableForward && e.tuning.portableBackward ? 0 : 1));
    expect(e.checkErr).toBeLessThan(TOL.f32.grad);
    // Each kernel's pins kept only 2% faster than its defaults timed next to them; else its defaults' time.
    if (e.keptDefaults) expect(e.tuning).toEqual({});
    for (const [i, kernel] of [[0, 'portableForward'], [1, 'portableBackward']] as const) {
      if (e.tuning[kernel]) expect(e.tunedMs[i]).toBeLessThanOrEqual(0.98 * e.defaultMs[i]);
      else expect(e.tunedMs[i]).toBe(e.defaultMs[i]);
    }
    // The chosen pins are real pins of the searched candidates (or none: the defaults kept).
    // (Which is fastest on a CPU is noise; 128×128 does not fit, so the backward's can only be 8×8.)
    if (e.tuning.portableForward) expect([{ rows: 16, cols: 8 }, { rows: 4, cols: 4 }]).toContainEqual(e.tuning.portableForward);
    if (e.tuning.portableBackward) expect(e.tuning.portableBackward).toEqual({ rows: 8, cols: 8 });
    expect(store.entries.get(e.key)).toMatchObject({ key: e.key, tuning: e.tuning });
    // What a run takes from the store: the pins, or nothing where the defaults were kept.
    expect(await storedTuning(dev, store, r)).toEqual(Object.keys(e.tuning).length ? e.tuning : undefined);
    // Again: from the store, no search (no progress line); fresh: searched again.
    const gets = store.gets;
    const again = await autotune(dev, r, store, { candidates: few, progress: (l) => lines.push(l) });
    expect(again.fromStore).toBe(true);
    expect(store.gets).toBe(gets + 1);
    // Another robustness setting is another key: not reused.
    expect(tuneKey(dev, 'scalar', { ...r, robust: true })).not.toBe(e.key);
    expect(again.tuning).toEqual(e.tuning);
    const n = lines.length;
    const fresh = await autotune(dev, r, store, { candidates: () => [], fresh: true, progress: (l) => lines.push(l) });
    expect(fresh.fromStore).toBe(false);
    expect(fresh.tuning).toEqual({});   // nothing searched: the defaults, and why
    expect(fresh.keptDefaults).toBe('no candidate ran');
    expect(lines.at(-1)).toBe('  kept the defaults: no candidate ran');
    // An entry that kept the defaults gives a run no pins: it is not "tuned" (the page once said it was).
    expect(store.entries.get(e.key)?.tuning).toEqual({});
    expect(await storedTuning(dev, store, r)).toBeUndefined();
    expect(lines.length).toBeGreaterThan(n);
  }, 300_000);

  it('a stored entry whose pins the kernels no longer take (hand-edited, an older flashring) is searched again, with a line saying why, and replaced', async () => {
    const dev = await testDevice({ tuning: { path: 'scalar' } });
    const store = memoryStore(), lines: string[] = [];
    const r = { robust: false, D: 16, precision: 'f32' as const, causal: false, N: 32, heads: 1, reps: 1 };
    const key = tuneKey(dev, 'scalar', r);
    store.entries.set(key, { key, path: 'scalar', tuning: { portableForward: { rows: 3, cols: 8 } }, defaultMs: [2, 4], tunedMs: [1, 4], N: 32, heads: 1, checkErr: 0, date: '2026-12-02T16:00:00.000Z', trials: [] });
    const e = await autotune(dev, r, store, { candidates: () => [], progress: (l) => lines.push(l) });
    expect(e.fromStore).toBe(false);
    expect(lines[0]).toMatch(/^the stored entry for D=16 f32 not causal holds pins the kernels do not take \(FLASHRING_PORTABLE_FWD='3x8'.*\): searching again$/);
    expect(store.entries.get(key)?.tuning).toEqual({});
  }, 120_000);

  it('does not time a candidate whose kernel is a twin\'s: P~ shared or the prefetch of K and V only where Q is staged once', async () => {
    const dev = await testDevice({ tuning: { path: 'scalar' } });
    const r = { robust: false, D: 16, precision: 'f32' as const, causal: false, N: 32, heads: 1, reps: 1 };
    const tile = { portableForward: { rows: 16, cols: 8 } };   // at D = 16: whole rows, one chunk
    const twins: KernelTuning[] = [{ ...tile, forwardPrefetch: 2 }, { ...tile, forwardSharedP: 1 }, { ...tile, forwardPrefetch: 1 }];
    const e = await autotune(dev, r, memoryStore(), { candidates: (_p, kind) => (kind === 'fwd' ? twins : []) });
    expect(e.trials.map((t) => [t.pins, t.error ?? 'timed'])).toEqual([
      ['FLASHRING_PORTABLE_FWD=16x8 FLASHRING_PORTABLE_FWD_PREFETCH=2', 'Q staged once here (whole rows of 16): the prefetch of K and V only is the same kernel as prefetch 1'],
      ['FLASHRING_PORTABLE_FWD=16x8 FLASHRING_PORTABLE_FWD_SHARED_P=1', 'P~ can share no array here (Q staged once, in whole rows of 16): the same kernel as with P~ apart'],
      ['FLASHRING_PORTABLE_FWD=16x8 FLASHRING_PORTABLE_FWD_PREFETCH=1', 'timed'],
    ]);
  }, 120_000);

  it('stops between candidates when its signal is aborted, with the signal\'s reason, and stores nothing', async () => {
    const dev = await testDevice({ tuning: { path: 'scalar' } });
    const store = memoryStore(), lines: string[] = [], abort = new AbortController();
    const r = { robust: false, D: 16, precision: 'f32' as const, causal: false, N: 32, heads: 1, reps: 1 };
    const why = new Error('stopped by the test');
    // Aborted once the first candidate has been timed (its progress line): the second is never timed.
    const run = autotune(dev, r, store, { candidates: few, signal: abort.signal, progress: (l) => { lines.push(l); if (/^ {2}fwd /.test(l)) abort.abort(why); } });
    await expect(run).rejects.toBe(why);
    expect(lines.filter((l) => /^ {2}(fwd|bwd) /.test(l))).toHaveLength(1);
    expect(store.entries.size).toBe(0);
    // Aborted before it starts: no candidate at all.
    const early = new AbortController();
    early.abort(why);
    await expect(autotune(dev, r, store, { candidates: few, signal: early.signal, progress: (l) => lines.push(l) })).rejects.toBe(why);
    expect(lines.filter((l) => /^ {2}(fwd|bwd) /.test(l))).toHaveLength(1);
    expect(store.entries.size).toBe(0);
  }, 120_000);

  it('unusableOn: this adapter\'s entries under another kernels\' hash, damaged or with pins the kernels do not take; never another adapter\'s', async () => {
    const dev = await testDevice({ tuning: { path: 'scalar' } });
    const unusable = unusableOn(dev);
    const r = { robust: false, D: 16, precision: 'f32' as const, causal: false };
    const key = tuneKey(dev, 'scalar', r), old = key.replace(`|shaders ${sourceHash()}|`, '|shaders 0badc0de|');
    const other = `Another vendor|another arch|a device|another GPU|${old.split('|').slice(4).join('|')}`;
    const at = (k: string, more: Partial<TuneEntry> = {}): TuneEntry => ({ key: k, path: 'scalar', tuning: {}, defaultMs: [2, 4], tunedMs: [1, 4], N: 32, heads: 1, checkErr: 0, date: '2026-12-02T16:00:00.000Z', trials: [], ...more });
    expect(old).not.toBe(key);
    expect(unusable(key, at(key))).toBe(false);
    expect(unusable(tuneKey(dev, 'scalar', { ...r, robust: true, D: 32 }), at(tuneKey(dev, 'scalar', { ...r, robust: true, D: 32 })))).toBe(false);
    expect(unusable(old, at(old))).toBe(true);
    expect(unusable(key, at(key, { tunedMs: [0, 4] }))).toBe(true);
    expect(unusable(key, at(key, { tuning: { portableForward: { rows: 3, cols: 8 } } }))).toBe(true);
    expect(unusable(key, 'not an entry')).toBe(true);
    // Another adapter's (another GPU reading the same store, with its own flashring): kept whatever it holds.
    expect(unusable(other, at(other))).toBe(false);
    expect(unusable(other, 'not an entry')).toBe(false);
  });

  it('keptPins: each kernel decided apart, at the 2% margin, with the reason for the one not kept', () => {
    const fwd: KernelTuning = { sgmmForwardPipe: 0 }, bwd: KernelTuning = { sgmmBackward: { subgroups: 4, rows: 16 } };
    // The H200's case (2026-12-04-tc-tune-h200): the forward 7.8% faster, the backward not at all.
    const a = keptPins([fwd, bwd], [19.99, 65.64], [18.43, 65.64]);
    expect(a.tuning).toEqual(fwd);
    expect(a.kept).toEqual([true, false]);
    expect(a.notFaster).toHaveLength(1);
    expect(a.notFaster[0]).toMatch(/^the backward's FLASHRING_SGMM_BWD=4x16 65\.640 ms against its defaults' 65\.640, not 2% faster$/);
    // Both, neither, and exactly at the margin (kept: 2% faster is enough).
    expect(keptPins([fwd, bwd], [10, 10], [9, 9.5]).tuning).toEqual({ ...fwd, ...bwd });
    expect(keptPins([fwd, bwd], [10, 10], [9.9, 10.1]).tuning).toEqual({});
    expect(keptPins([fwd, bwd], [10, 10], [9.8, 9.81]).kept).toEqual([true, false]);
    // A kernel without candidates has nothing to keep and nothing to explain.
    expect(keptPins([undefined, bwd], [10, 10], [5, 9])).toEqual({ tuning: bwd, kept: [false, true], notFaster: [] });
    // Pins whose plan is the defaults' own (the same kernel timed twice): never kept, however the two timings differ.
    const same = keptPins([fwd, bwd], [10, 10], [7, 9], [true, false]);
    expect(same.tuning).toEqual(bwd);
    expect(same.notFaster).toEqual(["the forward's FLASHRING_SGMM_FWD_PIPE=0 7.000 ms against its defaults' 10.000, the defaults' own kernel"]);
  });

  it('withTuning: the same device with other pins, its state read through', async () => {
    const dev = await testDevice();
    const d = withTuning(dev, { portableForward: { rows: 16, cols: 8 } });
    expect(d.tuning.portableForward).toEqual({ rows: 16, cols: 8 });
    expect(d.device).toBe(dev.device);
    expect(d.tracker).toBe(dev.tracker);
    expect(() => withTuning(dev, { portableForward: { rows: 3, cols: 8 } })).toThrow(/FLASHRING_PORTABLE_FWD='3x8'/);
  });

  it('refuses a bad request in one line', async () => {
    const dev = await testDevice();
    const r = { robust: false, precision: 'f32' as const, causal: false, heads: 1, reps: 1 };
    await expect(autotune(dev, { ...r, D: 16, N: 0 })).rejects.toThrow(/tune: N must be a positive integer, got 0/);
    await expect(autotune(dev, { ...r, D: 16, N: 8, reps: 0.5 })).rejects.toThrow(/tune: reps must be a positive integer/);
    await expect(autotune(dev, { ...r, D: 12, N: 8 })).rejects.toThrow(/^tune: D=12, N=8, heads 1: .*head dim/);
    await expect(autotune(dev, { ...r, D: 64, N: 1 << 20, heads: 1024 })).rejects.toThrow(/tune: N=1048576 with 1024 heads at D=64 needs 262144 MiB per tensor; this device binds at most/);
  });
});
