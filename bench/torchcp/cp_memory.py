#!/usr/bin/env python3
"""Measured companion data: a GPT-style transformer stack trained for a few iterations with
PyTorch's context parallelism (torch.distributed.tensor.experimental.context_parallel, ring
attention over NCCL) or without it, with and without selective recomputation
(torch.utils.checkpoint on the attention core), across sequence lengths until out of memory.

Per point: per-rank torch.cuda.max_memory_allocated (after warm-up, peak over ranks), the
memory held before the first forward (weights, gradients, Adam state), median iteration time
after warm-up and the host's time to issue it (host_issue_ms: near iter_ms, the step is host-bound),
TFLOP/s per GPU. One JSON line per point, written as soon as it is measured. With --profile DIR, one
more iteration per point under torch.profiler, each rank's kernels taken apart (busy, compute,
exposed NCCL, idle, ms by class) into DIR/profile.jsonl.

  python3 bench/torchcp/cp_memory.py --cp 1 --out points.jsonl                      # CP=1
  python3 -m torch.distributed.run --nproc-per-node 2 bench/torchcp/cp_memory.py --cp 2 --out points.jsonl
Model (stated in every point): bf16 autocast over fp32 parameters and AdamW, causal
FlashAttention through scaled_dot_product_attention, GeLU MLP of width 4h, LayerNorm, no
dropout, no positional encoding, vocabulary 8192, micro batch 1.
"""
import argparse, datetime, json, os, statistics, sys, time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.distributed as dist
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    """recompute: 'none'; 'selective' (checkpoint the attention core); 'attn_mlp' (the attention
    core and the MLP, as Megatron-LM's --recompute-modules core_attn mlp); 'full' (checkpoint the
    whole block: only its input is kept, as Megatron-LM's full recompute with uniform/1)."""

    def __init__(self, h, heads, recompute):
        super().__init__()
        self.h, self.heads, self.recompute = h, heads, recompute
        self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.qkv, self.proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.fc1, self.fc2 = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)

    @staticmethod
    def core(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def mlp(self, y):
        return self.fc2(F.gelu(self.fc1(y)))

    def body(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        ckpt = self.recompute in ('selective', 'attn_mlp')
        o = checkpoint(self.core, q, k, v, use_reentrant=False) if ckpt else self.core(q, k, v)
        x = x + self.proj(o.transpose(1, 2).reshape(b, s, h))
        y = self.ln2(x)
        return x + (checkpoint(self.mlp, y, use_reentrant=False) if self.recompute == 'attn_mlp' else self.mlp(y))

    def forward(self, x):
        return checkpoint(self.body, x, use_reentrant=False) if self.recompute == 'full' else self.body(x)


class GPT(nn.Module):
    def __init__(self, layers, h, heads, vocab, recompute):
        super().__init__()
        self.emb = nn.Embedding(vocab, h)
        self.blocks = nn.ModuleList(Block(h, heads, recompute) for _ in range(layers))
        self.ln = nn.LayerNorm(h)
        self.head = nn.Linear(h, vocab, bias=False)

    def forward(self, ids, labels):
        x = self.emb(ids)
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.reshape(-1))


KERNEL_CLASSES = [('nccl', 'nccl'), ('attention', 'fmha|flash|cudnn|sdpa|attention'), ('gemm', 'gemm|cutlass|xmma|cublas|nvjet|sm90_')]


def union_ms(spans):
    """Length of the union of [start, end) intervals, in ms (the spans in microseconds)."""
    total, end = 0.0, float('-inf')
    for a, b in sorted(spans):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total / 1e3


def profile_step(step, rank):
    """One more iteration under torch.profiler: its GPU kernels taken apart. span: first kernel start
    to last kernel end; busy: the union of every kernel; compute: the union of the non-NCCL kernels;
    comm_only: time only NCCL ran (exposed communication); idle: span - busy (the GPU waited, for the
    host or for a transfer it does not see); ms per class of kernel (nccl, attention, gemm, other; summed
    durations, which overlap where kernels run side by side) and the 20 kernels that took longest."""
    from torch.profiler import profile, ProfilerActivity
    import re
    torch.cuda.synchronize()
    h0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    wall = (time.perf_counter() - h0) * 1e3
    # GPU-side user annotations (DistributedDataParallel.forward, Optimizer.step#AdamW.step) span kernels: not kernels
    kern = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.end > e.time_range.start
            and not getattr(e, 'is_user_annotation', False) and not re.search(r'#|^DistributedDataParallel\.|^Optimizer\.|^ProfilerStep', e.name)]
    spans = [(e.time_range.start, e.time_range.end) for e in kern]
    classes = {c: 0.0 for c, _ in KERNEL_CLASSES}
    classes['other'] = 0.0
    by_name, comm, rest = {}, [], []
    for e, sp in zip(kern, spans):
        c = next((c for c, rx in KERNEL_CLASSES if re.search(rx, e.name, re.I)), 'other')
        ms = (sp[1] - sp[0]) / 1e3
        classes[c] += ms
        (comm if c == 'nccl' else rest).append(sp)
        n, t = by_name.get(e.name, (0, 0.0))
        by_name[e.name] = (n + 1, t + ms)
    top = sorted(by_name.items(), key=lambda kv: -kv[1][1])[:20]
    span = (max(b for _, b in spans) - min(a for a, _ in spans)) / 1e3 if spans else 0.0
    busy, compute = union_ms(spans), union_ms(rest)
    return dict(rank=rank, profiled_wall_ms=wall, kernels=len(kern), span_ms=span, busy_ms=busy, compute_ms=compute,
                comm_only_ms=busy - compute, idle_ms=span - busy, nccl_ms=union_ms(comm), ms_by_class=classes,
                top_kernels=[dict(name=k[:160], count=n, ms=t) for k, (n, t) in top])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cp', type=int, default=1)
    ap.add_argument('--recompute', choices=['none', 'selective', 'attn_mlp', 'full'], default='none')
    ap.add_argument('--layers', type=int, default=8)
    ap.add_argument('--hidden', type=int, default=4096)
    ap.add_argument('--heads', type=int, default=32)
    ap.add_argument('--vocab', type=int, default=8192)
    ap.add_argument('--seq', default='4096,8192,16384,32768,65536,98304,131072,196608')
    ap.add_argument('--warmup', type=int, default=1)
    ap.add_argument('--iters', type=int, default=2)
    ap.add_argument('--out', required=True)
    ap.add_argument('--ddp', action='store_true', help='wrap the model in DDP even in one process (what its buckets cost, measured on one GPU)')
    ap.add_argument('--profile', default='', help='directory: after each point one more iteration under torch.profiler, '
                    'its GPU time taken apart per rank (profile_step) into DIR/profile.jsonl')
    a = ap.parse_args()

    world = int(os.environ.get('WORLD_SIZE', '1'))
    rank = int(os.environ.get('RANK', '0'))
    if a.cp != world:
        sys.exit(f'--cp {a.cp} needs {a.cp} processes (torch.distributed.run --nproc-per-node {a.cp}); this run has {world}')
    torch.cuda.set_device(int(os.environ.get('LOCAL_RANK', '0')))
    dev = torch.device('cuda')
    mesh = None
    ddp = world > 1 or a.ddp
    if ddp:
        if 'RANK' not in os.environ:  # --ddp in a plain process: a group of one
            os.environ.update(RANK='0', WORLD_SIZE='1', MASTER_ADDR='127.0.0.1', MASTER_PORT=os.environ.get('MASTER_PORT', '29511'))
        dist.init_process_group('nccl', timeout=datetime.timedelta(seconds=120))
    if world > 1:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor.experimental import context_parallel
        mesh = init_device_mesh('cuda', (world,), mesh_dim_names=('cp',))

    torch.manual_seed(0)
    model = GPT(a.layers, a.hidden, a.heads, a.vocab, a.recompute).to(dev)
    params = sum(p.numel() for p in model.parameters())
    if ddp:
        model = torch.nn.parallel.DistributedDataParallel(model)  # gradients averaged over the CP ranks
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    gpu = torch.cuda.get_device_name(0)
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat()

    def emit(rec):
        if rank == 0:
            with open(a.out, 'a') as f:
                f.write(json.dumps(rec) + '\n')
            print(json.dumps(rec), flush=True)

    # Adam state exists after the first step: take one on a short sequence first.
    ids = torch.randint(0, a.vocab, (1, 256 * world), device=dev)
    with torch.autocast('cuda', dtype=torch.bfloat16):
        model(ids, ids).backward()
    opt.step()
    opt.zero_grad(set_to_none=False)
    torch.cuda.synchronize()
    static = torch.cuda.memory_allocated()

    for s in [int(x) for x in a.seq.split(',')]:
        base = dict(engine=f'torch {torch.__version__} ' + ('context_parallel (ring attention, NCCL)' if world > 1 else 'single GPU') + (', DDP' if ddp else ''),
                    gpu=gpu, gpus=world, cp=world, recompute=a.recompute, seq_len=s, micro_batch=1, layers=a.layers,
                    hidden=a.hidden, heads=a.heads, vocab=a.vocab, params=params, date=stamp,
                    static_gib=static / 2**30)
        ok = torch.ones(1, device=dev)
        times, issued, peak, prof_rec = [], [], 0.0, None
        try:
            ids = torch.randint(0, a.vocab, (1, s), device=dev)
            labels = torch.roll(ids, -1, 1)

            def step():
                if mesh is not None:
                    b_ids, b_lab = ids.clone(), labels.clone()
                    with context_parallel(mesh, buffers=[b_ids, b_lab], buffer_seq_dims=[1, 1], no_restore_buffers={b_ids, b_lab}):
                        with torch.autocast('cuda', dtype=torch.bfloat16):
                            loss = model(b_ids, b_lab)
                        loss.backward()
                else:
                    with torch.autocast('cuda', dtype=torch.bfloat16):
                        loss = model(ids, labels)
                    loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=False)

            torch.cuda.reset_peak_memory_stats()
            for it in range(a.warmup + a.iters):
                t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                h0 = time.perf_counter()
                t0.record()
                step()
                t1.record()
                h1 = time.perf_counter()  # the host has issued the whole step: near the GPU's time, the step is host-bound
                torch.cuda.synchronize()
                if it >= a.warmup:
                    times.append(t0.elapsed_time(t1))
                    issued.append((h1 - h0) * 1e3)
            peak = torch.cuda.max_memory_allocated() / 2**30
            if a.profile:
                prof_rec = profile_step(step, rank)
        except torch.cuda.OutOfMemoryError:
            ok.zero_()
        del ids
        torch.cuda.empty_cache()
        if world > 1:
            dist.all_reduce(ok, op=dist.ReduceOp.MIN)
            pk = torch.tensor([peak], device=dev)
            dist.all_reduce(pk, op=dist.ReduceOp.MAX)
            peak = pk.item()
        if ok.item() == 0:
            emit(dict(base, oom=True))
            break
        ms = statistics.median(times)
        if prof_rec is not None:
            recs = [None] * world
            if world > 1:
                dist.all_gather_object(recs, prof_rec)
            else:
                recs = [prof_rec]
            if rank == 0:
                os.makedirs(a.profile, exist_ok=True)
                with open(os.path.join(a.profile, 'profile.jsonl'), 'a') as f:
                    for r in recs:
                        f.write(json.dumps(dict(cp=world, recompute=a.recompute, seq_len=s, iter_ms=ms, **r)) + '\n')
        # Model FLOPs per iteration: 6·params·tokens for the matmuls (fwd + bwd) plus causal
        # attention 4·s²·h per layer forward, ×0.5 causal, ×3 forward+backward.
        flops = 6 * params * s + 3 * 0.5 * 4 * s * s * a.hidden * a.layers
        emit(dict(base, oom=False, iter_ms=ms, host_issue_ms=statistics.median(issued), tflops_per_gpu=flops / world / (ms * 1e-3) / 1e12, max_allocated_gib=peak,
                  activation_gib=peak - static / 2**30))
    if ddp:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
