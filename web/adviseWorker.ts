/**
 * The advisor's search off the page's thread: src/memory/advise.ts's candidates() for one request
 * at a time (a few hundred ms for 8 GPUs, seconds for thousands), so that typing stays smooth.
 * Each answer carries its request's sequence number; the panel (web/advise.ts) draws only the
 * newest and replaces a worker still busy with an older one.
 */
import { candidates, type AdviseRequest, type AdviseResult } from '../src/memory/advise.js';

export interface AdviseQuery { seq: number; req: AdviseRequest }
export type AdviseAnswer = { seq: number; res: AdviseResult } | { seq: number; error: string };

const scope = self as unknown as { onmessage: ((e: MessageEvent<AdviseQuery>) => void) | null; postMessage(a: AdviseAnswer): void };

scope.onmessage = ({ data: { seq, req } }) => {
  try {
    scope.postMessage({ seq, res: candidates(req) });
  } catch (e) {
    scope.postMessage({ seq, error: e instanceof Error ? e.message : String(e) });
  }
};
