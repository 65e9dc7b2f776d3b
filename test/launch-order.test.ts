/**
 * The launch order of causal grids (a tuning's headGroup, launch_item in shaders/common.wgsl):
 * heads taking turns block by block in groups of G changes only when workgroups start, so the
 * forward, the backward and a ring give the same bits under every G, including groups that do not
 * divide the (head, batch) pairs and grids that start past block 0 (ring steps). A wrong mapping
 * (a block run twice, another never) shows up as different bits. f32 on the portable kernels; f16
 * on the tensor cores where the adapter has them. A probe kernel runs launch_item itself and checks
 * the order it gives (which no comparison of outputs can see).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, beforeAll } from 'vitest';
import { autoF16Path, testDevice, tunedDevice } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape, bits } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { attentionBackward, attentionForward, toF32 } from '../src/kernels/attention.js';
import { ATTENTION_PARAMS, HEAD_GROUP_ALL, HEAD_GROUP_MAX_KEYS, headGroup, packUniform } from '../src/kernels/params.js';
import { referenceForward } from '../src/reference/attention.js';
import { ringAttention } from '../src/cp/launch/ringAttention.js';
import { AttentionOptions, resolveOptions } from '../src/shape.js';
import { Precision } from '../src/kernels/precision.js';
import { InputError } from '../src/errors.js';
import { resolveTuning, tuningFromEnv } from '../src/kernels/tuning.js';
import { attentionSource, attentionValues } from '../src/kernels/source.js';
import { bindGroup, bindingTable, pipelineLayout } from '../src/kernels/bindings.js';
import { ATTENTION_HEADER_BINDINGS, attentionHeader } from '../src/kernels/params.js';

/** The probe's bindings: the header's and the items it writes. */
const PROBE_BINDINGS = bindingTable('probe', [...ATTENTION_HEADER_BINDINGS, [1, 'items', 'read_write', 'array<vec4<u32>>']]);
import { readback, storage, upload } from '../src/gpu/buffers.js';

let dev: FlashDevice;
beforeAll(async () => {
  dev = await testDevice();
});
/** A device whose kernels launch causal grids in groups of g heads. */
const grouped = (g: number) => tunedDevice({ headGroup: g });

