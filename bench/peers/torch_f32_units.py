#!/usr/bin/env python3
"""Which arithmetic units PyTorch's f32 attention runs on, and the vendor's f32 GEMM on each.

Issue 37 sets the portable kernels (plain WGSL: no subgroup matrices, so no tensor cores) against
PyTorch's memory-efficient f32 attention. CUTLASS's kernels behind that backend pick, for f32 on
compute capability 8.0 and up, tensor-core products split in three TF32 products
(OpMultiplyAddFastF32: x = big + small, both TF32, big*big + big*small + small*big). This script
measures rather than trusts that:

1. A bit probe. Every V entry is c = 1 + 2^-11 + 2^-23 (24 significant bits), every key the same row,
   so each query's P~ is 1 for each of Nk keys (Nk = 1, 2) and O = Nk*c / Nk = c exactly in f32
   arithmetic: c, 2c and 2c / 2 are f32 numbers. Split into TF32 halves (11 significant bits each),
   c's last bit is lost: big = 1 + 2^-10, small = TF32(-2^-11 + 2^-23) = -2^-11, so O = 1 + 2^-11,
   one unit in the last place (2^-23) low. The probe prints how many of O's entries are c exactly,
   for the memory-efficient backend and, as the control, the math backend with TF32 off.
2. GEMMs at S^3 through cuBLAS (torch.matmul): f32 with TF32 off (the vendor's f32 GEMM without
   tensor cores), f32 with TF32 on, f16.
3. The memory-efficient f32 forward's kernel names (torch.profiler).

  python3 bench/peers/torch_f32_units.py --gemm 8192 --out units.json
"""
import argparse, datetime, json, sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from torch_sdpa import time_ms  # the peers' one timing: warm-up, then the median of CUDA-event timings

C = 1.0 + 2.0 ** -11 + 2.0 ** -23  # an f32 number with 24 significant bits

def bit_probe(backend, nk, d, heads=4, nq=256):
    q = torch.randn(1, heads, nq, d, device='cuda', dtype=torch.float32)
    k = torch.randn(1, heads, 1, d, device='cuda', dtype=torch.float32).expand(1, heads, nk, d).contiguous()
    v = torch.full((1, heads, nk, d), C, device='cuda', dtype=torch.float32)
    assert v[0, 0, 0, 0].item() == C, 'c is not an f32 number'
    with sdpa_kernel(backend):
        o = F.scaled_dot_product_attention(q, k, v)
    torch.cuda.synchronize()
    exact = (o == C).float().mean().item()
    ulps = ((o.double() - C) / 2.0 ** -23).round()
    return dict(backend=backend.name, Nk=nk, D=d, exactShare=exact, ulpsMin=ulps.min().item(), ulpsMax=ulps.max().item())

def gemm_tflops(s, dtype, tf32, reps):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    x, y = (torch.randn(s, s, device='cuda', dtype=dtype) for _ in range(2))
    ms = time_ms(lambda: x @ y, reps)
    torch.backends.cuda.matmul.allow_tf32 = False
    return dict(dtype=str(dtype).replace('torch.', ''), tf32=tf32, S=s, ms=ms, tflops=2 * s ** 3 / (ms * 1e-3) / 1e12)

def kernel_names(d):
    q, k, v = (torch.randn(1, 16, 4096, d, device='cuda', dtype=torch.float32) for _ in range(3))
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        F.scaled_dot_product_attention(q, k, v)
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            F.scaled_dot_product_attention(q, k, v)
            torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gemm', type=int, default=8192, help='GEMM size S (S x S x S)')
    ap.add_argument('--reps', type=int, default=10)
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    probes = [bit_probe(b, nk, d) for b in (SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH) for nk in (1, 2) for d in (64, 128)]
    for p in probes:
        print(f"bit probe {p['backend']:20s} Nk={p['Nk']} D={p['D']:3d}: O == c in {100 * p['exactShare']:5.1f}% of entries, "
              f"O - c from {p['ulpsMin']:+.0f} to {p['ulpsMax']:+.0f} units of 2^-23", flush=True)
    gemms = [gemm_tflops(a.gemm, torch.float32, False, a.reps), gemm_tflops(a.gemm, torch.float32, True, a.reps),
             gemm_tflops(a.gemm, torch.float16, False, a.reps)]
    for g in gemms:
        print(f"cuBLAS matmul {g['dtype']:8s} tf32={g['tf32']!s:5s} {g['S']}^3: {g['tflops']:6.1f} TFLOP/s", flush=True)
    names = {}
    for d in (64, 128):
        try:
            names[d] = kernel_names(d)
        except Exception as e:  # the profiler's API moves between versions: say so, keep the rest
            names[d] = [f'(kernel names not read: {type(e).__name__}: {e})']
    for d, ns in names.items():
        print(f'memory-efficient f32 forward, D={d}: ' + '; '.join(ns), flush=True)
    meta = dict(kind='flashring.f32-units', engine=f'torch {torch.__version__}', gpu=torch.cuda.get_device_name(0),
                createdAt=datetime.datetime.now(datetime.timezone.utc).isoformat(), command=' '.join(sys.argv),
                c=C, bitProbe=probes, gemm=gemms, efficientKernels={str(d): ns for d, ns in names.items()})
    json.dump(meta, open(a.out, 'w'), indent=1)

if __name__ == '__main__':
    main()
