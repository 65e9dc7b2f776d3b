/**
 * A rank's sequence shard on its rank: the inputs loaded (one buffer per segment, all heads) and
 * the outputs allocated (O = 0, LSE = −inf; dQ, dK, dV f32 with a backward). The same for a rank
 * on a device and a dry rank (which never reads the rows: it only counts their bytes).
 */
import { HostTensor } from '../../kernels/attention.js';
import { Precision } from '../../kernels/precision.js';
import { Segment } from '../plan/schedule.js';
import { Problem, RankIO } from './chunks.js';
import { Rank } from './rank.js';

export type InputName = 'q' | 'k' | 'v' | 'dout';

/** Where a rank's input rows come from. */
export interface ShardInputs {
  /** Whether there is a dO (the backward runs). */
  backward: boolean;
  /** Rows of one input at a segment's positions, [B, H, count, D], in precision p. */
  rows(name: InputName, seg: Segment, p: Precision): HostTensor;
}

export function loadShard(ctx: Rank, pb: Problem, shards: Segment[][], src: ShardInputs, p: Precision): RankIO {
  const { B, Hq, Hkv, D } = pb.shape;
  const segs = shards[ctx.index];
  const heads = (name: InputName) => (name === 'k' || name === 'v' ? Hkv : Hq);
  const up = (name: InputName) => segs.map((sg, i) => ctx.load(B * heads(name) * sg.count * D * pb.eb, () => src.rows(name, sg, p), `${name}${i}`));
  const f32 = (H: number, name: string) => segs.map((sg, i) => ctx.alloc(B * H * sg.count * D * 4, `${name}${i}`));
  const bwd = src.backward;
  return {
    rank: ctx.index, shards,
    q: up('q'), k: up('k'), v: up('v'), dout: bwd ? up('dout') : null,
    o: f32(Hq, 'o'), lse: segs.map((sg, i) => ctx.filled(B * Hq * sg.count, -Infinity, `lse${i}`)),
    dq: bwd ? f32(Hq, 'dq') : [], dk: bwd ? f32(Hkv, 'dk') : [], dv: bwd ? f32(Hkv, 'dv') : [],
  };
}
