#!/usr/bin/env bash
# The portable kernels with their loop bounds and inner-loop indices visible to Tint's robustness
# transform (constantBounds; tx_ % TX etc.), against the code before (b9eb1d2, from /tmp/old), with
# Dawn's robustness on as browsers run it: the tests that compile the unrolled kernels, then the
# same-call bench (f32 and f16, N = 16384, H16, D 64 / 128, causal and not) alternated new / old twice,
# and once each with robustness off (expected unchanged).
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-bounds/gpu-call.sh
set -uo pipefail
O=/tmp/bounds; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
FLASHRING_ROBUST=1 timeout 150 vitest run test/robust.test.ts test/forward.test.ts test/backward.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call new-r1 1 f32,f16 FLASHRING_PATH=scalar
(cd /tmp/old && same_call old-r1 1 f32,f16 FLASHRING_PATH=scalar)
same_call new-r1b 1 f32,f16 FLASHRING_PATH=scalar
(cd /tmp/old && same_call old-r1b 1 f32,f16 FLASHRING_PATH=scalar)
same_call new-r0 0 f32 FLASHRING_PATH=scalar
(cd /tmp/old && same_call old-r0 0 f32 FLASHRING_PATH=scalar)
echo "== fwd, D, causal: TFLOP/s new / old (robust on, two each), robust off new / old"
awk '{ k = $2 " " $3 " " $4 " " $5; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-32s %s %s | %s %s | %s %s\n", k, v["new-r1", k], v["new-r1b", k], v["old-r1", k], v["old-r1b", k], v["new-r0", k], v["old-r0", k] }' $O/table.txt | sort
pack
