#!/usr/bin/env bash
# Context parallelism v2 on the GPU host, one call (about 6 minutes):
#   bash .gpu/enter.sh bash bench/cp-h200.sh
# 1. one-device sweep: N=16384 causal f16, H=16, D=128, R=1,2,4,8 × p2p (zigzag), all_gather, a2a:
#    summed GPU kernel time vs R=1, every result checked against R=1, the link model's prediction
#    for nvlink-h200 (step times, comm fraction, TFLOP/s per GPU), peak bytes per rank.
# 2. scale: exact forward+backward at N=1,048,576 (causal f16, H=8, D=128, R=8, p2p zigzag,
#    one-device; about 56 GiB on the GPU), sampled rows checked against the single-device kernel.
#    If the sweep's R=1 rate says it would not finish within SCALE_BUDGET_S (default 330 s), N is
#    halved until it does, and the output says so.
# Raw JSON (cp-sweep.json, cp-scale.json, a timeline) under $OUT (or bench/out); the table last.
set -uo pipefail
out=${OUT:-bench/out}; mkdir -p "$out"
export MESA_SHADER_CACHE_DISABLE=false
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/nvidia-smi.txt"
timeout 150 node bench/cp-run.mjs sweep --N "${SWEEP_N:-16384}" --H 16 --D 128 --R 1,2,4,8 --out "$out" 2>&1 | grep -v '^Warning' | tee "$out/cp-sweep.log" | grep -v '^sweep R='
timeout "${SCALE_TIMEOUT_S:-420}" node bench/cp-run.mjs scale --N "${SCALE_N:-1048576}" --H 8 --D 128 --R 8 --gpu-gib 139 \
  --budget-s "${SCALE_BUDGET_S:-330}" --out "$out" 2>&1 | grep -v '^Warning' | tee "$out/cp-scale.log" | grep '^scale:' | head -5
echo; echo '== context parallelism v2 on the H200 =='
node bench/cp-run.mjs table --out "$out" 2>&1 | grep -v '^Warning'
