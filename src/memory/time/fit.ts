/**
 * The fitted figures of a device profile (its host side), from measured iteration times:
 *   measured ≈ max(GPU, kernels · launch) + fixed                       (the host runs ahead: a dense step)
 *   measured ≈ GPU + kernels · launch + expert passes · e + fixed       (the host waits for the GPU: a MoE step)
 * least squares on the relative error, three unknowns (launch µs per kernel, e µs per MoE expert
 * module pass, fixed ms per iteration): for each launch cost on a 0.01 µs grid (up to 200 µs) the
 * other two solve the normal equations (they enter linearly), e kept ≥ 0. The GPU side is the model's own, at the
 * profile's measured rates (the unfused attention core's at the rates measured in profiled steps,
 * devices.ts scores). Fitted on the build half of a campaign only (bench/megatron/timeTable.ts buildFit).
 */
export interface HostFitPoint {
  id: string;
  /** The model's GPU milliseconds (no host time). */
  gpuMs: number;
  kernels: number;
  expertPasses: number;
  /** The host's launches add to the GPU's time (IterationTime.hostSerial) rather than overlap it. */
  serial: boolean;
  measuredMs: number;
}

export interface HostFit { launchUs: number; moeExpertUs: number; iterationMs: number }

/** The relative residuals' sum of squares and the best (e, fixed) for one launch cost (ms per kernel). */
function atLaunch(points: HostFitPoint[], launchMs: number): { sse: number; expertMs: number; fixedMs: number } {
  // residual_i = (a_i + x_i·e + f)/m_i − 1: linear in (e, f) once the launch cost fixes a_i.
  const rows = points.map((p) => {
    const host = p.kernels * launchMs;
    const a = p.serial ? p.gpuMs + host : Math.max(p.gpuMs, host);
    return { a: a / p.measuredMs, x: (p.serial ? p.expertPasses : 0) / p.measuredMs, u: 1 / p.measuredMs };
  });
  const sum = (g: (r: (typeof rows)[number]) => number) => rows.reduce((s, r) => s + g(r), 0);
  const sxx = sum((r) => r.x * r.x), sxu = sum((r) => r.x * r.u), suu = sum((r) => r.u * r.u), det = sxx * suu - sxu * sxu;
  const bx = sum((r) => r.x * (1 - r.a)), bu = sum((r) => r.u * (1 - r.a));
  // Normal equations in (e, f); e < 0 clamped to 0, f then re-solved (the constrained optimum of a convex quadratic).
  const e = sxx > 0 && det > 1e-12 * sxx * suu ? Math.max(0, (bx * suu - bu * sxu) / det) : 0;
  const f = (bu - e * sxu) / suu;
  return { sse: rows.reduce((s, r) => s + (r.a + r.x * e + r.u * f - 1) ** 2, 0), expertMs: e, fixedMs: f };
}

/** The grid of launch costs searched, µs: 0.01 apart up to 200 (an eager PyTorch launch is tens of µs). */
const GRID_STEPS = 20_000, GRID_US = 0.01;

export function fitHost(points: HostFitPoint[]): HostFit {
  let best = { i: 0, ...atLaunch(points, 0) };
  for (let i = 1; i <= GRID_STEPS; i++) {
    const r = atLaunch(points, (i * GRID_US) / 1e3);
    if (r.sse < best.sse) best = { i, ...r };
  }
  if (best.i === GRID_STEPS) throw new Error(`fitHost: the best launch cost is the grid's end (${GRID_STEPS * GRID_US} µs): the points do not bound it`);
  return { launchUs: Math.round(best.i * GRID_US * 100) / 100, moeExpertUs: best.expertMs * 1e3, iterationMs: best.fixedMs };
}
