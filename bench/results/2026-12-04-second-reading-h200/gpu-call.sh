#!/usr/bin/env bash
# The second reading's shader refactor (row_max/row_sum/row_any, bsp in flash_fwd_sgmm.wgsl), checked on the
# H200 at the commit before the one that added this script: the robustness test (74 outputs bitwise identical in
# both modes, the D split pinned), the forward tests, tune tests, then the D = 128 forward in the steps bench.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-second/gpu-call.sh (this folder was then named wip-second)
set -uo pipefail
O=/tmp/sec; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 150 vitest run test/robust.test.ts test/forward.test.ts test/tune.test.ts test/nan.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|bitwise identical" | head -12; pack
steps def 128 8; pack
grep -E "^1 " $O/steps128-def.log
