#!/usr/bin/env bash
# Prepared 2026-12-06 (00:55 UTC session). One device call, from the project root, carry [".gpu"], other results folders
# set aside:
#   bash bench/results-aside.sh out wip-h200-owed 2026-12-06-units-h100 2026-12-05-fma-third-h100 2026-12-05-fma-h100
#   bash .gpu/enter.sh bash bench/results/wip-h200-owed/gpu-call.sh
# What only the H200 itself can give (on another card it ends at once): ../2026-12-06-units-h100's probe of PyTorch's
# memory-efficient f32 (bit probe, cuBLAS's GEMMs, Nsight Compute's tensor instructions), measured there on an H100;
# then the fma chains' figure (../2026-12-05-fma-third-h100/gpu-call.sh: shipped against the tree before, same call,
# PyTorch first; then test/nan.test.ts), measured three times on H100s.
# Tries (nvidia-h200): 02:12 and 02:21 UTC on 2026-12-06, no machine started either time; 02:47 UTC, an H100 (it
# stopped at the check below; ../2026-12-06-gpu-suite-h100 used that machine). In the 03:44 UTC session: 03:48 and 03:59 UTC,
# no machine started; 04:27 UTC, an H100 (stopped at the check, 5 s); 04:53 and 05:17 no machine, 05:01 and 05:15 refused
# in the wait; 05:05 an H100 (../2026-12-06-gpu-suite-head-h100 used it); 05:29 no machine, 05:40 refused, 05:43 an H100.
# In the 06:34 UTC session: 06:45 UTC, an H100 (stopped at the check, 3 s); 07:16 UTC, the H200: it ran (call/; this folder
# was wip-h200-owed).
# Ran once, in full.
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
echo "gpu: $(cat "$OUT/gpu.txt")"
grep -q H200 "$OUT/gpu.txt" || { echo "not an H200: nothing run"; exit 0; }
mkdir -p "$OUT/units"
PYTHONUNBUFFERED=1 timeout 90 python3 bench/peers/torch_f32_units.py --gemm 8192 --out "$OUT/units/units.json" > "$OUT/units/units.log" 2>&1
grep -v Warning "$OUT/units/units.log" | cut -c1-300
if command -v ncu > /dev/null; then
  cp bench/results/2026-12-06-units-h100/call1/ncu_probe.py /tmp/ncu_probe.py
  timeout 45 ncu --kernel-name regex:fmha --launch-count 1 --metrics \
    sm__inst_executed_pipe_tensor.sum,smsp__inst_executed_pipe_fma.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active \
    python3 /tmp/ncu_probe.py > "$OUT/units/ncu.log" 2>&1
  grep -E "fmha|pipe|ffma|==ERR" "$OUT/units/ncu.log" | head -8
fi
# The plain-WGSL f32 GEMMs with and without loads ahead (../2026-12-06-gemm-prefetch-h100, an H100: 33.5 -> 38.1 TFLOP/s),
# on the H200 (added 06:44 UTC, 2026-12-06; cuBLAS's f32 GEMM for the ratio is units.json's).
timeout 100 node bench/ceiling/run.mjs --f32-only --reps 5 --out "$OUT/ceiling" > "$OUT/ceiling.log" 2>&1
grep -E "f32" "$OUT/ceiling.log" | grep -v '/16' | head -17
exec bash bench/results/2026-12-05-fma-third-h100/gpu-call.sh
