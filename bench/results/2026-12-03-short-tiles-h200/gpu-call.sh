#!/usr/bin/env bash
# Issue 37, short calls: do smaller tiles pay on p2p's short steps? At R = 8 a step's half-chunks hold
# 1024 rows: the tensor-core forward's 128-row blocks give 128 workgroups per call over 16 heads (the
# H200 has 132 SMs), dkdv's and dq's 128-row blocks as many. The steps bench (causal f16, H16,
# N = 16384, R = 2, 4, 8) with the kernels' tiles pinned to half the rows per workgroup, against the
# defaults run first and last. Per pass and step kind, so a per-call choice can be read off.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-short-tiles/gpu-call.sh
set -uo pipefail
O=/tmp/short; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
steps def 128 2,4,8
FLASHRING_SGMM_BWD=4x16 steps bwd4x16 128 2,4,8
FLASHRING_SGMM_FWD=4x32x1 steps fwd4x32x1 128 2,4,8
FLASHRING_SGMM_FWD=4x16x1 steps fwd4x16x1 128 2,4,8
FLASHRING_SGMM_BWD=4x16 FLASHRING_SGMM_FWD=4x32x1 steps both 128 2,4,8; pack
steps def 64 2,4,8
FLASHRING_SGMM_BWD=4x16 steps bwd4x16 64 2,4,8
FLASHRING_SGMM_FWD=2x16x2 steps fwd2x16x2 64 2,4,8
FLASHRING_SGMM_FWD=4x16x1 steps fwd4x16x1 64 2,4,8; pack
steps def2 128 2,4,8; steps def2 64 2,4,8; pack
echo "per pass (R kind: fwd merge dkdv dq ms):"
for f in $O/steps*.log; do echo "== $(basename $f .log) $(grep -o 'fwd Br[^|]*| bwd [^,"]*' $O/$(basename $f .log)/*.json 2>/dev/null | head -1)"
  grep -E '^(1|2|4|8) +(R=1|diagonal|j<r|j>r)' $f | awk '{ print $1, $2, $4, $5, $6, $7 }'
  grep -E '^(2|4|8) +[0-9.]+ +[0-9.]+ +[0-9.]+ +\|' $f; done
