#!/usr/bin/env python3
"""Megatron-LM's unfused attention core measured on its own (issue 36: terms, not totals).

The module that runs with `--transformer-impl local` (megatron/core/transformer/dot_product_attention.py,
DotProductAttention) is built from the source snapshot in .mlm/ and timed forward and backward with
CUDA events, as a training step calls it: Q, K, V views of one fused QKV tensor [s, b, g, (a/g + 2)·d]
(the layer's split), the data loader's boolean causal mask [b, 1, s, s] (create_attention_mask_in_dataloader),
bf16, attention dropout 0 or 0.1, GQA's repeat_interleave where g < a. Its backward includes what
autograd adds around the in-place masked_fill_ on a view (a copy of the s² gradient) and the gradient
into the fused QKV tensor. One point is also run under torch.profiler: its kernels by name, so that the
s² kernels of a step's profile (bench/megatron/kernels.py) can be matched to this module.

Also measured: the pinned host-to-device copy of that mask (get_batch's .cuda(non_blocking=True)).

  cd .mlm && python3 ../bench/megatron/core_attention.py > OUT/core_attention.json      # GPU host, one GPU
"""
import json
import os
import statistics
import sys
import time

import torch


def init_megatron():
    os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
    os.environ.setdefault('MASTER_PORT', '29711')
    torch.distributed.init_process_group('nccl', rank=0, world_size=1)
    from megatron.core import parallel_state, tensor_parallel
    parallel_state.initialize_model_parallel()
    tensor_parallel.model_parallel_cuda_manual_seed(1234)


def core(a, g, d, dropout):
    from megatron.core.transformer.dot_product_attention import DotProductAttention
    from megatron.core.transformer.enums import AttnMaskType
    from megatron.core.transformer.transformer_config import TransformerConfig
    cfg = TransformerConfig(num_layers=1, hidden_size=a * d, num_attention_heads=a, num_query_groups=g, kv_channels=d,
                            attention_dropout=dropout, bf16=True, params_dtype=torch.bfloat16, masked_softmax_fusion=False)
    return DotProductAttention(cfg, layer_number=1, attn_mask_type=AttnMaskType.causal, attention_type='self').cuda()


def inputs(s, b, a, g, d):
    qkv = torch.randn(s, b, g, (a // g + 2) * d, device='cuda', dtype=torch.bfloat16, requires_grad=True)
    mask = torch.tril(torch.ones(s, s, device='cuda')).unsqueeze(0).unsqueeze(0).expand(b, 1, s, s) < 0.5
    return qkv, mask.contiguous()


def step(mod, qkv, mask, a, g, d):
    s, b = qkv.shape[0], qkv.shape[1]
    q, k, v = torch.split(qkv, [a // g * d, d, d], dim=3)
    q = q.reshape(s, b, a, d)
    return mod(q, k, v, mask)


def timed_point(s, b, a, g, d, dropout, reps):
    mod = core(a, g, d, dropout)
    qkv, mask = inputs(s, b, a, g, d)
    grad = torch.randn(s, b, a * d, device='cuda', dtype=torch.bfloat16)
    fw, bw = [], []
    for i in range(reps + 2):
        e0, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        e0.record()
        out = step(mod, qkv, mask, a, g, d)
        e1.record()
        out.backward(grad)
        e2.record()
        e2.synchronize()
        qkv.grad = None
        if i >= 2:
            fw.append(e0.elapsed_time(e1))
            bw.append(e1.elapsed_time(e2))
    del mod, qkv, mask, grad, out
    torch.cuda.empty_cache()
    return statistics.median(fw), statistics.median(bw)


def profiled(s, b, a, g, d, dropout):
    from torch.profiler import ProfilerActivity, profile
    mod = core(a, g, d, dropout)
    qkv, mask = inputs(s, b, a, g, d)
    grad = torch.randn(s, b, a * d, device='cuda', dtype=torch.bfloat16)
    for _ in range(2):
        step(mod, qkv, mask, a, g, d).backward(grad)
        qkv.grad = None
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step(mod, qkv, mask, a, g, d).backward(grad)
        torch.cuda.synchronize()
    rows = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            r = rows.setdefault(ev.name[:120], {'name': ev.name[:120], 'count': 0, 'ms': 0.0})
            r['count'] += 1
            r['ms'] += ev.device_time / 1e3
    return sorted(rows.values(), key=lambda r: -r['ms'])


def htod_gbps():
    x = torch.ones(1 << 30, dtype=torch.bool).pin_memory()
    for _ in range(2):
        x.cuda(non_blocking=True)
    torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        y = x.cuda(non_blocking=True)
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1))
        del y
    return x.numel() / statistics.median(ts) / 1e6


# (s, b, a, g, d): heads × batch from the campaign's range; scores b·a·s² up to 8.6e9 (17 GB of bf16 scores).
GRID = []
for s in (2048, 4096, 8192, 16384, 32768):
    for d in (64, 128):
        for ba in ((4, 16) if s <= 16384 else (2, 4)) if d == 128 else ((8, 32) if s <= 16384 else (4, 8)):
            GRID.append((s, 1, ba, ba, d))
GQA = [(8192, 1, 8, 2, 128), (16384, 1, 8, 4, 64), (4096, 2, 12, 3, 64)]


def main():
    init_megatron()
    t0 = time.time()
    out = {'device': torch.cuda.get_device_name(), 'torch': torch.__version__, 'started': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
           'module': 'megatron.core.transformer.dot_product_attention.DotProductAttention (--transformer-impl local), bf16, bool mask [b,1,s,s]',
           'points': [], 'htodGBs': htod_gbps()}
    for (s, b, a, g, d) in GRID + GQA:
        for p in (0.0, 0.1):
            reps = 5 if s >= 16384 else 10
            f, bw = timed_point(s, b, a, g, d, p, reps)
            out['points'].append({'s': s, 'b': b, 'a': a, 'g': g, 'd': d, 'dropout': p, 'fwdMs': f, 'bwdMs': bw, 'scores': b * a * s * s})
            print('%5.0f s  s=%d b=%d a=%d g=%d d=%d p=%.1f  fwd %.3f ms  bwd %.3f ms  (%.3f / %.3f ns per score)' %
                  (time.time() - t0, s, b, a, g, d, p, f, bw, f * 1e6 / (b * a * s * s), bw * 1e6 / (b * a * s * s)), file=sys.stderr, flush=True)
    out['profiled'] = {'s': 16384, 'b': 1, 'a': 4, 'g': 4, 'd': 128, 'dropout': 0.0, 'kernels': profiled(16384, 1, 4, 4, 128, 0.0)}
    print(json.dumps(out, indent=1))


if __name__ == '__main__':
    main()
