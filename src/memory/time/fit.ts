/**
 * The fitted figures of a device profile (its host side), from measured iteration times:
 *   measured ≈ GPU + kernels · launch + expert passes · e + fixed
 * least squares on the relative error, three unknowns (launch µs per kernel, e µs per MoE expert
 * module pass, fixed ms per iteration). The GPU side is the model's own, at the profile's measured
 * rates (the unfused attention core's at the rates measured in profiled steps, devices.ts scores).
 * Fitted on the build half of a campaign only (bench/megatron/timeTable.ts buildFit).
 */
export interface HostFitPoint {
  id: string;
  /** The model's GPU milliseconds (no host time). */
  gpuMs: number;
  kernels: number;
  expertPasses: number;
  measuredMs: number;
}

export interface HostFit { launchUs: number; moeExpertUs: number; iterationMs: number }

/** Solves A x = b (A n×n) by Gaussian elimination with partial pivoting. */
function solve(A: number[][], b: number[]): number[] {
  const n = b.length, M = A.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let piv = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[piv][c])) piv = r;
    [M[c], M[piv]] = [M[piv], M[c]];
    for (let r = c + 1; r < n; r++) {
      const f = M[r][c] / M[c][c];
      for (let k = c; k <= n; k++) M[r][k] -= f * M[c][k];
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) x[r] = (M[r][n] - M[r].slice(r + 1, n).reduce((s, v, j) => s + v * x[r + 1 + j], 0)) / M[r][r];
  return x;
}

export function fitHost(points: HostFitPoint[]): HostFit {
  // Σ_i (Σ_j u_ij x_j − r_i)², u = (kernels, expert passes, 1)/measured, r = 1 − gpu/measured: the normal equations.
  const n = 3, A = Array.from({ length: n }, () => new Array<number>(n).fill(0)), b = new Array<number>(n).fill(0);
  for (const p of points) {
    const u = [p.kernels, p.expertPasses, 1].map((v) => v / p.measuredMs), r = 1 - p.gpuMs / p.measuredMs;
    for (let i = 0; i < n; i++) {
      b[i] += u[i] * r;
      for (let j = 0; j < n; j++) A[i][j] += u[i] * u[j];
    }
  }
  const [launchMs, expertMs, fixedMs] = solve(A, b);
  return { launchUs: launchMs * 1e3, moeExpertUs: expertMs * 1e3, iterationMs: fixedMs };
}
