#!/usr/bin/env bash
# Session scratch (not committed): portable backward prefetch 0 vs 1 (same call); then the whole suite on both paths,
# with the backward prefetch the measurement picks.
set -uo pipefail
RET=$OUT; O=/tmp/o12; mkdir -p $O; export OUT=$O
export MESA_SHADER_CACHE_DISABLE=false
OFF='enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/nvidia-smi.txt 2>&1
run() { # tag robust prefetch precisions
  local flags=""; [ "$2" = 0 ] && flags="$OFF"
  FLASHRING_PATH=scalar FLASHRING_ROBUST=$2 FLASHRING_DAWN_FLAGS="$flags" FLASHRING_PORTABLE_BWD_PREFETCH=$3 timeout 100 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 \
    --causal false --D 64,128 --precision $4 --reps 3 --no-ring --no-memory --out $O/$1 2>&1 | grep -v '^Warning' > $O/$1.log
  echo "$1 $(( $(date +%s) - t0 )) s"; tar czf $RET/all.tgz -C $O .
}
run off-pf0 0 0 f32,f16; run off-pf1 0 1 f32,f16
run on-pf1 1 1 f32; run on-pf0 1 0 f32
bwd() { awk -F, 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["pass"]=="bwd" && $c["precision"]=="f32" { s += $c["tflops"] } END { print s }' $(ls $O/$1/*-kernels.csv | head -1); }
a=$(bwd off-pf0); b=$(bwd off-pf1)
PF=$(python3 -c "print(1 if $b > 1.02 * $a else 0)")
echo "bwd f32 sum TFLOP/s pf0 $a pf1 $b -> suites with FLASHRING_PORTABLE_BWD_PREFETCH=$PF" | tee $O/choice.txt
export FLASHRING_PORTABLE_BWD_PREFETCH=$PF
FLASHRING_PATH=scalar timeout 200 vitest run --exclude test/page.test.ts > $O/suite-scalar.log 2>&1
echo "suite scalar $(( $(date +%s) - t0 )) s"; tar czf $RET/all.tgz -C $O .
timeout 170 vitest run --exclude test/page.test.ts > $O/suite-default.log 2>&1
echo "suite default $(( $(date +%s) - t0 )) s"; tar czf $RET/all.tgz -C $O .
grep -E "Test Files|Tests |FAIL" $O/suite-scalar.log $O/suite-default.log | sed 's/\x1b\[[0-9;]*m//g' | head -20
for t in off-pf0 off-pf1 on-pf0 on-pf1; do
  f=$(ls $O/$t/*-kernels.csv 2>/dev/null | head -1)
  [ -n "$f" ] && awk -F, -v t=$t 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-8s %-8s D%-4s %-4s %7.2f %s\n", t, $c["pass"], $c["D"], $c["precision"], $c["tflops"], $c["checkErr"] }' "$f"
done
true
