#!/usr/bin/env python3
"""PyTorch peer for flashring's kernel bench: scaled_dot_product_attention at the same shapes,
on the same GPU, in the same session. f16 with the FlashAttention-2 backend ('flash'), f32 with
the memory-efficient backend ('efficient'). Timed with CUDA events: warm-up, median of repeats,
random inputs. FLOPs as flashring: forward 4*B*H*N^2*D (x0.5 causal), backward x2.5, fwd+bwd x3.5.

  python3 bench/peers/torch_sdpa.py --N 4096,16384 --D 64,128 --heads 16 --gemm 8192 --out peer.json

--gemm S adds torch.matmul at S x S x S (pass 'gemm') in f16 and in f32 with TF32 off, the peers of the GEMM ceiling probe's
tensor-core and plain-WGSL f32 tilings
(`node bench/ceiling/run.mjs --size S --peer peer.json`).
"""
import argparse, json, statistics, sys, datetime, time
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

def flops(B, H, N, D, causal, mult):
    return 4 * B * H * N * N * D * (0.5 if causal else 1.0) * mult

def time_ms(fn, reps, warm_s=1.0, inner=1):
    """Median ms of one fn() over reps timings, each of `inner` calls back to back (CUDA events)."""
    # Warm-up for at least warm_s (GPU clocks ramp; flashring's bench does the same).
    t0, i = time.perf_counter(), 0
    while i < 3 or time.perf_counter() - t0 < warm_s:
        fn()
        torch.cuda.synchronize()
        i += 1
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(inner):
            fn()
        b.record()
        torch.cuda.synchronize()
        out.append(a.elapsed_time(b) / inner)
    return statistics.median(out)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--N', default='1024,4096,16384')
    ap.add_argument('--D', default='64,128')
    ap.add_argument('--heads', type=int, default=16)
    ap.add_argument('--batch', type=int, default=1)
    ap.add_argument('--reps', type=int, default=10)
    ap.add_argument('--gemm', type=int, default=0, help='also time f16 and f32 (TF32 off) matmuls of this size (0: skip)')
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    B, H = a.batch, a.heads
    rows = []
    for dtype, backend, name in [(torch.float16, SDPBackend.FLASH_ATTENTION, 'flash'), (torch.float32, SDPBackend.EFFICIENT_ATTENTION, 'efficient')]:
        for N in [int(x) for x in a.N.split(',')]:
            for D in [int(x) for x in a.D.split(',')]:
                for causal in (False, True):
                    q, k, v = (torch.randn(B, H, N, D, device='cuda', dtype=dtype, requires_grad=True) for _ in range(3))
                    g = torch.randn(B, H, N, D, device='cuda', dtype=dtype)
                    try:
                        with sdpa_kernel(backend):
                            fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                            o = fwd()
                            def fb():
                                out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                                out.backward(g)
                            def bwd_only():
                                o.backward(g, retain_graph=True)
                            f_ms = time_ms(fwd, a.reps)
                            fb_ms = time_ms(fb, a.reps)
                            b_ms = time_ms(bwd_only, a.reps)
                    except RuntimeError as e:
                        print(f'skip {name} {dtype} N={N} D={D} causal={causal}: {e}', file=sys.stderr)
                        continue
                    for pass_, ms, mult in (('fwd', f_ms, 1.0), ('bwd', b_ms, 2.5), ('fwd+bwd', fb_ms, 3.5)):
                        rows.append(dict(pass_=pass_, N=N, D=D, H=H, B=B, causal=causal, dtype=str(dtype).replace('torch.', ''),
                                         backend=name, ms=ms, tflops=flops(B, H, N, D, causal, mult) / (ms * 1e-3) / 1e12))
                    print(f'{name:9s} {str(dtype):14s} N={N:6d} D={D:4d} causal={causal!s:5s} fwd {rows[-3]["tflops"]:7.1f} bwd {rows[-2]["tflops"]:7.1f} fwd+bwd {rows[-1]["tflops"]:7.1f} TFLOP/s', flush=True)
                    del q, k, v, g, o
                    torch.cuda.empty_cache()
    if a.gemm:
        # f16 (the tensor-core GEMM ceiling's peer) and f32 with TF32 off: cuBLAS's f32 GEMM without tensor cores,
        # the peer of the plain-WGSL f32 GEMM (PyTorch's memory-efficient f32 attention itself uses tensor cores on
        # compute capability 8.0 and up: docs/performance.md, twenty-eighth step).
        S = a.gemm
        torch.backends.cuda.matmul.allow_tf32 = False
        for dtype in (torch.float16, torch.float32):
            x, y = (torch.randn(S, S, device='cuda', dtype=dtype) for _ in range(2))
            ms = time_ms(lambda: x @ y, a.reps)
            name = str(dtype).replace('torch.', '')
            rows.append(dict(pass_='gemm', M=S, N=S, K=S, D=0, H=0, B=1, causal=False, dtype=name, backend='matmul', ms=ms,
                             tflops=2 * S ** 3 / (ms * 1e-3) / 1e12))
            print(f'matmul    {name:14s} {S}^3 {rows[-1]["tflops"]:7.1f} TFLOP/s{" (TF32 off)" if dtype == torch.float32 else ""}', flush=True)
            del x, y
    for r in rows:
        r['pass'] = r.pop('pass_')
    meta = dict(kind='flashring.peer', engine=f'torch {torch.__version__}', gpu=torch.cuda.get_device_name(0),
                createdAt=datetime.datetime.now(datetime.timezone.utc).isoformat(), command=' '.join(sys.argv), results=rows)
    json.dump(meta, open(a.out, 'w'), indent=1)

if __name__ == '__main__':
    main()
