/**
 * The schemes: the one list the CLI, its help, the page, the timeline and the dry run read.
 * A scheme is Megatron-LM's `--cp-comm-type` value, how it groups R ranks ([a2a group size A,
 * ring size P], A·P = R), its rank program and how many timeline steps each phase takes. Adding a
 * scheme = writing its rank program and one `registerScheme` call (test/registry.test.ts does it
 * with a test-only scheme and finds it in cp-plan, the help and the dry run).
 */
import { InputError } from '../../errors.js';
import { AttentionShape } from '../../shape.js';
import { allGather } from './allGather.js';
import { RankProgram } from '../rank/chunks.js';
import { p2p, ringBackwardSteps } from './p2p.js';
import { ulysses } from './ulysses.js';

/** A scheme's name (`--cp-comm-type`): one of schemeNames(). */
export type Scheme = string;
type Heads = Pick<AttentionShape, 'Hq' | 'Hkv'>;

export interface SchemeDef {
  name: Scheme;
  /** One line for the help and the page. */
  about: string;
  /**
   * [A, P] for R ranks of this shape; `sizes` are --hierarchical-context-parallel-sizes where the
   * scheme takes them (defaultSizes), else undefined. Throws an InputError naming what to change.
   */
  hierarchy(R: number, s: Heads, sizes: [number, number] | undefined): [number, number];
  /** Schemes that take --hierarchical-context-parallel-sizes: the sizes used when none are given, or why there are none. */
  defaultSizes?(R: number, s: Heads): [number, number] | string;
  program(h: [number, number]): RankProgram<unknown>;
  /** Timeline steps per phase (progress reporting). */
  steps(h: [number, number]): { forward: number; backward: number };
}

export interface ResolvedScheme {
  scheme: Scheme;
  /** [a2a group size A, ring size P], A·P = R. */
  hierarchy: [number, number];
  program: RankProgram<unknown>;
  steps: { forward: number; backward: number };
}

const REGISTRY = new Map<Scheme, SchemeDef>();

/** Adds a scheme (the built-in four below; a test adds its own); returns what removes it again. */
export function registerScheme(def: SchemeDef): () => void {
  if (REGISTRY.has(def.name)) throw new Error(`scheme '${def.name}' is registered already`);
  REGISTRY.set(def.name, def);
  return () => void REGISTRY.delete(def.name);
}

/** Every scheme's name, in registration order. */
export const schemeNames = (): Scheme[] => [...REGISTRY.keys()];
export const schemeDefs = (): SchemeDef[] => [...REGISTRY.values()];

export function schemeDef(name: string): SchemeDef {
  const def = REGISTRY.get(name);
  if (!def) throw new InputError(`unknown cp-comm-type '${name}': use ${schemeNames().join(', ')}`);
  return def;
}

/** '2,4' or [2, 4] → [2, 4]; Megatron-LM's `--hierarchical-context-parallel-sizes`. */
export function parseSizes(x: string | number[] | undefined): [number, number] | undefined {
  if (x === undefined) return undefined;
  const parts = typeof x === 'string' ? x.split(',').map((s) => Number(s.trim())) : x;
  if (parts.length !== 2 || parts.some((n) => !Number.isInteger(n) || n < 1))
    throw new InputError(`hierarchical context-parallel sizes must be two positive integers 'A,P' (a2a group, ring), got '${String(x)}'`);
  return [parts[0], parts[1]];
}

/** The scheme's program and grouping for R ranks of this shape, or an InputError saying what does not fit. */
export function resolveScheme(name: string, R: number, s: AttentionShape, sizes?: string | number[]): ResolvedScheme {
  const def = schemeDef(name);
  const given = parseSizes(sizes);
  if (given && !def.defaultSizes) throw new InputError(sizesRefused(name));
  const hierarchy = def.hierarchy(R, s, given);
  return { scheme: def.name, hierarchy, program: def.program(hierarchy), steps: def.steps(hierarchy) };
}

/**
 * The sizes a run of `name` takes: the ones given, or where the scheme takes sizes and none were
 * given, its default (`chosen`: the CLIs say so). Throws an InputError where sizes are given to a
 * scheme that takes none, or the scheme needs sizes and has no default for this shape.
 */
export function schemeSizes(name: string, R: number, s: Heads, given: string | undefined): { sizes?: string; chosen: boolean } {
  const def = schemeDef(name);
  if (given !== undefined && !def.defaultSizes) throw new InputError(sizesRefused(name));
  if (given !== undefined || !def.defaultSizes) return { sizes: given, chosen: false };
  const d = def.defaultSizes(R, s);
  if (typeof d === 'string') throw new InputError(d);
  return { sizes: d.join(','), chosen: true };
}

function sizesRefused(name: string): string {
  const takers = schemeDefs().filter((d) => d.defaultSizes).map((d) => d.name);
  return `--hierarchical-context-parallel-sizes applies only to --cp-comm-type ${takers.join(' or ')} (this run is ${name}): leave it out or choose ${takers.join(' or ')}`;
}

