#!/usr/bin/env python3
"""Where a Megatron-LM step's time goes, phase by phase: the host's time, the GPU's time and the GPU's
idle time in each part of train_step (terms, not totals). Runs pretrain_gpt.py (from the Megatron-LM
source folder, as bench/megatron/kernels.py) with train_step and the optimizer's parts wrapped:

  FLASHRING_PHASES=run.phases.json torchrun --nproc-per-node 1 phases.py <pretrain_gpt.py flags>

(bench/megatron/terms.py --phases runs campaign configurations this way; give --iters 14 or more).
The phases: `zero` (train_step up to the forward-backward: zeroing the gradient buffers), `fb` (the
forward-backward schedule: data loading, forward, loss, backward, the gradient reduction it starts),
`opt` (optimizer.step) and within it `opt.prepare` (gradients copied and checked for Inf/NaN),
`opt.norm` (the gradient norm), `opt.clip` (gradients scaled), `opt.zeros`, `opt.update` (Adam and
the parameters copied back); `post` (train_step after the optimizer: the loss averaged) and
`between` (from one train_step's return to the next one's call: logging, the loop's bookkeeping).

Two measurements:
- `events` (iterations 4-8, before any profiling: on 2026-12-03 a window after the profiler ran up to
  25% slower than the same run's earlier iterations): at each phase's start and end the host's clock
  and a CUDA event on the current stream (no synchronisation). Per phase and iteration: hostMs (the
  host's time in it) and gpuSpanMs (the GPU's time between reaching its start and its end: its work
  plus the time it waited for the host's launches inside the phase). stepMs: the host's clock from
  one train_step call to the next.
- `profiled` (iterations 10-12 under torch.profiler, phases as record_function ranges; the
  profiler slows the host, so its times are upper bounds): per phase the GPU's busy time of the work
  launched in it, its launches and the runtime calls that may wait for the GPU (`waits`, `waitMs`: synchronise
  calls and every cudaMemcpy / cudaMemcpyAsync, device-to-device copies included, which do not wait), of them the
  synchronise calls alone (`syncs`, `syncMs`: cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize), and idleMs: each interval in which
  the GPU ran nothing, charged to the phase whose launch ended it (the phase the GPU waited for);
  `kernels`: every kernel, copy and memset by name, under the phase that launched it.
Writes one JSON to FLASHRING_PHASES (with `incomplete` saying why, if the run stopped before both windows).
"""
import atexit
import json
import os
import runpy
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernels import LAUNCHES, WAITS, trace_summary  # noqa: E402  (bench/megatron/kernels.py)

TIMED = (4, 9)        # [first, end) iterations with CUDA events (before the profiler: after it the host stays slower)
PROFILED = (10, 13)   # [first, end) iterations under the profiler
OUT = os.environ.get('FLASHRING_PHASES', 'phases.json')
SYNCS = ('cudaStreamSynchronize', 'cudaEventSynchronize', 'cudaDeviceSynchronize')   # the WAITS that always wait
# ChainedOptimizer's parts (get_megatron_optimizer always returns one); a single optimizer's clip_grad_norm
# would hold clip_grad_by_total_norm_fp32 (opt.clip) inside it, so it is not wrapped.
OPT_PARTS = {'prepare_grads': 'opt.prepare', 'get_grad_norm': 'opt.norm', 'count_zeros': 'opt.zeros', 'step_with_ready_grads': 'opt.update'}


class Recorder:
    """Phase ranges: record_function ranges while profiling, host clock and CUDA events while timing."""

    def __init__(self, torch):
        self.torch, self.mode, self.open, self.rows = torch, None, {}, []

    def start(self, name):
        t = self.torch
        if self.mode == 'prof':
            r = t.autograd.profiler.record_function('phase:' + name)
            r.__enter__()
            self.open[name] = r
        elif self.mode == 'time':
            e = t.cuda.Event(enable_timing=True)
            e.record()
            self.open[name] = (time.perf_counter(), e)

    def end(self, name):
        r = self.open.pop(name, None)
        if r is None:
            return
        if self.mode == 'prof':
            r.__exit__(None, None, None)
        else:
            e = self.torch.cuda.Event(enable_timing=True)
            e.record()
            self.rows.append((name, r[0], time.perf_counter(), r[1], e))

    def wrap(self, name, fn):
        def inner(*a, **k):
            self.start(name)
            try:
                return fn(*a, **k)
            finally:
                self.end(name)
        return inner


def timed_summary(rows, steps, step_ms):
    """Per phase and iteration: host ms and GPU span ms (CUDA events, read after a synchronise)."""
    out = {}
    for name, h0, h1, e0, e1 in rows:
        p = out.setdefault(name, {'hostMs': 0.0, 'gpuSpanMs': 0.0, 'calls': 0})
        p['hostMs'] += (h1 - h0) * 1e3 / steps
        p['gpuSpanMs'] += e0.elapsed_time(e1) / steps
        p['calls'] += 1
    return {'iterations': steps, 'stepMs': step_ms, 'phases': {k: {kk: round(vv, 3) for kk, vv in v.items()} for k, v in out.items()}}


def innermost(ranges, ts):
    """The shortest phase range holding host time ts (ranges: (start, end, name))."""
    best = None
    for s, e, n in ranges:
        if s <= ts <= e and (best is None or e - s < best[1] - best[0]):
            best = (s, e, n)
    return best[2] if best else 'outside'


