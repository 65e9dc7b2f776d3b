/**
 * The mask helpers the kernels classify tiles with once per block instead of per tile or per
 * entry (shaders/common.wgsl: shared_keys / all_see, rows_seeing_all, one key's query_span,
 * row_keys / class_of; key_range itself with strided and two-run positions), run by a probe
 * kernel on random masks. The probe evaluates the kernels' own expressions beside the per-tile and
 * per-entry forms they replaced (tile_class, visible), and the test checks both against the
 * TypeScript mirror (src/mask.ts), for rows and keys past Nq and Nk too. The tensor-core kernels
 * use some of these only on GPUs with subgroup matrices, which the CPU adapter lacks: this is
 * where CI checks them.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { testDevice } from './gpu.js';
import { FlashDevice } from '../src/gpu/device.js';
import { attentionHeader, ATTENTION_HEADER_BINDINGS } from '../src/kernels/params.js';
import { attentionSource, attentionValues } from '../src/kernels/source.js';
import { bindGroup, bindingTable, pipelineLayout } from '../src/kernels/bindings.js';
import { readback, storage } from '../src/gpu/buffers.js';
import { InputError } from '../src/errors.js';
import { Mask, POS_MAX, type Positions } from '../src/mask.js';
import { AttentionOptions, AttentionShape, resolveOptions } from '../src/shape.js';

const PROBE_BINDINGS = bindingTable('maskProbe', [...ATTENTION_HEADER_BINDINGS, [1, 'items', 'read_write', 'array<vec4<u32>>']]);
/** Lengths of the row and key spans probed: 1 … L (a tile of `len` rows against `len` keys). */
const L = 5;

// One workgroup per (x, len, z): rows [x, x + len) against keys [z, z + len); row x against key z.
//   .x  class_of(row_keys(rows), keys)             the portable forward's and dq's tile class
//   .y  tile_class(rows, keys)                     the per-tile form it replaced
//   .z  bits: 1 all_see(shared_keys(rows), keys)   the forward's and dq's full tile
//             2 dkdv's full Q tile: x + len <= Nq, rows inside rows_seeing_all(keys)
//             4 visible(x, z)                      the per-entry form
//             8 in_keys(query_span(z, z + 1), x)   dkdv's entry test (rows that see its lane's key)
//            16 in_keys(key_range(x), z)           the forward's and dq's entry test, once per row
//   .w  key_range(x).x · 65536 + key_range(x).y    (positions stay below 65536 keys here)
const PROBE = readFileSync(new URL('./fixtures/mask_probe.wgsl', import.meta.url), 'utf8');

let dev: FlashDevice;
let pipeline: GPUComputePipeline;
beforeAll(async () => {
  dev = await testDevice();
  const types = { precision: 'f32', out: 'f32', grad: 'f32' } as const;
  const code = attentionSource(PROBE, attentionValues(8, { BR: 8, BC: 8, WG: 1, workgroupBytes: 0 }, types, false), PROBE_BINDINGS);
  pipeline = dev.device.createComputePipeline({ layout: pipelineLayout(dev, PROBE_BINDINGS), compute: { module: dev.device.createShaderModule({ code }), entryPoint: 'probe' } });
});

/** The probe's items for x, z < X and len 1 … L. */
async function probe(s: AttentionShape, o: AttentionOptions, X: number): Promise<Uint32Array> {
  const d = dev.device;
  const temps: GPUBuffer[] = [];
  const bytes = X * L * X * 16;
  const items = storage(dev, bytes, 'maskProbe.items');
  const header = attentionHeader(dev, s, resolveOptions(s, o), temps);
  const enc = d.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup(dev, PROBE_BINDINGS, { ...header, items }));
  pass.dispatchWorkgroups(X, L, X);
  pass.end();
  d.queue.submit([enc.finish()]);
  const got = new Uint32Array(await readback(dev, items, bytes));
  for (const b of [...temps, items]) dev.tracker.destroy(b);
  return got;
}

/**
 * A random mask: causal or not; windows (up to POS_MAX); 1–4 documents, some empty, with the
 * default positions or with given ones (a ring's chunks); positions with strides (up to the whole
 * position range), offsets near ±POS_MAX, two runs with any split (0, inside, at or past the rows)
 * and jump (0 too).
 */
