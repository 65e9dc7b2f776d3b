#!/usr/bin/env bash
# Issue 37: the review fixes for the forward's D split checked on the H200 (the commit before the one that
# added this script): the robustness test, now with the split pinned at D = 128 in both modes (bitwise), and
# the forward tests, now with large logits at D = 128 (the split's rescale path).
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-check/gpu-call.sh (this folder was then named wip-check)
set -uo pipefail
O=/tmp/chk; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 150 vitest run test/robust.test.ts test/forward.test.ts test/tune.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|bitwise identical" | head -12; pack
