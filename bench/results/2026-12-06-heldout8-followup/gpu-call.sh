#!/usr/bin/env bash
# Follow-ups to the eighth draw (../2026-12-06-time-heldout8), any GPU:
# 1. memory: r00 peaked 11.4% above the model as drawn; the cause found from its figures is torch.optim.AdamW's
#    foreach step (4 B a parameter). r00 runs again under bench/megatron/trace.py (the allocator's live-at-peak by
#    line and the frames of the peak's allocation), beside the same run with one micro batch a step (r00-mb1): the
#    peak should sit in the optimizer step, the same in both.
# 2. time: the host-bound runs came out far slower than the H200-profile model (r05 −51.7%, r01 −32.1%); r05 and r01
#    again with one micro batch a step (untraced, 24 iterations, alone) tell a per-micro-batch cost from a fixed one.
#   bash .gpu/enter.sh bash bench/results/2026-12-06-heldout8-followup/gpu-call.sh
set -uo pipefail
R=$(pwd)/bench/results/2026-12-06-heldout8-followup
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1; date -u +%FT%TZ > $OUT/date.txt
python3 bench/megatron/campaign.py run $R/runs.json --out /tmp/f8 --lanes 2 --iters 6 \
  --deadline 150 --grace 60 --timeout 200 --ids r00,r00-mb1 --pack $OUT/trace.tgz > $OUT/console-trace.log 2>&1
python3 bench/megatron/campaign.py run $R/runs.json --out /tmp/f8t --lanes 1 --no-trace --iters 24 \
  --deadline 150 --grace 60 --timeout 150 --ids r05-mb1,r01-mb1 --pack $OUT/time.tgz > $OUT/console-time.log 2>&1
tail -3 $OUT/console-trace.log $OUT/console-time.log
