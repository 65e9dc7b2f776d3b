/** `flashring attention`: FlashAttention on .npy tensors. */
import { open, FileHandle } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { InputError, NpyError } from '../errors.js';
import { acquireDevices, adapterName } from '../gpu/device.js';
import { nodeGPU, robustShaders } from '../gpu/node.js';
import { NpyArray, NpyDtype, NpyHeader, NpyInt32, readNpyData, readNpyHeader } from './npy.js';
import { attentionForward, attentionBackward, checkHalfRange, HostTensor } from '../kernels/attention.js';
import { AttentionShape, F32_MAX, F32_MIN_NORMAL, validateShape } from '../shape.js';
import { toHalfArray } from '../f16.js';
import { Documents, checkDocuments } from '../mask.js';
import { Precision, PrecisionRequest, precisionRequest } from '../kernels/precision.js';
import { numberArg, parseCommand } from './args.js';
import { DECIMAL } from '../decimal.js';
import { counted } from '../plural.js';
import { checkInputFile, checkNamed, checkRooms, InputPath, MAX_BINARY_BYTES, OUTPUT_KINDS, OutputPlan, RoomNeed } from './files.js';
import { OUTPUT_NAMES, RUN_RECORD, RunAbout, devicePrecision, noteStaleOutputs, outputSizes, outputFiles, recordLists } from './outputs.js';
import { timelineBound } from './timelineBound.js';
import { countNonFinite, inputNote, NonFinite, outputBadRows, outputNote } from './nonFinite.js';
import { timedPhase } from './progress.js';
import { RING_OPTIONS, RingArgs, checkRingArgs, parseRingArgs } from './ringArgs.js';
import { resolveScheme, schemeDefs } from '../cp/schemes/registry.js';

/** The help (a function: it lists the registry's schemes as they are when asked). */
const help = () => `usage: flashring attention --q q.npy --k k.npy --v v.npy --out DIR [options]
  Tensors are [B, H, N, D] (or [H, N, D] for B = 1), float16/float32/float64, C order.
  K and V have Hkv heads; Q has Hq, a multiple of Hkv (grouped-query attention).
  Writes DIR/o.npy ([B, Hq, Nq, D]) and DIR/lse.npy ([B, Hq, Nq], f32, natural log); [Hq, Nq, D]
  and [Hq, Nq] where every input is [H, N, D]; and
  DIR/flashring-run.json, the record of what it wrote (a later run overwrites only what it lists).
options:
  --causal              causal mask (bottom-right aligned when Nq != Nk)
  --window L,R          sliding window as FlashAttention-2's window_size: query i sees keys
                        i-L .. i+R (bottom-right aligned); -1 = unbounded on that side
  --cu-seqlens cu.npy   packed documents ([1, H, total, D]; with B > 1 every batch entry takes the
                        same documents): int32 cumulative lengths, docs+1
                        entries from 0 to total (int64, np.cumsum's default, is read where every
                        value fits int32); a query sees only keys of its own document
                        (causal and window apply inside each document)
  --cu-seqlens-q a.npy --cu-seqlens-k b.npy   the same with different Q and K/V document lengths
                        (each document aligned bottom-right, as flash_attn_varlen_func)
  --scale S             softmax scale, a positive number (default 1/sqrt(D))
  --precision P         f32 | f16 | auto (default auto: the inputs' dtype. float32 in, f32
                        computed and written; float16 in, f16 where the adapter (with --cp,
                        every rank's) has shader-f16, else f32 with a note; float64 in, f32
                        with a note, a value beyond float32's range an error). f16 must be
                        asked for to round f32 data; a value beyond float16's range is then
                        an error
  --do dO.npy           also run the backward pass; writes dq.npy, dk.npy, dv.npy
  --cp R                run context-parallel over R ranks (same outputs; 1..64, at most N)
  --cp-comm-type T      with --cp: ${schemeDefs().map((d) => d.name).join(' | ')} (default p2p; flashring cp-plan --help says what each does)
  --hierarchical-context-parallel-sizes A,P   with a2a+p2p: a2a group size × ring size = R (default:
                        the largest group A below R that divides R and the heads, with a note)
  --cp-mode M           one-device (default: the R ranks share one GPU, each step timed alone)
                        | multi-adapter (one device per adapter, transfers through host staging)
                        | processes (one process per rank, transfers through the parent: the mode
                        for several identical GPUs, which one process cannot tell apart)
  --gpu-per-rank        with --cp-mode processes: rank r's process sees only GPU r (needs root:
                        scripts/only-gpu.sh)
  --pipelined           with --cp-mode one-device: submit the ranks' steps without waiting for
                        each, so the GPU runs them back to back at its full clock (steady kernel
                        times; the measured wall times become submission times)
  --layout L            with --cp: sharding contiguous | zigzag | striped (default zigzag)
  --link L              with --cp: predict the run on R real GPUs joined by nvlink-h200 | pcie5 |
                        ib-ndr | custom (with both --link-gbps G, per direction, 1e-6 to 1e6
                        Gbit/s, and --link-latency-us U, 0 to 1e9 µs); prints the predicted step
                        time, comm fraction and TFLOP/s per GPU (the per-step timeline goes into
                        --timeline)
  --compute-tflops X    with --link: predict with kernels at X TFLOP/s (up to 1e7) instead of the measured ones
  --timeline FILE       with --cp: write the JSON timeline (measured, and predicted with --link)
  --force               overwrite existing files at the output paths even when they are not this
                        command's earlier output (without it: an existing DIR/o.npy … that
                        DIR/flashring-run.json does not list, or a --timeline file that is not a
                        flashring timeline, is refused)
Every value is checked before any GPU work; outputs appear only when the whole run succeeded.`;

