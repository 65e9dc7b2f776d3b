#!/usr/bin/env bash
# The tensor-core forward's step order now 0 except with the D split (sgmmFwdPipeFor), after ../wip-tc-tune
# timed 0 faster at D = 128 for every tile but the D split: the tests of the forward (both orders, robustness
# off; the forward with it on), then the same-call bench (f16, N = 16384, H16, D 64 / 128, causal and not)
# with robustness on under the new default and with the old order pinned (FLASHRING_SGMM_FWD_PIPE=2), and
# the new default with robustness off.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-tc-pipe/gpu-call.sh
set -uo pipefail
O=/tmp/tcpipe; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 90 vitest run test/forward.test.ts test/nan.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
FLASHRING_ROBUST=1 timeout 60 vitest run test/forward.test.ts > $O/tests-robust.log 2>&1
echo "tests robust $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-robust.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call new-r1 1 f16
same_call pipe2-r1 1 f16 FLASHRING_SGMM_FWD_PIPE=2
same_call new-r0 0 f16
echo "== pass, D, causal: TFLOP/s robust on: new default / order 2 pinned | robust off: new default"
awk '{ k = $2 " " $3 " " $4 " " $5; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-32s %s %s | %s\n", k, v["new-r1", k], v["pipe2-r1", k], v["new-r0", k] }' $O/table.txt | sort
pack
