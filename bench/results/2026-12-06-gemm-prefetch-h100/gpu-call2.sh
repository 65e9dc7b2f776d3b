#!/usr/bin/env bash
# Second call (2026-12-06, after call 1): the prefetch and the double buffer told apart. 'prefetched-1' loads the next K
# step into registers as 'prefetched' does but keeps one workgroup buffer (two barriers a step). Same carry and aside
# as gpu-call.sh; run: bash .gpu/enter.sh bash bench/results/wip-f32-gemm-pf/gpu-call2.sh
set -uo pipefail
O=/tmp/gemmpf2; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
echo "gpu: $(cat $O/gpu.txt)"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/peers/torch_sdpa.py --N 1024 --D 64 --heads 16 --reps 2 --gemm 8192 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; grep -E "matmul" $O/peer.log; pack
for n in 1 2; do
  timeout 150 node bench/ceiling/run.mjs --f32-only --reps 5 --peer $O/peer.json --out $O/ceiling$n > $O/ceiling$n.log 2>&1
  echo "ceiling$n $(el)"; grep -E "f32|failed" $O/ceiling$n.log | grep -v '/16' | head -17; pack
done
echo "done $(el)"
