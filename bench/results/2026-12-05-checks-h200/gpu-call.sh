#!/usr/bin/env bash
# Prepared 2026-12-05 (08:35 UTC session, when no device was lent); not yet run. One device call, from the project root:
#   bash .gpu/enter.sh bash bench/results/wip-2026-12-05-checks/gpu-call.sh
# What the tree since 7e4d273 changed that only the H200 can check (docs/performance.md, twenty-third step):
#   - the float64 tests on the H200 with the tensor-core path required: the portable forward's STALE as a
#     specialization value (default byte-identical; the exact running max for extreme V, test/extremes.test.ts),
#     the grid limits (batch groups of at most 65535, LimitError beyond), passes in groups with progress
#     (test/forward.test.ts), the ring's cancel (test/ring-cancel.test.ts: no submission after a run rejects);
#   - that the shipped kernels' speed did not move: the same-call table, tensor cores and the portable f32
#     forward, robustness on (what browsers run), D 64 and 128, causal and not, PyTorch first.
set -uo pipefail
O=/tmp/checks; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 300 vitest run test/extremes.test.ts test/forward.test.ts test/backward.test.ts test/ring.test.ts test/ring-cancel.test.ts test/ring-nomass.test.ts test/nan.test.ts test/mask.test.ts test/robust.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | cut -c1-300 | head -20; pack
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call tc-r1 1 f16
same_call p32-r1 1 f32 FLASHRING_PATH=scalar
echo "== compare with bench/results/2026-12-05-next-h200 (tc-r1, p32-r1): the same kernels, so within the calls' drift"
cat $O/table.txt
