/** Environment overrides of the kernels' choices (tiles, paths) for tuning and tests. */

/** Reads a tuning pin from the environment (Node only; browsers have none); an empty value is none. */
export function envPin(name: string): string | undefined {
  return typeof process !== 'undefined' ? process.env?.[name] || undefined : undefined;
}
