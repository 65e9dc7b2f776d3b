/** A tuning and a Tune candidate in the page's words (the live panel: web/live.ts). */
import type { TuneTrial } from '../src/bench/tune.js';
import { HEAD_GROUP_ALL, type KernelTuning } from '../src/kernels/tuning.js';

/** Each kernel pin in the page's words: tile sizes, and what a variant does. */
const PIN_WORDS: { [K in keyof KernelTuning]-?: (v: NonNullable<KernelTuning[K]>, kernel: (name: string) => string) => string } = {
  path: (v) => `path ${v}`,
  headGroup: (g) => (g === HEAD_GROUP_ALL ? 'all heads at once' : `heads ${g} at a time`),
  portableForward: (t, k) => `${k('forward')}tile ${t.rows}×${t.cols}${t.chunk ? ` (D in chunks of ${t.chunk})` : ''}`,
  portableBackward: (t, k) => `${k('backward')}tile ${t.rows}×${t.cols}${t.chunk ? ` (D in chunks of ${t.chunk})` : ''}`,
  rowReduce: (v) => `row sums through ${v === 'subgroup' ? 'subgroup shuffles' : 'workgroup memory'}`,
  forwardPrefetch: (v) => (v === 2 ? 'with prefetch of K and V only' : v ? 'with prefetch' : 'no prefetch'),
  forwardSharedP: (v) => (v ? 'P~ in Q\'s workgroup memory' : 'P~ in workgroup memory of its own'),
  forwardWideStage: (v) => (v ? 'f16 words widened to f32 as staged' : 'f16 words staged as f16'),
  portableProducts: (v) => `${v} products`,
  sgmmForward: (t, k) => `${k('forward')}tensor-core tile ${t.subgroups} subgroups × ${t.rows} rows${t.rowBlocks === 2 ? ', 2 row blocks' : ''}${t.dSplit === 2 ? ', D split in 2' : ''}`,
  sgmmBackward: (t, k) => `${k('backward')}tensor-core tile ${t.subgroups} subgroups × ${t.rows} rows`,
  sgmmPad: (v) => (v ? 'padded rows' : 'unpadded rows'),
  sgmmForwardPipe: (v) => (v ? 'K/V staged behind the softmax' : 'K/V staged before the products'),
  sgmmForwardTurns: (v) => (v ? 'row blocks take turns' : 'row blocks at once'),
  sgmmDqSpill: (v) => `dQ's blocks ${v === 'one' ? 'one at a time' : 'at once'}`,
  sgmmKvSpill: (v) => `dK/dV's blocks ${v === 'one' ? 'one at a time' : 'at once'}`,
  sgmmEpilogue: (v) => `gradients stored ${v === 'direct' ? 'directly' : 'through workgroup memory'}`,
};

/** A tuning in the page's words ("forward tile 64×32, with prefetch"; `named` false: "tile 64×32", one kernel's); the defaults where it pins nothing. */
export function tilesInWords(t: KernelTuning, named = true): string {
  const kernel = (name: string) => (named ? `${name} ` : '');
  const parts = (Object.keys(t) as (keyof KernelTuning)[]).filter((k) => t[k] !== undefined).map((k) => (PIN_WORDS[k] as (v: unknown, n: typeof kernel) => string)(t[k], kernel));
  return parts.join(', ') || 'the defaults';
}

/**
 * One Tune candidate in the page's words: its tiles and time, or why it was skipped: a tile too large for this GPU's
 * workgroup memory (or invocations) is said as that, from the figures its trial carries (`need`), never read out of
 * its error's text; any other reason as the search gave it.
 */
export function trialWords(t: TuneTrial & { tuning: KernelTuning }): string {
  const head = `${t.kind === 'fwd' ? 'forward' : 'backward'} candidate ${tilesInWords(t.tuning, false)}`;
  if (t.ms !== null) return `${head}: ${t.ms.toFixed(3)} ms`;
  const n = t.need;
  if (n && n.bytes > n.maxBytes) return `${head}: skipped, too large for this GPU's workgroup memory (needs ${n.bytes} bytes, it has ${n.maxBytes})`;
  if (n && n.invocations > n.maxInvocations) return `${head}: skipped, too many invocations per workgroup for this GPU (${n.invocations}, it takes ${n.maxInvocations})`;
  return `${head}: skipped (${t.error ?? 'it did not run'})`;
}
