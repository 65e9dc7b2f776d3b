#!/usr/bin/env python3
"""The attention calls of PyTorch's context_parallel ring (torch 2.11,
torch/distributed/tensor/experimental/_context_parallel/_attention.py, load balance on, as the
harness bench/torchcp runs it), timed on one GPU with SDPA's cuDNN backend (what its handler
dispatches to for the harness's calls): on a rank holding T local tokens, step 0 is a causal T x T
call; every later step a non-causal call with half of one side, T/2 queries x T keys (ranks whose
source is later) or T queries x T/2 keys (earlier). Each pair count is T^2/2 per head, as a causal
T x T call. bf16, B=1, the harness's 32 heads of D=128. Forward, and backward as (forward +
backward) - forward, CUDA events, median of repeats after a warm-up (sdpa_backends.time_ms).

  python3 bench/peers/sdpa_ring_calls.py --T 2048,4096,8192,16384,32768,65536 --out ring_calls.json
"""
import argparse, datetime, json, os, sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdpa_backends import time_ms  # noqa: E402

CALLS = {'causal': (1, 1, True), 'half-q': (0.5, 1, False), 'half-k': (1, 0.5, False)}


def run(call, T, H, D, reps):
    fq, fk, causal = CALLS[call]
    nq, nk = int(T * fq), int(T * fk)
    mk = lambda n: torch.randn(1, H, n, D, device='cuda', dtype=torch.bfloat16, requires_grad=True)
    q, k, v = mk(nq), mk(nk), mk(nk)
    g = torch.randn(1, H, nq, D, device='cuda', dtype=torch.bfloat16)
    def fwd():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    def both():
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o.backward(g)
    f, fb = time_ms(fwd, reps), time_ms(both, reps)
    fl = 4 * H * D * (T * T / 2)  # every call of the ring covers T^2/2 pairs per head
    return dict(call=call, T=T, q=nq, k=nk, causal=causal, H=H, D=D, dtype='bfloat16', backend='cudnn',
                fwd_ms=f, bwd_ms=fb - f, fwdTflops=fl / (f * 1e-3) / 1e12, bwdTflops=2.5 * fl / ((fb - f) * 1e-3) / 1e12)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--T', default='2048,4096,8192,16384,32768,65536')
    ap.add_argument('--heads', type=int, default=32)
    ap.add_argument('--D', type=int, default=128)
    ap.add_argument('--reps', type=int, default=7)
    ap.add_argument('--out', required=True)
    ns = ap.parse_args()
    rows = []
    for T in [int(x) for x in ns.T.split(',')]:
        for call in CALLS:
            r = run(call, T, ns.heads, ns.D, ns.reps)
            rows.append(r)
            print(f"T={T:6d} {call:7s} q={r['q']:6d} k={r['k']:6d} fwd {r['fwd_ms']:8.3f} ms ({r['fwdTflops']:5.1f} TF/s)  bwd {r['bwd_ms']:8.3f} ms ({r['bwdTflops']:5.1f} TF/s)", flush=True)
            torch.cuda.empty_cache()
    meta = dict(gpu=torch.cuda.get_device_name(0), torch=torch.__version__, date=datetime.datetime.now(datetime.timezone.utc).isoformat(),
                command=' '.join(sys.argv))
    with open(ns.out, 'w') as fh:
        json.dump(dict(meta=meta, rows=rows), fh, indent=1)


if __name__ == '__main__':
    main()
