#!/usr/bin/env bash
# Prepared 2026-12-06 (06:34 UTC session). One device call, from the project root, carry [".gpu"], other results
# folders set aside (bash bench/results-aside.sh out wip-head-check; this folder was wip-head-check):
#   bash .gpu/enter.sh bash bench/results/wip-head-check/gpu-call.sh
# 1. The f32 GEMM probes again after 3bdc668 moved their shared code into functions (gemm_f32_common.wgsl): the same
#    figures as ../2026-12-06-gemm-prefetch-h100 (plain 33.5, loads ahead 38.1 TFLOP/s on an H100) or not.
# 2. The GPU test suite at this tree (the ring's step labels: a ring of one records no empty last hop), tensor cores
#    required.
set -uo pipefail
O=/tmp/headcheck; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
echo "gpu: $(cat $O/gpu.txt)"
timeout 120 node bench/ceiling/run.mjs --f32-only --reps 5 --out $O/ceiling > $O/ceiling.log 2>&1
echo "ceiling $(el)"; grep -E "f32|failed" $O/ceiling.log | grep -v '/16' | head -17; pack
FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 420 vitest run --project gpu > $O/gpu-tc.log 2>&1
echo "gpu suite $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/gpu-tc.log | grep -E "Test Files|Tests  |^ +×|FAIL|Duration" | cut -c1-200 | head -20; pack
