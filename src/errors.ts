/**
 * Typed errors. Every error flashring throws on purpose is a FlashringError whose message says
 * what went wrong and what to do about it.
 */
export class FlashringError extends Error {
  constructor(message: string) {
    super(message);
    // Its class's name as written in the source (CLASS_NAMES; a class outside this file sets its own `name`): new.target.name
    // alone is what a minifier renamed it to ('t' in the page's bundle), which the page's words would show.
    this.name = CLASS_NAMES.get(new.target) ?? new.target.name;
  }
}

/** No WebGPU adapter could be found (no driver, no Vulkan loader, browser without WebGPU). */
export class NoAdapterError extends FlashringError {}

/** An adapter refused the device flashring asked for (its features and limits at the adapter's maxima). */
export class DeviceRequestError extends FlashringError {}

/**
 * Bad input: shapes, dtypes, options. `flags`: the command-line flags its message names ('--ffn-hidden-size', as the
 * memory model's refusals name Megatron-LM's), each once in the order named, as data for callers that point at their own
 * controls (the page's form: web/main.ts onModelField), never to be read back out of the message; empty where none is given.
 */
export class InputError extends FlashringError {
  readonly flags: readonly string[];
  constructor(message: string, { flags = [] }: { flags?: readonly string[] } = {}) {
    super(message);
    this.flags = flags;
  }
}

/**
 * What a kernel tile needs of a device whose limits refuse it: workgroup memory at the narrowest chunk of the head dim
 * it may stage (its pinned chunk, if any; a tensor-core tile stages whole rows: the head dim) and invocations, beside
 * the device's figures (maxComputeWorkgroupStorageSize; the smaller of maxComputeInvocationsPerWorkgroup and
 * maxComputeWorkgroupSizeX, src/gpu/device.ts maxWorkgroupInvocations).
 */
export interface TileNeed {
  bytes: number;
  chunk: number;
  invocations: number;
  maxBytes: number;
  maxInvocations: number;
}

/**
 * A kernel tile that cannot run: the tile as its pin spells it ('128x32'; a tensor-core tile '4x16x2', its backward's
 * '4x16'), why in words, and where it was the device's limits, what it needs.
 */
export interface TileMiss {
  tile: string;
  why: string;
  need?: TileNeed;
}

/**
 * The request does not fit a device limit (workgroup memory, binding size...). `tried`: where no kernel tile fits the
 * device (portable: tiles.ts planTiles; tensor-core: sgmmTiles.ts planSgmm), each tile tried and why, as data for callers that say it in their own words (tune's skipped candidates), never
 * to be read back out of the message; empty otherwise.
 */
export class LimitError extends FlashringError {
  constructor(
    message: string,
    readonly tried: readonly TileMiss[] = [],
  ) {
    super(message);
  }
}

/** A timing that is no measurement (0, negative or not finite): a timer coarser than the work timed, or a broken one. */
export class MeasurementError extends FlashringError {}

/** A WebGPU validation or out-of-memory error caught by an error scope. */
export class GPUValidationError extends FlashringError {
  constructor(
    readonly label: string,
    readonly gpuMessage: string,
  ) {
    super(`WebGPU error in ${label}: ${gpuMessage}`);
  }
}

/**
 * The device ran out of memory (an out-of-memory error the device reported): a GPUValidationError still, for whoever
 * catches those, whose message says how much flashring held on the device and what to do.
 */
export class GPUOutOfMemoryError extends GPUValidationError {
  constructor(label: string, gpuMessage: string, liveBytes: number) {
    super(label, gpuMessage);
    this.message = `the GPU ran out of memory in ${label} (${gpuMessage}), with ${(liveBytes / 2 ** 20).toFixed(1)} MiB of flashring's buffers live on it: ` +
      'give it less at once (shorter sequences, fewer heads, a smaller batch), or more context-parallel ranks to share it';
  }
}

/** A device was lost or destroyed while work was in flight. */
export class DeviceLostError extends FlashringError {
  constructor(
    message: string,
    readonly rank?: number,
    readonly step?: number,
  ) {
    super(message);
  }
}

/** A malformed .npy file or an unsupported dtype in one. */
export class NpyError extends FlashringError {}

/** A transfer between ranks failed: a spool file cut short, a rank aborted because another failed. */
export class TransportError extends FlashringError {}

/** A broken invariant of flashring's own code (a bug, not the input): internalError words its message. */
export class InternalError extends FlashringError {}

