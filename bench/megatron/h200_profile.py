#!/usr/bin/env python3
"""A device profile for an iteration-time model (issue 36), measured with PyTorch on the GPU host:
bf16 and fp32 GEMM TFLOP/s over a few shapes, batched GEMM (the unfused attention's baddbmm/bmm),
HBM bandwidth (a device-to-device copy) and the elementwise rate of softmax and dropout.
Medians of CUDA-event timings after warm-up. Writes one JSON to stdout.

  python3 bench/megatron/h200_profile.py > profile.json
"""
import json
import statistics
import torch


def timed(fn, reps=20, warm=5):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    return statistics.median(ts)


def main():
    out = {'device': torch.cuda.get_device_name(), 'torch': torch.__version__, 'gemm': [], 'bmm': [], 'elementwise': []}
    torch.backends.cuda.matmul.allow_tf32 = False
    for dt in (torch.bfloat16, torch.float32):
        for m, n, k in ((4096, 4096, 4096), (8192, 8192, 8192), (16384, 1024, 1024), (16384, 4096, 1024), (2048, 32000, 1024), (8192, 2816, 1024)):
            a, b = torch.randn(m, k, device='cuda', dtype=dt), torch.randn(k, n, device='cuda', dtype=dt)
            t = timed(lambda: a @ b)
            out['gemm'].append({'dtype': str(dt)[6:], 'm': m, 'n': n, 'k': k, 'seconds': t, 'tflops': 2 * m * n * k / t / 1e12})
    for bh, s, d in ((16, 4096, 64), (16, 8192, 128), (4, 16384, 128), (32, 2048, 64)):
        q, kk = torch.randn(bh, s, d, device='cuda', dtype=torch.bfloat16), torch.randn(bh, d, s, device='cuda', dtype=torch.bfloat16)
        t = timed(lambda: torch.bmm(q, kk))
        out['bmm'].append({'batch': bh, 's': s, 'd': d, 'seconds': t, 'tflops': 2 * bh * s * s * d / t / 1e12})
    x = torch.randn(64, 4096, 4096, device='cuda', dtype=torch.bfloat16)  # 2 GiB
    y = torch.empty_like(x)
    n = x.numel() * 2
    out['elementwise'].append({'op': 'copy', 'bytes_moved': 2 * n, 'seconds': (t := timed(lambda: y.copy_(x))), 'gbps': 2 * n / t / 1e9})
    out['elementwise'].append({'op': 'softmax', 'bytes_moved': 2 * n, 'seconds': (t := timed(lambda: torch.softmax(x, -1))), 'gbps': 2 * n / t / 1e9})
    out['elementwise'].append({'op': 'dropout', 'bytes_moved': 2 * n + x.numel(), 'seconds': (t := timed(lambda: torch.nn.functional.dropout(x, 0.1))), 'gbps': (2 * n + x.numel()) / t / 1e9})
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    main()
