#!/usr/bin/env bash
# The ninth fresh draw (seed 3612, 4 configurations, 2-4 micro batches a step), drawn and committed before it ran,
# each configuration also run with one micro batch (runs.json, "-mb1"): on the H200 it judges the shipped time model
# on several micro batches (found wrong on an H100: ../2026-12-06-heldout8-followup) and measures per micro batch
# against per step on the profile's own GPU; on any GPU the memory model.
#   bash .gpu/enter.sh bash bench/results/2026-12-06-time-heldout9/gpu-call.sh
set -uo pipefail
R=$(pwd)/bench/results/2026-12-06-time-heldout9
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1; date -u +%FT%TZ > $OUT/date.txt
python3 bench/megatron/campaign.py run $R/runs.json --out /tmp/h9 --lanes 1 --no-trace --iters 24 --deadline 170 --grace 40 \
  --timeout 120 --ids r00,r00-mb1,r01,r01-mb1,r03,r03-mb1,r02,r02-mb1 --pack $OUT/h9.tgz > $OUT/console-h9.log 2>&1
tail -10 $OUT/console-h9.log
