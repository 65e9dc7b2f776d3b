#!/usr/bin/env python3
"""Runs Megatron-LM's pretrain_gpt.py under torch.profiler for a few steady iterations and writes
what the GPU and the host did in them, as one JSON (terms, not totals):

  FLASHRING_KERNELS=run.kernels.json torchrun --nproc-per-node 1 kernels.py <pretrain_gpt.py flags>

(run from the Megatron-LM source folder, as pretrain_gpt.py; bench/megatron/terms.py --kernels
runs campaign configurations this way). Iterations FLASHRING_KERNELS_START (default 10) to
START + FLASHRING_KERNELS_STEPS - 1 (default 3 iterations) are profiled, the GPU synchronised
before and after. The JSON holds, per profiled iteration on average:
- wallMs: the host's clock over the window; gpuBusyMs: the union of the GPU's kernel, copy and
  memset intervals (so wallMs - gpuBusyMs is time the GPU waited for the host);
- kernels: count and summed time by kernel name (top 40), and in all (kernelCount: kernels, copies
  and memsets; copyCount, memsetCount; launches: the kernel launch calls of the CUDA runtime);
- runtime: the CUDA runtime calls by name (cudaLaunchKernel, cudaMalloc, cudaFree,
  cudaStreamSynchronize, cudaMemcpyAsync, ...): count and summed host time;
- syncWaits: the host time in calls that may wait for the GPU (synchronise; copies, the
  asynchronous ones included, so an upper bound). Under the profiler the host is slower: wallMs -
  gpuBusyMs of the window is not the unprofiled step's host time.
"""
import json
import os
import runpy
import sys
import tempfile
import time
import traceback

START = int(os.environ.get('FLASHRING_KERNELS_START', '10'))
STEPS = int(os.environ.get('FLASHRING_KERNELS_STEPS', '3'))
OUT = os.environ.get('FLASHRING_KERNELS', 'kernels.json')
LAUNCHES = ('cudaLaunchKernel', 'cuLaunchKernelEx', 'cudaLaunchKernelExC', 'cuLaunchKernel')
WAITS = ('cudaStreamSynchronize', 'cudaDeviceSynchronize', 'cudaEventSynchronize', 'cudaMemcpy', 'cudaMemcpyAsync')


def union_ms(intervals):
    """Length of the union of [start, end) intervals (µs in, ms out)."""
    total, end = 0.0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total / 1e3


def summarise(trace_path, wall_s):
    events = [e for e in json.load(open(trace_path)).get('traceEvents', []) if e.get('ph') == 'X']
    device = [e for e in events if e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset')]
    kernels, runtime = {}, {}
    for e in device:
        k = kernels.setdefault(e['name'][:160], [0, 0.0])
        k[0] += 1
        k[1] += e['dur'] / 1e3
    for e in events:
        if e.get('cat') in ('cuda_runtime', 'cuda_driver'):
            r = runtime.setdefault(e['name'], [0, 0.0])
            r[0] += 1
            r[1] += e['dur'] / 1e3
    per = lambda x: round(x / STEPS, 3)
    top = sorted(kernels.items(), key=lambda kv: -kv[1][1])[:40]
    return {
        'iterations': STEPS, 'start': START,
        'wallMs': per(wall_s * 1e3),
        'gpuBusyMs': per(union_ms([(e['ts'], e['ts'] + e['dur']) for e in device])),
        'kernelCount': per(sum(v[0] for v in kernels.values())),   # kernels, copies and memsets on the GPU
        'copyCount': per(sum(1 for e in device if e.get('cat') == 'gpu_memcpy')),
        'memsetCount': per(sum(1 for e in device if e.get('cat') == 'gpu_memset')),
        'launches': per(sum(runtime.get(n, [0])[0] for n in LAUNCHES)),
        'kernelMs': per(sum(v[1] for v in kernels.values())),
        'kernels': [{'name': n, 'count': per(c), 'ms': per(t)} for n, (c, t) in top],
        'runtime': [{'name': n, 'count': per(c), 'ms': per(t)} for n, (c, t) in sorted(runtime.items(), key=lambda kv: -kv[1][1])],
        'syncWaitsMs': per(sum(t for n, (c, t) in runtime.items() if n in WAITS)),
    }


def trace_summary(prof, summarise_path):
    """A finished torch.profiler's chrome trace, exported to a temporary file and read by summarise_path(path);
    {'error': traceback} if either fails."""
    try:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'trace.json')
            prof.export_chrome_trace(path)
            return summarise_path(path)
    except Exception:
        return {'error': traceback.format_exc()}


def main():
    import torch
    sys.path.insert(0, os.getcwd())   # the Megatron-LM source folder
    import megatron.training.training as training
    original = training.train_step
    state = {'i': 0, 'prof': None, 't0': 0.0}

    def train_step(*args, **kwargs):
        i = state['i']
        state['i'] += 1
        if i == START:
            torch.cuda.synchronize()
            state['prof'] = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
            state['prof'].__enter__()
            state['t0'] = time.time()
        out = original(*args, **kwargs)
        if i == START + STEPS - 1 and state['prof'] is not None:
            torch.cuda.synchronize()
            wall = time.time() - state['t0']
            state['prof'].__exit__(None, None, None)
            result = trace_summary(state['prof'], lambda path: summarise(path, wall))
            with open(OUT, 'w') as f:
                json.dump(result, f, indent=1)
            print('flashring kernels: wrote %s' % OUT, flush=True)
        return out

    training.train_step = train_step
    sys.argv = ['pretrain_gpt.py'] + sys.argv[1:]
    runpy.run_path('pretrain_gpt.py', run_name='__main__')


if __name__ == '__main__':
    main()
