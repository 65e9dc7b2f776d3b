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

  cd .mlm && PYTHONPATH=$PWD python3 ../bench/megatron/core_attention.py > OUT/core_attention.jsonl   # GPU host, one GPU
"""
import json
import os
import statistics
import sys
import time

import torch


# TransformerConfig's default is an fp32 softmax; pretrain_gpt.py's (--attention-softmax-in-fp32 not given)
# is bf16, as the campaign's runs and their profiles show (cunn_SoftMaxForward*<8, c10::BFloat16, ...>).
# The 2026-12-02 18:47 UTC run (bench/results/2026-12-02-time-heldout/core_attention.jsonl) predates this
# line: it measured the fp32 softmax. FLASHRING_SOFTMAX_FP32=1 measures that path again.
SOFTMAX_FP32 = os.environ.get('FLASHRING_SOFTMAX_FP32') == '1'


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
                            attention_dropout=dropout, bf16=True, params_dtype=torch.bfloat16, masked_softmax_fusion=False,
                            attention_softmax_in_fp32=SOFTMAX_FP32)
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
    """One forward + backward under torch.profiler, summarised as a step's profile is (kernels.py: kernels by name, GPU busy)."""
    import tempfile
    from torch.profiler import ProfilerActivity, profile
    os.environ['FLASHRING_KERNELS_STEPS'] = '1'  # summarise() averages over this many iterations: here one
    from kernels import summarise
    mod = core(a, g, d, dropout)
    qkv, mask = inputs(s, b, a, g, d)
    grad = torch.randn(s, b, a * d, device='cuda', dtype=torch.bfloat16)
    for _ in range(2):
        step(mod, qkv, mask, a, g, d).backward(grad)
        qkv.grad = None
    torch.cuda.synchronize()
    t0 = time.time()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step(mod, qkv, mask, a, g, d).backward(grad)
        torch.cuda.synchronize()
    wall = time.time() - t0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'trace.json')
        prof.export_chrome_trace(path)
        out = summarise(path, wall)
    del mod, qkv, mask, grad
    torch.cuda.empty_cache()
    return {k: out[k] for k in ('gpuBusyMs', 'kernelCount', 'copyCount', 'launches', 'kernels')}


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


# (s, b, a, g, d): heads × batch from the campaign's range; scores b·a·s² up to 4.3e9 (8.6 GB of bf16 scores:
# the module's forward and backward hold several s² tensors at once, and 8.6e9 scores ran out of the H200's memory).
GRID = []
for s in (2048, 4096, 8192, 16384, 32768):
    for d in (64, 128):
        for ba in ((8, 32) if s <= 8192 else (4, 16) if s == 16384 else (2, 4)) if d == 64 else ((4, 16) if s <= 16384 else (2, 4)):
            GRID.append((s, 1, ba, ba, d))
GQA = [(8192, 1, 8, 2, 128), (16384, 1, 8, 4, 64), (4096, 2, 12, 3, 64)]
PROFILED = [(8192, 1, 4, 4, 128), (16384, 1, 4, 4, 128)]


def emit(doc):
    """One JSON object per line, written as it is measured: a point that runs out of memory loses nothing before it."""
    print(json.dumps(doc), flush=True)


def main():
    init_megatron()
    t0 = time.time()
    emit({'device': torch.cuda.get_device_name(), 'torch': torch.__version__, 'started': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
          'module': 'megatron.core.transformer.dot_product_attention.DotProductAttention (--transformer-impl local), bf16, bool mask [b,1,s,s]',
          'softmaxInFp32': SOFTMAX_FP32,
          'htodGBs': htod_gbps()})
    for (s, b, a, g, d) in PROFILED:
        f, bw = timed_point(s, b, a, g, d, 0.0, 5)
        emit({'profiled': {'s': s, 'b': b, 'a': a, 'g': g, 'd': d, 'dropout': 0.0, 'fwdMs': f, 'bwdMs': bw, 'kernels': profiled(s, b, a, g, d, 0.0)}})
    for (s, b, a, g, d) in GRID + GQA:
        for p in (0.0, 0.1):
            try:
                f, bw = timed_point(s, b, a, g, d, p, 5 if s >= 16384 else 10)
            except torch.OutOfMemoryError:
                torch.cuda.empty_cache()
                emit({'point': {'s': s, 'b': b, 'a': a, 'g': g, 'd': d, 'dropout': p, 'oom': True}})
                continue
            emit({'point': {'s': s, 'b': b, 'a': a, 'g': g, 'd': d, 'dropout': p, 'fwdMs': f, 'bwdMs': bw, 'scores': b * a * s * s}})
            print('%5.0f s  s=%d b=%d a=%d g=%d d=%d p=%.1f  fwd %.3f ms  bwd %.3f ms  (%.4f / %.4f ns per score)' %
                  (time.time() - t0, s, b, a, g, d, p, f, bw, f * 1e6 / (b * a * s * s), bw * 1e6 / (b * a * s * s)), file=sys.stderr, flush=True)


if __name__ == '__main__':
    main()
