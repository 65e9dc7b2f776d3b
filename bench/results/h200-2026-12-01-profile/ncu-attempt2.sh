#!/usr/bin/env bash
set -uo pipefail
RET=$OUT; O=/tmp/o; mkdir -p $O; export OUT=$O
export PATH=/usr/local/cuda/bin:$PATH MESA_SHADER_CACHE_DISABLE=false
export FLASHRING_DAWN_FLAGS='enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'
ncu --version | tail -1
ncu --help 2>&1 | grep -i -E "vulkan|graphics|range|replay-mode" | head -12
B="node bin/flashring.mjs bench --N 1024 --D 128 --heads 16 --batch 1 --causal false --reps 1 --no-ring --no-memory"
FLASHRING_PATH=scalar timeout 100 ncu --target-processes all --launch-count 1 --section SpeedOfLight $B --precision f32 --out $O/b1 > $O/ncu-any.log 2>&1
echo "rc $?"; grep -E "==PROF==|==WARNING==|==ERROR==|Duration|Throughput" $O/ncu-any.log | head -10
tar czf $RET/all.tgz -C $O .
