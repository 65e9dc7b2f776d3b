#!/usr/bin/env bash
# The backward's staging split up (../2026-12-04-bwd-phases-h200: staging is 36% of dkdv at D = 64), and a fix:
# patch.py here makes copies of the tree (nofetch, nostore, novote, nostats: a profile, results wrong; rot: each lane's
# 16-bit stores of a staged word in a rotated order, spreading a warp's stores over the banks, in both tensor-core
# kernels). The float64 tests on rot's tree; p2p's steps bench at D = 64 (every variant, the tree first and last) and
# D = 128 (tree, rot); the same-call bench (f16, N = 16384, H16), tree / rot with robustness off, then on.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-stash/gpu-call.sh
set -uo pipefail
O=/tmp/stash; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for v in nofetch nostore novote nostats rot; do
  mkdir -p /tmp/v-$v && tar --exclude=./node_modules --exclude=./.gpu --exclude=./bench/results -cf - . | tar -xf - -C /tmp/v-$v
  ln -sfn $root/node_modules /tmp/v-$v/node_modules
  python3 bench/results/wip-stash/patch.py $v /tmp/v-$v || echo "patch $v FAILED"
done
(cd /tmp/v-rot && timeout 170 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/ring.test.ts > $O/tests-rot.log 2>&1)
echo "tests rot $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-rot.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
steps base 64 8
for v in nofetch nostore novote nostats rot; do (cd /tmp/v-$v && steps $v 64 8); done
steps base2 64 8
steps base 128 8
(cd /tmp/v-rot && steps rot 128 8)
pack
echo "== R = 1 pass ms: fwd dkdv dq | R = 8 dkdv/dq: diagonal j<r j>r"
for f in $O/steps*.log; do
  awk -v T=$(basename $f .log) '$1 == 1 && $2 == "R=1" { r1 = sprintf("%s %s %s", $4, $5, $6) } $1 == 8 && $2 ~ /^(diagonal|j<r|j>r)$/ { r8 = r8 sprintf(" %s/%s", $5, $6) } END { printf "%-16s %s |%s\n", T, r1, r8 }' $f
done
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call base-r0 0 f16
(cd /tmp/v-rot && same_call rot-r0 0 f16)
same_call base-r1 1 f16
(cd /tmp/v-rot && same_call rot-r1 1 f16)
echo "== pass, D, causal: TFLOP/s robust off: tree / rot | robust on: tree / rot"
awk '{ k = $2 " " $3 " " $4 " " $5; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-30s %s %s | %s %s\n", k, v["base-r0", k], v["rot-r0", k], v["base-r1", k], v["rot-r1", k] }' $O/table.txt | sort
pack
