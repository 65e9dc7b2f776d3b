#!/usr/bin/env bash
# Prepared 2026-12-05 (17:34 UTC session), after ../2026-12-05-fma-third-h100 ran on an H100. One device call, from the project root, carry [".gpu"], other results
# folders set aside (bash bench/results-aside.sh out wip-fma-h200b 2026-12-05-fma-h100):
#   bash .gpu/enter.sh bash bench/results/wip-fma-h200b/gpu-call.sh
# ../2026-12-05-fma-check-h100's call again, on the machine issue 37's targets are set on (the three calls before got an
# H100): the shipped portable kernels (fma chains, 32411d4) and the tree before (apply.py --reverse), same call,
# PyTorch first, robustness on; shipped timed before and after; then test/nan.test.ts with tensor cores required
# (the file the H100 call's timeout cut).
set -uo pipefail
O=/tmp/fmah200b; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
echo "gpu: $(cat $O/gpu.txt)"
# Only on the H200: three calls today asked for it and got an H100 (../2026-12-05-fma-third-h100 is the third);
# a fourth H100 figure would add nothing, so on another card the call ends here.
grep -q H200 $O/gpu.txt || { echo "not an H200: nothing run"; pack; exit 0; }
rm -rf /tmp/old; mkdir -p /tmp/old; cp -r src shaders bin bench test package.json tsconfig.json vitest.config.* /tmp/old/ 2>/dev/null
python3 bench/results/2026-12-05-fma-h100/apply.py new /tmp/old --reverse || exit 1; ln -sfn $root/node_modules /tmp/old/node_modules
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call p32-ship 1 f32 FLASHRING_PATH=scalar
(cd /tmp/old && same_call p32-old 1 f32 FLASHRING_PATH=scalar)
same_call p16-ship 1 f16 FLASHRING_PATH=scalar
(cd /tmp/old && same_call p16-old 1 f16 FLASHRING_PATH=scalar)
same_call p32-ship2 1 f32 FLASHRING_PATH=scalar
echo "== portable, robustness on: TFLOP/s (× peer)  shipped / old / shipped again"
awk '{ k = $2 " " $3 " " $4; v[$1, k] = $6 " (" $8 ")"; keys[k] = 1 }
  END { for (k in keys) printf "%-26s p32 %s / %s / %s   p16 %s / %s\n", k, v["p32-ship", k], v["p32-old", k], v["p32-ship2", k], v["p16-ship", k], v["p16-old", k] }' $O/table.txt | sort | tee $O/summary.txt
pack
FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 150 vitest run --project gpu test/nan.test.ts > $O/nan.log 2>&1
echo "nan test $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/nan.log | grep -E "Test Files|Tests  |^ +×|FAIL|Duration" | cut -c1-200 | head -20; pack
