#!/usr/bin/env bash
# The constant-offset tensor-core kernels (see ../wip-tc-offsets) against 7d8e3fc (from /tmp/old), a second call:
# the SPIR-V of the new kernels with robustness off (to set against the first call's robust-on dump), then the
# same-call bench (f16, N = 16384, H16, D 64 / 128, causal and not) with robustness off alternated new / old twice
# and once more with it on, then the real ring (p2p, N = 16384, H16, D128, causal f16, R = 1, 2, 4, 8), old and
# new alternated twice.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-tc-offsets2/gpu-call.sh
set -uo pipefail
O=/tmp/tcoff2; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
env FLASHRING_ROBUST=0 FLASHRING_DAWN_FLAGS='enable-dawn-features=dump_shaders' timeout 120 node bin/flashring.mjs bench --N 2048 --heads 2 --batch 1 \
  --causal false --D 64,128 --precision f16 --reps 1 --no-ring --no-memory --out $O/dump-new-r0 > $O/dump-new-r0.log 2>&1
echo "dump $(el)"; node bench/spirv-counts.mjs $O/dump-new-r0.log | tee $O/counts-new-r0.txt; xz -T4 $O/dump-new-r0.log; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call new-r0 0 f16
(cd /tmp/old && same_call old-r0 0 f16)
same_call new-r0b 0 f16
(cd /tmp/old && same_call old-r0b 0 f16)
same_call new-r1c 1 f16
echo "== pass, D, causal: TFLOP/s robust off new / old (two each) | robust on new"
awk '{ k = $2 " " $3 " " $4 " " $5; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-32s %s %s | %s %s | %s\n", k, v["new-r0", k], v["new-r0b", k], v["old-r0", k], v["old-r0b", k], v["new-r1c", k] }' $O/table.txt | sort
pack
sw() {
  local dir=$root; [ "$1" = old ] && dir=/tmp/old
  (cd $dir && timeout 150 node bench/cp-run.mjs sweep --N 16384 --H 16 --D 128 --R 1,2,4,8 --schemes p2p --budget-s 120 --out $O/sweep-$1$2) > $O/sweep-$1$2.log 2>&1
  echo "sweep $1$2 $(el)"; grep -E "^[1248] +(baseline|p2p)" $O/sweep-$1$2.log | awk -v T="$1$2" '{ print T, $0 }' | tee -a $O/ring.txt; pack
}
sw old 1; sw new 1; sw old 2; sw new 2
