/**
 * The fitted figures of a device profile (its host side), from measured iteration times:
 *   measured ≈ max(GPU, kernels · launch) + fixed                       (the host runs ahead: a dense step)
 *   measured ≈ GPU + kernels · launch + expert passes · e + fixed       (the host waits for the GPU: a MoE step)
 * least squares on the relative error, three unknowns (launch µs per kernel, e µs per MoE expert
 * module pass, fixed ms per iteration): for each launch cost on a 0.01 µs grid the other two solve
 * the normal equations (they enter linearly), e kept ≥ 0. The GPU side is the model's own, at the
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
  const fitF = (e: number) => {
    const num = rows.reduce((s, r) => s + r.u * (1 - r.a - r.x * e), 0), den = rows.reduce((s, r) => s + r.u * r.u, 0);
    return num / den;
  };
  let e = 0;
  const sxx = rows.reduce((s, r) => s + r.x * r.x, 0);
  if (sxx > 0) {
    // Normal equations in (e, f).
    const sxu = rows.reduce((s, r) => s + r.x * r.u, 0), suu = rows.reduce((s, r) => s + r.u * r.u, 0);
    const bx = rows.reduce((s, r) => s + r.x * (1 - r.a), 0), bu = rows.reduce((s, r) => s + r.u * (1 - r.a), 0);
    e = Math.max(0, (bx * suu - bu * sxu) / (sxx * suu - sxu * sxu));
  }
  const f = fitF(e);
  return { sse: rows.reduce((s, r) => s + (r.a + r.x * e + r.u * f - 1) ** 2, 0), expertMs: e, fixedMs: f };
}

export function fitHost(points: HostFitPoint[]): HostFit {
  let best = { launchMs: 0, ...atLaunch(points, 0) };
  for (let us = 0.01; us <= 200; us += 0.01) {
    const r = atLaunch(points, us / 1e3);
    if (r.sse < best.sse) best = { launchMs: us / 1e3, ...r };
  }
  return { launchUs: best.launchMs * 1e3, moeExpertUs: best.expertMs * 1e3, iterationMs: best.fixedMs };
}
