/**
 * The dry run: the real rank programs (src/cp/schemes) executed on dry ranks (rank/dryRank.ts)
 * over a communicator that moves nothing. It yields every rank's steps (FLOPs, bytes, messages,
 * overlap: what the link model times) and each rank's peak bytes (the ledger the buffer tracker
 * checks on a device), with no GPU: so `cp-plan`, the page's CP panel and a run's predicted lane
 * plan what the programs do, not a restatement of it. A new scheme is its rank program plus one
 * registry entry; the dry run needs nothing more.
 */
import { InputError, LimitError, internalError } from '../../errors.js';
import { FlashDevice, adapterName } from '../../gpu/device.js';
import { Precision, elemBytes } from '../../kernels/precision.js';
import { MaskOptions } from '../../mask.js';
import { AttentionShape, resolveOptions, validateShape } from '../../shape.js';
import { DryRank, ShapeRank } from '../rank/dryRank.js';
import { Rank, RankKernels } from '../rank/rank.js';
import { ShardInputs, loadShard } from '../rank/shard.js';
import { StepRecord, TimelineRecorder } from '../rank/timeline.js';
import { Problem } from '../rank/chunks.js';
import { ResolvedScheme, Scheme, resolveScheme } from '../schemes/registry.js';
import { Communicator, InProcessCommunicator } from '../transport/communicator.js';
import { Layout, Segment, shardLayout, validateRing } from '../plan/schedule.js';

/** What every ring checks before any work: the shape, R, the layout and the scheme. */
export function checkRing(s: AttentionShape, opts: { layout?: Layout; scheme?: Scheme; hierarchicalSizes?: string | number[]; qPos?: unknown; kPos?: unknown }, R: number): { R: number; layout: Layout; sch: ResolvedScheme } {
  validateShape(s);
  if ('qPos' in opts || 'kPos' in opts) throw new InputError('the ring sets token positions itself; do not pass qPos/kPos');
  if (s.Nq !== s.Nk) throw new InputError(`context parallelism splits one sequence: Nq (${s.Nq}) must equal Nk (${s.Nk})`);
  const layout = opts.layout ?? 'zigzag';
  validateRing(s.Nq, R, layout);
  return { R, layout, sch: resolveScheme(opts.scheme ?? 'p2p', R, s, opts.hierarchicalSizes) };
}

export interface DryRunRequest {
  shape: AttentionShape;
  R: number;
  /** Default zigzag (as a run). */
  layout?: Layout;
  /** Default p2p. */
  scheme?: Scheme;
  /** The scheme's sizes where it takes them (a2a+p2p: 'A,P'). */
  sizes?: string | number[];
  /** Causal, window and documents over the whole sequence (default: none). */
  mask?: MaskOptions;
  precision: Precision;
  /** Plan the backward too (default true). */
  backward?: boolean;
}

export interface DryRun {
  scheme: Scheme;
  hierarchy: [number, number];
  R: number;
  layout: Layout;
  /** Every rank's steps, forward then backward, in (step, rank) order; no times (nothing ran). */
  steps: StepRecord[];
  /** Each rank's peak bytes (the buffers its program and its shard hold at once), as its ledger counts on a device. */
  ranks: { rank: number; peakBytes: number }[];
}

/** A dry rank reads no input rows: it only counts their bytes. */
const NO_ROWS = () => {
  throw internalError('a dry rank asked for input rows (a dry run only counts their bytes)');
};

export async function dryRun(req: DryRunRequest): Promise<DryRun> {
  const { R, layout, sch } = checkRing(req.shape, { layout: req.layout, scheme: req.scheme, hierarchicalSizes: req.sizes }, req.R);
  const backward = req.backward ?? true;
  const pb: Problem = { shape: req.shape, base: resolveOptions(req.shape, req.mask), eb: elemBytes(req.precision) };
  const shards = shardLayout(req.shape.Nq, R, layout);
  const rec = new TimelineRecorder(R, sch.steps);
  // The communicator pairs every send with its receive (and checks their sizes) and moves nothing.
  const comm = InProcessCommunicator.dry(R);
  const ranks = shards.map((_, r) => new DryRank(r, comm, rec));
  await runDry(comm, ranks, pb, shards, sch, backward, req.precision);
  return {
    scheme: sch.scheme, hierarchy: sch.hierarchy, R, layout,
    steps: rec.phases().flatMap((ph) => ph.steps),
    ranks: ranks.map((c) => ({ rank: c.index, peakBytes: c.memory().peakBytes })),
  };
}

