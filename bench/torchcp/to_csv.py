#!/usr/bin/env python3
"""points.jsonl (bench/torchcp/cp_memory.py) → activation_memory.csv rows (the schema in docs/memory.md).
  python3 bench/torchcp/to_csv.py points.jsonl --hbm-gib 139.8 > activation_memory_measured.csv"""
import argparse, csv, json, sys

ap = argparse.ArgumentParser()
ap.add_argument('jsonl')
ap.add_argument('--hbm-gib', type=float, required=True, help='the GPU memory the run had (GiB)')
a = ap.parse_args()
cols = ['seq_len', 'tp', 'cp', 'pp', 'sp', 'recompute', 'micro_batch', 'activation_gib', 'total_gib', 'fits', 'source',
        'line', 'hbm_gib', 'iter_ms', 'tflops_per_gpu']
w = csv.writer(sys.stdout, lineterminator='\n')
w.writerow(cols)
for line in open(a.jsonl):
    p = json.loads(line)
    src = (f"measured: {p['engine']}, {p['gpus']}x {p['gpu']}, {p['date'][:10]}, GPT {p['layers']}L h={p['hidden']} "
           f"a={p['heads']} vocab={p['vocab']} (bench/torchcp)")
    # The harness's recompute names as the memory model's settings (docs/memory.md: activation_memory.csv).
    rc = {'none': 'none', 'selective': 'selective', 'attn_mlp': 'selective:core_attn+mlp', 'full': 'full:uniform/1'}[p['recompute']]
    label = f"CP={p['cp']}" + ('' if rc == 'none' else ' + recompute' if rc == 'selective' else f' + {rc}')
    oom = p.get('oom', False)
    f = lambda k: '' if oom or p.get(k) is None else f'{p[k]:.6g}'
    w.writerow([p['seq_len'], 1, p['cp'], 1, 'false', rc, p['micro_batch'], f('activation_gib'),
                f('max_allocated_gib'), 'false' if oom else 'true', src, label, a.hbm_gib, f('iter_ms'), f('tflops_per_gpu')])
