/**
 * What a stored autotune entry must be (src/bench/tune.ts TuneEntry), for every store that reads one back: the JSON
 * file under Node (tuneStore.ts) and IndexedDB in the page (web/tuneStore.ts). No Node module here: the page imports it.
 */
import { InputError } from '../errors.js';
import { resolveTuning, TUNING_PINS } from '../kernels/tuning.js';

const PATHS = ['scalar', 'subgroup-matrix'];
export const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
/** A timing: finite and above 0 (0, a negative or a non-finite time is no measurement; the table divides by it). */
export const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;
const isMsPair = (x: unknown) => Array.isArray(x) && x.length === 2 && x.every(isTime);
const isCount = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x) && x > 0;

/**
 * What is wrong with a stored entry (damaged by hand, or written by another version of flashring),
 * or null for one every reader can use: each field of TuneEntry with its type, and pins the kernels take.
 */
export function tuneEntryProblem(key: string, e: unknown): string | null {
  if (!isObject(e)) return 'not an object';
  if (e.key !== key) return 'its key field is not the key it is stored under';
  if (typeof e.path !== 'string' || !PATHS.includes(e.path)) return `path is not one of ${PATHS.join(', ')}`;
  if (!isObject(e.tuning)) return 'tuning is not an object';
  const unknown = Object.keys(e.tuning).find((k) => !Object.hasOwn(TUNING_PINS, k));
  if (unknown !== undefined) return `tuning has '${unknown.slice(0, 40)}', which is no pin`;
  // Pins of the right form whose values the kernels do not take are the reader's to refuse, by name (bench --tuned:
  // one line); a value of another type (null for a tile, say) would fail on reading it.
  try {
    for (const [k, v] of Object.entries(e.tuning)) (TUNING_PINS[k as keyof typeof TUNING_PINS].show as (x: unknown) => string)(v);
    resolveTuning(e.tuning);
  } catch (err) {
    if (!(err instanceof InputError)) return `its pins are not of the form pins take (${(err as Error).message.split('\n')[0]})`;
  }
  for (const k of ['defaultMs', 'tunedMs']) if (!isMsPair(e[k])) return `${k} is not [forward ms, backward ms], each a time above 0`;
  for (const k of ['N', 'heads']) if (!isCount(e[k])) return `${k} is not a positive integer`;
  if (typeof e.checkErr !== 'number') return 'checkErr is not a number';
  if (e.keptDefaults !== undefined && typeof e.keptDefaults !== 'string') return 'keptDefaults is not text';
  if (typeof e.date !== 'string') return 'date is not text';
  if (!Array.isArray(e.trials) || !e.trials.every(isObject)) return 'trials is not a list';
  return null;
}
