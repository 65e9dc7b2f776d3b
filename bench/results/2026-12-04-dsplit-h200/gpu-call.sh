#!/usr/bin/env bash
# Issue 37 item 1, "D split across subgroups": the tensor-core forward with two subgroups a row block, each
# holding half of O's columns and computing half of S's (FLASHRING_SGMM_FWD=SGxTxRBx2), so that a lane holds
# half the accumulators and 16 subgroups fit at Bc = 32. The float64 tests with each D-split tile pinned; then
# the same-call bench (f16, robustness off, N = 16384, H16, D 64 and 128, causal and not): the defaults,
# 16x32x1x2, 8x32x1x2, the defaults again.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-dsplit/gpu-call.sh (this folder was then named wip-dsplit)
set -uo pipefail
O=/tmp/dsp; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for pin in 16x32x1x2 8x32x1x2; do
  FLASHRING_SGMM_FWD=$pin timeout 150 vitest run test/forward.test.ts test/nan.test.ts test/ring.test.ts > $O/tests-$pin.log 2>&1
  echo "tests $pin $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-$pin.log | grep -E "Test Files|Tests  |^ +×" | head -14; pack
done
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call base 0 f16
same_call ds16 0 f16 FLASHRING_SGMM_FWD=16x32x1x2
same_call ds8 0 f16 FLASHRING_SGMM_FWD=8x32x1x2
same_call base2 0 f16
grep " fwd " $O/table.txt
