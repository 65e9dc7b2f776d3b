#!/usr/bin/env bash
# Issue 37 item 3 as built: the portable forward with f16 storage takes f16 products where each chunk's range allows
# (flash_fwd.wgsl PK), against pinned f32 products (FLASHRING_PORTABLE_FWD_PRODUCTS=f32), robustness on (browsers)
# and off; the f32 forward for reference; at D = 128 three other tiles with f16 products (does the freed P~ memory
# buy a better tile?). Same call: N = 16384, B1 H16, D 64 and 128, causal and not, PyTorch 2.11 first. Then the
# float64 tests on the H200: f16 products at their edges, forward, NaN, and every kernel bit for bit with and
# without robustness.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-pk2/gpu-call.sh (this folder was then wip-pk2)
set -uo pipefail
O=/tmp/pk2; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call f16p-r1 1 f16 FLASHRING_PATH=scalar
same_call f32p-r1 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PRODUCTS=f32
same_call f16p-r0 0 f16 FLASHRING_PATH=scalar
same_call f32p-r0 0 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PRODUCTS=f32
same_call f32s-r1 1 f32 FLASHRING_PATH=scalar
for t in 64x32x128 64x64x64 128x32x32; do SC_D=128 same_call "t$t-r1" 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD=$t; done
echo "== portable fwd TFLOP/s: f16 products / f32 products (robust on) | off: f16 / f32 | f32 storage (on)"
awk '$2 == "fwd" { k = $3 " " $4; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-20s %s / %s | %s / %s | %s\n", k, v["f16p-r1", k], v["f32p-r1", k], v["f16p-r0", k], v["f32p-r0", k], v["f32s-r1", k] }' $O/table.txt | sort | tee $O/pk.txt
grep "^t.*fwd " $O/table.txt | tee -a $O/pk.txt
pack
timeout 200 vitest run test/f16-products.test.ts test/forward.test.ts test/nan.test.ts test/robust.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|bitwise identical|at the edge" | cut -c1-400 | head -20; pack
echo "== portable"; cat $O/pk.txt
