/**
 * The bench's second figure beside `ratio` (docs/cli.md, bench): each kernel row's share of cuBLAS's GEMM on the units
 * its pass ran on, chosen by the pass's path, not its precision: the portable kernels (f32 or f16 storage, FMA units)
 * against the f32 matmul with TF32 off, tensor cores against the f16 matmul, and none for a fwd+bwd row whose
 * forward and backward ran on different units.
 */
import { describe, expect, it } from 'vitest';
import { withPeers, type PeerRow } from '../src/bench/run.js';
import type { KernelRow } from '../src/bench/kernels.js';

const shape = { B: 1, H: 16, N: 16384, D: 128, causal: false };
const row = (pass: KernelRow['pass'], precision: KernelRow['precision'], path: KernelRow['path'], tflops: number): KernelRow =>
  ({ ...shape, pass, precision, path, tiles: '', ms: 1, tflops, timer: 'gpu-timestamps', checkErr: 1e-7 });
const peers: PeerRow[] = [
  { ...shape, H: 16, pass: 'fwd', dtype: 'float32', backend: 'efficient', ms: 1, tflops: 40 },
  { ...shape, H: 16, pass: 'fwd', dtype: 'float16', backend: 'flash', ms: 1, tflops: 300 },
  { pass: 'gemm', N: 4096, D: 0, H: 0, B: 1, causal: false, dtype: 'float16', backend: 'matmul', ms: 1, tflops: 500 },
  { pass: 'gemm', N: 4096, D: 0, H: 0, B: 1, causal: false, dtype: 'float32', backend: 'matmul', ms: 1, tflops: 50 },
];

describe('bench rows: gemmShare by the units a pass ran on', () => {
  it('portable f16 rows against the f32 matmul (FMA units), though their ratio is to FlashAttention-2', () => {
    const [r] = withPeers([row('fwd', 'f16', 'scalar', 20)], peers);
    expect(r.ratio).toBeCloseTo(20 / 300, 12);
    expect(r).toMatchObject({ gemmPeer: 'torch-matmul-float32-tf32off-4096^3', gemmTflops: 50 });
    expect(r.gemmShare).toBeCloseTo(20 / 50, 12);
  });

  it('tensor-core rows against the f16 matmul; portable f32 against the f32 one', () => {
    const [tc, p32] = withPeers([row('fwd', 'f16', 'subgroup-matrix', 120), row('fwd', 'f32', 'scalar', 22)], peers);
    expect(tc).toMatchObject({ gemmPeer: 'torch-matmul-float16-4096^3', gemmTflops: 500 });
    expect(tc.gemmShare).toBeCloseTo(120 / 500, 12);
    expect(p32.gemmShare).toBeCloseTo(22 / 50, 12);
    expect(p32.ratio).toBeCloseTo(22 / 40, 12);
  });

  it('a backward on other units than its forward: each pass by its own, the fwd+bwd row by none', () => {
    const rows = withPeers([row('bwd', 'f16', 'scalar', 10), row('fwd+bwd', 'f16', 'subgroup-matrix+scalar', 30)], peers);
    expect(rows[0].gemmShare).toBeCloseTo(10 / 50, 12);
    expect(rows[1]).toMatchObject({ gemmPeer: '', gemmTflops: null, gemmShare: null });
  });

  it('no matmul in the peer file: no share (the ratio stands alone)', () => {
    const [r] = withPeers([row('fwd', 'f32', 'scalar', 22)], peers.filter((p) => p.pass !== 'gemm'));
    expect(r).toMatchObject({ gemmPeer: '', gemmTflops: null, gemmShare: null });
    expect(r.ratio).toBeCloseTo(22 / 40, 12);
  });
});
