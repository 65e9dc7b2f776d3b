#!/usr/bin/env bash
# Issue 37, the session's last call: the tensor-core backward's default tile at D = 64 is now 4×16
# (sgmmTiles.ts, from ../2026-12-03-short-tiles-h200). The float64 tests on the H200 with it (backward,
# NaN, ring with the accumulating tensor-core ring, launch order, autotune), then the same-call figures
# with robustness off and on (tensor cores, f16) against PyTorch, and p2p's steps at D = 64.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-final/gpu-call.sh
set -uo pipefail
O=/tmp/fin; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 150 vitest run test/backward.test.ts test/nan.test.ts test/ring.test.ts test/launch-order.test.ts test/tune.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |FAIL|×" | head -12; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call tc-r0 0 f16
same_call tc-r1 1 f16
same_call tc-r0-8x16 0 f16 FLASHRING_SGMM_BWD=8x16
steps def 64 2,4,8; pack
