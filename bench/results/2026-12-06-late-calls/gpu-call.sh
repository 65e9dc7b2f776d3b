#!/usr/bin/env bash
# Prepared 2026-12-06 23:05 UTC (the day's fourth session). One device call from the project root, carry
# [".gpu", ".mlm"], other results folders aside (bash bench/results-aside.sh out 2026-12-06-late-calls 2026-12-06-time-heldout10
# 2026-12-06-time-heldout9 2026-12-07-moe-extras), any single-GPU kind:
#   bash .gpu/enter.sh bash bench/results/2026-12-06-late-calls/gpu-call.sh
# On an H200 (the time profile's GPU): the tenth draw's eight runs (four configurations with 2-4 micro batches a
# step and their one-micro-batch twins), which judge a7f0358's micro-batch pricing; unchanged since, and no figure
# changed after the H100's times were read. Then, in the time left, the rank-process tests (the watchdog changed
# since the last GPU suite, cb8b16c) and the MoE-extras draw (2026-12-07-moe-extras).
# On another card the draw judges nothing (the profile is the H200's), so: the MoE-extras draw, the rank-process
# tests, the ninth draw's MoE pairs, and the GPU suite with tensor cores required if time is left.
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1; date -u +%FT%TZ > "$OUT/date.txt"
echo "gpu: $(cat "$OUT/gpu.txt")"
RANK_TESTS="test/rank-hang.test.ts test/parent-gone.test.ts test/ring-process.test.ts test/cli-processes.test.ts test/cli.test.ts"
left() { echo $((575 - SECONDS)); }
rank() { timeout "$(left)" vitest run $RANK_TESTS > "$OUT/rank.log" 2>&1; echo "rank rc=$? at ${SECONDS}s"; }
suite() { FLASHRING_REQUIRE_TENSOR_CORES=1 timeout "$(left)" vitest run --project gpu > "$OUT/gpu-tc.log" 2>&1; echo "gpu rc=$? at ${SECONDS}s"; }
# The ninth draw's two MoE configurations (2 micro batches a step) and their one-micro-batch twins: drawn and committed
# before anything ran and never run (that call's time ran out), so held out for memory on any GPU; on an H100 their
# time judges nothing, but each pair gives what a MoE micro batch past the first costs on that card (the one MoE pair
# so far, the eighth draw's, cost 1.7× the model's). Then the forward-backward's host time phase by phase for r03.
moe() {
  local H9=$(pwd)/bench/results/2026-12-06-time-heldout9 dl=$(( $(left) - 150 ))
  [ "$dl" -gt 30 ] || { echo "moe: no time"; return; }
  python3 bench/megatron/campaign.py run "$H9/runs.json" --out /tmp/h9b --lanes 1 --no-trace --iters 24 --deadline "$dl" \
    --grace 40 --timeout 120 --ids r03,r03-mb1,r02,r02-mb1 --pack "$OUT/h9-moe.tgz" > "$OUT/console-h9-moe.log" 2>&1
  echo "moe rc=$? at ${SECONDS}s"; grep -E "exit|done" "$OUT/console-h9-moe.log" | tail -6
  [ "$(left)" -gt 100 ] || return
  (cd bench/megatron && timeout $(( $(left) - 10 )) python3 terms.py "$H9/runs.json" --out /tmp/ph9m --ids r03,r03-mb1 --iters 14 \
    --tag ph --phases --timeout 80 --pack "$OUT/ph9-moe.tgz" > "$OUT/console-ph-moe.log" 2>&1; echo "phases rc=$? at ${SECONDS}s")
}
# The MoE-extras draw (bench/results/2026-12-07-moe-extras: its README; memory and the untrainable rule, on any GPU).
moex() {
  local R=$(pwd)/bench/results/2026-12-07-moe-extras dl=$(( $(left) - ${1:-130} ))
  [ "$dl" -gt 30 ] || { echo "moex: no time"; return; }
  python3 bench/megatron/campaign.py run "$R/draw.json" --out /tmp/moex --lanes 1 --deadline "$dl" --grace 60 --timeout 120 \
    --ids r01,r04,r05,r00,r02,r03 --pack "$OUT/moex.tgz" > "$OUT/console-moex.log" 2>&1
  echo "moex rc=$? at ${SECONDS}s"; grep -E "exit|done" "$OUT/console-moex.log" | tail -8
  for r in r00 r02 r03; do echo "$r: $(grep -hoE '[A-Za-z_.]*(Error|Exception): .*' /tmp/moex/runs/$r.log 2>/dev/null | tail -1 | cut -c1-300)"; done
}
if grep -q H200 "$OUT/gpu.txt"; then
  H10=$(pwd)/bench/results/2026-12-06-time-heldout10
  python3 bench/megatron/campaign.py run "$H10/runs.json" --out /tmp/h10b --lanes 1 --no-trace --iters 24 --deadline 360 \
    --grace 60 --timeout 150 --ids r03,r03-mb1,r01,r01-mb1,r00,r00-mb1,r02,r02-mb1 --pack "$OUT/h10-h200.tgz" \
    > "$OUT/console-h10-h200.log" 2>&1
  echo "draw rc=$? at ${SECONDS}s"; grep -E "exit|done" "$OUT/console-h10-h200.log" | tail -10
  moex 100
  [ "$(left)" -gt 60 ] && rank
else
  moex 330; rank; moe
  [ "$(left)" -gt 240 ] && suite
fi
for f in gpu-tc rank; do [ -f "$OUT/$f.log" ] || continue; echo "== $f"
  sed 's/\x1b\[[0-9;]*m//g' "$OUT/$f.log" | grep -E "Test Files|Tests  |^ +×|FAIL|Duration" | cut -c1-200 | head -20; done
