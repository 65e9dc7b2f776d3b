/**
 * What the attention kernel modules (FlashForward, FlashBackward) share: what a built kernel is
 * (device, head dim, element types, tiles, path) and the choice of its path, with the reason
 * 'auto' fell back to the scalar kernels.
 */
import { FlashDevice } from '../gpu/device.js';
import { KernelTypes } from './precision.js';
import { TilePlan, planDeviceTiles } from './tiles.js';
import { planSgmm } from './sgmmTiles.js';
import { GridDim, KernelPath, PathRequest, checkGrid, choosePath } from './pipeline.js';
import { AttentionShape } from '../shape.js';

/** What to do where a call's rows, heads or batch pass the grid limit (GridDim.fix). */
export const GRID_FIX = {
  rows: 'split the sequence over ranks with the ring (--cp R; ringAttention)',
  heads: 'split the query heads over calls; with grouped K/V heads, repeating each K/V head so it serves fewer query heads gives the same attention in fewer heads a dispatch',
  batch: 'split the batch over calls (attentionForward and attentionBackward do so themselves)',
};

/** The dimensions every kernel of a call of shape `s` dispatches over whatever its tiles: heads and batch (a ring checks them first). */
export function shapeGrid(s: AttentionShape): GridDim[] {
  return passGrid(s, { count: 0, what: 'row blocks' }, s.Hq).slice(1);
}

/** The dispatch dimensions of a kernel's pass: its row blocks (`blocks`), `heads` heads, the batch. */
export function passGrid(s: AttentionShape, blocks: { count: number; what: string }, heads: number): GridDim[] {
  return [
    { count: blocks.count, what: blocks.what, fix: GRID_FIX.rows },
    { count: heads, what: `${heads} query heads in one dispatch`, fix: GRID_FIX.heads },
    { count: s.B, what: `${s.B} batch entries in one dispatch`, fix: GRID_FIX.batch },
  ];
}

/** A built attention kernel: device, head dim, element types, its tiles and path. */
export interface KernelInfo {
  dev: FlashDevice;
  D: number;
  types: KernelTypes;
  plan: TilePlan;
  path: KernelPath;
}

export abstract class AttentionKernel implements KernelInfo {
  readonly dev: FlashDevice;
  readonly D: number;
  readonly types: KernelTypes;
  readonly plan: TilePlan;
  readonly path: KernelPath;
  /** Why 'auto' did not take the subgroup-matrix path (null when it did or was not asked). */
  readonly fallbackReason: string | null = null;
  /** The kernel as built and cached (withFallback's copies share it): its identity, e.g. for a once-only warm-up. */
  readonly built: AttentionKernel = this;

  protected constructor(info: KernelInfo) {
    this.dev = info.dev;
    this.D = info.D;
    this.types = info.types;
    this.plan = info.plan;
    this.path = info.path;
  }

  /** The dispatch dimensions of a call of shape `s` (checkGrid). */
  abstract gridDims(s: AttentionShape): GridDim[];

  /** Throws a LimitError where a call of shape `s` would pass the device's workgroups per dimension. */
  checkGrid(s: AttentionShape): void {
    checkGrid(this.dev, this.gridDims(s));
  }

  /**
   * The kernel with `reason` as its fallback reason: a copy sharing the pipelines (the built
   * kernel is cached per device and key, so it is not changed); itself when there is none.
   */
  withFallback(reason: string | null): this {
    if (!reason) return this;
    return Object.assign(Object.create(Object.getPrototypeOf(this) as object) as this, this, { fallbackReason: reason });
  }
}

/**
 * Builds the forward or backward kernel on the path `path` asks for: 'auto' takes the
 * subgroup-matrix (tensor-core) kernels for f16 where the adapter has them and the tiles fit
 * (planSgmm), else the portable register-tiled kernels ('scalar', tiles of planDeviceTiles;
 * FLASHRING_PATH=scalar forces them), recording why (choosePath).
 */
export function chooseKernel<K extends AttentionKernel>(
  kind: 'fwd' | 'bwd', dev: FlashDevice, D: number, types: KernelTypes, path: PathRequest,
  build: (plan: TilePlan, path: KernelPath) => Promise<K>,
): Promise<K> {
  return choosePath(path, dev.tuning, kind === 'fwd' ? 'forward' : 'backward', () => planSgmm(dev, D, types.precision, kind, kind === 'fwd' && !!types.merge),
    (plan) => build(plan, 'subgroup-matrix'),
    async (reason) => (await build(planDeviceTiles(kind, D, types.precision, dev), 'scalar')).withFallback(reason));
}
