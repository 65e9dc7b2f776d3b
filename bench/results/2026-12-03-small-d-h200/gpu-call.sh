#!/usr/bin/env bash
# Issue 37: the backward's 4×16 default (sgmmTiles.ts) was measured at D = 64 and assumed for smaller head
# dims. This checks D = 32 and 48 in one call: the same-call bench (N = 16384, H16, f16, robustness off)
# with the default (4×16) and with 8×16 pinned, PyTorch measured first.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-small-d/gpu-call.sh
set -uo pipefail
O=/tmp/smalld; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 32,48 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
small() { # tag [VAR=VALUE…]
  local tag=$1; shift
  env FLASHRING_ROBUST=0 "$@" timeout 70 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D 32,48 \
    --precision f16 --reps 3 --no-ring --no-memory --peer "$O/peer.json" --out "$O/$tag" > "$O/$tag.log" 2>&1
  echo "$tag $(el)"; kernel_rows "$tag"; pack
}
small sg4; small sg8 FLASHRING_SGMM_BWD=8x16; small sg4-again
