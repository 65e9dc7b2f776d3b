#!/usr/bin/env bash
# The tensor-core backward's step order PIPE 2 (two staging buffers, the next tile staged behind the barrier after
# the elementwise step: 2 barriers a full tile instead of 4) and dq's vote on K only; and HEAD's forward with the
# D split's vote (e05354e, f9a564d, 9572722: never run together on the H200). The float64 tests (robustness off,
# then on; nan.test.ts holds both orders bitwise), the same-call bench (f16, N = 16384, H16, D 64 / 128) of this
# tree with PIPE 0 (default) and 2 against 9572722 (/tmp/old), p2p's steps at D = 64 in both orders, the real p2p
# ring, and `flashring tune` at D = 64 (every backward tile in both orders).
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-bwd-pipe/gpu-call.sh
set -uo pipefail
O=/tmp/bwdpipe; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
timeout 170 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/ring.test.ts test/robust.test.ts test/active-blocks.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
FLASHRING_ROBUST=1 timeout 100 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts > $O/tests-robust.log 2>&1
echo "tests robust $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-robust.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
FLASHRING_SGMM_BWD_PIPE=2 timeout 100 vitest run test/backward.test.ts test/ring.test.ts > $O/tests-pipe2.log 2>&1
echo "tests pipe 2 $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-pipe2.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call p0-r0 0 f16
same_call p2-r0 0 f16 FLASHRING_SGMM_BWD_PIPE=2
(cd /tmp/old && same_call old-r0 0 f16)
same_call p2-r1 1 f16 FLASHRING_SGMM_BWD_PIPE=2
(cd /tmp/old && same_call old-r1 1 f16)
same_call p0-r0b 0 f16
echo "== pass, D, causal: TFLOP/s robust off: PIPE 0 / PIPE 2 (xFA2) / old / PIPE 0 again | robust on: PIPE 2 (xFA2) / old"
awk '{ k = $2 " " $3 " " $4 " " $5; v[$1, k] = $6; r[$1, k] = $8; keys[k] = 1 } END { for (k in keys) printf "%-30s %s %s (%s) %s %s | %s (%s) %s\n", k, v["p0-r0", k], v["p2-r0", k], r["p2-r0", k], v["old-r0", k], v["p0-r0b", k], v["p2-r1", k], r["p2-r1", k], v["old-r1", k] }' $O/table.txt | sort
steps p0 64 4,8
(export FLASHRING_SGMM_BWD_PIPE=2; steps p2 64 4,8)
for f in $O/steps*.log; do
  awk -v T=$(basename $f .log) '$1 == 1 && $2 == "R=1" { r1 = sprintf("%s %s %s", $4, $5, $6) } END { printf "%-16s R=1 fwd dkdv dq %s\n", T, r1 }' $f
done
pack
timeout 150 node bench/cp-run.mjs sweep --N 16384 --H 16 --D 128 --R 1,2,4,8 --schemes p2p --budget-s 100 --out $O/sweep > $O/sweep.log 2>&1
echo "ring $(el)"; grep -E "p2p|R=|ratio|×" $O/sweep.log | tail -8; pack
timeout 170 node bin/flashring.mjs tune --D 64 --precision f16 --causal false --N 16384 --heads 16 --reps 3 --store $O/tune-D64.json > $O/tune-D64.log 2>&1
echo "tune $(el)"; grep -E "^  bwd " $O/tune-D64.log | head -14; grep -vE "^  (fwd|bwd) " $O/tune-D64.log | tail -6; pack
