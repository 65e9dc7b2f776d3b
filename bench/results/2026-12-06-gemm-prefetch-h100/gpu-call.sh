#!/usr/bin/env bash
# Prepared 2026-12-06 (06:34 UTC session). One device call, from the project root, carry [".gpu"], other results
# folders set aside:
#   bash bench/results-aside.sh out wip-f32-gemm-pf   (this folder was wip-f32-gemm-pf)
#   bash .gpu/enter.sh bash bench/results/wip-f32-gemm-pf/gpu-call.sh (now 2026-12-06-gemm-prefetch-h100)
# Is the plain-WGSL f32 GEMM "ceiling" (33.5 TFLOP/s on an H100, 0.649× cuBLAS's f32 GEMM without tensor cores) a
# ceiling? Its kernel stages each K step between two barriers and loads nothing ahead. This call times it beside the
# prefetched, double-buffered variant (bench/ceiling/shaders/gemm_f32_pf.wgsl: the next step's words loaded into
# registers before the current step's products, one barrier a step), same tiles, same call, with cuBLAS's f32 GEMM
# (TF32 off) and PyTorch's memory-efficient f32 attention first, then the portable f32 forward at D = 128 (robustness
# on) against them.
set -uo pipefail
O=/tmp/gemmpf; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
echo "gpu: $(cat $O/gpu.txt)"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/peers/torch_sdpa.py --N 16384 --D 128 --heads 16 --reps 2 --gemm 8192 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; grep -E "efficient|matmul" $O/peer.log; pack
timeout 150 node bench/ceiling/run.mjs --f32-only --reps 5 --peer $O/peer.json --out $O/ceiling > $O/ceiling.log 2>&1
echo "ceiling $(el)"; grep -E "f32|ceiling on|failed" $O/ceiling.log | grep -v '/13' | head -16; pack
SC_D=128 same_call p32 1 f32 FLASHRING_PATH=scalar
# The same ceiling again, to see how far one call's figures move.
timeout 100 node bench/ceiling/run.mjs --f32-only --reps 5 --peer $O/peer.json --out $O/ceiling2 > $O/ceiling2.log 2>&1
echo "ceiling2 $(el)"; grep -E "f32" $O/ceiling2.log | grep -v '/13' | head -14; pack
echo "done $(el)"
