#!/usr/bin/env bash
# The tenth fresh draw (seed 3613, 4 configurations of 2K-8K tokens, 2-4 micro batches a step), drawn and committed
# before it ran, each configuration also run with one micro batch (runs.json, "-mb1", campaign.py twins): on the H200 it
# judges the time model on several micro batches and measures per micro batch against per step on the profile's own
# GPU; on any GPU the memory model. The console shows exits only: the logs are read once the model to judge is committed.
#   bash .gpu/enter.sh bash bench/results/2026-12-06-time-heldout10/gpu-call.sh
set -uo pipefail
R=$(pwd)/bench/results/2026-12-06-time-heldout10
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1; date -u +%FT%TZ > $OUT/date.txt
python3 bench/megatron/campaign.py run $R/runs.json --out /tmp/h10 --lanes 1 --no-trace --iters 24 --deadline 420 --grace 60 \
  --timeout 150 --ids r03,r03-mb1,r01,r01-mb1,r00,r00-mb1,r02,r02-mb1 --pack $OUT/h10.tgz > $OUT/console-h10.log 2>&1
grep -E "exit|done" $OUT/console-h10.log | tail -10; cat $OUT/gpu.txt
