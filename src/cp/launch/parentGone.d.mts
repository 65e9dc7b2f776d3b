// Types of parentGone.mjs (plain JavaScript, run by the watchdog thread parentWatch.mjs, and by rankProcess.ts should that thread not run).
export function statFields(text: string): { state: string; start: string } | null;
export function parentGone(parent: number, self?: { pid: number; readonly ppid: number }, read?: (pid: number) => string): () => boolean;
export function endOnceParentGone(parent: number, spool: string | null): () => void;
