/**
 * Host side of a context-parallel run: where a rank's input rows come from (`ShardSource`) and
 * how results come back (`RowReader`: rows at global token positions, from whichever rank holds
 * them). `ringAttention` uses whole host tensors; a scale run can generate each shard and read
 * back only sampled rows.
 */
import { InputError } from '../../errors.js';
import { FlashDevice } from '../../gpu/device.js';
import { Precision } from '../../kernels/precision.js';
import { readback } from '../../gpu/buffers.js';
import { HostTensor, toPrecision } from '../../kernels/attention.js';
import { maxFinite } from '../../kernels/stale.js';
import { AttentionShape } from '../../shape.js';
import { RankIO } from '../rank/chunks.js';
import { InputName, ShardInputs } from '../rank/shard.js';
import { Segment, pieces, shardTokens } from '../plan/schedule.js';

export interface RingInputs {
  q: HostTensor;
  k: HostTensor;
  v: HostTensor;
  /** Gradient of the loss with respect to O: runs the backward too. */
  dout?: HostTensor;
}

export type { InputName } from '../rank/shard.js';
export type OutputName = 'o' | 'lse' | 'dq' | 'dk' | 'dv';

/** Where a rank's input rows come from (rank/shard.ts), checked against the shape first. */
export interface ShardSource extends ShardInputs {
  /** Throws an InputError if the inputs do not fit the shape (called after the shape is checked). */
  check?(): void;
  /**
   * The largest finite |V| among the rows this source gives (NaN and ±Inf left out), said where
   * the shards are made from host data (hostSource computes it; a generator knows its range). With
   * RingOptions.exactMax undefined, contextParallel decides the forward's running max from it
   * (src/kernels/stale.ts needsExactMaxFor: Nk · e^8 · vMaxAbs past f32's largest). Left out: not
   * known, and an f32 run takes the exact max (never +Inf for lack of it; fewer rescales lost);
   * an f16 run's |V| ≤ 65504 never needs it.
   */
  vMaxAbs?: number;
}

/** f32 rows of an output at global token positions, [B, H, positions.length, row] (row = D, or 1 for LSE). */
export interface RowReader {
  (name: OutputName, positions: number[]): Promise<Float32Array>;
  /** Every token position in the order the ranks store them (the cheapest order to read). */
  order: number[];
}

/** Rows of a [B, H, N, D] tensor at the given token positions → [B, H, n, D]. */
export function gather(x: HostTensor, B: number, H: number, N: number, D: number, seg: Segment): HostTensor {
  const out = new (x.constructor as { new (n: number): HostTensor })(B * H * seg.count * D);
  const pos = shardTokens([seg]);
  for (let bh = 0; bh < B * H; bh++)
    for (let i = 0; i < seg.count; i++) {
      const src = (bh * N + pos[i]) * D;
      out.set(x.subarray(src, src + D), (bh * seg.count + i) * D);
    }
  return out;
}

export function hostSource(s: AttentionShape, t: RingInputs): ShardSource {
  const { B, Hq, Hkv, Nq: N, D } = s;
  const heads: Record<InputName, number> = { q: Hq, k: Hkv, v: Hkv, dout: Hq };
  const check = () => {
    for (const name of ['q', 'k', 'v', 'dout'] as const) {
      const x = t[name];
      if (x && x.length !== B * heads[name] * N * D)
        throw new InputError(`${name === 'dout' ? 'dO' : name.toUpperCase()} has ${x.length} elements; shape [${B},${heads[name]},${N},${D}] needs ${B * heads[name] * N * D}`);
    }
  };
  const cache = new Map<string, HostTensor>();
  const conv = (name: InputName, p: Precision) => {
    const key = `${name}:${p}`;
    if (!cache.has(key)) cache.set(key, toPrecision(t[name]!, p));
    return cache.get(key)!;
  };
  return {
    backward: !!t.dout, check, rows: (name, seg, p) => gather(conv(name, p), B, heads[name], N, D, seg),
    // Scanned when asked (a run given exactMax never asks), once. A V that is not f32 or f16 data is check's InputError: unknown here.
    get vMaxAbs() {
      const v = t.v instanceof Float32Array || t.v instanceof Uint16Array ? maxFinite(t.v) : undefined;
      Object.defineProperty(this, 'vMaxAbs', { value: v });
      return v;
    },
  };
}

