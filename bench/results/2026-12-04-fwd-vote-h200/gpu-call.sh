#!/usr/bin/env bash
# The forward's vote only where read, without wg_keys held across the tile loop (patch.py here: va; vb also votes on
# every tile with the D split), after ../2026-12-04-stats-h200 where the D split's forward lost 4-9% at D = 128:
# forward and nan tests on va; same-call bench (f16, N = 16384, H16): va robustness off (D 64, 128), the tree as
# committed (D 128), vb (D 128), va robustness on (D 64, 128); then forward and nan tests on vb.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-fwdvote/gpu-call.sh
set -uo pipefail
O=/tmp/fwdvote; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for v in va vb; do
  mkdir -p /tmp/v-$v && tar --exclude=./node_modules --exclude=./.gpu --exclude=./bench/results -cf - . | tar -xf - -C /tmp/v-$v
  ln -sfn $root/node_modules /tmp/v-$v/node_modules
  python3 bench/results/wip-fwdvote/patch.py $v /tmp/v-$v || echo "patch $v FAILED"
done
(cd /tmp/v-va && timeout 80 vitest run test/forward.test.ts test/nan.test.ts > $O/tests-va.log 2>&1)
echo "tests va $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-va.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
(cd /tmp/v-va && same_call va-r0 0 f16)
SC_D=128 same_call tree-r0 0 f16
(cd /tmp/v-vb && SC_D=128 same_call vb-r0 0 f16)
(cd /tmp/v-va && same_call va-r1 1 f16)
echo "== pass, D, causal: TFLOP/s robust off: va / tree / vb | robust on: va"
awk '$2 == "fwd" { k = $2 " " $3 " " $4; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-24s %s %s %s | %s\n", k, v["va-r0", k], v["tree-r0", k], v["vb-r0", k], v["va-r1", k] }' $O/table.txt | sort
(cd /tmp/v-vb && timeout 80 vitest run test/forward.test.ts test/nan.test.ts > $O/tests-vb.log 2>&1)
echo "tests vb $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-vb.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
