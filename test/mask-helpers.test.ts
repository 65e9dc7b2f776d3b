/**
 * The mask helpers the kernels classify tiles with once per block instead of per tile or per
 * entry (shaders/common.wgsl: shared_keys / all_see, rows_seeing_all, query_span of one key,
 * row_keys / class_of, and key_range itself with strided and two-run positions), run by a probe
 * kernel on random masks and checked against the TypeScript mirror's visibility (src/mask.ts),
 * entry by entry. The tensor-core kernels use some of these only on GPUs with subgroup matrices,
 * which the CPU adapter lacks: this is where CI checks them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { testDevice } from './gpu.js';
import { FlashDevice } from '../src/gpu/device.js';
import { attentionHeader, ATTENTION_HEADER_BINDINGS } from '../src/kernels/params.js';
import { attentionSource, attentionValues } from '../src/kernels/source.js';
import { bindGroup, bindingTable, pipelineLayout } from '../src/kernels/bindings.js';
import { readback, storage } from '../src/gpu/buffers.js';
import { Mask, type Positions } from '../src/mask.js';
import { AttentionOptions, AttentionShape, resolveOptions } from '../src/shape.js';

const PROBE_BINDINGS = bindingTable('maskProbe', [...ATTENTION_HEADER_BINDINGS, [1, 'items', 'read_write', 'array<vec4<u32>>']]);
/** Lengths (rows or keys) of the spans probed: 1 … L. */
const L = 6;

// One workgroup per (x, length): rows [x, x + len) and keys [x, x + len).
const PROBE = `@compute @workgroup_size(1)
fn probe(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let x = wg.x;
  let len = wg.y + 1u;
  let at = 3u * (wg.x + nwg.x * wg.y);
  let rk = row_keys(x, x + len);
  items[at] = vec4<u32>(shared_keys(x, x + len), rows_seeing_all(x, x + len));
  items[at + 1u] = vec4<u32>(query_span(x, x + 1u), key_range(x));
  items[at + 2u] = vec4<u32>(class_of(rk, x, x + len), tile_class(x, x + len, x, x + len), select(0u, 1u, rk.any), 7u);
}`;

let dev: FlashDevice;
beforeAll(async () => {
  dev = await testDevice();
});

/** The probe's answers for every x < X and length 1 … L: [shared_keys, rows_seeing_all, query_span(x, x+1), key_range(x), classes]. */
async function probe(s: AttentionShape, o: AttentionOptions, X: number): Promise<Uint32Array> {
  const types = { precision: 'f32', out: 'f32', grad: 'f32' } as const;
  const code = attentionSource(PROBE, attentionValues(8, { BR: 8, BC: 8, WG: 1, workgroupBytes: 0 }, types, false), PROBE_BINDINGS);
  const d = dev.device;
  const pipeline = d.createComputePipeline({ layout: pipelineLayout(dev, PROBE_BINDINGS), compute: { module: d.createShaderModule({ code }), entryPoint: 'probe' } });
  const temps: GPUBuffer[] = [];
  const bytes = X * L * 3 * 16;
  const items = storage(dev, bytes, 'maskProbe.items');
  const header = attentionHeader(dev, s, resolveOptions(s, o), temps);
  const enc = d.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup(dev, PROBE_BINDINGS, { ...header, items }));
  pass.dispatchWorkgroups(X, L);
  pass.end();
  d.queue.submit([enc.finish()]);
  const got = new Uint32Array(await readback(dev, items, bytes));
  for (const b of [...temps, items]) dev.tracker.destroy(b);
  return got;
}

