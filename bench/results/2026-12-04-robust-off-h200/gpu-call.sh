#!/usr/bin/env bash
# Robustness off (the Node default), the portable kernels with their bounds made visible (new) against b9eb1d2
# (old, /tmp/old), alternated old / new / old / new: does the restatement of indices (tx_ % TX ...) cost anything
# where no robustness transform runs? `../2026-12-04-robust-bounds-h200` read new 0.4–1.0% lower in one run each.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-off/gpu-call.sh
set -uo pipefail
O=/tmp/off; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
(cd /tmp/old && same_call old-a 0 f32,f16 FLASHRING_PATH=scalar)
same_call new-a 0 f32,f16 FLASHRING_PATH=scalar
(cd /tmp/old && same_call old-b 0 f32,f16 FLASHRING_PATH=scalar)
same_call new-b 0 f32,f16 FLASHRING_PATH=scalar
echo "== pass D causal precision: TFLOP/s old-a old-b | new-a new-b (robustness off)"
awk '{ k = $2 " " $3 " " $4 " " $5; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-32s %s %s | %s %s\n", k, v["old-a", k], v["old-b", k], v["new-a", k], v["new-b", k] }' $O/table.txt | sort
pack
