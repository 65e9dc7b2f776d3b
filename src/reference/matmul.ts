/** float64 C = A·B with A [M, K] and B [K, N] row-major: the reference of the tensor-core GEMM. */
export function referenceMatmul(A: ArrayLike<number>, B: ArrayLike<number>, M: number, K: number, N: number): Float64Array {
  if (A.length !== M * K || B.length !== K * N) throw new Error(`referenceMatmul: A has ${A.length} entries (want ${M * K}), B ${B.length} (want ${K * N})`);
  const C = new Float64Array(M * N);
  for (let i = 0; i < M; i++) for (let k = 0; k < K; k++) {
    const x = A[i * K + k];
    for (let j = 0; j < N; j++) C[i * N + j] += x * B[k * N + j];
  }
  return C;
}
