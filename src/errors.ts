/**
 * Typed errors. Every error flashring throws on purpose is a FlashringError whose message says
 * what went wrong and what to do about it.
 */
export class FlashringError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** No WebGPU adapter could be found (no driver, no Vulkan loader, browser without WebGPU). */
export class NoAdapterError extends FlashringError {}

/** Bad input: shapes, dtypes, options. */
export class InputError extends FlashringError {}

/** The request does not fit a device limit (workgroup memory, binding size...). */
export class LimitError extends FlashringError {}

/** A WebGPU validation or out-of-memory error caught by an error scope. */
export class GPUValidationError extends FlashringError {
  constructor(
    readonly label: string,
    readonly gpuMessage: string,
  ) {
    super(`WebGPU error in ${label}: ${gpuMessage}`);
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
