#!/usr/bin/env bash
# The MoE-extras draw (seed 3620, 6 MoE configurations of 2K-8K tokens, 1-2 micro batches a step; linear biases and
# the router expert bias drawn on / off), drawn and committed with the model's predictions (predicted.csv) before any
# of it ran. On any GPU it judges the memory model (memory is not the profile's GPU's) and the rule that names routed
# experts with linear biases untrainable (r00, r02, r03). Each run alone (one lane), traced, 6 iterations. From the
# project root with .mlm/ present:
#   bash .gpu/enter.sh bash bench/results/2026-12-07-moe-extras/gpu-call.sh
set -uo pipefail
R=$(pwd)/bench/results/2026-12-07-moe-extras
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1; date -u +%FT%TZ > $OUT/date.txt
python3 bench/megatron/campaign.py run $R/draw.json --out /tmp/moex --lanes 1 --deadline 330 --grace 60 --timeout 120 \
  --ids r01,r04,r05,r00,r02,r03 --pack $OUT/moex.tgz > $OUT/console-moex.log 2>&1
grep -E "exit|done" $OUT/console-moex.log | tail -8; cat $OUT/gpu.txt
# why each of the three with linear biases stopped, if it did (the exception's last line)
for r in r00 r02 r03; do echo "$r: $(grep -hoE '[A-Za-z_.]*(Error|Exception): .*' /tmp/moex/runs/$r.log | tail -1 | cut -c1-300)"; done
