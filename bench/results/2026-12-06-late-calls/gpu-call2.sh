#!/usr/bin/env bash
# Prepared 2026-12-06 23:40 UTC, after gpu-call.sh ran on an H100 (23:28 UTC: the MoE-extras draw's five runs, the rank
# tests, the ninth draw's MoE r03 and its phase timings). One device call from the project root, carry [".gpu", ".mlm"],
# other results folders aside (bash bench/results-aside.sh out 2026-12-06-late-calls 2026-12-06-time-heldout10 2026-12-06-time-heldout9),
# any single-GPU kind:
#   bash .gpu/enter.sh bash bench/results/2026-12-06-late-calls/gpu-call2.sh
# On an H200: the tenth draw's eight runs (the judgment gpu-call.sh describes), then the test files whose gradient
# references changed since (CHANGED), tensor cores required.
# On another card: the GPU suite with tensor cores required (the tests' gradient references changed: test/gradRef.ts),
# then in the time left the ninth draw's MoE runs not yet run (r03-mb1, r02, r02-mb1; held out for memory).
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1; date -u +%FT%TZ > "$OUT/date.txt"
echo "gpu: $(cat "$OUT/gpu.txt")"
LIMIT=${LIMIT:-575}  # seconds this call may use (the device time left may be less than the 600 s a call)
left() { echo $((LIMIT - SECONDS)); }
H9=$(pwd)/bench/results/2026-12-06-time-heldout9
# The test files whose gradient references changed (f28b611..7a48faf: test/gradRef.ts), tensor-core tests among them,
# which lavapipe cannot run.
CHANGED="test/nan.test.ts test/active-blocks.test.ts test/ring.test.ts test/ring-nomass.test.ts test/mask.test.ts test/backward.test.ts test/unrolled.test.ts"
moe() {
  local dl=$(( $(left) - ${1:-150} ))
  [ "$dl" -gt 30 ] || { echo "moe: no time"; return; }
  python3 bench/megatron/campaign.py run "$H9/runs.json" --out /tmp/h9c --lanes 1 --no-trace --iters 24 --deadline "$dl" \
    --grace 40 --timeout 120 --ids r03-mb1,r02,r02-mb1 --pack "$OUT/h9-moe2.tgz" > "$OUT/console-h9-moe2.log" 2>&1
  echo "moe rc=$? at ${SECONDS}s"; grep -E "exit|done" "$OUT/console-h9-moe2.log" | tail -6
}
if grep -q H200 "$OUT/gpu.txt"; then
  H10=$(pwd)/bench/results/2026-12-06-time-heldout10
  python3 bench/megatron/campaign.py run "$H10/runs.json" --out /tmp/h10b --lanes 1 --no-trace --iters 24 --deadline "$(( $(left) - 170 ))" \
    --grace 60 --timeout 150 --ids r03,r03-mb1,r01,r01-mb1,r00,r00-mb1,r02,r02-mb1 --pack "$OUT/h10-h200.tgz" \
    > "$OUT/console-h10-h200.log" 2>&1
  echo "draw rc=$? at ${SECONDS}s"; grep -E "exit|done" "$OUT/console-h10-h200.log" | tail -10
  [ "$(left)" -gt 40 ] && { FLASHRING_REQUIRE_TENSOR_CORES=1 timeout "$(left)" vitest run --project gpu $CHANGED > "$OUT/gpu-tc.log" 2>&1; echo "changed tests rc=$? at ${SECONDS}s"; }
else
  FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 300 vitest run --project gpu > "$OUT/gpu-tc.log" 2>&1; echo "gpu rc=$? at ${SECONDS}s"
  moe 60
fi
[ -f "$OUT/gpu-tc.log" ] && sed 's/\x1b\[[0-9;]*m//g' "$OUT/gpu-tc.log" | grep -E "Test Files|Tests  |^ +×|FAIL|Duration" | cut -c1-200 | head -20
