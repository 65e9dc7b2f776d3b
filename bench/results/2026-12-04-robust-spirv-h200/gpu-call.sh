#!/usr/bin/env bash
# The SPIR-V that Dawn's robustness transform leaves (FLASHRING_ROBUST=1, as browsers run), dumped by
# Dawn (dump_shaders) for every kernel the bench compiles on the H200: tensor cores (f16) and the
# portable kernels (f32, f16), D 64 and 128, causal and not, one short run each (N = 2048). Read here by
# counting clamps (UMin), loop guards and subgroup-matrix selects per shader.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-dump/gpu-call.sh
set -uo pipefail
O=/tmp/dump; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for p in tc portable; do
  env FLASHRING_ROBUST=1 FLASHRING_DAWN_FLAGS='enable-dawn-features=dump_shaders' $( [ $p = portable ] && echo FLASHRING_PATH=scalar ) \
    timeout 120 node bin/flashring.mjs bench --N 2048 --heads 2 --batch 1 --causal false,true --D 64,128 \
    --precision $( [ $p = portable ] && echo f32,f16 || echo f16 ) --reps 1 --no-ring --no-memory --out $O/$p > $O/$p.log 2>&1
  echo "$p $(el) rc=$?"; xz -T4 $O/$p.log; pack
done
ls -la $O
