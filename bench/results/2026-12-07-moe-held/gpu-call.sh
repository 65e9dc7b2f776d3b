#!/usr/bin/env bash
# The MoE held-out draw (seed 3640, 6 MoE configurations of 2K-8K tokens, 1-2 micro batches a step), drawn and
# committed with the model's predictions (predicted.csv) before any of it ran. On any GPU it judges the memory model's
# MoE terms of 2026-12-07 (a MoE layer's input counted once; what a checkpointed MoE layer holds from its backward to
# the next forward), total and part by part. Each run alone (one lane), traced, 6 iterations; the three that hold
# something between steps first. From the project root with .mlm/ present:
#   bash .gpu/enter.sh bash bench/results/2026-12-07-moe-held/gpu-call.sh [DEADLINE_S]
set -uo pipefail
R=$(pwd)/bench/results/2026-12-07-moe-held
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1; date -u +%FT%TZ > $OUT/date.txt
python3 bench/megatron/campaign.py run $R/draw.json --out /tmp/moeh --lanes 1 --deadline "${1:-330}" --grace 60 --timeout 120 \
  --ids r05,r00,r01,r02,r04,r03 --pack $OUT/moeh.tgz > $OUT/console-moeh.log 2>&1
grep -E "exit|done" $OUT/console-moeh.log | tail -8; cat $OUT/gpu.txt
