"""Runs campaign configurations (draw.json) one at a time with extra Megatron-LM flags, to measure a
term of the step rather than its total: e.g. `--timing-log-level 2` (per-iteration timers:
batch-generator, forward-compute, backward-compute, optimizer) or `--no-create-attention-mask-in-dataloader`
(the data loader's [b, 1, s, s] float mask left out), or with flags of the configuration left out
(`--drop`: e.g. its recomputation, to time what recomputing costs).

  python3 bench/megatron/terms.py DRAW --out DIR --ids r39,r29 --iters 10 --tag timers --extra='--timing-log-level 2'
  python3 bench/megatron/terms.py DRAW --out DIR --ids r07 --tag prof --kernels --iters 14
  python3 bench/megatron/terms.py DRAW --out DIR --ids r07 --tag ph --phases --iters 14
  python3 bench/megatron/terms.py DRAW --out DIR --ids r07 --tag norc --drop=--recompute-granularity,--recompute-method,--recompute-num-layers

Each run's log is DIR/<id>.<tag>.log (the command on its first line), as campaign.py writes them.
"""
import argparse
import json
import os
import subprocess
import sys
import time

from campaign import common_flags, pack


def drop_flags(flags, dropped):
    """flags without each flag named in dropped and the values that follow it (up to the next --flag)."""
    out, skipping = [], False
    for f in flags:
        if f.startswith('--'):
            skipping = f in dropped
        if not skipping:
            out.append(f)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('draw')
    ap.add_argument('--out', required=True)
    ap.add_argument('--ids', required=True, help='comma-separated run ids, run in this order')
    ap.add_argument('--iters', type=int, default=10)
    ap.add_argument('--tag', required=True, help='names the logs: <id>.<tag>.log')
    ap.add_argument('--timeout', type=int, default=300)
    ap.add_argument('--extra', default='', help='flags added to every run, as one string')
    ap.add_argument('--kernels', action='store_true', help='profile iterations 10-12 (bench/megatron/kernels.py): DIR/<id>.<tag>.kernels.json')
    ap.add_argument('--phases', action='store_true', help='time the step phase by phase (bench/megatron/phases.py: iterations 4-8 with CUDA events, 10-12 profiled): DIR/<id>.<tag>.phases.json')
    ap.add_argument('--pack', default='', help='after each run, DIR as one .tar.gz at this path (the device tool returns 8 files a call)')
    ap.add_argument('--drop', default='', help="comma-separated flags left out of every run's configuration, with their values")
    ns = ap.parse_args()
    kept = {k['id']: k for k in json.load(open(ns.draw))['kept']}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mlm = os.path.join(root, '.mlm')
    os.makedirs(ns.out, exist_ok=True)
    env = dict(os.environ, NCCL_NVLS_ENABLE='0', TORCH_SYMM_MEM_DISABLE_MULTICAST='1', CUDA_DEVICE_MAX_CONNECTIONS='1',
               PYTHONUNBUFFERED='1', OMP_NUM_THREADS='2')
    dropped = [f for f in ns.drop.split(',') if f]
    bad = [f for f in dropped if not f.startswith('--')]
    if bad:
        ap.error('--drop takes flags (--name), not %s' % ', '.join(bad))
    if ns.kernels and ns.iters < 13:
        ap.error('--kernels profiles iterations 10-12 (bench/megatron/kernels.py): give --iters 13 or more, not %d' % ns.iters)
    if ns.phases and (ns.kernels or ns.iters < 14):
        ap.error('--phases times iterations 4-12 (bench/megatron/phases.py): give --iters 14 or more, without --kernels')
    for f in dropped:
        missing = [i for i in ns.ids.split(',') if i in kept and f not in kept[i]['flags']]
        if missing:
            print('terms.py: %s is not among the flags of %s: nothing dropped there' % (f, ','.join(missing)), file=sys.stderr)
    t0 = time.time()
    here = os.path.dirname(os.path.abspath(__file__))
    for port, i in enumerate(ns.ids.split(',')):
        if ns.kernels:
            env['FLASHRING_KERNELS'] = os.path.join(os.path.abspath(ns.out), '%s.%s.kernels.json' % (i, ns.tag))
        if ns.phases:
            env['FLASHRING_PHASES'] = os.path.join(os.path.abspath(ns.out), '%s.%s.phases.json' % (i, ns.tag))
        script = os.path.join(here, 'kernels.py' if ns.kernels else 'phases.py') if ns.kernels or ns.phases else os.path.join(mlm, 'pretrain_gpt.py')
        cmd = ['timeout', str(ns.timeout), 'torchrun', '--nproc-per-node', '1', '--master-port', str(29600 + 10 * port), script] + common_flags(ns.iters) + drop_flags(kept[i]['flags'], dropped) + ns.extra.split()
        with open(os.path.join(ns.out, '%s.%s.log' % (i, ns.tag)), 'w') as log:
            log.write('# ' + ' '.join(cmd) + '\n')
            log.flush()
            rc = subprocess.call(cmd, cwd=mlm, env=env, stdout=log, stderr=subprocess.STDOUT)
            log.write('\nexit %d\n' % rc)
        if ns.kernels and not os.path.exists(env['FLASHRING_KERNELS']):
            print('terms.py: %s wrote no profile (%s)' % (i, env['FLASHRING_KERNELS']), file=sys.stderr)
        print('%6.0f s  %s.%s exit %d' % (time.time() - t0, i, ns.tag, rc), flush=True)
        pack(ns.out, ns.pack)


if __name__ == '__main__':
    main()
