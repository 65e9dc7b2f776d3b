#!/usr/bin/env bash
# Prepared 2026-12-06. One device call, from the project root, carry [".gpu"], other results folders set aside
# (bash bench/results-aside.sh out wip-suite-h200), asked for nvidia-h200:
#   bash .gpu/enter.sh bash bench/results/wip-suite-h200/gpu-call.sh
# The GPU test suite on the H200 itself, tensor cores required: the run owed there (the shipped portable kernels, fma
# chains since 2026-12-05, have passed the whole suite only on H100s, last ../2026-12-06-suite-h100; on the H200 only
# test/nan.test.ts, ../2026-12-06-h200-owed). Ends at once on any other card (the suite on an H100 adds nothing now).
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1; date -u +%FT%TZ > "$OUT/date.txt"
echo "gpu: $(cat "$OUT/gpu.txt")"
grep -q H200 "$OUT/gpu.txt" || { echo "not an H200: nothing run"; exit 0; }
FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 540 vitest run --project gpu > "$OUT/gpu-tc.log" 2>&1
echo "rc=$?"; sed 's/\x1b\[[0-9;]*m//g' "$OUT/gpu-tc.log" | grep -E "Test Files|Tests  |^ +×|FAIL|Duration" | cut -c1-200 | head -20
