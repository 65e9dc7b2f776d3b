/** Environment overrides of the kernels' choices (tiles, paths) for tuning and tests. */

/** Reads a tuning pin from the environment (Node only; browsers have none); an empty value is none. */
export function envPin(name: string): string | undefined {
  return typeof process !== 'undefined' ? process.env?.[name] || undefined : undefined;
}

const warned = new Set<string>();

/** Prints a warning about the pins once per process (the planner runs for every kernel built). */
export function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(message);
}
