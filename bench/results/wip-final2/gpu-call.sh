#!/usr/bin/env bash
# The closing check of the tree that ships (the review's fixes to the portable forward's f16 products: P~ never
# stored as 0 where it is not, resets for any workgroup size): the float64 tests on the H200 first (f16 products at
# their edges and per tile, forward with the prefetch, NaN, and every kernel bit for bit with and without
# robustness), then the same call's portable f16 forward with f16 and f32 products, robustness on, with its peer.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-final2/gpu-call.sh
set -uo pipefail
O=/tmp/final2; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 110 vitest run test/f16-products.test.ts test/forward.test.ts test/nan.test.ts test/robust.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|bitwise identical" | cut -c1-300 | head -12; pack
PYTHONUNBUFFERED=1 timeout 45 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call f16p-r1 1 f16 FLASHRING_PATH=scalar
same_call f32p-r1 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PRODUCTS=f32
echo "== portable fwd TFLOP/s (robust on): f16 products / f32 products"
awk '$2 == "fwd" { k = $3 " " $4; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-20s %s / %s\n", k, v["f16p-r1", k], v["f32p-r1", k] }' $O/table.txt | sort | tee $O/pk.txt
pack
