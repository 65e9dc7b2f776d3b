#!/usr/bin/env python3
"""The host synchronisations (cudaStreamSynchronize) of a Megatron-LM training iteration, counted from
the run's flags by reading Megatron-LM's code (snapshot d98e8a64, --transformer-impl local, no Apex or
Transformer Engine on the host), beside the count torch.profiler measured in each profiled step
(bench/megatron/kernels.py: train_step of iterations 10-12 and the two logging segments between them,
so a window's mean is A + 2/3 B; a steady iteration is A + B). Nothing here is fitted: the counts
come from the code, the check from the profiles.

  python3 bench/megatron/syncs.py [repository root]

Per iteration, N parameter tensors (as the log's DDP bucket lists them), m micro batches, b DDP buckets:
  A (train_step) = N + 2m + 2b + 9 (+ 2 per MoE layer forward with the allgather dispatcher), where N is
    the local l2-norm fallback reading each parameter's gradient norm with .item() (utils.py,
    clip_grads.py): the only term that grows with depth;
  B (between steps) = 7 + 2k, k loss keys (1 dense, 2 with MoE's load-balancing loss).
Where each comes from (file:line): bench/results/2026-12-03-time-repeats/README.md.
"""
import json, re, sys, os
ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
R = ROOT + '/bench/results/'
RUNS = ['2026-12-02-megatron-timing/terms/kernels/' + r for r in
        ('r43.prof', 'r23.prof', 'r07.norc', 'r03.norc', 'r11.prof', 'r40.norc', 'r02.prof')] + \
       ['2026-12-02-time-heldout/terms/' + r for r in ('r09.prof', 'r16.prof', 'r20.prof')] + \
       ['2026-12-03-time-repeats/terms/' + r for r in ('c-r20.prof', 'c-r30.prof', 'h1-r06.prof')]

def flags(line):
    toks = line.split('kernels.py', 1)[1].split()
    d, k = {}, None
    for t in toks:
        if t.startswith('--'):
            k = t[2:]; d[k] = []
        else:
            d[k].append(t)
    return d

def n_params(f):
    """parameter tensors of the local (no TE/Apex) GPT spec, from flags alone"""
    L = int(f['num-layers'][0]); ln = 1 if f.get('normalization', ['LayerNorm'])[0] == 'RMSNorm' else 2
    bias = 'disable-bias-linear' not in f
    layer = 2 * ln + 2 + (2 if bias else 0)           # in/pre-MLP norms, qkv, proj (+biases)
    if 'num-experts' in f:
        E = int(f['num-experts'][0])
        layer += 1 + 2 * E * (2 if bias else 1) + (2 if 'moe-shared-expert-intermediate-size' in f else 0)
    else:
        layer += 2 * (2 if bias else 1)                # fc1, fc2 (+biases)
    emb = 1 + (1 if f.get('position-embedding-type', ['learned_absolute'])[0] == 'learned_absolute' else 0)
    return L * layer + emb + ln + (1 if 'untie-embeddings-and-output-weights' in f else 0)

def predict(f):
    L = int(f['num-layers'][0]); moe = 'num-experts' in f
    m = 1                      # microbatches: global batch == micro batch in every run
    buckets = 1                # DDP buckets (overlap_grad_reduce off, EP=1: experts share the dense buffer)
    N = n_params(f)
    A = (2 * m                 # loss_func validate_result isnan/isinf  (pretrain_gpt.py:264,271)
         + 2 * buckets         # DDP check_grads isnan/isinf           (param_and_grad_buffer.py:355,363)
         + 2                   # rerun _reduce_any H2D + item           (rerun_state_machine.py:268-270)
         + N + 2               # local l2 norm: N item + H2D, + total_norm.item() (utils.py:1378-1380, clip_grads.py:138)
         + 2                   # logical_and_across_model_parallel_group (common_utils.py:305-307)
         + 3)                  # reduce_max_stat(grad_norm)              (common_utils.py:284-290)
    loss_keys = 1 + (1 if moe else 0)   # 'lm loss' (+ 'load_balancing_loss' from the MoE tracker)
    B = (1                     # loss_scale .item()                       (training.py:4869)
         + 1                   # total_loss_dict.get default torch.tensor (training.py:3308)
         + 3                   # reduce_max_stat(learning_rate)           (training.py:3370)
         + 2                   # interval-time elapsed(barrier=True): 2 NCCL barriers (timers.py:151,164 via training.py:3547)
         + 2 * loss_keys)      # .item() + reset torch.tensor per loss key (training.py:3622,3628)
    disp = f.get('moe-token-dispatcher-type', [''])[0]
    moe_fwd = L if moe else 0  # MoE forward executions per step (x2 if 'moe' recomputed; none here)
    per_layer = 2 * moe_fwd if disp == 'allgather' else 0   # .cpu() + masked_select (token_dispatcher.py:320,331)
    A += per_layer
    return N, A, B, A + 2 * B / 3, A + B, (moe_fwd if disp == 'alltoall' else 0)

def log_params(log):
    return len(re.findall(r'^\tmodule\.', open(log).read(), re.M))

print('%-12s %3s %4s %4s | %7s %8s %6s | %6s | %4s %4s | %s' % ('run', 'L', 'N', 'Nlog', 'pred', 'measured', 'resid', 'steady', 'evS', 'evSm', 'devSync'))
for r in RUNS:
    log, js = R + r + '.log', R + r + '.kernels.json'
    f = flags(open(log).readline())
    N, A, B, pred, steady, ev = predict(f)
    rt = {x['name']: x['count'] for x in json.load(open(js))['runtime']}
    meas = rt.get('cudaStreamSynchronize', 0)
    print('%-12s %3s %4d %4d | %7.2f %8.2f %6.2f | %6d | %4d %4.1f | %.1f' % (
        os.path.basename(r), f['num-layers'][0], N, log_params(log), pred, meas, meas - pred, steady,
        ev, rt.get('cudaEventSynchronize', 0), rt.get('cudaDeviceSynchronize', 0)))
