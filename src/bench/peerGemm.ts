/**
 * PyTorch's matmuls in a peer file (bench/peers/torch_sdpa.py --gemm), the vendor's GEMM on each kind of unit: f16 (the
 * tensor-core kernels' and GEMM tilings' peer) and f32, which that script times with TF32 off (the portable kernels'
 * and the plain-WGSL f32 tilings' peer: FMA units only). Read by the bench (gemmShare) and the GEMM ceiling probe.
 */
export interface PeerGemm { pass: string; N: number; dtype?: string; tflops: number }
export interface PeerGemms { f16?: PeerGemm; f32?: PeerGemm }

/** The f16 and f32 matmuls among a peer file's rows, of size `size` where given (else the first of each); a row without a dtype is f16 (files from before the f32 matmul). */
export function gemmPeers(rows: readonly PeerGemm[], size?: number): PeerGemms {
  const gemms = rows.filter((p) => p.pass === 'gemm' && (size === undefined || p.N === size));
  return { f16: gemms.find((p) => (p.dtype ?? 'float16') === 'float16'), f32: gemms.find((p) => p.dtype === 'float32') };
}
