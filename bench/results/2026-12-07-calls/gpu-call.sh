#!/usr/bin/env bash
# 2026-12-07's device call, from the project root (carry .gpu and .mlm; other results folders aside:
#   bash bench/results-aside.sh out 2026-12-07-calls 2026-12-07-moe-held 2026-12-06-late-calls 2026-12-06-time-heldout10 2026-12-06-time-heldout9):
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/2026-12-07-calls/gpu-call.sh
# On an H200: what waits for one (../2026-12-06-late-calls/gpu-call2.sh: the tenth draw's judgment of the time model,
# then the test files whose gradient references changed, tensor cores required).
# On another card: the whole GPU suite with tensor cores required (the tree since the last suite: the gradient references
# of test/gradRef.ts, the tensor-core planner's refusals), then in the time left the MoE held-out draw
# (../2026-12-07-moe-held/gpu-call.sh, deadline the time left less 100 s).
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
LIMIT=${LIMIT:-570}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1; date -u +%FT%TZ > "$OUT/date.txt"
echo "gpu: $(cat "$OUT/gpu.txt") at $(date -u +%T)"
if grep -q H200 "$OUT/gpu.txt"; then exec env LIMIT="$LIMIT" bash bench/results/2026-12-06-late-calls/gpu-call2.sh; fi
FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 280 vitest run --project gpu > "$OUT/gpu-tc.log" 2>&1; echo "gpu suite rc=$? at ${SECONDS}s"
sed 's/\x1b\[[0-9;]*m//g' "$OUT/gpu-tc.log" | grep -E "Test Files|Tests  |^ +×|FAIL|Duration" | cut -c1-200 | head -12
left=$((LIMIT - SECONDS - 100))
[ "$left" -gt 60 ] && bash bench/results/2026-12-07-moe-held/gpu-call.sh "$left" || echo "moe-held: no time ($left s)"
