/**
 * The link model (pure): the timeline R real GPUs would show. Each rank's step keeps its
 * measured compute (or FLOPs / X TFLOP/s with `computeTflops`) and gets a modelled transfer,
 *   transfer = bytes / bandwidth + messages · latency,
 * which runs behind the compute when the step overlaps them (the ring) or after it (a2a, the
 * all-gather). A step lasts as long as its slowest rank (ranks wait for each other's data):
 *   step = max_r (overlapped ? max(c_r, x_r) : c_r + x_r)
 * Exposed communication is what a step takes beyond its slowest compute; the comm fraction is
 * exposed / total; per-GPU TFLOP/s is the work done over R GPUs over the predicted time.
 */
import { decimalNumber } from '../../decimal.js';
import { InputError } from '../../errors.js';

export interface Link {
  name: string;
  /** Bandwidth per direction, gigabits per second. */
  gbps: number;
  /** Latency per message, microseconds. */
  latencyUs: number;
}

/** Nominal per-direction figures: NVLink 4 on H100/H200 (900 GB/s both ways), PCIe 5.0 x16, InfiniBand NDR 400G. */
export const LINKS: Record<'nvlink-h200' | 'pcie5' | 'ib-ndr', Link> = {
  'nvlink-h200': { name: 'nvlink-h200', gbps: 3600, latencyUs: 2 },
  pcie5: { name: 'pcie5', gbps: 512, latencyUs: 3 },
  'ib-ndr': { name: 'ib-ndr', gbps: 400, latencyUs: 5 },
};
export const LINK_NAMES = [...Object.keys(LINKS), 'custom'];

/** The custom link's bandwidth bounds (Gbit/s): 1 kbit/s to 1 Pbit/s; a bandwidth no link has (1e-300: every transfer takes 1e300 ms) is a typo, not a what-if. */
export const LINK_GBPS = { min: 1e-6, max: 1e6, what: 'from 0.000001 to 1000000 (Gbit/s per direction: 1 kbit/s to 1 Pbit/s)' } as const;
/** The custom link's latency bounds (µs per message): up to 1000 s a message; more is a typo, not a what-if (as LINK_GBPS's bounds). */
export const LINK_LATENCY_US = { min: 0, max: 1e9, what: 'from 0 to 1000000000 (µs per message: up to 1000 s)' } as const;
/**
 * A planned kernel rate's bounds (TFLOP/s a GPU; --compute-tflops, the page's Kernel TFLOP/s): 1 MFLOP/s to ~10⁴ times an
 * H200's; beyond either is a typo, not a what-if (1e-300 made every step take 1e302 ms).
 */
export const COMPUTE_TFLOPS = { min: 1e-6, max: 1e7, what: 'from 0.000001 to 10000000 (TFLOP/s a GPU)' } as const;

/**
 * A custom link's figure, as a number or as the command line's text, checked against its bounds;
 * the one wording of every command (advise, cp-plan, attention --cp) for a bad value.
 */
function linkFigure(flag: 'link-gbps' | 'link-latency-us', x: number | string, rule: { min: number; max: number; what: string }): number {
  const n = typeof x === 'number' ? x : decimalNumber(x);
  if (!(Number.isFinite(n) && n >= rule.min && n <= rule.max)) throw new InputError(`--${flag} must be ${rule.what}, got '${x}'`);
  return n;
}

/**
 * A preset by name (no bandwidth or latency beside it), or 'custom' with both: bandwidth (Gbit/s)
 * and latency (µs), numbers or the flags' text (--link-gbps, --link-latency-us). Every command
 * checks its link flags here, so the same mistake reads the same everywhere.
 */
export function resolveLink(name: string, gbps?: number | string, latencyUs?: number | string): Link {
  if (name === 'custom') {
    if (gbps === undefined) throw new InputError(`--link custom needs --link-gbps, ${LINK_GBPS.what}: none given`);
    const g = linkFigure('link-gbps', gbps, LINK_GBPS);
    if (latencyUs === undefined) throw new InputError(`--link custom needs --link-latency-us, ${LINK_LATENCY_US.what}: none given`);
    return { name: 'custom', gbps: g, latencyUs: linkFigure('link-latency-us', latencyUs, LINK_LATENCY_US) };
  }
  const preset = LINKS[name as keyof typeof LINKS];
  if (!preset) throw new InputError(`unknown link '${name}': use ${LINK_NAMES.join(', ')}`);
  // A preset is its figures: a bandwidth or latency beside it would be silently one or the other.
  if (gbps !== undefined || latencyUs !== undefined)
    throw new InputError(`--link-gbps and --link-latency-us describe --link custom; '${name}' is a preset (${preset.gbps} Gbit/s, ${preset.latencyUs} µs): drop them, or use --link custom with both`);
  return preset;
}

