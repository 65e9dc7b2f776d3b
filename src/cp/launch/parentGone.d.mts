// Types of parentGone.mjs (plain JavaScript, run by the watchdog thread parentWatch.mjs).
export function statFields(text: string): { state: string; start: string } | null;
export function parentGone(parent: number, self?: { pid: number; readonly ppid: number }, read?: (pid: number) => string): () => boolean;
