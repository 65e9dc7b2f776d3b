#!/usr/bin/env bash
# Issue 37, the session's last call (ran 2026-12-03, 16:17 UTC: README.md here): the whole suite on the H200 (tensor-core path, the
# default; test/ring.test.ts runs the accumulating tensor-core backward, the epilogue changed today),
# then the same-call figures with robustness on and off (tensor cores, f16) and the portable
# f32 forward with robustness on, against PyTorch in the same call: the README's figures for the code as
# it stands. $OUT/all.tgz is rewritten after each stage, so a cut run still returns what finished.
# Ran on the H200 from the project root at 25690ca (main, with bench/results moved aside to fit the 64 MiB tree; this folder then named wip-final-check):
#   bash .gpu/enter.sh bash bench/results/wip-final-check/gpu-call.sh
set -uo pipefail
O=/tmp/fin; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 260 vitest run --exclude test/page.test.ts > $O/suite.log 2>&1
echo "suite $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/suite.log | grep -E "Test Files|Tests  |FAIL" | head -12; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call tc-r0 0 f16
same_call tc-r1 1 f16
same_call portable-r1 1 f32 FLASHRING_PATH=scalar