/** What the model reads of a step (a StepRecord from a run, or one planned from the schedule). */
export interface StepLike {
  phase: 'forward' | 'backward';
  step: number;
  rank: number;
  flops: number;
  computeMs: number;
  gpuComputeMs: number | null;
  transferBytes: number;
  messages: number;
  overlapped: boolean;
}

export interface Prediction {
  link: Link;
  /** Where compute times came from: the run's measured steps, or FLOPs at a given rate. */
  compute: { source: 'measured' } | { source: 'tflops'; tflops: Rate };
  R: number;
  phases: { phase: 'forward' | 'backward'; stepMs: number[]; exposedCommMs: number }[];
  /** Every step of every phase, in order. */
  stepMs: number[];
  totalMs: number;
  exposedCommMs: number;
  /** The modelled transfer: each step's longest rank transfer, summed over the steps. */
  transferMs: number;
  /** Its share hidden behind compute: 1 − exposedCommMs / transferMs (1 with nothing to move). */
  overlapEfficiency: number;
  commFraction: number;
  tflopsPerGpu: number;
}

/** TFLOP/s, one for both phases or forward and backward apart. */
export type Rate = number | { forward: number; backward: number };

export function transferMs(link: Link, bytes: number, messages: number): number {
  return (bytes * 8) / (link.gbps * 1e9) * 1e3 + (messages * link.latencyUs) / 1e3;
}

/**
 * One rank's step as the link model times it: its compute (measured: the GPU's timestamps, else the
 * host's; or its FLOPs at the given rate), its transfer over the link, and the step's own time on it:
 * the larger of the two where the transfer runs behind the compute, else their sum.
 */
export function stepParts(s: StepLike, link: Link, compute: Prediction['compute']): { compute: number; transfer: number; own: number } {
  const c = compute.source === 'tflops'
    ? s.flops / ((typeof compute.tflops === 'number' ? compute.tflops : compute.tflops[s.phase]) * 1e12) * 1e3
    : s.gpuComputeMs ?? s.computeMs;
  const x = transferMs(link, s.transferBytes, s.messages);
  return { compute: c, transfer: x, own: s.overlapped ? Math.max(c, x) : c + x };
}

export function predict(steps: StepLike[], R: number, link: Link, computeTflops?: Rate): Prediction {
  const rate = (p: StepLike['phase']) => (typeof computeTflops === 'number' ? computeTflops : computeTflops?.[p]);
  for (const p of ['forward', 'backward'] as const) {
    const x = rate(p);
    if (computeTflops !== undefined && !(x !== undefined && Number.isFinite(x) && x > 0)) throw new InputError(`--compute-tflops must be a positive number, got ${x}`);
  }
  const compute: Prediction['compute'] = computeTflops ? { source: 'tflops', tflops: computeTflops } : { source: 'measured' };
  const phases: Prediction['phases'] = [];
  let moved = 0;
  for (const phase of ['forward', 'backward'] as const) {
    const mine = steps.filter((s) => s.phase === phase);
    if (!mine.length) continue;
    const ids = [...new Set(mine.map((s) => s.step))].sort((a, b) => a - b);
    let exposed = 0;
    const stepMs = ids.map((id) => {
      const parts = mine.filter((s) => s.step === id).map((s) => stepParts(s, link, compute));
      const ms = Math.max(...parts.map((x) => x.own));
      exposed += ms - Math.max(...parts.map((x) => x.compute));
      moved += Math.max(0, ...parts.map((x) => x.transfer));
      return ms;
    });
    phases.push({ phase, stepMs, exposedCommMs: exposed });
  }
  const stepMs = phases.flatMap((p) => p.stepMs);
  const totalMs = stepMs.reduce((a, b) => a + b, 0);
  const exposedCommMs = phases.reduce((a, p) => a + p.exposedCommMs, 0);
  const flops = steps.reduce((a, s) => a + s.flops, 0);
  return {
    link, R, phases, stepMs, totalMs, exposedCommMs, compute,
    transferMs: moved, overlapEfficiency: moved > 0 ? Math.max(0, 1 - exposedCommMs / moved) : 1,
    commFraction: totalMs > 0 ? exposedCommMs / totalMs : 0,
    tflopsPerGpu: totalMs > 0 ? flops / R / (totalMs / 1e3) / 1e12 : 0,
  };
}