function randomCase(rand: () => number): { s: AttentionShape; o: AttentionOptions } {
  const int = (a: number, b: number) => a + Math.floor(rand() * (b - a + 1));
  const pick = <T>(xs: T[]) => xs[int(0, xs.length - 1)];
  const Nq = pick([1, 2, int(1, 24), int(1, 24)]), Nk = pick([1, 2, int(1, 24), int(1, 24)]);
  const s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq, Nk, D: 8 };
  const o: AttentionOptions = { causal: rand() < 0.6 };
  const side = () => pick([-1, int(0, 3), int(0, 12), POS_MAX]);
  if (rand() < 0.5) o.window = [side(), side()];
  const given = rand() < 0.6;
  if (given) {
    const big = rand() < 0.15;
    const wide = !big && rand() < 0.2;   // strides up to the whole position range: divisions of large distances
    const pos = (n: number): Positions => {
      const offset = big ? POS_MAX - 1 - n * 40 - int(0, 50) : pick([int(-20, 0), int(0, 40), -(POS_MAX - 1) + int(0, 50)]);
      const room = POS_MAX - 40 - Math.max(offset, 0);
      const p: Positions = { offset, stride: wide ? int(1, Math.floor(room / Math.max(1, n))) : pick([1, 1, int(2, 4)]) };
      if (rand() < 0.5) Object.assign(p, { split: pick([0, int(1, Math.max(1, n - 1)), n, n + 3]), jump: pick([0, int(1, 30)]) });
      return p;
    };
    o.qPos = pos(Nq);
    o.kPos = pos(Nk);
  }
  if (rand() < 0.35) {
    // Documents: over the whole sequence when positions are given (a ring's chunk), over the rows otherwise.
    const n = int(1, 4);
    const cut = (total: number) => {
      const inner = Array.from({ length: n - 1 }, () => int(0, total)).sort((a, b) => a - b);
      return Int32Array.from([0, ...inner, total]);
    };
    const span = (p: Positions | undefined, rows: number) => (p ? Math.max(1, p.offset + rows * p.stride + (p.jump ?? 0) + 2) : rows);
    if (!given || (o.qPos!.offset >= 0 && o.kPos!.offset >= 0 && o.qPos!.offset < 1000))
      o.docs = { cuQ: cut(span(o.qPos, Nq)), cuK: cut(span(o.kPos, Nk)) };
  }
  return { s, o };
}

function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('mask helpers computed once per block (common.wgsl) against the per-tile forms and the TypeScript mask', () => {
  it('on 200 random masks: every tile of up to 5 rows × 5 keys and every (row, key), rows and keys past Nq and Nk included', async () => {
    const rand = lcg(20261203);
    const classes = { skip: 0, full: 1, partial: 2 } as const;
    let ran = 0, docs = 0, strided = 0, twoRuns = 0, big = 0, wide = 0;
    for (let c = 0; c < 200; c++) {
      const { s, o } = randomCase(rand);
      let spec;
      try {
        spec = resolveOptions(s, o);
      } catch (e) {
        if (e instanceof InputError) continue;   // an invalid draw (positions past POS_MAX, documents not covering them)
        throw e;
      }
      ran++;
      docs += o.docs ? 1 : 0;
      strided += spec.kPos.stride > 1 ? 1 : 0;
      twoRuns += spec.kPos.jump !== undefined ? 1 : 0;
      big += Math.abs(spec.kPos.offset) > POS_MAX / 2 ? 1 : 0;
      wide += spec.kPos.stride > 1 << 20 ? 1 : 0;
      const tag = `case ${c}: ${JSON.stringify({ Nq: s.Nq, Nk: s.Nk, ...o, docs: o.docs && { cuQ: [...o.docs.cuQ], cuK: [...o.docs.cuK] } })}`;
      const m = new Mask(spec, s.Nq, s.Nk);
      const X = Math.max(s.Nq, s.Nk) + 3;
      const got = await probe(s, o, X);
      const ranges = Array.from({ length: X }, (_, i) => m.keyRange(i));
      for (let z = 0; z < X; z++)
        for (let len = 1; len <= L; len++)
          for (let x = 0; x < X; x++) {
            const at = 4 * (x + X * (len - 1 + L * z)), w = `${tag} rows [${x}, ${x + len}) keys [${z}, ${z + len})`;
            const cls = m.tileClass(x, x + len, z, z + len);
            expect([got[at], got[at + 1]], `${w}: class_of, tile_class`).toEqual([classes[cls], classes[cls]]);
            const want = (cls === 'full' ? 1 : 0) | (x + len <= s.Nq && cls === 'full' ? 2 : 0);
            expect(got[at + 2] & 3, `${w}: all_see(shared_keys), dkdv's full`).toBe(want);
            if (len === 1) {
              const v = m.isVisible(x, z) ? 1 : 0;
              expect(got[at + 2] >> 2, `${tag} row ${x} key ${z}: visible, query_span, key_range`).toBe(v * 7);
              expect(got[at + 3], `${tag} key_range(${x})`).toBe(ranges[x][0] * 65536 + ranges[x][1]);
            }
          }
    }
    // The draws reach what they are for.
    expect(ran).toBeGreaterThan(150);
    for (const [what, n] of Object.entries({ docs, strided, twoRuns, big, wide })) expect(n, what).toBeGreaterThan(5);
  }, 240_000);
});