const OPTIONS = {
  q: { type: 'string' }, k: { type: 'string' }, v: { type: 'string' }, do: { type: 'string' },
  out: { type: 'string' }, force: { type: 'boolean' }, causal: { type: 'boolean' }, scale: { type: 'string' },
  window: { type: 'string' }, 'cu-seqlens': { type: 'string' }, 'cu-seqlens-q': { type: 'string' }, 'cu-seqlens-k': { type: 'string' },
  precision: { type: 'string' }, ...RING_OPTIONS,
  help: { type: 'boolean', short: 'h' },
} as const;

/** An input read: its data, and its NaN and ±Inf counted as it was read (inputNote says them). */
interface Tensor { name: string; path: string; arr: NpyArray; dims: number[]; nonFinite: NonFinite }

/** The command line, every value checked (nothing read or written yet). */
export interface AttentionArgs {
  files: { q: string; k: string; v: string; do?: string };
  out: string;
  /** --force: overwrite existing files at the output paths whatever they hold. */
  force: boolean;
  causal: boolean;
  window?: [number, number];
  /** cu_seqlens files: one for Q and K/V, or one each. */
  cuSeqlens?: { q: string; k: string; same: boolean };
  scale?: number;
  precision: PrecisionRequest;
  ring: RingArgs | null;
}

export function parseAttentionArgs(argv: string[]): AttentionArgs | null {
  const { values } = parseCommand('attention', argv, OPTIONS);
  if (values.help) return null;
  for (const k of ['q', 'k', 'v', 'out'] as const) {
    if (values[k] === undefined) throw new InputError(`--${k} is required (see flashring attention --help)`);
    checkNamed(k, values[k], k === 'out' ? 'a folder' : 'a file');
  }
  checkNamed('do', values.do);
  const precision = precisionRequest(values.precision ?? 'auto', '--precision');
  const scale = values.scale === undefined ? undefined : numberArg('scale', values.scale, { min: F32_MIN_NORMAL, max: F32_MAX, what: `a positive number within float32's range, ${F32_MIN_NORMAL.toPrecision(3)} to ${F32_MAX.toPrecision(3)} (e.g. 0.125)` });
  const window = values.window === undefined ? undefined : parseWindow(values.window);
  const cuSeqlens = parseCuSeqlensFlags(values['cu-seqlens'], values['cu-seqlens-q'], values['cu-seqlens-k']);
  return {
    ...(window ? { window } : {}), ...(cuSeqlens ? { cuSeqlens } : {}),
    files: { q: values.q!, k: values.k!, v: values.v!, ...(values.do !== undefined ? { do: values.do } : {}) },
    out: values.out!, force: !!values.force, causal: !!values.causal, scale, precision,
    ring: parseRingArgs(values),
  };
}

