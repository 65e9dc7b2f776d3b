/**
 * Megatron-LM's `--cp-comm-type` as the scheme, checked against the shape: which rank program
 * runs and how the ranks are grouped. Adding a scheme = writing its rank program and one entry here.
 */
import { InputError } from '../errors.js';
import { AttentionShape } from '../shape.js';
import { allGather } from './allGather.js';
import { RankProgram } from './chunks.js';
import { p2p } from './p2p.js';
import { SCHEMES, Scheme } from './timeline.js';
import { ulysses } from './ulysses.js';

export interface ResolvedScheme {
  scheme: Scheme;
  /** [a2a group size A, ring size P], A·P = R. */
  hierarchy: [number, number];
  program: RankProgram<unknown>;
  /**
   * Timeline steps per phase (progress reporting). all_gather: gather, attend | attend,
   * reduce-scatter (the attention over every gathered run is one step, whatever the layout).
   */
  steps: { forward: number; backward: number };
}

/** '2,4' or [2, 4] → [2, 4]; Megatron-LM's `--hierarchical-context-parallel-sizes`. */
export function parseSizes(x: string | number[] | undefined): number[] | undefined {
  if (x === undefined) return undefined;
  const parts = typeof x === 'string' ? x.split(',').map((s) => Number(s.trim())) : x;
  if (parts.length !== 2 || parts.some((n) => !Number.isInteger(n) || n < 1))
    throw new InputError(`hierarchical context-parallel sizes must be two positive integers 'A,P' (a2a group, ring), got '${String(x)}'`);
  return parts;
}

/**
 * a2a+p2p's sizes where none are given: the largest a2a group A with 1 < A < R that divides R and
 * both head counts (the ring then spans R/A groups), or null where none does (the caller says so).
 */
export function defaultSizes(R: number, s: Pick<AttentionShape, 'Hq' | 'Hkv'>): [number, number] | null {
  for (let A = R - 1; A > 1; A--) if (R % A === 0 && s.Hq % A === 0 && s.Hkv % A === 0) return [A, R / A];
  return null;
}

/** What the CLIs say when they chose a2a+p2p's sizes with defaultSizes. */
export const chosenSizesNote = (sizes: string, R: number) =>
  `a2a+p2p sizes ${sizes} chosen: the largest a2a group below ${R} that divides the heads (--hierarchical-context-parallel-sizes A,P to choose)`;

/** Why a2a+p2p has no sizes to choose (defaultSizes found none): one line naming the flag to give. */
export function noDefaultSizes(R: number, s: Pick<AttentionShape, 'Hq' | 'Hkv'>): string {
  return `a2a+p2p needs an a2a group size A with 1 < A < R that divides R = ${R} and the heads (${s.Hq} query, ${s.Hkv} key/value)` +
    `${R < 4 ? `; at R = ${R} there is none` : '; none does'}: give --hierarchical-context-parallel-sizes A,P (A·P = ${R})`;
}

export function resolveScheme(name: string, R: number, s: AttentionShape, sizes?: string | number[]): ResolvedScheme {
  if (!SCHEMES.includes(name as Scheme)) throw new InputError(`unknown cp-comm-type '${name}': use ${SCHEMES.join(', ')}`);
  const scheme = name as Scheme;
  if (scheme === 'p2p') return { scheme, hierarchy: [1, R], program: p2p as RankProgram<unknown>, steps: { forward: R, backward: R + 1 } };
  if (scheme === 'all_gather') return { scheme, hierarchy: [1, R], program: allGather as RankProgram<unknown>, steps: { forward: 2, backward: 2 } };
  let A = R;
  if (scheme === 'a2a+p2p') {
    const hs = parseSizes(sizes);
    if (!hs) throw new InputError(`a2a+p2p needs hierarchical sizes 'A,P' (a2a group, ring) with A·P = ${R}`);
    if (hs[0] * hs[1] !== R) throw new InputError(`a2a+p2p sizes ${hs.join(',')} multiply to ${hs[0] * hs[1]}, not the context-parallel size ${R}`);
    A = hs[0];
  }
  if (s.Hq % A !== 0 || s.Hkv % A !== 0)
    throw new InputError(`${scheme} splits heads over ${A} ranks: query heads (${s.Hq}) and key/value heads (${s.Hkv}) must both be divisible by ${A}`);
  const P = R / A;
  return { scheme, hierarchy: [A, P], program: ulysses(A) as RankProgram<unknown>, steps: { forward: P + 2, backward: P + 3 } };
}