def profiled_summary(trace_path, steps):
    """Per phase: GPU busy ms of its launches, launches, waits, and the GPU idle time its launches ended."""
    events = [e for e in json.load(open(trace_path)).get('traceEvents', []) if e.get('ph') == 'X']
    # Host-side ranges only: the trace also holds GPU-side copies of record_function ranges (gpu_user_annotation).
    ranges = [(e['ts'], e['ts'] + e['dur'], e['name'][6:]) for e in events if e.get('cat') == 'user_annotation' and e.get('name', '').startswith('phase:')]
    device = sorted((e for e in events if e.get('cat') in ('kernel', 'gpu_memcpy', 'gpu_memset')), key=lambda e: e['ts'])
    out, launched = {}, {}
    row = lambda n: out.setdefault(n, {'gpuBusyMs': 0.0, 'idleMs': 0.0, 'launches': 0, 'waits': 0, 'waitMs': 0.0, 'syncs': 0, 'syncMs': 0.0})
    for e in (e for e in events if e.get('cat') in ('cuda_runtime', 'cuda_driver')):
        phase = innermost(ranges, e['ts'])
        if 'correlation' in e.get('args', {}):
            launched[e['args']['correlation']] = phase
        p = row(phase)
        p['launches'] += e['name'] in LAUNCHES
        if e['name'] in WAITS:
            p['waits'] += 1
            p['waitMs'] += e['dur'] / 1e3
        if e['name'] in SYNCS:
            p['syncs'] += 1
            p['syncMs'] += e['dur'] / 1e3
    end, names = None, {}
    for e in device:
        phase = launched.get(e.get('args', {}).get('correlation'), 'unknown')
        p = row(phase)
        p['gpuBusyMs'] += e['dur'] / 1e3
        by = names.setdefault(phase, {})
        by[e['name'][:120]] = by.get(e['name'][:120], 0) + 1
        if end is not None and e['ts'] > end:
            p['idleMs'] += (e['ts'] - end) / 1e3
        end = max(end or 0, e['ts'] + e['dur'])
    per = {n: {k: round(v / steps, 3) for k, v in p.items()} for n, p in out.items()}
    # Every kernel, copy and memset by name and the phase that launched it (per iteration): what a
    # model's launch count has to match, op by op.
    kernels = {n: dict(sorted(((k, round(c / steps, 3)) for k, c in by.items()), key=lambda kv: -kv[1])) for n, by in names.items()}
    return {'iterations': steps, 'phases': per, 'kernels': kernels}


def main():
    import torch
    sys.path.insert(0, os.getcwd())   # the Megatron-LM source folder
    import megatron.training.training as training
    import megatron.core.optimizer.optimizer as mopt
    rec, state, result = Recorder(torch), {'i': 0, 'prof': None, 'calls': []}, {}
    original = training.train_step
    mopt.clip_grad_by_total_norm_fp32 = rec.wrap('opt.clip', mopt.clip_grad_by_total_norm_fp32)

    def wrap_optimizer(opt):
        if getattr(opt, '_flashring_phases', False):
            return
        opt._flashring_phases = True
        for attr, name in OPT_PARTS.items():
            if hasattr(opt, attr):
                setattr(opt, attr, rec.wrap(name, getattr(opt, attr)))
        step = rec.wrap('opt', opt.step)
        opt.step = lambda *a, **k: (step(*a, **k), rec.start('post'))[0]

    def finish_profile():
        torch.cuda.synchronize()
        state['prof'].__exit__(None, None, None)
        result['profiled'] = trace_summary(state['prof'], lambda path: profiled_summary(path, PROFILED[1] - PROFILED[0]))
        dump()

    def dump():
        with open(OUT, 'w') as f:
            json.dump(result, f, indent=1)
        print('flashring phases: wrote %s (%s)' % (OUT, ', '.join(sorted(result))), flush=True)

    def train_step(*args, **kwargs):
        i = state['i']
        state['i'] += 1
        rec.end('between')
        state['calls'].append(time.perf_counter())
        if i == PROFILED[1]:
            finish_profile()
            rec.mode = None
        if i == PROFILED[0]:
            torch.cuda.synchronize()
            state['prof'] = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
            state['prof'].__enter__()
            rec.mode = 'prof'
        if i == TIMED[0]:
            torch.cuda.synchronize()
            rec.mode, rec.rows, state['t0'] = 'time', [], len(state['calls']) - 1
        if i == TIMED[1]:
            torch.cuda.synchronize()
            calls = state['calls'][state['t0']:]
            step_ms = [round((b - a) * 1e3, 3) for a, b in zip(calls, calls[1:])]
            result['events'] = timed_summary(rec.rows, TIMED[1] - TIMED[0], step_ms)
            rec.mode = None
            dump()
        wrap_optimizer(args[3])
        fb = rec.wrap('fb', args[6])
        # 'zero' ends where the forward-backward starts; 'post' runs from the optimizer's end to the return.
        args = args[:6] + ((lambda *a, **k: (rec.end('zero'), fb(*a, **k))[1]),) + args[7:]
        rec.start('zero')
        out = original(*args, **kwargs)
        rec.end('post')
        rec.start('between')
        return out

    def at_exit():
        # A run that stopped before both windows closed (too few iterations, a crash) still says what it has and why not the rest.
        missing = [k for k in ('events', 'profiled') if k not in result]
        if missing:
            result['incomplete'] = 'train_step ran %d times; %s needs --train-iters %d or more' % (state['i'], ' and '.join(missing), max(TIMED[1], PROFILED[1]) + 1)
            dump()

    atexit.register(at_exit)
    training.train_step = train_step
    sys.argv = ['pretrain_gpt.py'] + sys.argv[1:]
    runpy.run_path('pretrain_gpt.py', run_name='__main__')


if __name__ == '__main__':
    main()
