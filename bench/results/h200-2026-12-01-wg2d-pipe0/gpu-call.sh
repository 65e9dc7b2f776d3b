#!/usr/bin/env bash
# Session scratch (not committed): portable kernels with 2-D workgroup arrays (new) against HEAD d38171b (old),
# robustness on and off, same call as PyTorch; then the portable numeric tests on the H200.
set -uo pipefail
RET=$OUT; O=/tmp/o; mkdir -p $O; export OUT=$O
export MESA_SHADER_CACHE_DISABLE=false FLASHRING_PATH=scalar
OFF='enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $O/nvidia-smi.txt 2>&1
PYTHONUNBUFFERED=1 timeout 120 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 3 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(( $(date +%s) - t0 )) s"
ln -sfn "$PWD/node_modules" scratch/old/node_modules
run() { # dir tag robust
  local dir=$1 tag=$2 r=$3 flags=""
  [ "$r" = 0 ] && flags="$OFF"
  (cd $dir && FLASHRING_ROBUST=$r FLASHRING_DAWN_FLAGS="$flags" timeout 110 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false \
     --D 64,128 --precision f32,f16 --reps 3 --no-ring --no-memory --peer $O/peer.json --out $O/$tag 2>&1 | grep -v '^Warning' > $O/$tag.log)
  echo "$tag $(( $(date +%s) - t0 )) s"; tar czf $RET/all.tgz -C $O .
}
for r in 1 0; do
  run . new-r$r $r
  run scratch/old old-r$r $r
done
sg() { # dir tag
  (cd $1 && env -u FLASHRING_PATH FLASHRING_ROBUST=0 FLASHRING_DAWN_FLAGS="$OFF" timeout 100 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false \
     --D 64,128 --precision f16 --reps 3 --no-ring --no-memory --peer $O/peer.json --out $O/$2 2>&1 | grep -v '^Warning' > $O/$2.log)
  echo "$2 $(( $(date +%s) - t0 )) s"; tar czf $RET/all.tgz -C $O .
}
sg . sg-new1; sg scratch/old sg-old1; sg . sg-new2; sg scratch/old sg-old2
env -u FLASHRING_PATH timeout 60 vitest run test/nan.test.ts > $O/tests-nan-sgmm.log 2>&1
timeout 130 vitest run test/forward.test.ts test/backward.test.ts test/robust.test.ts test/nan.test.ts > $O/tests-scalar.log 2>&1
echo "tests $(( $(date +%s) - t0 )) s"
tar czf $RET/all.tgz -C $O .
grep -E "Test Files|Tests |FAIL" $O/tests-scalar.log $O/tests-nan-sgmm.log | sed 's/\x1b\[[0-9;]*m//g' | head
for t in new-r1 old-r1 new-r0 old-r0 sg-new1 sg-old1 sg-new2 sg-old2; do
  f=$(ls $O/$t/*-kernels.csv 2>/dev/null | head -1)
  [ -n "$f" ] && awk -F, -v t=$t 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-7s %-8s D%-4s %-4s %7.2f %s\n", t, $c["pass"], $c["D"], $c["precision"], $c["tflops"], $c["checkErr"] }' "$f"
  [ -z "$f" ] && { echo "$t: no csv"; tail -3 $O/$t.log; }
done