/** A random mask: causal or not, windows, documents, and positions with strides and two runs. */
function randomCase(rand: () => number): { s: AttentionShape; o: AttentionOptions } {
  const int = (a: number, b: number) => a + Math.floor(rand() * (b - a + 1));
  const Nq = int(1, 20), Nk = int(1, 20);
  const s: AttentionShape = { B: 1, Hq: 1, Hkv: 1, Nq, Nk, D: 8 };
  const o: AttentionOptions = { causal: rand() < 0.6 };
  if (rand() < 0.5) o.window = [rand() < 0.3 ? -1 : int(0, 6), rand() < 0.5 ? -1 : int(0, 4)];
  if (rand() < 0.25 && Nq >= 2 && Nk >= 2) {
    const cut = (n: number) => [0, int(1, n - 1), n];
    o.docs = { cuQ: Int32Array.from(cut(Nq)), cuK: Int32Array.from(cut(Nk)) };
  } else if (rand() < 0.7) {
    const pos = (n: number): Positions => {
      const p: Positions = { offset: int(0, 30), stride: int(1, 3) };
      if (rand() < 0.5 && n >= 2) Object.assign(p, { split: int(1, n - 1), jump: int(0, 25) });
      return p;
    };
    o.qPos = pos(Nq);
    o.kPos = pos(Nk);
  }
  return { s, o };
}

function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('mask helpers computed once per block (common.wgsl) against the TypeScript mask, entry by entry', () => {
  it('shared_keys, rows_seeing_all, one key\'s query_span, key_range, row_keys/class_of on 40 random masks (strides, two runs, windows, documents)', async () => {
    const rand = lcg(20261203);
    for (let c = 0; c < 40; c++) {
      const { s, o } = randomCase(rand);
      const tag = `case ${c}: ${JSON.stringify({ Nq: s.Nq, Nk: s.Nk, ...o, docs: o.docs && { cuQ: [...o.docs.cuQ], cuK: [...o.docs.cuK] } })}`;
      const m = new Mask(resolveOptions(s, o), s.Nq, s.Nk);
      const X = Math.max(s.Nq, s.Nk) + 2;
      const got = await probe(s, o, X);
      const sees = (i: number, j0: number, j1: number) => { for (let j = j0; j < j1; j++) if (!m.isVisible(i, j)) return false; return true; };
      const inRange = (r: ArrayLike<number>, at: number, x: number) => x >= r[at] && x < r[at + 1];
      const classes = { skip: 0, full: 1, partial: 2 } as const;
      for (let len = 1; len <= L; len++)
        for (let x = 0; x < X; x++) {
          const at = 12 * (x + X * (len - 1)), w = `${tag} x=${x} len=${len}`;
          // shared_keys(x, x+len): all_see of every tile [j0, j1) ⇔ every row below Nq sees all of it (and some row is below Nq).
          const rows = Array.from({ length: Math.max(0, Math.min(x + len, s.Nq) - x) }, (_, k) => x + k);
          for (let j0 = 0; j0 <= s.Nk + 1; j0++)
            for (let j1 = j0 + 1; j1 <= s.Nk + 2; j1++) {
              const allSee = j0 >= got[at] && j1 <= got[at + 1];
              expect(allSee, `${w} shared_keys, tile [${j0}, ${j1})`).toBe(rows.length > 0 && rows.every((i) => sees(i, j0, j1)));
            }
          // rows_seeing_all(x, x+len): the rows that see every key of it.
          for (let i = 0; i < s.Nq; i++) expect(inRange(got, at + 2, i), `${w} rows_seeing_all, row ${i}`).toBe(sees(i, x, x + len));
          // query_span(x, x+1): the rows that see key x; key_range(x) as the mirror's.
          for (let i = 0; i < s.Nq; i++) expect(inRange(got, at + 4, i), `${w} query_span of key ${x}, row ${i}`).toBe(m.isVisible(i, x));
          expect([got[at + 6], got[at + 7]], `${w} key_range`).toEqual(m.keyRange(x));
          // class_of(row_keys(…)) is tile_class, and both are the mirror's tileClass.
          expect([got[at + 8], got[at + 9], got[at + 11]], `${w} classes`).toEqual([classes[m.tileClass(x, x + len, x, x + len)], classes[m.tileClass(x, x + len, x, x + len)], 7]);
          expect(got[at + 10], `${w} row_keys.any`).toBe(Math.min(x + len, s.Nq) > x ? 1 : 0);
        }
    }
  }, 120_000);
});
