#!/usr/bin/env bash
# Issue 36: the sixth fresh draw for the iteration-time model (seed 3609, 6 configurations), drawn and
# committed before any of it ran; it judges the shipped model (unchanged since the fourth draw). Run from
# the project root with .mlm/ (Megatron-LM) present:
#   bash .gpu/enter.sh bash bench/results/2026-12-03-time-heldout6/gpu-call.sh
set -uo pipefail
R=$(pwd)/bench/results
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1; date -u +%FT%TZ > $OUT/date.txt
python3 bench/megatron/campaign.py run $R/2026-12-03-time-heldout6/draw.json --out /tmp/h6 --lanes 1 --no-trace --iters 24 \
  --deadline 330 --grace 50 --ids r04,r03,r02,r01,r00,r05 --pack $OUT/h6.tgz > $OUT/console-h6.log 2>&1
cat $OUT/console-h6.log | tail -8
