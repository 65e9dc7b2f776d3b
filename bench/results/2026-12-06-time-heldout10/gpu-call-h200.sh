#!/usr/bin/env bash
# The tenth draw again, on an H200 only (the profile's GPU): its first call got an H100 (gpu-call.sh, 20:45 UTC), which
# judges memory only. On an H200 it judges the time model of a7f0358 (unchanged since) on several micro batches and on
# their one-micro-batch twins: no figure was changed after the H100's times were read. On another card it stops at once.
# Then, in what time is left, the forward-backward's host time phase by phase (bench/megatron/phases.py) with several
# micro batches and with one: this draw's r03 (its micro batches cost less than the model's on the H100) and the ninth
# draw's r00 (more): terms, not a judgment.
#   bash .gpu/enter.sh bash bench/results/2026-12-06-time-heldout10/gpu-call-h200.sh [short]
# `short` (406 s of the session's device time left at 21:27 UTC): the first two pairs only (no run started past 100 s),
# no phase timings.
set -uo pipefail
R=$(pwd)/bench/results/2026-12-06-time-heldout10
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu-h200.txt 2>&1; date -u +%FT%TZ > $OUT/date-h200.txt
grep -q H200 $OUT/gpu-h200.txt || { echo "not an H200: $(cat $OUT/gpu-h200.txt); nothing run"; exit 3; }
DEADLINE=420; [ "${1:-}" = short ] && DEADLINE=100
python3 bench/megatron/campaign.py run $R/runs.json --out /tmp/h10b --lanes 1 --no-trace --iters 24 --deadline $DEADLINE --grace 60 \
  --timeout 150 --ids r03,r03-mb1,r01,r01-mb1,r00,r00-mb1,r02,r02-mb1 --pack $OUT/h10-h200.tgz > $OUT/console-h10-h200.log 2>&1
grep -E "exit|done" $OUT/console-h10-h200.log | tail -10; cat $OUT/gpu-h200.txt
[ "${1:-}" = short ] && exit 0
cd bench/megatron
timeout 200 python3 terms.py $R/runs.json --out /tmp/ph10 --ids r03,r03-mb1 --iters 14 --tag ph --phases --timeout 90 --pack $OUT/ph10.tgz > $OUT/console-ph.log 2>&1
timeout 100 python3 terms.py $R/../2026-12-06-time-heldout9/runs.json --out /tmp/ph9 --ids r00,r00-mb1 --iters 14 --tag ph --phases --timeout 45 --pack $OUT/ph9.tgz >> $OUT/console-ph.log 2>&1
tail -4 $OUT/console-ph.log
