#!/usr/bin/env python3
"""Runs Megatron-LM's pretrain_gpt.py with two recorders and writes one JSON beside its log.

  FLASHRING_TRACE=run.trace.json torchrun --nproc-per-node 1 trace.py <pretrain_gpt.py flags>

(run from the Megatron-LM source folder, as pretrain_gpt.py itself; recipe in
../shared/PLATFORM.md and bench/megatron/campaign.py).

1. Saved tensors (torch.autograd.graph.saved_tensors_hooks), during the forward of the first micro batch of iteration
   FLASHRING_TRACE_SAVED_ITER (default 2; 'saved_scope' in the JSON; before 2026-12-07 every micro batch's): every tensor autograd keeps for backward, with the
   module that was running (its name with layer and expert indices as '*'), the Megatron-LM line
   that saved it (innermost frame under megatron/), dtype, shape and the bytes of its storage.
   A storage saved twice counts once (at the first site); parameters and gradient buffers are
   left out (they are weights, not activations).
2. The allocator's timeline (torch.cuda.memory._record_memory_history, Python stacks), from the
   start through iteration FLASHRING_TRACE_HISTORY_ITERS (default 3): the peak of allocated bytes,
   and what is live at that moment grouped by the Megatron-LM line that allocated it, plus the
   frames of the allocation that made the peak (where in the step it happens).

Neither recorder allocates GPU memory. A recorder that fails writes its error into the JSON and
leaves the training run alone.
"""
import collections
import json
import os
import re
import runpy
import sys
import time
import traceback

import torch

OUT = os.environ.get('FLASHRING_TRACE')
SAVED_ITER = int(os.environ.get('FLASHRING_TRACE_SAVED_ITER', '2'))
HISTORY_ITERS = int(os.environ.get('FLASHRING_TRACE_HISTORY_ITERS', '3'))
ME = os.path.abspath(__file__)

state = {
    'iteration': 0, 'recording': False, 'module_stack': [], 'names': {}, 'skip_ptrs': set(),
    'saved': {}, 'seen': set(), 'errors': [], 'iterations': [], 'history': None, 'args': sys.argv[1:],
}


def _site_from_frames(frames):
    """The innermost Megatron-LM frame as 'megatron/...py:LINE function' (frames innermost first). This file's own frames
    are passed over: it lives under bench/megatron/, and its first micro batch's wrapper (_first_micro_batch) would
    otherwise stand for schedules.py's lines in the allocator history (the MoE held-out re-traces of 2026-12-07 read
    'megatron/trace.py:199 run' for the batch and the loss's scalars)."""
    frames = [f for f in frames if os.path.abspath(f['filename']) != ME]
    for f in frames:
        fn = f['filename']
        i = fn.find('/megatron/')
        if i >= 0:
            return '%s:%d %s' % (fn[i + 1:], f['line'], f['name'])
    for f in frames:
        if 'pretrain_gpt' in f['filename'] or 'gpt_builders' in f['filename']:
            return '%s:%d %s' % (os.path.basename(f['filename']), f['line'], f['name'])
    return (frames[0]['filename'].rsplit('/', 2)[-1] + ':%d %s' % (frames[0]['line'], frames[0]['name'])) if frames else '?'


def _python_site():
    f = sys._getframe(2)
    frames = []
    while f is not None and len(frames) < 40:
        if os.path.abspath(f.f_code.co_filename) != ME:
            frames.append({'filename': f.f_code.co_filename, 'line': f.f_lineno, 'name': f.f_code.co_name})
        f = f.f_back
    return _site_from_frames(frames)


def _norm_module(name):
    return re.sub(r'\.(layers|local_experts)\.(\d+)', r'.\1.*', name)


