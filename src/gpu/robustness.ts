/**
 * Whether a GPU object's shaders keep Dawn's robustness transform (bounds clamps on every array
 * access). Browsers always keep it; Dawn for Node turns it off unless FLASHRING_ROBUST=1 (node.ts),
 * and marks the GPU objects it makes so. A GPU not marked (a browser's) is taken as robust. The
 * planner reads it: a tile can be fast without the clamps and slow with them (sgmmTiles.ts, the
 * forward's D split).
 */
const unchecked = new WeakSet<object>();

/** Marks a GPU object whose shaders run without the robustness transform. */
export function markUncheckedShaders(gpu: GPU): void {
  unchecked.add(gpu);
}

/** True unless the GPU object was marked: its shaders keep the robustness transform. */
export function robustShadersOf(gpu: GPU): boolean {
  return !unchecked.has(gpu);
}
