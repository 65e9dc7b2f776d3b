#!/usr/bin/env bash
# Prepared 2026-12-06. One device call, from the project root, carry [".gpu"], other results folders set aside
# (bash bench/results-aside.sh out wip-suite):
#   bash .gpu/enter.sh bash bench/results/wip-suite/gpu-call.sh
# The GPU test suite, tensor cores required, on whatever card comes (asked for nvidia-h200): on the H200 it is the run
# owed there (the shipped portable kernels, fma chains since 2026-12-05, have passed it only on H100s; on the H200 only
# test/nan.test.ts, ../2026-12-06-h200-owed); on an H100 it checks this session's changes near the device (the buffer
# tracker's size check, out-of-memory errors typed: src/gpu/tracker.ts, device.ts). Earlier tries of an H200-only form
# (07:32–09:35 UTC, ten) all got H100s and stopped at once.
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1; date -u +%FT%TZ > "$OUT/date.txt"
echo "gpu: $(cat "$OUT/gpu.txt")"
FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 540 vitest run --project gpu > "$OUT/gpu-tc.log" 2>&1
echo "rc=$?"; sed 's/\x1b\[[0-9;]*m//g' "$OUT/gpu-tc.log" | grep -E "Test Files|Tests  |^ +×|FAIL|Duration" | cut -c1-200 | head -20
