#!/usr/bin/env bash
# Prepared 2026-12-04 (22:39 UTC session, when no device was lent); run 2026-12-05 04:10 UTC as bench/results/wip-next/gpu-call.sh (this folder's name then), results in a/ b/ c/ and README.md.
# What the tree since 4bcc051 changed that only the H200 can measure:
#   - the tensor-core forward's epilogue (rows without mass in ring steps: a few scalar operations a row) and the
#     ring's finalize pass (one a rank): the same-call table with robustness off and on, and the real ring's sweep
#     (p2p, D = 128, R = 1, 2, 4, 8), each against the old tree 4bcc051 (carried as .gpu/old-tree.tgz, run from /tmp/old);
#   - the portable f16 forward: its default, f32 products again, and the opt-in f16 products with the two reviews'
#     last fixes (never measured on the H200), robustness on;
#   - the float64 tests on the H200, the tensor-core path included: rows without mass through every scheme
#     (test/ring-nomass.test.ts), the merge rules, f16 products at their edges, the ring, robustness bit for bit.
# Same call: N = 16384, B1 H16, D 64 and 128, causal and not, PyTorch first.
# Before the call (project root): git archive 4bcc051 src shaders bin bench package.json tsconfig.json ':!bench/results' | gzip > .gpu/old-tree.tgz
# Three device calls (each within the 600 s a call may take), from the project root:
#   bash .gpu/enter.sh bash bench/results/wip-next/gpu-call.sh a   (tests, same-call tables)
#   bash .gpu/enter.sh bash bench/results/wip-next/gpu-call.sh b   (the ring's sweeps and steps)
#   bash .gpu/enter.sh bash bench/results/wip-next/gpu-call.sh c   (the portable f32 forward, new and old)
set -uo pipefail
PART=${1:?give a, b or c}
O=/tmp/next-$PART; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
if [ "$PART" = a ]; then
FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 300 vitest run test/ring-nomass.test.ts test/nan.test.ts test/f16-products.test.ts test/ring.test.ts test/robust.test.ts test/forward.test.ts test/backward.test.ts test/mask.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|bitwise identical|cancelling" | cut -c1-300 | head -20; pack
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call tc-r0 0 f16
(cd /tmp/old && same_call old-tc-r0 0 f16)
same_call tc-r1 1 f16
(cd /tmp/old && same_call old-tc-r1 1 f16)
same_call p16-r1 1 f16 FLASHRING_PATH=scalar
same_call pk16-r1 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PRODUCTS=f16
(cd /tmp/old && same_call old-p16-r1 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PRODUCTS=f32)
echo "== tensor cores (TFLOP/s, ratio): new / old, robustness off then on"
awk '$1 ~ /tc-r/ { k = $2 " " $3 " " $4; v[$1, k] = $6 " " $8; keys[k] = 1 } END { for (k in keys) printf "%-22s off %s / %s   on %s / %s\n", k, v["tc-r0", k], v["old-tc-r0", k], v["tc-r1", k], v["old-tc-r1", k] }' $O/table.txt | sort
echo "== portable f16 forward, robustness on (TFLOP/s, ratio): default (f32 products) / old tree's f32 products / opt-in f16 products"
awk '$2 == "fwd" && $1 ~ /p(k)?16-r1/ { k = $3 " " $4; v[$1, k] = $6 " " $8; keys[k] = 1 } END { for (k in keys) printf "%-14s %s / %s / %s\n", k, v["p16-r1", k], v["old-p16-r1", k], v["pk16-r1", k] }' $O/table.txt | sort
elif [ "$PART" = c ]; then
# Added 2026-12-05 after a and b: the portable f32 forward (its epilogue and running max changed in the twenty-first step, unmeasured).
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call p32-r1 1 f32 FLASHRING_PATH=scalar
same_call p32-r0 0 f32 FLASHRING_PATH=scalar
(cd /tmp/old && same_call old-p32-r1 1 f32 FLASHRING_PATH=scalar)
else
sw() {
  local dir=$root; [ "$1" = old ] && dir=/tmp/old
  (cd $dir && timeout 150 node bench/cp-run.mjs sweep --N 16384 --H 16 --D 128 --R 1,2,4,8 --schemes p2p --budget-s 120 --out $O/sweep-$1) > $O/sweep-$1.log 2>&1
  echo "sweep $1 $(el)"; grep -E "^[1248] +(baseline|p2p)" $O/sweep-$1.log | awk -v T="$1" '{ print T, $0 }' | tee -a $O/table.txt; pack
}
sw old; sw new
steps new 128 2,4,8; pack
r1_table
fi
