/**
 * The advisor's search off the page's thread: src/memory/advise.ts's candidates() for one request
 * at a time (a few hundred ms for 8 GPUs, seconds for thousands), so that typing stays smooth.
 * When nothing fits, a second answer follows the first: what would fit (src/memory/adviseForward.ts's
 * wouldFit, as `flashring advise` prints it: the same search again with more HBM, more GPUs, a
 * shorter sequence; up to a few seconds more). Each answer carries its request's sequence number;
 * the panel (web/advise.ts) draws only the newest and replaces a worker still busy with an older one.
 * An error crosses as its fields (src/errors.ts errorFields; the page rebuilds it, rebuildError), so that the model's
 * refusal stays an InputError with its flags: the refusal of the request itself (requestRefusal: every layout refused
 * for one reason) is thrown so, said once beside its control, not searched on for what would fit.
 */
import { candidates, requestRefusal, type AdviseRequest, type AdviseResult } from '../src/memory/advise.js';
import { wouldFit, type WouldFit } from '../src/memory/adviseForward.js';
import { errorFields, type ErrorFields } from '../src/errors.js';

/** `batchPerGpu`: the global batch is the default, one sequence a GPU (it grows with the GPUs in wouldFit's search). */
export interface AdviseQuery { seq: number; req: AdviseRequest; batchPerGpu: boolean }
export type AdviseAnswer =
  | { seq: number; res: AdviseResult }
  | { seq: number; wouldFit: WouldFit }
  | { seq: number; error: ErrorFields };

const scope = self as unknown as { onmessage: ((e: MessageEvent<AdviseQuery>) => void) | null; postMessage(a: AdviseAnswer): void };

scope.onmessage = ({ data: { seq, req, batchPerGpu } }) => {
  try {
    const res = candidates(req), refused = requestRefusal(res);
    if (refused) throw refused;
    scope.postMessage({ seq, res });
    if (!res.fitting.length) scope.postMessage({ seq, wouldFit: wouldFit(req, res, batchPerGpu) });
  } catch (e) {
    scope.postMessage({ seq, error: errorFields(e) });
  }
};
