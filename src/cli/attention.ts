/** `flashring attention`: FlashAttention on .npy tensors. */
import { parseArgs } from 'node:util';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../errors.js';
import { acquireDevices, adapterName } from '../gpu/device.js';
import { nodeGPU } from '../gpu/node.js';
import { parseNpy, encodeNpy, NpyArray } from './npy.js';
import { attentionForward, attentionBackward, HostTensor } from '../kernels/attention.js';
import { AttentionShape } from '../shape.js';
import { PrecisionRequest } from '../kernels/common.js';

const HELP = `usage: flashring attention --q q.npy --k k.npy --v v.npy --out DIR [options]
  Tensors are [B, H, N, D] (or [H, N, D] for B = 1), float16/float32/float64, C order.
  K and V have Hkv heads; Q has Hq, a multiple of Hkv (grouped-query attention).
  Writes DIR/o.npy ([B, Hq, Nq, D]) and DIR/lse.npy ([B, Hq, Nq], f32, natural log).
options:
  --causal              causal mask (bottom-right aligned when Nq != Nk)
  --scale S             softmax scale (default 1/sqrt(D))
  --precision P         f32 | f16 | auto (default auto: f16 where the adapter has shader-f16)
  --do dO.npy           also run the backward pass; writes dq.npy, dk.npy, dv.npy
  --cp R                run as a context-parallel ring of R devices (same outputs)
  --layout L            ring sharding: contiguous | zigzag | striped (default zigzag)
  --timeline FILE       with --cp: write the ring's JSON timeline`;

async function loadTensor(path: string, name: string): Promise<{ arr: NpyArray; dims: number[] }> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (e) {
    throw new InputError(`cannot read ${name} from ${path}: ${(e as Error).message}`);
  }
  const arr = parseNpy(bytes, path);
  if (arr.shape.length !== 3 && arr.shape.length !== 4)
    throw new InputError(`${name} (${path}) has shape (${arr.shape.join(', ')}); expected [B, H, N, D] or [H, N, D]`);
  if (arr.shape.some((d) => d === 0)) throw new InputError(`${name} (${path}) is empty: shape (${arr.shape.join(', ')})`);
  const dims = arr.shape.length === 3 ? [1, ...arr.shape] : arr.shape;
  return { arr, dims };
}

/** f64 arrays become f32; f16 stays raw bits; f32 as is. */
function hostOf(a: NpyArray): HostTensor {
  return a.data instanceof Float64Array ? Float32Array.from(a.data) : a.data;
}

export function shapeFrom(q: number[], k: number[], v: number[]): AttentionShape {
  const [B, Hq, Nq, D] = q;
  const [Bk, Hkv, Nk, Dk] = k;
  if (k.join() !== v.join()) throw new InputError(`K has shape [${k}] but V has [${v}]; they must match`);
  if (Bk !== B) throw new InputError(`batch mismatch: Q has B=${B}, K/V have B=${Bk}`);
  if (Dk !== D) throw new InputError(`head dim mismatch: Q has D=${D}, K/V have D=${Dk}`);
  return { B, Hq, Hkv, Nq, Nk, D };
}

export async function attentionCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      q: { type: 'string' }, k: { type: 'string' }, v: { type: 'string' }, do: { type: 'string' },
      out: { type: 'string' }, causal: { type: 'boolean' }, scale: { type: 'string' },
      precision: { type: 'string' }, cp: { type: 'string' }, layout: { type: 'string' }, timeline: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  for (const k of ['q', 'k', 'v', 'out'] as const) if (!values[k]) throw new InputError(`--${k} is required\n${HELP}`);
  const precision = (values.precision ?? 'auto') as PrecisionRequest;
  if (!['f32', 'f16', 'auto'].includes(precision)) throw new InputError(`--precision must be f32, f16 or auto, got '${precision}'`);
  const scale = values.scale === undefined ? undefined : Number(values.scale);
  if (scale !== undefined && !Number.isFinite(scale)) throw new InputError(`--scale must be a number, got '${values.scale}'`);
  const [q, k, v] = await Promise.all([loadTensor(values.q!, 'Q'), loadTensor(values.k!, 'K'), loadTensor(values.v!, 'V')]);
  const s = shapeFrom(q.dims, k.dims, v.dims);
  const dout = values.do ? await loadTensor(values.do, 'dO') : null;
  if (dout && dout.dims.join() !== q.dims.join()) throw new InputError(`dO has shape [${dout.dims}] but Q has [${q.dims}]; they must match`);
  const opts = { causal: !!values.causal, scale, precision };
  const t = { q: hostOf(q.arr), k: hostOf(k.arr), v: hostOf(v.arr) };
  await mkdir(values.out!, { recursive: true });

  if (values.cp !== undefined) {
    const { ringCommand } = await import('./ringCli.js');
    return ringCommand(s, t, dout ? hostOf(dout.arr) : null, opts, values);
  }

  const [dev] = await acquireDevices(await nodeGPU(), 1);
  try {
    console.error(`attention ${JSON.stringify(s)} causal=${opts.causal} on ${adapterName(dev.adapter)}`);
    const t0 = performance.now();
    const fwd = await attentionForward(dev, s, t, opts);
    const t1 = performance.now();
    await writeOutputs(values.out!, s, fwd.precision, { o: fwd.o }, fwd.lse);
    let msg = `forward (${fwd.precision}) ${(t1 - t0).toFixed(1)} ms (incl. upload and readback)`;
    if (dout) {
      const bwd = await attentionBackward(dev, s, { ...t, o: fwd.o, lse: fwd.lse, dout: hostOf(dout.arr) }, opts);
      msg += `; backward ${(performance.now() - t1).toFixed(1)} ms`;
      await writeOutputs(values.out!, s, fwd.precision, { dq: bwd.dq, dk: bwd.dk, dv: bwd.dv });
    }
    console.error(`${msg}; wrote ${['o', 'lse', ...(dout ? ['dq', 'dk', 'dv'] : [])].map((n) => join(values.out!, `${n}.npy`)).join(', ')}`);
    return 0;
  } finally {
    dev.destroy();
  }
}

export async function writeOutputs(
  dir: string, s: AttentionShape, precision: 'f32' | 'f16', tensors: Record<string, HostTensor>, lse?: Float32Array,
): Promise<void> {
  const dtype = precision === 'f16' ? 'f2' : 'f4';
  for (const [name, data] of Object.entries(tensors)) {
    const heads = name === 'dk' || name === 'dv' ? s.Hkv : s.Hq;
    const n = name === 'dk' || name === 'dv' ? s.Nk : s.Nq;
    const arr: NpyArray = data instanceof Uint16Array ? { dtype: 'f2', shape: [s.B, heads, n, s.D], data } : { dtype, shape: [s.B, heads, n, s.D], data };
    await writeFile(join(dir, `${name}.npy`), encodeNpy(arr));
  }
  if (lse) await writeFile(join(dir, 'lse.npy'), encodeNpy({ dtype: 'f4', shape: [s.B, s.Hq, s.Nq], data: lse }));
}
