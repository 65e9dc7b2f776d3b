#!/usr/bin/env bash
# Second call (2026-12-06, same warm H100 as gpu-call.sh's, minutes later): the tensor-core f16 kernels in the same-call
# bench against gpu-call.sh's peer.json (FlashAttention-2 and cuBLAS's f16 matmul, measured in that call on this
# machine; measured again here if /tmp/units is gone), so their share of cuBLAS's f16 GEMM stands beside
# FlashAttention-2's; then p2p's steps at D = 128 (R = 2, 4, 8).
set -uo pipefail
O=/tmp/units2; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
echo "gpu: $(cat $O/gpu.txt)"
if [ -f /tmp/units/peer.json ]; then cp /tmp/units/peer.json $O/peer.json; echo "peer: gpu-call.sh's"
else PYTHONUNBUFFERED=1 timeout 90 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --gemm 8192 --out $O/peer.json > $O/peer.log 2>&1; echo "peer measured again $(el)"; fi
same_call t16 0 f16 FLASHRING_PATH=subgroup-matrix
same_call t16r 1 f16 FLASHRING_PATH=subgroup-matrix
steps new 128 2,4,8; pack
echo "done $(el)"
