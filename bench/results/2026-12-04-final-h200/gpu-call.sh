#!/usr/bin/env bash
# Issue 37, the session's last call (2026-12-04), at the commit that makes the forward's D split the default at
# D = 128 (16x32x1x2): the suite on the H200 (tensor-core path), then the same-call figures with robustness off
# (the default; the old D = 128 tile 8x32x1 pinned, whose D = 64 rows are not the default's and are not used; the
# default again), with robustness on, and the portable f32 forward with it on; then p2p's steps at D = 128 with
# the default and with 8x32x1 pinned. $OUT/all.tgz is rewritten after each stage, so a cut run still returns
# what finished.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-final/gpu-call.sh (this folder was then named wip-final)
set -uo pipefail
O=/tmp/fin; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 230 vitest run --exclude test/page.test.ts > $O/suite.log 2>&1
echo "suite $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/suite.log | grep -E "Test Files|Tests  |FAIL" | head -16; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call tc-r0 0 f16
same_call tc-r0-8x32x1 0 f16 FLASHRING_SGMM_FWD=8x32x1
same_call tc-r0b 0 f16
same_call tc-r1 1 f16
same_call portable-r1 1 f32 FLASHRING_PATH=scalar
steps dsplit 128 2,4,8; FLASHRING_SGMM_FWD=8x32x1 steps 8x32x1 128 2,4,8; pack
grep -E " fwd +D128" $O/table.txt