/** Reads rows from the ranks' output buffers: per (b, h), one readback per run of consecutive local rows. */
export function rowReader(s: AttentionShape, shards: Segment[][], devOf: (rank: number) => FlashDevice, ios: RankIO[]): RowReader {
  return segmentReader(s, shards, async (r, name, i, offset, bytes) => new Float32Array(await readback(devOf(r), ios[r][name][i], bytes, offset)));
}

/**
 * Bytes [offset, offset + bytes) of rank r's segment i of an output ([B, H, count, row] f32), from
 * wherever the ranks keep them (their GPU buffers, or host copies a rank process sent back).
 */
export type SegmentBytes = (r: number, name: OutputName, i: number, offset: number, bytes: number) => Promise<Float32Array>;

/** A RowReader over the ranks' segments: per (b, h), one fetch per run of consecutive local rows. */
export function segmentReader(s: AttentionShape, shards: Segment[][], fetch: SegmentBytes): RowReader {
  const where = (p: number) => {
    for (let r = 0; r < shards.length; r++)
      for (const [i, sg] of shards[r].entries())
        for (const pc of pieces(sg)) {
          const k = (p - pc.offset) / pc.stride;
          if (Number.isInteger(k) && k >= 0 && k < pc.count) return { r, i, k: pc.row0 + k, count: sg.count };
        }
    throw new InputError(`token position ${p} is outside the sequence (N=${s.Nq})`);
  };
  const read = async (name: OutputName, positions: number[]) => {
    const H = name === 'dk' || name === 'dv' ? s.Hkv : s.Hq, row = name === 'lse' ? 1 : s.D;
    const out = new Float32Array(s.B * H * positions.length * row);
    const at = positions.map(where);
    for (let j = 0; j < at.length; ) {
      let n = 1;
      while (j + n < at.length && at[j + n].r === at[j].r && at[j + n].i === at[j].i && at[j + n].k === at[j].k + n) n++;
      const { r, i, k, count } = at[j];
      // A whole segment comes back in one fetch; part of one, per (b, h).
      const whole = n === count ? await fetch(r, name, i, 0, s.B * H * count * row * 4) : null;
      for (let bh = 0; bh < s.B * H; bh++) {
        const rows = whole ? whole.subarray(bh * count * row, (bh + 1) * count * row)
          : await fetch(r, name, i, (bh * count + k) * row * 4, n * row * 4);
        out.set(rows, (bh * positions.length + j) * row);
      }
      j += n;
    }
    return out;
  };
  return Object.assign(read, { order: shards.flatMap((sh) => shardTokens(sh)) });
}

/** The outputs of a run read back to the host, f32, in [B, H, N, D] (LSE [B, H, N]) order. */
export type HostOutputs = Awaited<ReturnType<typeof readAll>>;

/** Every output at every position, in global token order. */
export async function readAll(s: AttentionShape, read: RowReader, backward: boolean) {
  const get = async (name: OutputName) => {
    const H = name === 'dk' || name === 'dv' ? s.Hkv : s.Hq, row = name === 'lse' ? 1 : s.D, n = read.order.length;
    const got = await read(name, read.order), out = new Float32Array(got.length);
    for (let bh = 0; bh < s.B * H; bh++)
      read.order.forEach((p, j) => out.set(got.subarray((bh * n + j) * row, (bh * n + j + 1) * row), (bh * s.Nq + p) * row));
    return out;
  };
  const grads = backward ? { dq: await get('dq'), dk: await get('dk'), dv: await get('dv') } : null;
  return { o: await get('o'), lse: await get('lse'), grads };
}
