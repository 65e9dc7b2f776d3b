#!/usr/bin/env bash
# After the review fixes (the merge's row weights only in a ring's tensor-core forward: plain forwards as before):
# the tests that cover both forwards, the merge's rules on the tensor cores (f16, D = 64 and 128), the ring and the
# planner on the H200, then the same-call figures (robustness off, f16 tensor cores) against PyTorch.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-last/gpu-call.sh (this folder was then named wip-last)
set -uo pipefail
O=/tmp/last; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 300 vitest run test/nan.test.ts test/active-blocks.test.ts test/forward.test.ts test/ring.test.ts test/robust.test.ts test/tune.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|bitwise" | head -12; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call tc-r0 0 f16
