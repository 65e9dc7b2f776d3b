#!/usr/bin/env bash
# Prepared 2026-12-05 (14:30 UTC session). One device call, from the project root, carry [".gpu"]:
#   bash .gpu/enter.sh bash bench/results/wip-fma-check/gpu-call.sh
# The fma chains ("new" of ../2026-12-05-fma-h100/edits.json: the forward's P~ V and the backward's sums over keys
# or rows) ship in shaders/. That folder measured them on an H100 (+3.6-4.5% forward, +3-4% backward, f32).
# Here, on the H200 the targets are set on:
#   - the same-call table, PyTorch first, robustness on: the shipped portable kernels (f32 and f16 storage, f32
#     products) and the tree before (`old`: the same edits undone by apply.py --reverse), each twice, interleaved;
#   - the float64 kernel tests with the tensor-core path required.
# In the order of what matters most (each stage packed into $OUT as it ends, so a cut call returns what finished).
set -uo pipefail
O=/tmp/fmacheck; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
rm -rf /tmp/old; mkdir -p /tmp/old; cp -r src shaders bin bench test package.json tsconfig.json vitest.config.* /tmp/old/ 2>/dev/null
python3 bench/results/2026-12-05-fma-h100/apply.py new /tmp/old --reverse || exit 1; ln -sfn $root/node_modules /tmp/old/node_modules
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call p32-ship 1 f32 FLASHRING_PATH=scalar
(cd /tmp/old && same_call p32-old 1 f32 FLASHRING_PATH=scalar)
FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 200 vitest run test/extremes.test.ts test/forward.test.ts test/backward.test.ts test/ring.test.ts test/ring-nomass.test.ts test/nan.test.ts test/mask.test.ts test/robust.test.ts test/f16-products.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|geometric" | cut -c1-200 | head -20; pack
same_call p16-ship 1 f16 FLASHRING_PATH=scalar
(cd /tmp/old && same_call p16-old 1 f16 FLASHRING_PATH=scalar)
same_call p32-ship2 1 f32 FLASHRING_PATH=scalar
echo "== portable, robustness on: TFLOP/s (× peer)  shipped / old / shipped again"
awk '{ k = $2 " " $3 " " $4; v[$1, k] = $6 " (" $8 ")"; keys[k] = 1 }
  END { for (k in keys) printf "%-26s p32 %s / %s / %s   p16 %s / %s\n", k, v["p32-ship", k], v["p32-old", k], v["p32-ship2", k], v["p16-ship", k], v["p16-old", k] }' $O/table.txt | sort
