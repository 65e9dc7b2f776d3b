#!/usr/bin/env bash
# Prepared 2026-12-05 (22:01 UTC session). One device call, from the project root, carry [".gpu"], other results
# folders set aside:
#   bash bench/results-aside.sh out wip-units wip-fma-h200b 2026-12-05-fma-third-h100 2026-12-05-fma-h100
#   bash .gpu/enter.sh bash bench/results/wip-units/gpu-call.sh
# Issue 37's portable targets are ratios to PyTorch's memory-efficient f32 attention. This call asks what units that
# peer runs on (bench/peers/torch_f32_units.py: a bit probe, cuBLAS's f32 GEMM with TF32 off and on, the kernels'
# names; ncu's instruction counts if the host has ncu), then, in the same call: the peer (torch_sdpa.py with its
# f16 matmul), our plain-WGSL f32 GEMM ceiling and the portable f32 forward (robustness on). (The fma chains' H200
# figure, ../wip-fma-h200b, was to follow on an H200; cut when tries from 22:03 UTC on left too little device time.)
# SLIM=1 (set when little device time was left) skips ncu and the WGSL GEMM ceiling. Since 2026-12-06 the bench's
# kernel rows carry gemmShare (TFLOP/s over cuBLAS's f32 matmul, TF32 off, for the portable path: peer.json's --gemm).
set -uo pipefail
O=/tmp/units; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
echo "gpu: $(cat $O/gpu.txt)"
PYTHONUNBUFFERED=1 timeout 150 python3 bench/peers/torch_f32_units.py --gemm 8192 --out $O/units.json > $O/units.log 2>&1
echo "units $(el)"; cat $O/units.log | grep -v Warning | cut -c1-400; pack
if [ -z "${SLIM:-}" ] && command -v ncu > /dev/null; then
  cat > $O/ncu_probe.py <<'PY'
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
q, k, v = (torch.randn(1, 16, 2048, 128, device='cuda', dtype=torch.float32) for _ in range(3))
with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
    F.scaled_dot_product_attention(q, k, v); torch.cuda.synchronize()
PY
  timeout 45 ncu --kernel-name regex:fmha --launch-count 1 --metrics \
    sm__inst_executed_pipe_tensor.sum,smsp__inst_executed_pipe_fma.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active \
    python3 $O/ncu_probe.py > $O/ncu.log 2>&1
  echo "ncu $(el)"; grep -E "fmha|pipe|ffma|==ERR|==WARN" $O/ncu.log | head -12
else echo "no ncu on this host" | tee $O/ncu.log; fi
PYTHONUNBUFFERED=1 timeout 90 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --gemm 8192 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; grep -E "efficient|matmul" $O/peer.log; pack
[ -n "${SLIM:-}" ] || timeout 100 node bench/ceiling/run.mjs --reps 3 --peer $O/peer.json --out $O/ceiling > $O/ceiling.log 2>&1
echo "ceiling $(el)"; grep -E "f32|ceiling on" $O/ceiling.log | head -12; pack
same_call p32 1 f32 FLASHRING_PATH=scalar
# The portable f16 forward (default f32 products) too, where the call's time allows (the tool's limit: 600 s).
[ $(( $(date +%s) - t0 )) -lt 430 ] && same_call p16 1 f16 FLASHRING_PATH=scalar
echo "done $(el)"
