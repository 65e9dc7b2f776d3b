#!/usr/bin/env bash
# The forward's D split with every subgroup-matrix offset a constant (each subgroup part hd its own unrolled
# copy, `if (DS == 1u || hd == hx)`), so that Dawn's robustness transform checks none: exactness (robustness off
# with the defaults, which take the D split at D = 128; robustness on with the D split pinned), then the same-call
# bench (f16, N = 16384, H16) against df5fb44 (/tmp/old): robustness on with 16x32x1x2 pinned (D = 128), new /
# old / new again; the robust default (8x32x1) for reference; robustness off defaults new / old at D = 64 and 128.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-ds-robust/gpu-call.sh
set -uo pipefail
O=/tmp/dsrobust; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
timeout 150 vitest run test/forward.test.ts test/nan.test.ts test/ring.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
FLASHRING_ROBUST=1 FLASHRING_SGMM_FWD=16x32x1x2 timeout 120 vitest run test/forward.test.ts test/nan.test.ts > $O/tests-robust-ds.log 2>&1
echo "tests robust D split $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-robust-ds.log | grep -E "Test Files|Tests  |^ +×|Error:" | head -24; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
SC_D=128 same_call ds-r1-new 1 f16 FLASHRING_SGMM_FWD=16x32x1x2
(cd /tmp/old && SC_D=128 same_call ds-r1-old 1 f16 FLASHRING_SGMM_FWD=16x32x1x2)
SC_D=128 same_call def-r1-new 1 f16
same_call def-r0-new 0 f16
(cd /tmp/old && same_call def-r0-old 0 f16)
SC_D=128 same_call ds-r1-new2 1 f16 FLASHRING_SGMM_FWD=16x32x1x2
echo "== pass, D, causal: TFLOP/s | robust on, D split: new / old / new again | robust on default (8x32x1) | robust off default: new / old"
awk '{ k = $2 " " $3 " " $4 " " $5; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-30s %s %s %s | %s | %s %s\n", k, v["ds-r1-new", k], v["ds-r1-old", k], v["ds-r1-new2", k], v["def-r1-new", k], v["def-r0-new", k], v["def-r0-old", k] }' $O/table.txt | sort
pack
