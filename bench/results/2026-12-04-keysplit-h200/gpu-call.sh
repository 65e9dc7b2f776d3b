#!/usr/bin/env bash
# Issue 37, short calls and D = 128's backward: dkdv's role split (FLASHRING_SGMM_BWD=8x16x2: two subgroups
# share 16 keys, one with K, Sᵀ and dV, the other with V, dPᵀ and dK: half the matrices a lane, for two
# workgroups an SM). The float64 tests with it pinned, then p2p's steps at D = 128, the default and the pin.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-ks/gpu-call.sh (this folder was then named wip-ks)
set -uo pipefail
O=/tmp/ks; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
FLASHRING_SGMM_BWD=8x16x2 timeout 120 vitest run test/backward.test.ts test/nan.test.ts test/ring.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -14; pack
steps def 128 2,4,8; FLASHRING_SGMM_BWD=8x16x2 steps ks 128 2,4,8; pack
grep -E "^1 " $O/steps128-def.log $O/steps128-ks.log
