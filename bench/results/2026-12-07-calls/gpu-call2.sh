#!/usr/bin/env bash
# 2026-12-07's second device call (carry .gpu and .mlm; results aside but 2026-12-07-calls, 2026-12-07-moe-held and
# 2026-12-07-moe-time):
#   bash .gpu/enter.sh bash bench/results/2026-12-07-calls/gpu-call2.sh
# On an H200: the MoE time draw's first two pairs (../2026-12-07-moe-time/gpu-call-h200.sh short).
# On another card: the MoE held-out draw's four runs of two micro batches again, traced by trace.py as fixed after their
# first run (saved tensors of the first micro batch only), so that their stored and transient parts are measured
# (predicted before the draw first ran: ../2026-12-07-moe-held/predicted.csv).
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1; date -u +%FT%TZ > "$OUT/date.txt"
echo "gpu: $(cat "$OUT/gpu.txt")"
if grep -q H200 "$OUT/gpu.txt"; then exec bash bench/results/2026-12-07-moe-time/gpu-call-h200.sh short; fi
R=$(pwd)/bench/results/2026-12-07-moe-held
python3 bench/megatron/campaign.py run $R/draw.json --out /tmp/moeh2 --lanes 1 --deadline 150 --grace 40 --timeout 90 \
  --ids r04,r00,r03,r01 --pack $OUT/moeh2.tgz > $OUT/console-moeh2.log 2>&1
grep -E "exit|done" $OUT/console-moeh2.log | tail -6
