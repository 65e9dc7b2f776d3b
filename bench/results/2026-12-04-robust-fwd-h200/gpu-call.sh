#!/usr/bin/env bash
# The D = 64 tensor-core forward with Dawn's robustness on (browsers: both row blocks at once) read 98.8 TFLOP/s in
# ../wip-final against 106.6 in ../2026-12-04-kv-one-spill-h200, before the taking-turns code. Is that real, and is
# it the per-phase state held in arrays (m, l, alpha, spoiled: array<…, NPH>)? Three trees, robustness on: this one
# (the state as scalars named by phase), /tmp/arr (73b4eb7, arrays) and /tmp/pre (08c8ad7, before taking turns):
# p2p's steps bench (N = 16384, causal f16, H16; R = 1 ms) and the same call at D = 64; this tree's same call
# without robustness; the float64 forward and NaN tests and every kernel in both robustness modes, this tree.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-robust-fwd/gpu-call.sh (this folder was then wip-robust-fwd)
set -uo pipefail
O=/tmp/robfwd; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for t in arr pre; do mkdir -p /tmp/$t && tar xzf .gpu/$t-tree.tgz -C /tmp/$t && ln -sfn $root/node_modules /tmp/$t/node_modules; done
PYTHONUNBUFFERED=1 timeout 40 python3 bench/peers/torch_sdpa.py --N 16384 --D 64 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
for round in 1 2; do
  (export FLASHRING_ROBUST=1; steps new$round 64 2)
  (cd /tmp/arr && export FLASHRING_ROBUST=1 && steps arr$round 64 2)
  (cd /tmp/pre && export FLASHRING_ROBUST=1 && steps pre$round 64 2)
done
echo "== R=1 ms: forward dkdv dq"; r1_table; pack
SC_D=64 same_call new-r1 1 f16
(cd /tmp/arr && SC_D=64 same_call arr-r1 1 f16)
(cd /tmp/pre && SC_D=64 same_call pre-r1 1 f16)
SC_D=64 same_call new-r0 0 f16
timeout 200 vitest run test/forward.test.ts test/nan.test.ts test/robust.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|bitwise identical" | head -12; pack
echo "== R=1 ms: forward dkdv dq"; cat $O/r1.txt
echo "== same call"; cat $O/table.txt | grep "fwd "
