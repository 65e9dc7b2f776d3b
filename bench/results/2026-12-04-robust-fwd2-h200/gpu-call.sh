#!/usr/bin/env bash
# After ../wip-robust-fwd (the D = 64 forward with robustness on 3.4% slower in p2p's steps, 7.3% in the same call,
# since the taking-turns code, arrays or scalars alike): the template now emits the code without turns section by
# section as before them (the same text but for constant integer expressions, names and a scope). p2p's steps bench
# (N = 16384, causal f16, H16, D = 64; R = 1 ms) with robustness on (against 5.276 ms before taking turns, 5.456
# since) and off (taking turns); the float64 forward and NaN tests.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-last/gpu-call.sh (this folder was then wip-last)
set -uo pipefail
O=/tmp/last; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
(export FLASHRING_ROBUST=1; steps robust 64 2)
steps plain 64 2
echo "== R=1 ms: forward dkdv dq"; r1_table; pack
timeout 110 vitest run test/forward.test.ts test/nan.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
