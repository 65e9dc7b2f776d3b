/**
 * What every command does with its command line before any work: parse it (Node's parseArgs,
 * strict), validate each value with one line naming the flag and the value, check that the places
 * it will write to can be written (src/cli/files.ts). Every mistake is an InputError: one line, exit code 2.
 */
import { parseArgs, ParseArgsConfig } from 'node:util';
import { InputError } from '../errors.js';
import { DECIMAL } from '../decimal.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Config<O extends Options> = { args: string[]; options: O; strict: true; allowPositionals: boolean };

/** A value that starts like a negative number (`-0.125`, `-1`, `-.5`, `-1e3`). */
const NEGATIVE = /^-(\d|\.\d)/;

/**
 * parseArgs, strict, with two things users expect: a string option takes a following negative
 * number as its value (`--scale -0.125`, which parseArgs alone calls ambiguous), and every
 * parsing mistake (unknown flag, `--causal=yes`, a missing value, a stray argument, a flag given
 * twice, where parseArgs would keep the last) is one line, ending with where help is (`help`:
 * what to run for it; the flashring command's own by default).
 */
export function parseCommand<O extends Options>(command: string, argv: string[], options: O, allowPositionals = false, help = `flashring ${command} --help`) {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : null;
    if (name && options[name]?.type === 'string' && i + 1 < argv.length && NEGATIVE.test(argv[i + 1])) {
      args.push(`${a}=${argv[++i]}`);
      continue;
    }
    args.push(a);
  }
  let parsed;
  try {
    parsed = parseArgs<Config<O> & { tokens: true }>({ args, options, strict: true, allowPositionals, tokens: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    if (!code.startsWith('ERR_PARSE_ARGS')) throw e;
    const first = (e as Error).message.split('\n')[0];
    const ambiguous = /^Option '(--?[\w-]+)' argument is ambiguous/.exec(first);
    // With positionals allowed parseArgs adds how to pass '--bogus' as one: the flag is what was meant.
    // Its long name (group 1), for the option it most likely meant.
    const unknown = /^Unknown option '(?:--([^'=]+)[^']*|[^']+)'/.exec(first);
    // Node's messages start with a capital; every message of ours starts lowercase.
    const lower = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
    const msg = ambiguous ? `${ambiguous[1]} needs a value (to give one starting with '-', write ${ambiguous[1]}=VALUE)` : lower(unknown ? unknown[0] : first);
    const near = nearestOption(unknown?.[1], Object.keys(options));
    throw new InputError(`${msg}${near ? `: did you mean --${near}?` : ''} (see ${help})`);
  }
  const seen = new Set<string>();
  for (const t of parsed.tokens) {
    if (t.kind !== 'option' || options[t.name]?.multiple) continue;
    if (seen.has(t.name)) throw new InputError(`--${t.name} is given twice: give it once (see ${help})`);
    seen.add(t.name);
  }
  const { tokens: _, ...rest } = parsed;
  return rest as ReturnType<typeof parseArgs<Config<O>>>;
}


/**
 * The option a mistyped long flag most likely meant (`casual` → `causal`, `head` → `heads`, `n` → `N`): the one at
 * the least edit distance (insertions, deletions, substitutions and swaps of two neighbours, case ignored), if that
 * is at most 2 and under half the typed name's length, and no other option is as near; else none.
 */
export function nearestOption(typed: string | undefined, names: string[]): string | undefined {
  if (!typed) return undefined;
  const t = typed.toLowerCase();
  const scored = names.map((n) => ({ n, d: editDistance(t, n.toLowerCase()) })).sort((a, b) => a.d - b.d);
  const [best, next] = scored;
  if (!best || best.d > 2 || best.d * 2 >= t.length || (next && next.d === best.d)) return undefined;
  return best.n;
}

/** Optimal string alignment distance: Levenshtein's with a swap of two neighbouring letters as one edit. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.length][b.length];
}

export interface NumberRule {
  integer?: boolean;
  /** Smallest allowed value (inclusive). */
  min?: number;
  /** Values must be strictly greater than this. */
  above?: number;
  /** Largest allowed value (inclusive). */
  max?: number;
  /** What the flag wants, for the message (e.g. 'a positive number'). */
  what: string;
}

/** A flag's value as a number, or an InputError naming the flag and the value. */
export function numberArg(flag: string, raw: string, rule: NumberRule): number {
  const bad = () => new InputError(`--${flag} must be ${rule.what}, got '${raw}'`);
  if (!DECIMAL.test(raw)) throw bad();
  const n = Number(raw);
  if (!Number.isFinite(n)) throw bad();
  if (rule.integer && !Number.isInteger(n)) throw bad();
  if (rule.min !== undefined && n < rule.min) throw bad();
  if (rule.above !== undefined && !(n > rule.above)) throw bad();
  if (rule.max !== undefined && n > rule.max) throw bad();
  return n;
}

/**
 * A comma-separated flag's entries (`d` where the flag is absent), trimmed, at least one. An empty value is refused, and
 * so is an empty entry among others (`64,,128`, `64,`): a stray comma may stand for a value the user meant, which
 * dropping it would lose without a word. Read by nums and choices (bench, tune) and memory --seq-lengths.
 */
export function list(s: string | undefined, d: string, name: string): string[] {
  const raw = s ?? d;
  if (raw.trim() === '') throw new InputError(`--${name} needs at least one value, got '${s}'`);
  const xs = raw.split(',').map((x) => x.trim());
  const empty = xs.indexOf('');
  if (empty >= 0) throw new InputError(`--${name} ${raw}: entry ${empty + 1} of ${xs.length} is empty (a stray comma?)`);
  return xs;
}
/** A comma-separated list of positive integers up to `max` (the bench's and tune's sweeps). */
export const nums = (s: string | undefined, d: string, name: string, max = 2 ** 31) =>
  list(s, d, name).map((x) => {
    try {
      return numberArg(name, x, { integer: true, min: 1, max, what: `a list of positive integers${max < 2 ** 31 ? ` up to ${max}` : ''}` });
    } catch {
      throw new InputError(`--${name}: '${x}' is not a positive integer${max < 2 ** 31 ? ` up to ${max}` : ''}`);
    }
  });
/** A comma-separated list whose entries must be among `allowed`. */
export const choices = <T extends string>(s: string | undefined, d: string, name: string, allowed: readonly T[]): T[] => {
  const xs = list(s, d, name);
  for (const x of xs) if (!allowed.includes(x as T)) throw new InputError(`--${name}: '${x}' is not one of ${allowed.join(', ')}`);
  return xs as T[];
};

/** `xs` of a list flag, each at most once: a value given twice (`--N 1024,4096,1024`) is refused, not run twice. */
export function distinct<T>(name: string, xs: T[]): T[] {
  const again = xs.find((x, i) => xs.indexOf(x) < i);
  if (again !== undefined) throw new InputError(`--${name}: ${String(again)} is given twice: give each value once`);
  return xs;
}

/** A flag that takes one positive integer up to `max`; a list is refused, `sweeps` saying which flags do take one. */
export function one(s: string | undefined, d: string, name: string, max?: number, sweeps = ''): number {
  const xs = nums(s, d, name, max);
  if (xs.length > 1) throw new InputError(`--${name} takes one value, got '${s}'${sweeps}`);
  return xs[0];
}
