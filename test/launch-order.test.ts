/**
 * The launch order of causal grids (FLASHRING_HEAD_GROUP, launch_item in shaders/common.wgsl):
 * heads taking turns block by block in groups of G changes only when workgroups start, so the
 * forward, the backward and a ring give the same bits under every G, including groups that do not
 * divide the (head, batch) pairs and grids that start past block 0 (ring steps). A wrong mapping
 * (a block run twice, another never) shows up as different bits. f32 on the portable kernels; f16
 * on the tensor cores where the adapter has them.
 */
import { describe, expect, it, beforeAll, afterEach } from 'vitest';
import { autoF16Path, testDevice } from './gpu.js';
import { makeInputs, refInputs, err, TOL, SEED, AttentionShape } from './cases.js';
import { FlashDevice } from '../src/gpu/device.js';
import { attentionBackward, attentionForward, toF32 } from '../src/kernels/attention.js';
import { ATTENTION_PARAMS, HEAD_GROUP_ALL, headGroup, packUniform } from '../src/kernels/params.js';
import { referenceForward } from '../src/reference/attention.js';
import { ringAttention } from '../src/ring/ringAttention.js';
import { AttentionOptions, resolveOptions } from '../src/shape.js';
import { Precision } from '../src/kernels/precision.js';
import { InputError } from '../src/errors.js';

let dev: FlashDevice;
beforeAll(async () => {
  dev = await testDevice();
});
const PIN = 'FLASHRING_HEAD_GROUP';
const saved = process.env[PIN];
afterEach(() => {
  if (saved === undefined) delete process.env[PIN];
  else process.env[PIN] = saved;
});
const withGroup = async <T>(g: string, f: () => Promise<T>): Promise<T> => {
  process.env[PIN] = g;
  try {
    return await f();
  } finally {
    delete process.env[PIN];
  }
};
const bits = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('launch order of causal grids: the same bits under every head group', () => {
  it('FLASHRING_HEAD_GROUP reaches the uniform block; bad values are refused by name', () => {
    delete process.env[PIN];
    const s: AttentionShape = { B: 1, Hq: 2, Hkv: 2, Nq: 8, Nk: 8, D: 8 };
    const at = ATTENTION_PARAMS.findIndex((f) => f.name === 'head_group');
    const packed = (g?: number) => new DataView(packUniform(ATTENTION_PARAMS, { s, o: resolveOptions(s, { causal: true }), accumulate: false, headGroup: g })).getUint32(4 * at, true);
    expect(packed()).toBe(1);
    process.env[PIN] = '3';
    expect(packed()).toBe(3);
    process.env[PIN] = 'all';
    expect(packed()).toBe(HEAD_GROUP_ALL);
    expect(packed(5)).toBe(5);
    for (const bad of ['0', '-2', '1.5', 'x', '70000']) {
      process.env[PIN] = bad;
      expect(() => headGroup(), bad).toThrow(InputError);
      expect(() => headGroup(), bad).toThrow(/FLASHRING_HEAD_GROUP/);
    }
  });

  const paths = (): [Precision, 'subgroup-matrix' | 'scalar'][] =>
    [['f32', 'scalar'], ...(dev.hasF16 && autoF16Path(dev) === 'subgroup-matrix' ? [['f16', 'subgroup-matrix'] as [Precision, 'subgroup-matrix']] : [])];

  it('forward and backward: causal and causal with a window, GQA, two batches, uneven blocks', async () => {
    // 2 batches × 6 query heads (12 pairs for the forward and dq, 4 K/V pairs for dkdv): groups of
    // 5 leave a last group of 2 (forward) and of 4 (dkdv: min(G, pairs)); "all" one group.
    const s: AttentionShape = { B: 2, Hq: 6, Hkv: 2, Nq: 150, Nk: 150, D: 16 };
    for (const [p, path] of paths())
      for (const mask of [{ causal: true }, { causal: true, window: [40, 0] }] as AttentionOptions[]) {
        const x = makeInputs(s, SEED + 31);
        const run = async () => {
          const f = await attentionForward(dev, s, x, { ...mask, precision: p, path });
          const b = await attentionBackward(dev, s, { ...x, o: f.o, lse: f.lse }, { ...mask, precision: p, path });
          expect(b.path).toBe(path);
          return { o: f.o, lse: f.lse, dq: b.dq, dk: b.dk, dv: b.dv };
        };
        const base = await run();
        const r = refInputs(x, p);
        const ref = referenceForward(s, r.q, r.k, r.v, mask);
        expect(err(toF32(base.o), ref.o), `${p} O`).toBeLessThanOrEqual(TOL[p].out);
        for (const g of ['2', '5', 'all']) {
          const got = await withGroup(g, run);
          for (const k of ['o', 'lse', 'dq', 'dk', 'dv'] as const)
            expect(bits(got[k]).equals(bits(base[k])), `${p} ${JSON.stringify(mask)} G=${g} ${k}`).toBe(true);
        }
      }
  });

  it('a ring (steps whose grids start past block 0, accumulating backward) under every group', async () => {
    const s: AttentionShape = { B: 1, Hq: 4, Hkv: 2, Nq: 200, Nk: 200, D: 8 };
    const x = makeInputs(s, SEED + 32);
    const run = () => ringAttention([dev], s, x, { scheme: 'p2p', layout: 'zigzag', precision: 'f32', ranks: 2, causal: true });
    const base = await run();
    for (const g of ['3', 'all']) {
      const got = await withGroup(g, run);
      for (const k of ['o', 'lse', 'dq', 'dk', 'dv'] as const) expect(bits(got[k]!).equals(bits(base[k]!)), `G=${g} ${k}`).toBe(true);
    }
  });
});