/** --window L,R: two integers, each >= -1 (FlashAttention-2's window_size), written as every integer flag takes them (DECIMAL: 1e3 too). */
function parseWindow(raw: string): [number, number] {
  const parts = raw.split(',').map((x) => x.trim());
  const w = parts.map((x) => (DECIMAL.test(x) ? Number(x) : NaN));
  if (w.length !== 2 || !w.every((x) => Number.isInteger(x) || Math.abs(x) === Infinity)) throw new InputError(`--window must be two integers L,R (e.g. 128,0; -1 = unbounded), got '${raw}'`);
  w.forEach((x, i) => {
    if (x < -1) throw new InputError(`--window ${i ? 'right' : 'left'} value ${parts[i]} is below -1 (-1 = unbounded), in '${raw}'`);
    if (!Number.isSafeInteger(x)) throw new InputError(`--window value ${parts[i]} is too large, in '${raw}'`);
  });
  return w as [number, number];
}

function parseCuSeqlensFlags(both?: string, q?: string, k?: string): AttentionArgs['cuSeqlens'] {
  for (const [flag, v] of [['cu-seqlens', both], ['cu-seqlens-q', q], ['cu-seqlens-k', k]] as const)
    checkNamed(flag, v);
  if (both !== undefined && (q !== undefined || k !== undefined))
    throw new InputError('--cu-seqlens names the documents of Q and K/V alike; do not also give --cu-seqlens-q/--cu-seqlens-k');
  if ((q === undefined) !== (k === undefined))
    throw new InputError(`--cu-seqlens-${q === undefined ? 'q' : 'k'} is missing: give both --cu-seqlens-q and --cu-seqlens-k (or one --cu-seqlens)`);
  if (both !== undefined) return { q: both, k: both, same: true };
  return q !== undefined ? { q, k: k!, same: false } : undefined;
}

/** An input opened and its .npy header read and checked (dtype, shape, the file's size); its data not yet read. */
interface Opened<H> { path: string; file: FileHandle; header: H }