/** What the CLIs say when they chose the sizes with the scheme's default. */
export const chosenSizesNote = (name: string, sizes: string, R: number) =>
  `${name} sizes ${sizes} chosen: the largest a2a group below ${R} that divides the heads (--hierarchical-context-parallel-sizes A,P to choose)`;

/**
 * Heads split over A ranks: both head counts must divide. If not, what does run: for a2a a rank
 * count dividing both; for a2a+p2p (R given) the sizes A,P whose group A divides both and R.
 */
function headsSplit(name: string, A: number, s: Heads & { Nq?: number }, R?: number): void {
  if (s.Hq % A === 0 && s.Hkv % A === 0) return;
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const g = gcd(s.Hq, s.Hkv);
  // A count runs only where every rank gets a token (R <= N: validateRing), so none above the sequence (where known) is offered.
  const counts = Array.from({ length: Math.min(g, s.Nq ?? g) - 1 }, (_, i) => i + 2).filter((n) => g % n === 0 && (R === undefined || (R % n === 0 && n < R)));
  const some = R === undefined ? `a context-parallel size that divides both (${counts.join(', ')})` : `sizes ${counts.map((n) => `${n},${R / n}`).join(' or ')}`;
  const none = R === undefined ? 'no count above 1 divides both' : `no a2a group between 1 and ${R} divides both and ${R}`;
  const runs = counts.length ? `${some} run${R === undefined ? 's' : ''} ${name}` : `${none}, so ${name} cannot run here`;
  throw new InputError(
    `${name} splits heads over ${A} ranks: query heads (${s.Hq}) and key/value heads (${s.Hkv}) must both be divisible by ${A}: ` +
      `${runs}; p2p and all_gather split the sequence, not the heads, and take any`,
  );
}

/**
 * a2a+p2p's sizes where none are given: the largest a2a group A with 1 < A < R that divides R and
 * both head counts (the ring then spans R/A groups), or why there is none.
 */
function largestGroup(R: number, s: Heads): [number, number] | string {
  for (let A = R - 1; A > 1; A--) if (R % A === 0 && s.Hq % A === 0 && s.Hkv % A === 0) return [A, R / A];
  // What does run: A = 1 (a ring of R: p2p) always, A = R (all a2a) where the heads divide.
  const whole = s.Hq % R === 0 && s.Hkv % R === 0;
  const groups = Array.from({ length: Math.max(0, R - 2) }, (_, i) => i + 2).filter((A) => R % A === 0);
  const truly = groups.length ? `head counts divisible by ${groups.join(' or ')} give a true hierarchy at R = ${R}` : `a true hierarchy needs an R with a divisor between 1 and R (4, 6, 8, …)`;
  // One rank: 1,1 is both the ring of one and the a2a group of one, offered once.
  const sizes = R === 1 ? '1,1 (one rank: the same as p2p and a2a)' : `1,${R} (the same as --cp-comm-type p2p)${whole ? ` or ${R},1 (the same as a2a)` : ''}`;
  const works = `--hierarchical-context-parallel-sizes ${sizes} runs it anyway; ${truly}`;
  return `a2a+p2p needs an a2a group size A with 1 < A < R that divides R = ${R} and the heads (${s.Hq} query, ${s.Hkv} key/value)` +
    `${R < 4 ? `; at R = ${R} there is none` : '; none does'}. ${works}`;
}

registerScheme({
  name: 'p2p', about: 'ring: K/V one hop per step behind the compute (ring-flash-attention)',
  hierarchy: (R) => [1, R], program: () => p2p as RankProgram<unknown>, steps: ([, P]) => ({ forward: P, backward: ringBackwardSteps(P) }),
});
registerScheme({
  name: 'all_gather', about: 'all K/V gathered once, then one attention (Llama-3, PyTorch)',
  hierarchy: (R) => [1, R], program: () => allGather as RankProgram<unknown>, steps: () => ({ forward: 2, backward: 2 }),
});
registerScheme({
  name: 'a2a', about: 'all-to-all from sequence to head shards (DeepSpeed-Ulysses)',
  hierarchy: (R, s) => (headsSplit('a2a', R, s), [R, 1]),
  program: ([A]) => ulysses(A) as RankProgram<unknown>, steps: ([, P]) => ({ forward: P + 2, backward: ringBackwardSteps(P) + 2 }),
});
registerScheme({
  name: 'a2a+p2p', about: 'a2a inside groups of A ranks, a ring of P groups (hierarchical)',
  hierarchy: (R, s, sizes) => {
    if (!sizes) throw new InputError(`a2a+p2p needs hierarchical sizes 'A,P' (a2a group, ring) with A·P = ${R}`);
    if (sizes[0] * sizes[1] !== R) throw new InputError(`a2a+p2p sizes ${sizes.join(',')} multiply to ${sizes[0] * sizes[1]}, not the context-parallel size ${R}`);
    headsSplit('a2a+p2p', sizes[0], s, R);
    return sizes;
  },
  defaultSizes: largestGroup,
  program: ([A]) => ulysses(A) as RankProgram<unknown>, steps: ([, P]) => ({ forward: P + 2, backward: ringBackwardSteps(P) + 2 }),
});
