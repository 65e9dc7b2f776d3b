#!/usr/bin/env bash
# The eighth draw's r00 (L3 h3072 a24 g2 GeLU, untied 56820 vocabulary, s2048, full recompute uniform/1, 3 micro
# batches) peaked 11.4% above the memory model (13.44 GiB measured, 11.91 model) in its untraced run. This call runs
# it again under bench/megatron/trace.py (saved tensors and the allocator's live-at-peak by Megatron-LM line), and
# the same run with one micro batch a step (r00-mb1), to find the missing term. Any GPU: memory only.
#   bash .gpu/enter.sh bash bench/results/2026-12-06-heldout8-r00-trace/gpu-call.sh
set -uo pipefail
R=$(pwd)/bench/results
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1; date -u +%FT%TZ > $OUT/date.txt
python3 bench/megatron/campaign.py run $R/2026-12-06-heldout8-r00-trace/runs.json --out /tmp/t8 --lanes 2 --iters 6 \
  --deadline 200 --grace 60 --timeout 200 --ids r00,r00-mb1 --pack $OUT/t8.tgz > $OUT/console-t8.log 2>&1
tail -4 $OUT/console-t8.log
