#!/usr/bin/env python3
"""Which attention PyTorch's scaled_dot_product_attention runs by default, and how fast, against each
backend forced: bf16, causal, B=1, the heads and head dim of the PyTorch harness (bench/torchcp:
H=16 or 32, D=128), N from 4K to 128K. The harness calls SDPA with no backend chosen; the time
model's profile had only the FlashAttention-2 backend ('flash'). Timed with CUDA events (median of
repeats after a warm-up); forward, and backward as (forward + backward) - forward. FLOPs as
flashring counts them: forward 4*B*H*N^2*D*0.5 (causal), backward x2.5.

  python3 bench/peers/sdpa_backends.py --N 4096,16384,65536,131072 --heads 16 --out sdpa.json
"""
import argparse, datetime, json, statistics, time
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

BACKENDS = {'default': None, 'flash': SDPBackend.FLASH_ATTENTION, 'cudnn': SDPBackend.CUDNN_ATTENTION, 'efficient': SDPBackend.EFFICIENT_ATTENTION}


def time_ms(fn, reps):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 0.5:
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        out.append(a.elapsed_time(b))
    return statistics.median(out)


def run(name, H, N, D, reps):
    q, k, v = (torch.randn(1, H, N, D, device='cuda', dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    g = torch.randn(1, H, N, D, device='cuda', dtype=torch.bfloat16)
    ctx = (lambda: sdpa_kernel(BACKENDS[name])) if BACKENDS[name] is not None else (lambda: torch.autograd.graph.saved_tensors_hooks(lambda x: x, lambda x: x))
    def fwd():
        with ctx(), torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, is_causal=True)
    def both():
        with ctx():
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.backward(g)
    f, fb = time_ms(fwd, reps), time_ms(both, reps)
    fl = 4 * H * N * N * D * 0.5
    return dict(backend=name, H=H, N=N, D=D, causal=True, dtype='bfloat16', fwd_ms=f, bwd_ms=fb - f,
                fwdTflops=fl / (f * 1e-3) / 1e12, bwdTflops=2.5 * fl / ((fb - f) * 1e-3) / 1e12)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--N', default='4096,16384,65536,131072')
    ap.add_argument('--heads', type=int, default=16)
    ap.add_argument('--D', type=int, default=128)
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--out', required=True)
    ns = ap.parse_args()
    rows = []
    for N in [int(x) for x in ns.N.split(',')]:
        for name in BACKENDS:
            try:
                r = run(name, ns.heads, N, ns.D, ns.reps)
            except RuntimeError as e:
                r = dict(backend=name, H=ns.heads, N=N, D=ns.D, error=str(e).split('\n')[0][:200])
            rows.append(r)
            print(json.dumps(r), flush=True)
            torch.cuda.empty_cache()
    doc = dict(kind='flashring.sdpa-backends', createdAt=datetime.datetime.utcnow().isoformat() + 'Z', torch=torch.__version__,
               gpu=torch.cuda.get_device_name(0), cudnn=torch.backends.cudnn.version(), rows=rows)
    json.dump(doc, open(ns.out, 'w'), indent=1)


if __name__ == '__main__':
    main()
