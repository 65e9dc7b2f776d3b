#!/usr/bin/env python3
"""The peer of `bench/cp-run.mjs steps`: what splitting one causal call into a zigzag ring's calls
costs FlashAttention-2 itself (PyTorch's scaled_dot_product_attention, 'flash' backend, f16), on
the same GPU in the same session.

A p2p zigzag ring of R ranks over N tokens runs, summed over its ranks (as ring-flash-attention's
zigzag_ring_flash_attn does, and as flashring's steps bench counts its plain calls):
  R            diagonal steps: one causal call of N/R queries and keys (a rank's two chunks,
               concatenated in order, make causal attention exact);
  R(R-1)/2     steps from an earlier rank: a dense call of N/R queries x N/(2R) keys;
  R(R-1)/2     steps from a later rank: a dense call of N/(2R) queries x N/R keys.
Their summed GPU time over R = 1's one causal call of N is the peer's ratio for the issue's
"summed kernel time at R <= 1.1 x R=1". Forward, backward (torch.autograd.grad of the kept graph:
FlashAttention-2's backward with its own preprocess per call; --grads accumulate runs
o.backward instead, which also adds each call's gradients into q/k/v.grad, an in-place add per
tensor as a ring's accumulation of block gradients: the script's only mode before the option,
and the one bench/results/cp-h200-2026-12-01-v6 was measured with) and their sum. Medians of --reps CUDA-event
timings after >= 1 s of warm-up per call shape; each call shape timed in a loop of --inner calls
so launch gaps between calls count as they would in a ring.

  python3 bench/peers/torch_ring_steps.py --N 16384 --R 2,4,8 --heads 16 --D 128 --out peer-steps.json
"""
import argparse, datetime, json, os, sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_sdpa import time_ms  # noqa: E402 (the same warm-up and CUDA-event timing as the kernel peer)


def call_ms(B, H, nq, nk, D, causal, reps, inner, grads='fresh'):
    """(forward ms, backward ms) of one flash call of nq queries and nk keys."""
    q = torch.randn(B, H, nq, D, device='cuda', dtype=torch.float16, requires_grad=True)
    k, v = (torch.randn(B, H, nk, D, device='cuda', dtype=torch.float16, requires_grad=True) for _ in range(2))
    g = torch.randn(B, H, nq, D, device='cuda', dtype=torch.float16)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        o = fwd()
        f = time_ms(fwd, reps, inner=inner)
        if grads == 'accumulate':
            bwd = lambda: o.backward(g, retain_graph=True)
        else:
            bwd = lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)
        b = time_ms(bwd, reps, inner=inner)
    del q, k, v, g, o
    torch.cuda.empty_cache()
    return f, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--N', default='16384')
    ap.add_argument('--R', default='2,4,8')
    ap.add_argument('--heads', type=int, default=16)
    ap.add_argument('--D', type=int, default=128)
    ap.add_argument('--batch', type=int, default=1)
    ap.add_argument('--reps', type=int, default=10)
    ap.add_argument('--inner', type=int, default=5)
    ap.add_argument('--grads', choices=('fresh', 'accumulate'), default='fresh',
                    help="backward: fresh gradients (autograd.grad; the kernel alone) or accumulated into .grad (o.backward)")
    ap.add_argument('--out', required=True)
    a = ap.parse_args()
    B, H, D = a.batch, a.heads, a.D
    rows = []
    for N in [int(x) for x in a.N.split(',')]:
        f1, b1 = call_ms(B, H, N, N, D, True, a.reps, a.inner, a.grads)
        rows.append(dict(N=N, R=1, fwdMs=f1, bwdMs=b1, fwdRatio=1.0, bwdRatio=1.0, ratio=1.0))
        print(f'peer N={N} R=1: fwd {f1:.3f} ms bwd {b1:.3f} ms', flush=True)
        for R in [int(x) for x in a.R.split(',')]:
            if N % (2 * R):
                print(f'peer N={N} R={R}: skipped (N not divisible by 2R)', file=sys.stderr)
                continue
            s = N // R
            kinds = {'diagonal': (R, s, s, True), 'j<r': (R * (R - 1) // 2, s, s // 2, False), 'j>r': (R * (R - 1) // 2, s // 2, s, False)}
            ms = {name: call_ms(B, H, nq, nk, D, c, a.reps, a.inner, a.grads) for name, (_, nq, nk, c) in kinds.items()}
            f = sum(kinds[k][0] * ms[k][0] for k in kinds)
            b = sum(kinds[k][0] * ms[k][1] for k in kinds)
            row = dict(N=N, R=R, fwdMs=f, bwdMs=b, fwdRatio=f / f1, bwdRatio=b / b1, ratio=(f + b) / (f1 + b1),
                       steps={k: dict(count=kinds[k][0], nq=kinds[k][1], nk=kinds[k][2], causal=kinds[k][3], fwdMs=ms[k][0], bwdMs=ms[k][1]) for k in kinds})
            rows.append(row)
            print(f'peer N={N} R={R}: fwd {f:.3f} ms ({row["fwdRatio"]:.3f}x R=1) bwd {b:.3f} ms ({row["bwdRatio"]:.3f}x) fwd+bwd {row["ratio"]:.3f}x R=1', flush=True)
    meta = dict(kind='flashring.peer-ring-steps', engine=f'torch {torch.__version__}', gpu=torch.cuda.get_device_name(0),
                createdAt=datetime.datetime.now(datetime.timezone.utc).isoformat(), command=' '.join(sys.argv),
                B=B, H=H, D=D, grads=a.grads, results=rows)
    json.dump(meta, open(a.out, 'w'), indent=1)
    print('\n== FlashAttention-2 (torch sdpa flash, f16): zigzag ring calls summed / R=1 causal ==')
    print(f'{"N":>7} {"R":>2} {"fwd":>7} {"bwd":>7} {"fwd+bwd":>8}')
    for r in rows:
        print(f'{r["N"]:>7} {r["R"]:>2} {r["fwdRatio"]:7.3f} {r["bwdRatio"]:7.3f} {r["ratio"]:8.3f}')


if __name__ == '__main__':
    main()
