#!/usr/bin/env bash
# Prepared 2026-12-07 00:12 UTC with about 265 s of the session's device time left: the test files whose gradient
# references changed (f28b611..7a48faf: test/gradRef.ts; tensor-core tests among them, which lavapipe cannot run),
# tensor cores required, on whatever card comes. From the project root, carry [".gpu"], results aside:
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/2026-12-06-late-calls/gpu-call3.sh
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1; date -u +%FT%TZ > "$OUT/date.txt"
echo "gpu: $(cat "$OUT/gpu.txt")"
CHANGED="test/nan.test.ts test/active-blocks.test.ts test/ring.test.ts test/ring-nomass.test.ts test/mask.test.ts test/backward.test.ts test/unrolled.test.ts"
FLASHRING_REQUIRE_TENSOR_CORES=1 timeout "${LIMIT:-180}" vitest run --project gpu $CHANGED > "$OUT/gpu-tc.log" 2>&1; echo "changed tests rc=$?"
sed 's/\x1b\[[0-9;]*m//g' "$OUT/gpu-tc.log" | grep -E "Test Files|Tests  |^ +×|FAIL|Duration" | cut -c1-200 | head -20
