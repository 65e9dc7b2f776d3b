#!/usr/bin/env bash
# Issue 37, short calls: the tensor-core backward's dK/dV and dQ in one dispatch (dkdv_dq in
# shaders/flash_bwd_sgmm.wgsl; FlashBackward.encode fuses where both are asked), against the two
# passes as before (FLASHRING_SGMM_BWD_FUSE=0), run first and last (two, two2). The steps bench now
# also times `bwd`, the backward as the ring encodes it (one dispatch fused; two passes from the
# first's start to the second's end), and sums the ring with it; dkdv and dq are still timed apart.
# Then the float64 tests with the fused default (backward, NaN, ring: the ring case runs the
# accumulating tensor-core backward; launch-order: fused and two passes give the same bits).
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-fuse/gpu-call.sh
set -uo pipefail
O=/tmp/fuse; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call two 0 f16 FLASHRING_SGMM_BWD_FUSE=0
FLASHRING_SGMM_BWD_FUSE=0 steps two 128 2,4,8; FLASHRING_SGMM_BWD_FUSE=0 steps two 64 2,4,8; pack
same_call fused 0 f16
steps fused 128 2,4,8; steps fused 64 2,4,8; pack
same_call two2 0 f16 FLASHRING_SGMM_BWD_FUSE=0
T="test/backward.test.ts test/nan.test.ts test/ring.test.ts test/launch-order.test.ts"
timeout 130 vitest run $T > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |FAIL|×" | head -12; pack
echo "steps (R: ring ms, plain ms, R=1 ms | ring/plain, plain/R=1, ring/R=1 (dkdv, dq apart)):"
for f in $O/steps*.log; do echo "$(basename $f .log):"; grep -E '^(2|4|8) +[0-9.]+ +[0-9.]+ +[0-9.]+ +\|' $f; grep -E '^(1|8) +(R=1|j<r)' $f; done
sort -k2,2 -k3,3 -k4,4 -k1,1 $O/table.txt | grep -v " fwd "