def _pack(t):
    try:
        in_backward = torch._C._current_graph_task_id() != -1
        if state['recording'] and not in_backward and isinstance(t, torch.Tensor) and t.is_cuda:
            st = t.untyped_storage()
            ptr, nbytes = st.data_ptr(), st.nbytes()
            if ptr not in state['skip_ptrs']:
                mod = state['module_stack'][-1] if state['module_stack'] else '(outside modules)'
                layer = re.search(r'\.layers\.(\d+)', mod)
                key = (_norm_module(mod), _python_site(), str(t.dtype).replace('torch.', ''))
                e = state['saved'].setdefault(key, {'count': 0, 'bytes': 0, 'shared': 0, 'shapes': [], 'layers': set()})
                e['count'] += 1
                if layer:
                    e['layers'].add(int(layer.group(1)))
                if ptr in state['seen']:
                    e['shared'] += 1
                else:
                    state['seen'].add(ptr)
                    e['bytes'] += nbytes
                if len(e['shapes']) < 3 and list(t.shape) not in e['shapes']:
                    e['shapes'].append(list(t.shape))
    except Exception as ex:  # never break the run
        if len(state['errors']) < 5:
            state['errors'].append('pack: %r' % ex)
    return t


def _unpack(t):
    return t


def _pre_hook(module, args):
    if state['recording']:
        state['module_stack'].append(state['names'].get(id(module), type(module).__name__))


def _post_hook(module, args, output):
    if state['recording'] and state['module_stack']:
        state['module_stack'].pop()


def _prepare_saved(model):
    chunks = model if isinstance(model, (list, tuple)) else [model]
    names, skip = {}, set()
    for c in chunks:
        for n, m in c.named_modules():
            names[id(m)] = n.replace('module.', '', 2) if n.startswith('module.') else n
        for p in c.parameters():
            skip.add(p.untyped_storage().data_ptr())
            g = getattr(p, 'main_grad', None)
            if isinstance(g, torch.Tensor):
                skip.add(g.untyped_storage().data_ptr())
    state['names'], state['skip_ptrs'] = names, skip


def _history_summary():
    """Peak of allocated bytes over the recorded events and what is live then, by allocating line."""
    snap = torch.cuda.memory._snapshot()
    events = snap['device_traces'][0] if snap.get('device_traces') else []
    free_action = 'free_requested' if any(e['action'] == 'free_requested' for e in events) else 'free_completed'
    cur = peak = 0
    peak_i = -1
    sizes = {}
    for i, e in enumerate(events):
        a = e['action']
        if a == 'alloc':
            sizes[e['addr']] = e['size']
            cur += e['size']
            if cur > peak:
                peak, peak_i = cur, i
        elif a == free_action and e['addr'] in sizes:
            cur -= sizes.pop(e['addr'])
    live = {}
    for e in events[:peak_i + 1]:
        if e['action'] == 'alloc':
            live[e['addr']] = e
        elif e['action'] == free_action:
            live.pop(e['addr'], None)
    groups = collections.defaultdict(lambda: {'bytes': 0, 'count': 0})
    for e in live.values():
        g = groups[_site_from_frames(e.get('frames') or [])]
        g['bytes'] += e['size']
        g['count'] += 1
    peak_frames = []
    if peak_i >= 0:
        for f in events[peak_i].get('frames') or []:
            if os.path.abspath(f['filename']) != ME and ('/megatron/' in f['filename'] or 'pretrain_gpt' in f['filename']):
                fn = f['filename']
                peak_frames.append('%s:%d %s' % (fn[fn.find('megatron/'):] if 'megatron/' in fn else os.path.basename(fn), f['line'], f['name']))
    return {
        'events': len(events), 'free_action': free_action, 'peak_bytes': peak,
        'peak_event_size': events[peak_i]['size'] if peak_i >= 0 else None, 'peak_frames': peak_frames[:12],
        'live_at_peak': sorted(({'site': k, **v} for k, v in groups.items()), key=lambda x: -x['bytes']),
    }


