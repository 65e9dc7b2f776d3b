#!/usr/bin/env bash
# Session scratch (not committed): can Nsight Compute profile Dawn's Vulkan dispatches here?
set -uo pipefail
RET=$OUT; O=/tmp/o; mkdir -p $O; export OUT=$O
export PATH=/usr/local/cuda/bin:$PATH MESA_SHADER_CACHE_DISABLE=false
export FLASHRING_DAWN_FLAGS='enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'
ncu --version > $O/ncu.txt 2>&1
B="node bin/flashring.mjs bench --N 4096 --D 128 --heads 16 --batch 1 --causal false --reps 1 --no-ring --no-memory"
# Portable f32 forward ('main'), then the tensor-core f16 forward.
FLASHRING_PATH=scalar timeout 150 ncu --target-processes all --kernel-name regex:'^main' --launch-skip 4 --launch-count 1 --set full \
  -f -o $O/fwd-f32 $B --precision f32 --out $O/b1 > $O/ncu-f32.log 2>&1
echo "f32 rc $?"; tail -5 $O/ncu-f32.log
[ -f $O/fwd-f32.ncu-rep ] && ncu --import $O/fwd-f32.ncu-rep --page details > $O/fwd-f32.txt 2>&1
tar czf $RET/all.tgz -C $O .
if [ -f $O/fwd-f32.ncu-rep ]; then
  timeout 150 ncu --target-processes all --kernel-name regex:'^main' --launch-skip 4 --launch-count 1 --set full \
    -f -o $O/fwd-f16 $B --precision f16 --out $O/b2 > $O/ncu-f16.log 2>&1
  [ -f $O/fwd-f16.ncu-rep ] && ncu --import $O/fwd-f16.ncu-rep --page details > $O/fwd-f16.txt 2>&1
  tar czf $RET/all.tgz -C $O .
  grep -E "Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Block Limit|Compute \(SM\) Throughput|Memory Throughput|Duration|Warp Cycles Per Issued|Shared Memory Configuration Size|Dynamic Shared|Static Shared" $O/fwd-f32.txt $O/fwd-f16.txt | head -60
fi
