#!/usr/bin/env bash
# The MoE time draw (seed 3630: four MoE configurations of 3 micro batches a step, each again with one), on an H200 only
# (the profile's GPU): it judges the time model as committed before this folder (unchanged by it) on MoE steps of several
# micro batches and their one-micro-batch twins. On another card it stops at once (an H100 judges nothing here).
# The pairs run shortest first by the frozen model's figures (predicted.csv: r02, r00, r01, r03), untraced, 24 iterations,
# each alone; no run starts past 420 s. Then, in what time is left, the forward-backward phase by phase
# (bench/megatron/phases.py) for the shortest pair, r02 and r02-mb1: terms, not a judgment (the first H200 MoE step of
# several micro batches timed phase by phase; every stored H200 MoE phase timing has one).
#   bash .gpu/enter.sh bash bench/results/2026-12-07-moe-time/gpu-call-h200.sh [short]
# `short`: the first two pairs only (no run started past 100 s), no phase timings.
set -uo pipefail
R=$(pwd)/bench/results/2026-12-07-moe-time
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1; date -u +%FT%TZ > $OUT/date.txt
grep -q H200 $OUT/gpu.txt || { echo "not an H200: $(cat $OUT/gpu.txt); nothing run"; exit 3; }
DEADLINE=420; [ "${1:-}" = short ] && DEADLINE=100
python3 bench/megatron/campaign.py run $R/runs.json --out /tmp/moet --lanes 1 --no-trace --iters 24 --deadline $DEADLINE --grace 60 \
  --timeout 150 --ids r02,r02-mb1,r00,r00-mb1,r01,r01-mb1,r03,r03-mb1 --pack $OUT/moet.tgz > $OUT/console-moet.log 2>&1
grep -E "exit|done" $OUT/console-moet.log | tail -10; cat $OUT/gpu.txt
[ "${1:-}" = short ] && exit 0
cd bench/megatron
timeout 150 python3 terms.py $R/runs.json --out /tmp/phm --ids r02,r02-mb1 --iters 14 --tag ph --phases --timeout 70 --pack $OUT/ph.tgz > $OUT/console-ph.log 2>&1
tail -4 $OUT/console-ph.log
