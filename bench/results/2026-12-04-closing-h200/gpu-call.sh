#!/usr/bin/env bash
# The session's closing check on the H200, at the tree that ships (both backward kernels through one spill block
# up to D = 64; the forward's row blocks taking turns at D = 64 without the robustness transform): the same call
# (N = 16384, B1 H16, f16, D 64 and 128, causal and not) with its peer, robustness off and on; the float64 forward,
# backward, NaN and ring tests, and every kernel with and without robustness bit for bit (test/robust.test.ts,
# taking turns pinned in both modes).
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-final/gpu-call.sh (this folder was then wip-final)
set -uo pipefail
O=/tmp/final; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call final-r0 0 f16
same_call final-r1 1 f16
timeout 300 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/ring.test.ts test/robust.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|bitwise identical" | head -12; pack
echo "== same call"; cat $O/table.txt
