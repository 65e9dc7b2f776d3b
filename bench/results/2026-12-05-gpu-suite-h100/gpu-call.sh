#!/usr/bin/env bash
# Prepared 2026-12-05 (14:30 UTC session, after its device time was spent); not yet run. One device call, from the
# project root, carry [".gpu"] (other results folders set aside: bench/results-aside.sh out wip-gpu-suite):
#   bash .gpu/enter.sh bash bench/results/wip-gpu-suite/gpu-call.sh
# What the 15:13 UTC call (../2026-12-05-fma-check-h100) left: test/nan.test.ts with the fma chains, cut by that
# call's test timeout; and the kernel and ring files it did not run at all. So: the gpu project (kernels and rings
# on a WebGPU device, every file; the cli and page projects need processes and Chromium the host lacks or does not
# change with the GPU) with the tensor-core path required, then the same files on the portable kernels alone.
set -uo pipefail
O=/tmp/suite; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
summary() { sed 's/\x1b\[[0-9;]*m//g' "$O/$1.log" | grep -E "Test Files|Tests  |^ +×|FAIL" | cut -c1-200 | head -20; }
FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 330 vitest run --project gpu > $O/gpu-tc.log 2>&1
echo "gpu project, tensor cores required $(el)"; summary gpu-tc; pack
FLASHRING_PATH=scalar timeout 230 vitest run --project gpu test/nan.test.ts test/forward.test.ts test/backward.test.ts test/extremes.test.ts test/mask.test.ts > $O/gpu-scalar.log 2>&1
echo "portable kernels alone $(el)"; summary gpu-scalar; pack
