#!/usr/bin/env bash
# The tensor-core kernels with constant subgroup-matrix offsets (tiles as arrays of 16-row blocks, each
# load or store at a constant offset within its block), against the code before (7d8e3fc, from /tmp/old):
# the tests (robustness off, then the forward and backward with it on), the SPIR-V Dawn's robustness
# transform leaves (dump_shaders, counted by bench/spirv-counts.mjs: checked = matrix loads and stores
# with a run-time check), then the same-call bench (f16, N = 16384, H16, D 64 / 128, causal and not)
# with robustness on (as browsers run it), alternated new / old twice, and once each with it off.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-tc-offsets/gpu-call.sh
set -uo pipefail
O=/tmp/tcoff; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
timeout 200 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/ring.test.ts test/robust.test.ts test/active-blocks.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
FLASHRING_ROBUST=1 timeout 120 vitest run test/forward.test.ts test/backward.test.ts > $O/tests-robust.log 2>&1
echo "tests robust $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-robust.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
for v in new old; do
  d=$root; [ $v = old ] && d=/tmp/old
  (cd $d && env FLASHRING_ROBUST=1 FLASHRING_DAWN_FLAGS='enable-dawn-features=dump_shaders' timeout 120 node bin/flashring.mjs bench --N 2048 --heads 2 --batch 1 \
    --causal false --D 64,128 --precision f16 --reps 1 --no-ring --no-memory --out $O/dump-$v > $O/dump-$v.log 2>&1)
  echo "dump $v $(el)"; node bench/spirv-counts.mjs $O/dump-$v.log | tee $O/counts-$v.txt; xz -T4 $O/dump-$v.log; pack
done
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call new-r1 1 f16
(cd /tmp/old && same_call old-r1 1 f16)
same_call new-r1b 1 f16
(cd /tmp/old && same_call old-r1b 1 f16)
same_call new-r0 0 f16
(cd /tmp/old && same_call old-r0 0 f16)
echo "== pass, D, causal: TFLOP/s new / old (robust on, two each) | robust off new / old"
awk '{ k = $2 " " $3 " " $4 " " $5; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-32s %s %s | %s %s | %s %s\n", k, v["new-r1", k], v["new-r1b", k], v["old-r1", k], v["old-r1b", k], v["new-r0", k], v["old-r0", k] }' $O/table.txt | sort
pack