/** An InternalError saying what broke (in `where`, e.g. 'rank 2', if given) and to report it. */
export function internalError(what: string, where?: string): InternalError {
  return new InternalError(`internal error${where ? ` in ${where}` : ''}: ${what}; please report it with the command`);
}

/** What of an error crosses a process boundary (a rank process's error, sent to its parent; the page's advisor worker's, to the page). */
export interface ErrorFields {
  name: string;
  message: string;
  /** A GPUValidationError's label and the WebGPU message. */
  label?: string;
  gpuMessage?: string;
  /** An InputError's flags (none: it named none). */
  flags?: string[];
  /** A LimitError's tiles tried (none: it tried none). */
  tried?: TileMiss[];
}

/**
 * Each class of this file by its name as written here (ERROR_CLASSES' keys): errorFields names an error by its class, not
 * by `e.name`, which a minifier renames with the class (new.target.name): in the page's bundle an InputError from the
 * advisor's worker was named 't' and rebuilt as an internal error.
 */
const CLASS_NAMES = new Map<unknown, string>(Object.entries({   // (an object's keys survive minification; its values' names do not)
  FlashringError, NoAdapterError, DeviceRequestError, InputError, LimitError, MeasurementError, GPUValidationError, GPUOutOfMemoryError,
  DeviceLostError, NpyError, TransportError, InternalError,
}).map(([name, cls]) => [cls, name]));

/** An error's fields, to be rebuilt on the other side of a process boundary (rebuildError). */
export function errorFields(e: unknown): ErrorFields {
  // The nearest class of this file (a subclass elsewhere, e.g. NoLengthError, crosses as the InputError it is).
  const name = (x: Error) => {
    for (let c: unknown = x.constructor; c; c = Object.getPrototypeOf(c)) { const n = CLASS_NAMES.get(c); if (n) return n; }
    return x.name;
  };
  if (e instanceof GPUValidationError) return { name: name(e), message: e.message, label: e.label, gpuMessage: e.gpuMessage };
  if (e instanceof InputError && e.flags.length) return { name: name(e), message: e.message, flags: [...e.flags] };
  if (e instanceof LimitError && e.tried.length) return { name: name(e), message: e.message, tried: e.tried.map((m) => ({ ...m, ...(m.need ? { need: { ...m.need } } : {}) })) };
  if (e instanceof Error) return { name: name(e), message: e.message };
  return { name: typeof e, message: String(e) };
}

/**
 * The typed errors by name: how each is rebuilt from its fields (`rank`: a DeviceLostError's).
 * Every FlashringError class of this file is here (test/errors.test.ts checks).
 */
export const ERROR_CLASSES: Readonly<Record<string, (f: ErrorFields, rank?: number) => FlashringError>> = {
  FlashringError: (f) => new FlashringError(f.message),
  NoAdapterError: (f) => new NoAdapterError(f.message),
  DeviceRequestError: (f) => new DeviceRequestError(f.message),
  InputError: (f) => new InputError(f.message, { flags: f.flags }),
  LimitError: (f) => new LimitError(f.message, f.tried),
  MeasurementError: (f) => new MeasurementError(f.message),
  GPUValidationError: (f) => new GPUValidationError(f.label ?? 'unknown', f.gpuMessage ?? f.message),
  // Its message as the rank wrote it (with the bytes that rank held), not one counted again here.
  GPUOutOfMemoryError: (f) => Object.assign(new GPUOutOfMemoryError(f.label ?? 'unknown', f.gpuMessage ?? f.message, 0), { message: f.message }),
  DeviceLostError: (f, rank) => new DeviceLostError(f.message, rank),
  NpyError: (f) => new NpyError(f.message),
  TransportError: (f) => new TransportError(f.message),
  InternalError: (f) => new InternalError(f.message),
};

/**
 * The error `f` describes, as the class it had (ERROR_CLASSES), its message prefixed with `where`
 * (e.g. 'rank 2'; none: its message as it was, where the other side is no place to name, as the page's
 * advisor worker); an error of another class (a bug: a TypeError, say) is an internal error.
 */
export function rebuildError(f: ErrorFields, where?: string, rank?: number): FlashringError {
  const make = Object.hasOwn(ERROR_CLASSES, f.name) ? ERROR_CLASSES[f.name] : undefined;
  if (!make) return internalError(`${f.name}: ${f.message}`, where);
  const e = make(f, rank);
  if (where) e.message = `${where}: ${e.message}`;
  return e;
}
