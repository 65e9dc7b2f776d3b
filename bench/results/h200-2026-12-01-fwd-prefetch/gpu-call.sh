#!/usr/bin/env bash
# Session scratch (not committed): portable forward prefetch 0 vs 1 (same call), then forward tests on the H200.
set -uo pipefail
RET=$OUT; O=/tmp/o; mkdir -p $O; export OUT=$O
export MESA_SHADER_CACHE_DISABLE=false FLASHRING_PATH=scalar
OFF='enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'
t0=$(date +%s)
run() { # tag robust prefetch precisions
  local flags=""; [ "$2" = 0 ] && flags="$OFF"
  FLASHRING_ROBUST=$2 FLASHRING_DAWN_FLAGS="$flags" FLASHRING_PORTABLE_FWD_PREFETCH=$3 timeout 100 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 \
    --causal false --D 64,128 --precision $4 --reps 3 --no-ring --no-memory --out $O/$1 2>&1 | grep -v '^Warning' > $O/$1.log
  echo "$1 $(( $(date +%s) - t0 )) s"; tar czf $RET/all.tgz -C $O .
}
run off-pf0 0 0 f32,f16; run off-pf1 0 1 f32,f16
run on-pf1 1 1 f32; run on-pf0 1 0 f32
run off-pf0b 0 0 f32; run off-pf1b 0 1 f32
FLASHRING_PORTABLE_FWD_PREFETCH= timeout 100 vitest run test/forward.test.ts > $O/forward-test.log 2>&1
echo "tests $(( $(date +%s) - t0 )) s"; tar czf $RET/all.tgz -C $O .
grep -E "Test Files|Tests |FAIL|✗|×" $O/forward-test.log | sed 's/\x1b\[[0-9;]*m//g' | head
for t in off-pf0 off-pf1 off-pf0b off-pf1b on-pf0 on-pf1; do
  f=$(ls $O/$t/*-kernels.csv 2>/dev/null | head -1)
  [ -n "$f" ] && awk -F, -v t=$t 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["pass"]=="fwd" { printf "%-9s D%-4s %-4s %7.2f %s\n", t, $c["D"], $c["precision"], $c["tflops"], $c["checkErr"] }' "$f"
  [ -z "$f" ] && { echo "$t: no csv"; tail -3 $O/$t.log; }
done
