#!/usr/bin/env bash
# dq's S and dP through one f32 block a subgroup (P kept in registers between them, two barriers more a tile): dq's
# pipeline reaches neither dPa nor Pa, 12960 workgroup bytes at D = 64 (4x16) where it took 21152 (the cliffs of
# ../wip-wg-bytes, ../wip-wg-alias2). p2p's steps bench (N = 16384, causal f16, H16; R = 1 line: forward, dkdv, dq
# ms) new and old (/tmp/old: 39b4688, the tree before) at D = 64 and 128; the float64 backward and NaN tests; the
# same call at D = 64 (f16, N = 16384, H16) with its peer.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-dq-one-spill/gpu-call.sh
set -uo pipefail
O=/tmp/dqspill; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
for D in 64 128; do
  steps new $D 2
  (cd /tmp/old && steps old $D 2)
done
echo "== R=1 ms: forward dkdv dq"
for f in $O/steps*.log; do
  awk -v T=$(basename $f .log) '$1 == 1 && $2 == "R=1" { r1 = sprintf("%s %s %s", $4, $5, $6) } END { printf "%-16s %s\n", T, r1 }' $f
done | tee $O/r1.txt
pack
timeout 140 vitest run test/backward.test.ts test/nan.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
PYTHONUNBUFFERED=1 timeout 40 python3 bench/peers/torch_sdpa.py --N 16384 --D 64 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
SC_D=64 same_call new-r0 0 f16
