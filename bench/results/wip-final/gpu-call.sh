#!/usr/bin/env bash
# Issue 37, the session's last call (2026-12-04): the suite on the H200 (tensor-core path), then the same-call
# figures twice with robustness off (the noise band of the causal D = 128 forward: 0.329x on 2026-12-03's last
# bwd-4x16 call, 0.336x in that day's final check), once with it on, and the portable f32 forward with it on;
# then the autotune's search for causal D = 128 f16 at the bench's shape (does a candidate beat the defaults?).
# $OUT/all.tgz is rewritten after each stage, so a cut run still returns what finished.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-final/gpu-call.sh
set -uo pipefail
O=/tmp/fin; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 230 vitest run --exclude test/page.test.ts > $O/suite.log 2>&1
echo "suite $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/suite.log | grep -E "Test Files|Tests  |FAIL" | head -16; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call tc-r0 0 f16
same_call tc-r0b 0 f16
same_call tc-r1 1 f16
same_call portable-r1 1 f32 FLASHRING_PATH=scalar
timeout 150 node bin/flashring.mjs tune --D 128 --precision f16 --causal true --N 16384 --heads 16 --reps 3 --fresh --store $O/tune.json > $O/tune.log 2>&1
echo "tune $(el)"; tail -8 $O/tune.log; pack
