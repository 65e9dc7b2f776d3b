#!/usr/bin/env bash
# Prepared 2026-12-05 (17:34 UTC session), after ../2026-12-05-fma-third-h100 ran on an H100 (the third call today that
# asked for the H200 and got an H100; tries at 18:25 and 18:53 UTC ran this and stopped at the check below; a try at
# 20:20 UTC, 19:42 session, found no machine lent). One device
# call, from the project root, carry [".gpu"], other results folders set aside:
#   bash bench/results-aside.sh out wip-fma-h200b 2026-12-05-fma-third-h100 2026-12-05-fma-h100
#   bash .gpu/enter.sh bash bench/results/wip-fma-h200b/gpu-call.sh
# ../2026-12-05-fma-third-h100/gpu-call.sh again (the shipped fma chains against the tree before, same call, PyTorch
# first; then test/nan.test.ts), only on the H200: a fourth H100 figure would add nothing, so on another card it ends.
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
echo "gpu: $(cat "$OUT/gpu.txt")"
grep -q H200 "$OUT/gpu.txt" || { echo "not an H200: nothing run"; exit 0; }
exec bash bench/results/2026-12-05-fma-third-h100/gpu-call.sh