def _write():
    if not OUT:
        return
    saved = []
    for (mod, site, dtype), e in sorted(state['saved'].items(), key=lambda kv: -kv[1]['bytes']):
        saved.append({'module': mod, 'site': site, 'dtype': dtype, 'count': e['count'], 'bytes': e['bytes'],
                      'shared': e['shared'], 'shapes': e['shapes'], 'layers': len(e['layers'])})
    doc = {
        'format': 'flashring-megatron-trace/1', 'args': state['args'], 'saved_iteration': SAVED_ITER,
        'saved_scope': 'first micro batch',
        'history_iterations': HISTORY_ITERS, 'iterations': state['iterations'],
        'max_allocated_bytes': torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None,
        'saved': saved, 'saved_bytes': sum(x['bytes'] for x in saved), 'history': state['history'],
        'errors': state['errors'], 'torch': torch.__version__,
    }
    tmp = OUT + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, OUT)


def _first_micro_batch(args, kwargs):
    """train_step's arguments with its forward_step_func (the first) recording saved tensors during its first call of the
    step only: the step's first micro batch. Later micro batches' tensors never live beside the first's (each is freed
    by its backward), and storages the allocator reuses would count once and the others twice."""
    calls = [0]

    def recorded(fn, first):
        def run(*a, **k):
            state['recording'] = first
            try:
                return fn(*a, **k)
            finally:
                state['recording'] = False
                state['module_stack'].clear()
        return run

    def once(real_fwd):
        def forward_step(*a, **k):
            calls[0] += 1
            out = recorded(real_fwd, calls[0] == 1)(*a, **k)
            # (output, loss_func): the schedule calls the loss function after the forward (schedules.py:333); the first
            # micro batch's records too
            if isinstance(out, tuple) and len(out) == 2 and callable(out[1]):
                return out[0], recorded(out[1], calls[0] == 1)
            return out
        return forward_step
    if 'forward_step_func' in kwargs:
        return args, dict(kwargs, forward_step_func=once(kwargs['forward_step_func']))
    return (once(args[0]),) + tuple(args[1:]), kwargs


def _wrap_train_step(real):
    def train_step(*args, **kwargs):
        state['iteration'] += 1
        it = state['iteration']
        model = kwargs.get('model', args[2] if len(args) > 2 else None)
        record = it == SAVED_ITER and model is not None
        t0 = time.time()
        if record:
            try:
                _prepare_saved(model)
            except Exception as ex:
                state['errors'].append('prepare: %r' % ex)
                record = False
        try:
            if record:
                args, kwargs = _first_micro_batch(args, kwargs)
                with torch.autograd.graph.saved_tensors_hooks(_pack, _unpack):
                    out = real(*args, **kwargs)
            else:
                out = real(*args, **kwargs)
        finally:
            state['recording'] = False
            state['module_stack'].clear()
        torch.cuda.synchronize()
        state['iterations'].append({'iteration': it, 'seconds': time.time() - t0,
                                    'allocated_bytes': torch.cuda.memory_allocated(),
                                    'max_allocated_bytes': torch.cuda.max_memory_allocated()})
        if it == HISTORY_ITERS and state['history'] is None:
            try:
                state['history'] = _history_summary()
            except Exception as ex:
                state['errors'].append('history: %s' % traceback.format_exc(limit=3))
                state['history'] = {'error': repr(ex)}
            torch.cuda.memory._record_memory_history(enabled=None)
        try:
            _write()
        except Exception as ex:
            print('trace: could not write %s: %r' % (OUT, ex), file=sys.stderr)
        return out
    return train_step


def main():
    try:
        torch.cuda.memory._record_memory_history(enabled='all', context='alloc', stacks='python', max_entries=3_000_000)
    except Exception as ex:
        state['errors'].append('record_memory_history: %r' % ex)
    torch.nn.modules.module.register_module_forward_pre_hook(_pre_hook)
    torch.nn.modules.module.register_module_forward_hook(_post_hook)
    sys.path.insert(0, os.getcwd())
    import megatron.training.training as mt
    mt.train_step = _wrap_train_step(mt.train_step)
    sys.argv = ['pretrain_gpt.py'] + sys.argv[1:]
    runpy.run_path('pretrain_gpt.py', run_name='__main__')


if __name__ == '__main__':
    main()
