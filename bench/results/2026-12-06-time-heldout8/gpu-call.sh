#!/usr/bin/env bash
# The eighth fresh draw for the iteration-time model (seed 3611, 6 configurations, 2-4 micro batches a step),
# drawn and committed before any of it ran; it judges the shipped model on several micro batches, which no
# stored run had. The time model's profile is the H200's: on another GPU the runs judge the memory model
# only, their step times kept as that GPU's, not judged. Run from the project root with .mlm/ present:
#   bash .gpu/enter.sh bash bench/results/2026-12-06-time-heldout8/gpu-call.sh
set -uo pipefail
R=$(pwd)/bench/results
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1; date -u +%FT%TZ > $OUT/date.txt
grep -q H200 $OUT/gpu.txt || echo "not an H200 ($(cat $OUT/gpu.txt)): memory judged, step times kept unjudged"
python3 bench/megatron/campaign.py run $R/2026-12-06-time-heldout8/draw.json --out /tmp/h8 --lanes 1 --no-trace --iters 24 \
  --deadline 420 --grace 90 --timeout 240 --ids r04,r03,r02,r00,r01,r05 --pack $OUT/h8.tgz > $OUT/console-h8.log 2>&1
tail -8 $OUT/console-h8.log