describe('launch order of causal grids: the same bits under every head group', () => {
  it('FLASHRING_HEAD_GROUP reaches the uniform block; bad values are refused by name', () => {
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 8, Nk: 8, D: 8 };
    const at = ATTENTION_PARAMS.findIndex((f) => f.name === 'head_group');
    const packed = (g?: number) => new DataView(packUniform(ATTENTION_PARAMS, { s, o: resolveOptions(s, { causal: true }), accumulate: false, headGroup: g })).getUint32(4 * at, true);
    expect(packed()).toBe(HEAD_GROUP_ALL); // the default: every head in one group
    // … up to HEAD_GROUP_MAX_KEYS keys per head; longer calls keep the grid head by head.
    const long = { ...s, Nq: HEAD_GROUP_MAX_KEYS + 1, Nk: HEAD_GROUP_MAX_KEYS + 1 };
    expect(new DataView(packUniform(ATTENTION_PARAMS, { s: long, o: resolveOptions(long, { causal: true }), accumulate: false })).getUint32(4 * at, true)).toBe(1);
    const pinned = (v: string) => packed(headGroup(s, tuningFromEnv({ FLASHRING_HEAD_GROUP: v })));
    expect(pinned('1')).toBe(1);
    expect(pinned('3')).toBe(3);
    expect(pinned('all')).toBe(HEAD_GROUP_ALL);
    expect(headGroup(long, { headGroup: 5 })).toBe(5);   // a pin holds for long calls too
    for (const bad of ['0', '-2', '1.5', 'x', '70000']) {
      expect(() => tuningFromEnv({ FLASHRING_HEAD_GROUP: bad }), bad).toThrow(InputError);
      expect(() => tuningFromEnv({ FLASHRING_HEAD_GROUP: bad }), bad).toThrow(/^FLASHRING_HEAD_GROUP='/);
    }
    for (const bad of [0, 1.5, 70000]) expect(() => resolveTuning({ headGroup: bad }), String(bad)).toThrow(/^FLASHRING_HEAD_GROUP='/);
  });

  /**
   * launch_item itself (common.wgsl), run by a probe kernel over a grid of X × Y × Z workgroups:
   * what each workgroup, in launch order x + X·(y + Y·z), is given.
   */
  async function launchItems(X: number, Y: number, Z: number, G: number, causal = true): Promise<[number, number, number][]> {
    const probe = readFileSync(new URL('./fixtures/launch_probe.wgsl', import.meta.url), 'utf8');
    const types = { precision: 'f32', out: 'f32', grad: 'f32' } as const;
    const code = attentionSource(probe, attentionValues(8, { BR: 8, BC: 8, WG: 1, workgroupBytes: 0 }, types, false), PROBE_BINDINGS);
    const d = dev.device;
    const pipeline = d.createComputePipeline({ layout: pipelineLayout(dev, PROBE_BINDINGS), compute: { module: d.createShaderModule({ code }), entryPoint: 'probe' } });
    const s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq: 8, Nk: 8, D: 8 };
    const params = upload(dev, new Uint8Array(packUniform(ATTENTION_PARAMS, { s, o: resolveOptions(s, { causal }), accumulate: false, headGroup: G })), 'probe.params', GPUBufferUsage.UNIFORM);
    const out = storage(dev, X * Y * Z * 16, 'probe.items');
    // The header's documents buffer as every kernel's; its uniform block with this test's head group.
    const temps: GPUBuffer[] = [];
    const { cu } = attentionHeader(dev, s, resolveOptions(s, { causal }), temps);
    const enc = d.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup(dev, PROBE_BINDINGS, { P: params, cu, items: out }));
    pass.dispatchWorkgroups(X, Y, Z);
    pass.end();
    d.queue.submit([enc.finish()]);
    const got = new Uint32Array(await readback(dev, out, X * Y * Z * 16));
    for (const b of [params, out, ...temps]) dev.tracker.destroy(b);
    return Array.from({ length: X * Y * Z }, (_, i) => {
      expect(got[4 * i + 3], `workgroup ${i} ran`).toBe(1);
      return [got[4 * i], got[4 * i + 1], got[4 * i + 2]];
    });
  }

  it('launch_item: a bijection of the grid; in launch order, each group of G (head, batch) pairs takes turns block by block', async () => {
    for (const [X, Y, Z] of [[5, 3, 2], [4, 6, 1], [1, 4, 3], [7, 1, 1]])
      for (const G of [1, 2, 3, 4, 6, HEAD_GROUP_ALL]) {
        const items = await launchItems(X, Y, Z, G);
        const tag = `grid ${X}×${Y}×${Z} G=${G}`;
        // Every (block, head, batch) exactly once.
        const seen = new Set(items.map(([x, y, z]) => `${x},${y},${z}`));
        expect(seen.size, tag).toBe(X * Y * Z);
        for (const [x, y, z] of items) expect(x < X && y < Y && z < Z, `${tag}: (${x},${y},${z}) inside`).toBe(true);
        // The order: pairs p = y + Y·z in groups of min(G, Y·Z); a group's workgroups are
        // consecutive, block k of each of its pairs before block k + 1 of any.
        const pairs = Y * Z, g = Math.min(G, pairs);
        items.forEach(([x, y, z], lin) => {
          const p = y + Y * z, group = Math.floor(p / g), size = Math.min(g, pairs - group * g);
          const want = group * g * X + x * size + (p - group * g);
          expect(lin, `${tag}: (${x},${y},${z})`).toBe(want);
        });
      }
    // Not causal: the grid as it is, whatever G.
    const plain = await launchItems(3, 2, 2, 4, false);
    plain.forEach(([x, y, z], lin) => expect([x, y, z]).toEqual([lin % 3, Math.floor(lin / 3) % 2, Math.floor(lin / 6)]));
  });

  const paths = (): [Precision, 'subgroup-matrix' | 'scalar'][] =>
    [['f32', 'scalar'], ...(dev.hasF16 && autoF16Path(dev) === 'subgroup-matrix' ? [['f16', 'subgroup-matrix'] as [Precision, 'subgroup-matrix']] : [])];

  it('forward and backward: causal and causal with a window, GQA, two batches, uneven blocks', async () => {
    // 2 batches × 6 query heads (12 pairs for the forward and dq; single-device calls fold the K/V
    // heads into the batch, so dkdv's grid is blocks × 1 × 4): groups of 5 leave a last group of 2
    // (forward) and of 4 (dkdv: min(G, pairs)); "all" one group. The launch order itself is the
    // probe's test above; these check that every kernel takes all it owns through it.
    const s: AttentionShape = { B: 2, Hq: 6, Hkv: 2, Nq: 256, Nk: 256, D: 16 };
    for (const [p, path] of paths())
      for (const mask of [{ causal: true }, { causal: true, window: [40, 0] }] as AttentionOptions[]) {
        const x = makeInputs(s, SEED + 31);
        const run = async (on = dev) => {
          const f = await attentionForward(on, s, x, { ...mask, precision: p, path });
          const b = await attentionBackward(on, s, { ...x, o: f.o, lse: f.lse }, { ...mask, precision: p, path });
          expect(b.path).toBe(path);
          return { o: f.o, lse: f.lse, dq: b.dq, dk: b.dk, dv: b.dv };
        };
        const base = await run();
        const r = refInputs(x, p);
        const ref = referenceForward(s, r.q, r.k, r.v, mask);
        expect(err(toF32(base.o), ref.o), `${p} O`).toBeLessThanOrEqual(TOL[p].out);
        for (const g of [1, 2, 4, 5]) { // against the default, all
          const got = await run(await grouped(g));
          for (const k of ['o', 'lse', 'dq', 'dk', 'dv'] as const)
            expect(bits(got[k]).equals(bits(base[k])), `${p} ${JSON.stringify(mask)} G=${g} ${k}`).toBe(true);
        }
      }
  });

  it('a ring (steps whose grids start past block 0, accumulating backward) under every group', async () => {
    // Two K/V heads (the dkdv grid's y), 256 tokens (block counts sharing a factor with G = 2).
    const s: AttentionShape = { B: 1, Hq: 4, Hkv: 2, Nq: 256, Nk: 256, D: 8 };
    const x = makeInputs(s, SEED + 32);
    const run = (on = dev) => ringAttention([on], s, x, { scheme: 'p2p', layout: 'zigzag', precision: 'f32', ranks: 2, causal: true });
    const base = await run();
    for (const g of [1, 2, 3]) {
      const got = await run(await grouped(g));
      for (const k of ['o', 'lse', 'dq', 'dk', 'dv'] as const) expect(bits(got[k]!).equals(bits(base[k]!)), `G=${g} ${k}`).toBe(true);
    }
  });
});