/** A failure to open or read input `name` at `path`, as one line (an NpyError as it is). */
function cannotRead(e: unknown, name: string, path: string): unknown {
  if (e instanceof NpyError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  return new InputError(`cannot read ${name} from ${path}: ${code === 'ENOENT' ? 'no such file' : (e as Error).message.split('\n')[0]}`);
}

/**
 * Opens input `name` at `path` (its handle added to `handles`: the caller closes them) and reads its header
 * only, by `header` (which checks the data's length by the file's size): nothing of the data is read.
 */
async function openInput<H>(path: string, name: string, handles: FileHandle[], header: (f: FileHandle, size: number) => Promise<H>): Promise<Opened<H>> {
  // before a byte is read: /dev/zero, a FIFO, a folder (flag: --q, --do, --cu-seqlens)
  await checkInputFile(name.toLowerCase(), path, MAX_BINARY_BYTES, false, () => tooLargeFix(name.toLowerCase(), path));
  try {
    const file = await open(path, 'r');
    handles.push(file);
    return { path, file, header: await header(file, (await file.stat()).size) };
  } catch (e) {
    throw cannotRead(e, name, path);
  }
}

/** The data of an opened input, read once (by `read`) into its typed array. */
async function readInput<H, T>(o: Opened<H>, name: string, read: (f: FileHandle, h: H) => Promise<T>): Promise<T> {
  try {
    return await read(o.file, o.header);
  } catch (e) {
    throw cannotRead(e, name, o.path);
  }
}

/**
 * What to do with an input past MAX_BINARY_BYTES (what Node reads into one buffer; GPUs bind no more in one tensor
 * either, the H200 under Dawn 2147483644 bytes), fit to the file (tensorFix); a cu_seqlens that large is no cu_seqlens.
 */
async function tooLargeFix(flag: string, path: string): Promise<string> {
  if (flag.startsWith('cu-seqlens')) return ': cu_seqlens holds one int32 a document and one more (4 MiB for a million documents), so a file this large is not one: check the path';
  let header: NpyHeader<NpyDtype> | null = null;
  try {
    const file = await open(path, 'r');
    try {
      header = await readNpyHeader(file, (await file.stat()).size, path, 'float');
    } finally {
      await file.close();
    }
  } catch { /* not a .npy header we read: the general advice */ }
  return tensorFix(header);
}

/** The dtypes a tensor may be saved in, with their bytes an element. */
const NARROWER = [['float32', 4], ['float16', 2]] as const;

/**
 * What brings a tensor file of header `h` within MAX_BINARY_BYTES: a narrower dtype where its values are wider than
 * float16 and the file would then fit (float64 as float32 only where that fits), parts along the batch or the heads
 * where it has more than one (batch, head); a single head that fits neither way is said to be too long. A header
 * that could not be read is taken as float32's of several heads; a shape no tensor has is said.
 */
function tensorFix(h: NpyHeader<NpyDtype> | null): string {
  const split = 'split it along the batch or the heads (attention is independent across both) and run each part';
  if (!h) return `: save it in float16 (half the bytes), or ${split}`;
  if (h.shape.length !== 3 && h.shape.length !== 4) return `: its shape (${h.shape.join(', ')}) is no tensor attention takes ([B, H, N, D] or [H, N, D]): check the path`;
  const count = h.shape.reduce((a, b) => a * b, 1), item = h.dataBytes / count;
  const narrower = NARROWER.filter(([, bytes]) => bytes < item && h.dataStart + count * bytes <= MAX_BINARY_BYTES);
  // float32 → float16: 'half the bytes'; float64 → 'a half or a quarter of the bytes', or 'a quarter' where float32 would not fit.
  const fraction = narrower.length === 1 && item === 4 ? 'half the bytes' : `${narrower.map(([, b]) => (item / b === 2 ? 'a half' : 'a quarter')).join(' or ')} of the bytes`;
  const why = h.dtype === 'f8' ? ': float64 is computed in f32 anyway' : '';
  const save = narrower.length ? [`save it in ${narrower.map(([name]) => name).join(' or ')} (${fraction}${why})`] : [];
  const heads = h.shape.slice(0, -2).reduce((a, b) => a * b, 1);
  const fixes = [...save, ...(heads > 1 ? [split] : [])];
  if (fixes.length) return `: ${fixes.join(', or ')}`;
  const [N, D] = h.shape.slice(-2);
  return `: it is a single head (B = H = 1) of ${N} tokens at D = ${D}, past that bound even in float16, and there is no batch or head to split it along: attention cannot read a sequence this long from one file`;
}

/** Every file this run reads, by flag. */
function inputsOf(a: AttentionArgs): InputPath[] {
  const f = a.files;
  return [
    { flag: 'q', path: f.q }, { flag: 'k', path: f.k }, { flag: 'v', path: f.v }, ...(f.do !== undefined ? [{ flag: 'do', path: f.do }] : []),
    ...(a.cuSeqlens ? (a.cuSeqlens.same ? [{ flag: 'cu-seqlens', path: a.cuSeqlens.q }] : [{ flag: 'cu-seqlens-q', path: a.cuSeqlens.q }, { flag: 'cu-seqlens-k', path: a.cuSeqlens.k }]) : []),
  ];
}

/** The names a run writes into --out. */

/** --out and --timeline, resolved and checked against the inputs and each other before any work. */
function planOutputs(a: AttentionArgs): Promise<OutputPlan> {
  const names = a.files.do !== undefined ? OUTPUT_NAMES : OUTPUT_NAMES.slice(0, 2);
  const tl = a.ring?.timeline;
  return OutputPlan.make(inputsOf(a), [
    { flag: 'out', path: a.out, kind: 'dir', names: [...names, RUN_RECORD], manifest: { name: RUN_RECORD, lists: recordLists } },
    ...(tl !== undefined ? [{ flag: 'timeline', path: tl, kind: 'file' as const, ...OUTPUT_KINDS.timeline }] : []),
  ], { force: a.force });
}

type CuHeads = { q: Opened<NpyHeader<NpyInt32>>; k: Opened<NpyHeader<NpyInt32>> };

/**
 * The headers of a packed run's cu_seqlens: int32 (or int64, its values checked to fit int32 as its data is
 * read), 1-D. Any B: every batch entry takes the same documents, as the library and the ring. Their data is
 * read by loadDocuments. One --cu-seqlens for Q and K/V of different lengths is refused first: its last entry
 * cannot be both totals.
 */
async function documentHeads(c: NonNullable<AttentionArgs['cuSeqlens']>, s: AttentionShape, handles: FileHandle[]): Promise<CuHeads> {
  if (c.same && s.Nq !== s.Nk)
    throw new InputError(`--cu-seqlens ${c.q} gives Q and K/V the same documents, but Q has ${s.Nq} tokens and K/V have ${s.Nk}: give each its own, --cu-seqlens-q (ending at ${s.Nq}) and --cu-seqlens-k (ending at ${s.Nk})`);
  const head = async (path: string, flag: string) => {
    const o = await openInput(path, flag, handles, (f, size) => readNpyHeader(f, size, path, 'int32'));
    if (o.header.shape.length !== 1) throw new InputError(`--${flag} ${path} has shape (${o.header.shape.join(', ')}); cu_seqlens is 1-D (documents + 1 entries)`);
    return o;
  };
  const q = await head(c.q, c.same ? 'cu-seqlens' : 'cu-seqlens-q');
  const k = c.same ? q : await head(c.k, 'cu-seqlens-k');
  return { q, k };
}

/**
 * The documents of a packed run, checked against the shape: from 0, never decreasing, ending at the
 * total lengths, as many for Q as for K/V.
 */
async function loadDocuments(c: NonNullable<AttentionArgs['cuSeqlens']>, heads: CuHeads, s: AttentionShape): Promise<Documents> {
  const load = (o: Opened<NpyHeader<NpyInt32>>, flag: string) => readInput(o, flag, (f, h) => readNpyData(f, h, o.path));
  const cuQ = await load(heads.q, c.same ? 'cu-seqlens' : 'cu-seqlens-q');
  const cuK = c.same ? cuQ : await load(heads.k, 'cu-seqlens-k');
  const flagOf = (msg: string) => (c.same ? `--cu-seqlens ${c.q}` : msg.startsWith('cu_seqlens_k') ? `--cu-seqlens-k ${c.k}` : `--cu-seqlens-q ${c.q}`);
  try {
    // One file for Q and K/V (documentHeads refused Nq ≠ Nk): named as the flag given, not as its Q side.
    checkDocuments({ cuQ, cuK }, s.Nq, s.Nk, c.same ? { q: 'cu_seqlens', k: 'cu_seqlens' } : undefined);
  } catch (e) {
    if (e instanceof InputError) throw new InputError(`${flagOf(e.message)}: ${e.message}`);
    throw e;
  }
  return { cuQ, cuK };
}

/** A tensor whose header was read and checked ([B, H, N, D] or [H, N, D], nothing empty); its data not yet read. */
interface TensorHead { name: string; path: string; o: Opened<NpyHeader<NpyDtype>>; dims: number[] }

async function tensorHead(path: string, name: string, handles: FileHandle[]): Promise<TensorHead> {
  const o = await openInput(path, name, handles, (f, size) => readNpyHeader(f, size, path, 'float'));
  const shape = o.header.shape;
  if (shape.length !== 3 && shape.length !== 4)
    throw new InputError(`${name} (${path}) has shape (${shape.join(', ')}); expected [B, H, N, D] or [H, N, D]`);
  if (shape.some((d) => d === 0)) throw new InputError(`${name} (${path}) is empty: shape (${shape.join(', ')})`);
  return { name, path, o, dims: shape.length === 3 ? [1, ...shape] : shape };
}

async function loadTensor(t: TensorHead): Promise<Tensor> {
  const data = await readInput(t.o, t.name, (f, h) => readNpyData(f, h, t.path));
  return { name: t.name, path: t.path, arr: { dtype: t.o.header.dtype, shape: t.o.header.shape, data }, dims: t.dims, nonFinite: countNonFinite(data) };
}

/**
 * Every input's header read and checked, and the shapes checked against each other and the bounds (the
 * kernels' head dims, the ring's), before any data is read; then each file's data, read once.
 */
async function loadInputs(a: AttentionArgs) {
  const handles: FileHandle[] = [];
  try {
    const heads = await Promise.allSettled([tensorHead(a.files.q, 'Q', handles), tensorHead(a.files.k, 'K', handles), tensorHead(a.files.v, 'V', handles)]);
    const bad = heads.find((h) => h.status === 'rejected');
    if (bad) throw bad.reason;
    const [qh, kh, vh] = heads.map((h) => (h as PromiseFulfilledResult<TensorHead>).value);
    const s = shapeFrom(qh, kh, vh);
    validateShape(s); // head dims the kernels take: before any device is acquired
    const doh = a.files.do !== undefined ? await tensorHead(a.files.do, 'dO', handles) : null;
    if (doh && doh.dims.join() !== qh.dims.join()) throw new InputError(`dO has shape ${shapeOf(doh)} but Q has ${shapeOf(qh)}; they must match`);
    const cu = a.cuSeqlens ? await documentHeads(a.cuSeqlens, s, handles) : null;
    const ring = a.ring ? checkRingArgs(a.ring, s) : null;
    const [q, k, v, dout] = await Promise.all([qh, kh, vh, doh].map((t) => t && loadTensor(t)));
    const docs = cu ? await loadDocuments(a.cuSeqlens!, cu, s) : null;
    return { q: q!, k: k!, v: v!, dout, s, docs, ring };
  } finally {
    await Promise.all(handles.map((f) => f.close().catch(() => {})));
  }
}

/**
 * A tensor's data as the kernels take it: f64 becomes f32, where a finite value beyond float32's range is an
 * InputError naming it (it would become ±Inf, and its rows NaN, as --precision f16 refuses beyond float16's
 * range), or with precision f16 f16 bits rounded once from the f64 values (through f32 a value near a midpoint
 * of two halves could round twice; requestedPrecision has checked float16's range); f16 stays raw bits; f32 as is.
 */
function hostOf(t: Tensor, p: Precision): HostTensor {
  const a = t.arr.data;
  if (!(a instanceof Float64Array)) return a;
  if (p === 'f16') return toHalfArray(a);
  const out = Float32Array.from(a);
  for (let i = 0; i < out.length; i++)
    if (!Number.isFinite(out[i]) && Number.isFinite(a[i]))
      throw new InputError(`${t.name} (${t.path}) holds ${a[i]} (element ${i}), beyond float32's range (±${F32_MAX.toPrecision(5)}): float64 inputs are computed in f32; rescale the input`);
  return out;
}

/** A tensor's shape as its file gives it, and, for an [H, N, D] file, the [B, H, N, D] it is read as. */
function shapeOf(t: TensorHead): string {
  const given = t.o.header.shape;
  return given.length === 3 ? `[${given}] ([H, N, D], read as [${t.dims}])` : `[${given}]`;
}

function shapeFrom(qh: TensorHead, kh: TensorHead, vh: TensorHead): AttentionShape {
  const [B, Hq, Nq, D] = qh.dims;
  const [Bk, Hkv, Nk, Dk] = kh.dims;
  const oneBatch = (t: TensorHead) => (t.o.header.shape.length === 3 ? ' (an [H, N, D] file is B = 1)' : '');
  if (kh.dims.join() !== vh.dims.join()) throw new InputError(`K has shape ${shapeOf(kh)} but V has ${shapeOf(vh)}; they must match`);
  if (Bk !== B) throw new InputError(`batch mismatch: Q has B=${B}${oneBatch(qh)}, K/V have B=${Bk}${oneBatch(kh)}`);
  if (Dk !== D) throw new InputError(`head dim mismatch: Q has D=${D}, K/V have D=${Dk}`);
  if (Hq % Hkv !== 0) throw new InputError(`Q has ${counted(Hq, 'head')}, not a multiple of K/V's ${Hkv} (grouped-query attention)`);
  return { B, Hq, Hkv, Nq, Nk, D };
}

/**
 * The precision before any device is seen: 'auto' is the inputs' dtype (all float16 → f16, else
 * f32); f16 asked for with wider inputs checks each value fits float16. Its notes are returned, for stderr
 * once the inputs have passed every check (a refused input is one line, with no note of a run that will not happen).
 */
function requestedPrecision(req: AttentionArgs['precision'], tensors: Tensor[]): { precision: Precision; notes: string[] } {
  const notes: string[] = [];
  const wide = tensors.filter((t) => t.arr.dtype === 'f8');
  if (req === 'f16') {
    for (const t of tensors) if (t.arr.dtype !== 'f2') checkHalfRange(`${t.name} (${t.path})`, t.arr.data);
    return { precision: 'f16', notes };
  }
  if (wide.length) notes.push(`note: ${wide.map((t) => t.name).join(', ')} ${wide.length > 1 ? 'are' : 'is'} float64; computing in f32 and writing float32`);
  if (req === 'f32') return { precision: 'f32', notes };
  const half = tensors.filter((t) => t.arr.dtype === 'f2');
  if (half.length === tensors.length) return { precision: 'f16', notes };
  // Mixed float16 and wider inputs: the wider data is not rounded unasked, so all of it runs in f32.
  if (half.length) {
    const names = (ts: Tensor[]) => ts.map((t) => t.name).join(', ');
    const rest = tensors.filter((t) => t.arr.dtype !== 'f2');
    notes.push(`note: ${names(half)} ${half.length > 1 ? 'are' : 'is'} float16 but ${names(rest)} ${rest.length > 1 ? 'are' : 'is'} not; computing in f32 and writing float32 (--precision f16 computes in f16)`);
  }
  return { precision: 'f32', notes };
}

/**
 * What made this run's outputs, for its record (RunAbout): the inputs as absolute paths (cu_seqlens files among them),
 * the mask, the scale the kernels use (1/√D unless --scale), the precision asked for, and the ring's settings.
 */
function runAbout(a: AttentionArgs, s: AttentionShape, docs: Documents | null): RunAbout {
  const cu = a.cuSeqlens ? (a.cuSeqlens.same ? { cuSeqlens: a.cuSeqlens.q } : { cuSeqlensQ: a.cuSeqlens.q, cuSeqlensK: a.cuSeqlens.k }) : {};
  const paths: Record<string, string | undefined> = { ...a.files, ...cu };
  const r = a.ring;
  return {
    inputs: Object.fromEntries(Object.entries(paths).flatMap(([k, p]) => (p === undefined ? [] : [[k, resolve(p)]]))),
    causal: a.causal, window: a.window ?? null, documents: docs ? docs.cuQ.length - 1 : null,
    scale: a.scale ?? 1 / Math.sqrt(s.D), precisionRequest: a.precision,
    ring: r && {
      ranks: r.R, scheme: r.scheme, layout: r.layout, mode: r.mode, ...(r.hierarchicalSizes !== undefined ? { hierarchicalSizes: r.hierarchicalSizes } : {}),
      ...(r.pipelined ? { pipelined: true } : {}), ...(r.gpuPerRank ? { gpuPerRank: true } : {}),
      ...(r.link ? { link: r.link } : {}), ...(r.computeTflops !== undefined ? { computeTflops: r.computeTflops } : {}),
    },
  };
}

/**
 * What the run writes where, for checkRooms: --out's files at `precision` (its record with `about`), and a ring's --timeline (at most
 * timelineBound, its ranks' `adapters` names as far as known), counted together where both are on one file system.
 */
function roomNeeds(a: AttentionArgs, s: AttentionShape, precision: Precision, backward: boolean, ring: RingArgs | null, about: RunAbout, adapters: string[] = []): RoomNeed[] {
  const needs: RoomNeed[] = [{ flag: 'out', path: a.out, dir: a.out, sizes: outputSizes(s, precision, backward, about) }];
  if (ring?.timeline !== undefined) {
    const { scheme, steps } = resolveScheme(ring.scheme, ring.R, s, ring.hierarchicalSizes);
    const bound = timelineBound({
      R: ring.R, mode: ring.mode, pipelined: !!ring.pipelined, scheme, layout: ring.layout, precision, shape: s, steps, backward, adapters,
      ...(ring.link ? { link: ring.link } : {}), ...(ring.computeTflops !== undefined ? { computeTflops: ring.computeTflops } : {}),
    });
    needs.push({ flag: 'timeline', path: ring.timeline, dir: dirname(ring.timeline), sizes: [bound] });
  }
  return needs;
}

export async function attentionCommand(argv: string[]): Promise<number> {
  const a = parseAttentionArgs(argv);
  if (!a) {
    console.log(help());
    return 0;
  }
  // Every input is a file: one that is not (a folder, a pipe) or is missing is said as such before the outputs
  // are judged against it (`--q data --out data/out` is a folder given as --q, not an output inside an input folder).
  // openInput checks each again just before it opens it: a path can change in between, and a FIFO there would hang.
  for (const i of inputsOf(a)) await checkInputFile(i.flag, i.path, MAX_BINARY_BYTES, false, () => tooLargeFix(i.flag, i.path));
  const outputs = await planOutputs(a);
  const { q, k, v, dout, s, docs, ring } = await loadInputs(a);
  const { precision: p, notes } = requestedPrecision(a.precision, [q, k, v, ...(dout ? [dout] : [])]);
  // A full disk before the work, not after it; again once the device has said the precision (float16 data
  // computed in f32 where it has no shader-f16 writes twice the bytes; with --cp-mode processes, once every
  // rank process has said what its adapter offers: ringCli.ts ranksPrecision), before any GPU work.
  const about = runAbout(a, s, docs);
  const room = (precision: Precision, adapters?: string[]) => checkRooms(roomNeeds(a, s, precision, !!dout, ring, about, adapters));
  await room(p);
  const t = { q: hostOf(q, p), k: hostOf(k, p), v: hostOf(v, p) };
  const dO = dout ? hostOf(dout, p) : null;
  for (const n of [...notes, ...[q, k, v, ...(dout ? [dout] : [])].map((x) => inputNote(x.name, x.path, x.nonFinite, x.arr.data.length))]) if (n) console.error(n);
  // Outputs keep the inputs' rank: [H, N, D] in (every tensor), [H, N, D] out.
  const batched = [q, k, v, ...(dout ? [dout] : [])].some((x) => x.arr.shape.length === 4);
  const opts = { causal: a.causal, scale: a.scale, window: a.window ?? ([-1, -1] as [number, number]), docs };
  if (ring) {
    const { ringCommand } = await import('./ringCli.js');
    return ringCommand(s, t, dO, { ...opts, precision: p, request: a.precision, room }, { ...ring, out: a.out, batched, about }, outputs);
  }
  const [dev] = await acquireDevices(await nodeGPU(), 1);
  try {
    const precision = devicePrecision(p, a.precision, dev);
    if (precision !== p) await room(precision);
    const mask = `causal=${opts.causal}${a.window ? ` window=${a.window.join(',')}` : ''}${docs ? ` documents=${docs.cuQ.length - 1}` : ''}`;
    console.log(`attention ${JSON.stringify(s)} ${mask} on ${adapterName(dev.adapter)}`);
    // Progress on stderr (a long run on a slow adapter takes minutes): each pass as it starts, goes (by
    // K/V heads, in groups of about a second: attention.ts GROUP_MS) and ends, then the writing.
    const unit = s.B > 1 ? '(batch, K/V head) pairs' : 'K/V heads';
    const { value: fwd, ms: fwdMs } = await timedPhase(`forward (${precision})`, (onProgress) => attentionForward(dev, s, t, { ...opts, precision, onProgress }), unit);
    const tensors: Record<string, HostTensor> = { o: fwd.o };
    let msg = `forward (${fwd.precision}) ${fwdMs.toFixed(1)} ms (incl. compiling the kernels, cached by the driver after a first run, upload and readback)`;
    if (dO) {
      const { value: bwd, ms } = await timedPhase(`backward (${precision})`, (onProgress) => attentionBackward(dev, s, { ...t, o: fwd.o, lse: fwd.lse, dout: dO }, { ...opts, precision, onProgress }), unit);
      msg += `; backward ${ms.toFixed(1)} ms`;
      Object.assign(tensors, { dq: bwd.dq, dk: bwd.dk, dv: bwd.dv });
    }
    const files = outputFiles(a.out, s, { precision: fwd.precision, adapter: adapterName(dev.adapter), robust: robustShaders() }, tensors, about, fwd.lse, batched);
    await timedPhase(`writing the outputs into ${a.out}`, () => outputs.write(files));
    console.log(`${msg}; wrote ${files.map((f) => f.path).join(', ')}`); // the result: stdout (notes: stderr)
    noteStaleOutputs(a.out, files);
    const bad = outputNote(outputBadRows(tensors, s.D, fwd.lse));
    if (bad) console.error(bad);
    return 0;
  } finally {
    dev.destroy();
  }
}