/** The rank programs, forward then backward, on dry ranks over a communicator that moves nothing. */
async function runDry(comm: Communicator, ranks: Rank[], pb: Problem, shards: Segment[][], sch: ResolvedScheme, backward: boolean, p: Precision): Promise<void> {
  const inputs: ShardInputs = { backward, rows: NO_ROWS };
  const ios = ranks.map((c) => loadShard(c, pb, shards, inputs, p));
  const kept = await allRanks(comm, ranks, (c) => sch.program.forward(c, pb, ios[c.index]));
  if (backward) await allRanks(comm, ranks, (c) => sch.program.backward(c, pb, ios[c.index], kept[c.index]));
}

/**
 * Throws the LimitError that a run would meet first at its devices' limits, before the run does
 * any GPU work (the kernels' warm-up, the shards' upload): the rank programs run dry, rank r's
 * kernels (`kernels[r]`) checking the shape of every pass its program would encode (each pair
 * of Q and K/V segments, as large as the scheme makes them: a gathered K/V, an a2a group's rows)
 * against the workgroups per dimension (checkGrid), and every buffer the pass binds against
 * maxStorageBufferBindingSize (the kernels bind whole buffers), encoding nothing; and every
 * buffer rank r's program makes (its shard, chunks, scratch) against its device's maxBufferSize.
 * A rank whose kernels are null runs dry unchecked (its messages pair with the others'): a rank
 * process checks its own rank only, on its own device, and every other process its own.
 */
export async function checkLimits(pb: Problem, shards: Segment[][], sch: ResolvedScheme, backward: boolean, p: Precision, kernels: (RankKernels | null)[]): Promise<void> {
  const comm = InProcessCommunicator.dry(shards.length);
  const rec = new TimelineRecorder(shards.length, sch.steps);
  const ranks = shards.map((_, r) => {
    const k = kernels[r];
    return k ? new ShapeRank(r, comm, rec, shapesOnly(k), (b) => checkSize(k.fwd.dev, b, 'maxBufferSize')) : new DryRank(r, comm, rec);
  });
  await runDry(comm, ranks, pb, shards, sch, backward, p);
}

/** What to do where a rank's buffer passes its device's buffer or binding size. */
const BUFFER_FIX =
  'run over more ranks (--cp R; ringAttention\'s ranks), which makes every rank\'s shard and the p2p and a2a chunks smaller, ' +
  'or give a smaller batch or fewer heads (all_gather gathers every rank\'s K/V on each rank, so more ranks do not shrink that: use p2p or a2a)';

/** Throws a LimitError naming buffer `b` (a rank's: its label starts with the rank) where it passes `dev`'s `limit`. */
function checkSize(dev: FlashDevice, b: GPUBuffer, limit: 'maxBufferSize' | 'maxStorageBufferBindingSize'): void {
  const max = dev.device.limits[limit];
  if (b.size <= max) return;
  const where = limit === 'maxBufferSize' ? '' : ' in one binding';
  throw new LimitError(`the ring's buffer ${b.label} needs ${b.size} bytes${where}; ${adapterName(dev.adapter)} allows ${max} (${limit}): ${BUFFER_FIX}`);
}

/** Kernels that check each call's grid and bound buffers (a LimitError) and encode nothing. */
function shapesOnly(k: RankKernels): RankKernels {
  const bound = (bufs: Record<string, GPUBuffer | undefined>) => {
    for (const b of Object.values(bufs)) if (b) checkSize(k.fwd.dev, b, 'maxStorageBufferBindingSize');
  };
  const check = (kernel: { checkGrid(s: AttentionShape): void }) => (_enc: unknown, b: Record<string, GPUBuffer>, s: AttentionShape) => (kernel.checkGrid(s), bound(b), { rows: [0, 0] });
  return {
    fwd: { encode: check(k.fwd) } as unknown as RankKernels['fwd'],
    // grid2D splits the merge's rows over two dimensions: only its buffers can pass a limit
    merge: {
      encodeAdd: (_enc: unknown, acc: GPUBuffer, part: GPUBuffer) => bound({ acc, part }),
      encodeFinalize: (_enc: unknown, o: GPUBuffer, lse: GPUBuffer) => bound({ o, lse }),
    } as unknown as RankKernels['merge'],
    bwd: k.bwd && ({ encode: check(k.bwd) } as unknown as RankKernels['bwd']),
  };
}

/** Runs `work` on every rank; the first failure aborts the communicator (no rank waits forever for a message). */
async function allRanks<T>(comm: Communicator, ranks: Rank[], work: (c: Rank) => Promise<T>): Promise<T[]> {
  const works = ranks.map((c) => work(c));
  works.forEach((w) => w.catch((e: Error) => comm.abort(e)));
  return Promise.all(works);
}
