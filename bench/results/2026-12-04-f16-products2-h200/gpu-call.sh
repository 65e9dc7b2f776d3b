#!/usr/bin/env bash
# Issue 37 item 3, second form: the portable forward's f16 products streamlined (maxima as f16 bits with integer
# operations; Q's maxima read tx-strided; P~ kept in f16 as it is, bounded by the invocation's largest P~ of the
# tile) against the first form (62202c7, from /tmp/old) and pinned f32 products, robustness on (browsers) and off.
# Same call: N = 16384, B1 H16, D 64 and 128, causal and not, PyTorch 2.11 first. Then the float64 tests on the
# H200: f16 products at their edges, forward, NaN, ring, and every kernel bit for bit with and without robustness.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-pk3/gpu-call.sh (this folder was then wip-pk3)
set -uo pipefail
O=/tmp/pk3; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call new-r1 1 f16 FLASHRING_PATH=scalar
(cd /tmp/old && same_call first-r1 1 f16 FLASHRING_PATH=scalar)
same_call f32p-r1 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PRODUCTS=f32
same_call new-r0 0 f16 FLASHRING_PATH=scalar
same_call new-r1b 1 f16 FLASHRING_PATH=scalar
echo "== portable fwd TFLOP/s (robust on): new / first form / f32 products / new again | off: new"
awk '$2 == "fwd" { k = $3 " " $4; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-20s %s / %s / %s / %s | %s\n", k, v["new-r1", k], v["first-r1", k], v["f32p-r1", k], v["new-r1b", k], v["new-r0", k] }' $O/table.txt | sort | tee $O/pk.txt
pack
timeout 240 vitest run test/f16-products.test.ts test/forward.test.ts test/nan.test.ts test/ring.test.ts test/robust.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|bitwise identical|at its edge" | cut -c1-300 | head -20; pack
echo "== portable"; cat $O/pk.txt
