#!/usr/bin/env bash
# Session scratch (not committed): the process-rank tests on the one-GPU host after the gpu-per-rank check;
# then the portable kernels' final figures in the same call as PyTorch.
set -uo pipefail
RET=$OUT; O=/tmp/o13; mkdir -p $O; export OUT=$O MESA_SHADER_CACHE_DISABLE=false
OFF='enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'
t0=$(date +%s)
timeout 100 vitest run test/cli.test.ts test/ring-process.test.ts > $O/procs-tests.log 2>&1
echo "tests $(( $(date +%s) - t0 )) s"; tar czf $RET/all.tgz -C $O .
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 3 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(( $(date +%s) - t0 )) s"
for r in 0 1; do
  flags=""; [ "$r" = 0 ] && flags="$OFF"; precs=f32,f16; [ "$r" = 1 ] && precs=f32
  FLASHRING_PATH=scalar FLASHRING_ROBUST=$r FLASHRING_DAWN_FLAGS="$flags" timeout 60 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 \
    --causal false --D 64,128 --precision $precs --reps 3 --no-ring --no-memory --peer $O/peer.json --out $O/final-r$r 2>&1 | grep -v '^Warning' > $O/final-r$r.log
  echo "final-r$r $(( $(date +%s) - t0 )) s"; tar czf $RET/all.tgz -C $O .
done
grep -E "Test Files|Tests |FAIL|without scripts" $O/procs-tests.log | sed 's/\x1b\[[0-9;]*m//g' | head
for t in final-r0 final-r1; do
  f=$(ls $O/$t/*-kernels.csv 2>/dev/null | head -1)
  [ -n "$f" ] && awk -F, -v t=$t 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-8s %-8s D%-4s %-4s %7.2f %s %.3f\n", t, $c["pass"], $c["D"], $c["precision"], $c["tflops"], $c["peerBackend"], $c["ratio"] }' "$f"
done
true
