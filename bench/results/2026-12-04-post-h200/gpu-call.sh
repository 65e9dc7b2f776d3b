#!/usr/bin/env bash
# Issue 37: after the forward's D split was limited to shaders without the robustness transform (the commit
# that added this script): the robustness test and the forward tests with robustness on, then the same-call
# figures with robustness off and on (f16, tensor cores).
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-post/gpu-call.sh (this folder was then named wip-post)
set -uo pipefail
O=/tmp/post; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 100 vitest run test/robust.test.ts > $O/robust.log 2>&1
FLASHRING_ROBUST=1 timeout 100 vitest run test/forward.test.ts > $O/forward-robust.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/robust.log $O/forward-robust.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call tc-r0 0 f16
same_call tc-r1 1 f16
