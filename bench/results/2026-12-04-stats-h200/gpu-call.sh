#!/usr/bin/env bash
# The tensor-core backward's LSE staged as loaded (l2_of a tile later) and the non-finite votes only on tiles that
# read them (forward and backward), after ../2026-12-04-stash-h200: the float64 tests (robustness off, then on), the
# same-call bench (f16, N = 16384, H16, D 64 / 128) new / old (the tree before, /tmp/old) with robustness off, then
# on; p2p's steps bench at D = 64 and 128; the real p2p ring (D128 causal f16, R = 1, 2, 4, 8).
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-stats/gpu-call.sh
set -uo pipefail
O=/tmp/stats; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
timeout 170 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/ring.test.ts test/robust.test.ts test/active-blocks.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
FLASHRING_ROBUST=1 timeout 100 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts > $O/tests-robust.log 2>&1
echo "tests robust $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-robust.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call new-r0 0 f16
(cd /tmp/old && same_call old-r0 0 f16)
same_call new-r1 1 f16
(cd /tmp/old && same_call old-r1 1 f16)
echo "== pass, D, causal: TFLOP/s robust off: new / old | robust on: new / old"
awk '{ k = $2 " " $3 " " $4 " " $5; v[$1, k] = $6; r[$1, k] = $8; keys[k] = 1 } END { for (k in keys) printf "%-30s %s (%s) %s | %s (%s) %s\n", k, v["new-r0", k], r["new-r0", k], v["old-r0", k], v["new-r1", k], r["new-r1", k], v["old-r1", k] }' $O/table.txt | sort
steps new 64 4,8
steps new 128 4,8
for f in $O/steps*.log; do
  awk -v T=$(basename $f .log) '$1 == 1 && $2 == "R=1" { r1 = sprintf("%s %s %s", $4, $5, $6) } END { printf "%-16s R=1 fwd dkdv dq %s\n", T, r1 }' $f
done
pack
timeout 170 node bench/cp-run.mjs sweep --N 16384 --H 16 --D 128 --R 1,2,4,8 --schemes p2p --budget-s 120 --out $O/sweep > $O/sweep.log 2>&1
echo "ring $(el)"; grep -E "p2p|R=|ratio|×" $O/sweep.log | tail -12; pack
