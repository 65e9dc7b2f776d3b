#!/usr/bin/env bash
# The mask-cost fix on the H200: exactness of the tensor-core kernels (vitest; it did not run in this
# call: the SLIM bundle lacked vitest's rolldown), then base (b53e6fb), fix (this tree), fixnl and
# fixsel (diagnostics: fixnl.patch, fixsel.patch) benched the same way, once each; then the portable
# kernels of base and fix, and p2p's steps.
set -uo pipefail
O=$OUT; mkdir -p $O/logs; W=/tmp/w; mkdir -p $W
[ -d scratch/bisect ] || tar -xJf scratch/bisect.tar.xz -C scratch
[ -d scratch/var ] || tar -xJf scratch/var.tar.xz -C scratch
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > $O/gpu.txt 2>&1
date -u +%FT%TZ > $O/date.txt
t0=$(date +%s)
timeout 200 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/launch-order.test.ts test/ring-mask.test.ts test/robust.test.ts > $O/logs/tests.log 2>&1
echo "tests $(( $(date +%s) - t0 )) s"; grep -E "Test Files|Tests |FAIL|✗|×" $O/logs/tests.log | sed 's/\x1b\[[0-9;]*m//g' | head -20
PYTHONUNBUFFERED=1 timeout 80 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 3 --out $O/peer.json > $O/logs/peer.log 2>&1
echo "peer $(( $(date +%s) - t0 )) s"
run() { # $1 dir, $2 tag
  (cd $1 && FLASHRING_ROBUST=0 timeout 120 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true \
     --D 64,128 --precision f16 --reps 3 --no-ring --no-memory --peer $O/peer.json --out $W/$2 > $O/logs/$2.log 2>&1)
  f=$(ls $W/$2/*-kernels.csv 2>/dev/null | head -1)
  if [ -n "$f" ]; then cp "$f" $O/$2-kernels.csv
    awk -F, -v T=$2 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-8s %-8s D%-4s causal=%-5s %7.2f %.3f %s\n", T, $c["pass"], $c["D"], $c["causal"], $c["tflops"], $c["ratio"], $c["checkErr"] }' "$f" >> $O/table.txt
  else echo "$2 FAILED" >> $O/table.txt; tail -3 $O/logs/$2.log; fi
  echo "$2 $(( $(date +%s) - t0 )) s"
}
run scratch/bisect/b53e6fb base; run . fix; run scratch/var/fixnl fixnl; run scratch/var/fixsel fixsel
# The portable kernels (what browsers without subgroup matrices run), base against fix.
prun() { # $1 dir, $2 tag
  (cd $1 && FLASHRING_PATH=scalar FLASHRING_ROBUST=0 timeout 150 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true \
     --D 64,128 --precision f32,f16 --reps 3 --no-ring --no-memory --peer $O/peer.json --out $W/$2 > $O/logs/$2.log 2>&1)
  f=$(ls $W/$2/*-kernels.csv 2>/dev/null | head -1)
  if [ -n "$f" ]; then cp "$f" $O/$2-kernels.csv
    awk -F, -v T=$2 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-8s %-8s D%-4s causal=%-5s %s %7.2f %.3f %s\n", T, $c["pass"], $c["D"], $c["causal"], $c["precision"], $c["tflops"], $c["ratio"], $c["checkErr"] }' "$f" >> $O/ptable.txt
  else echo "$2 FAILED" >> $O/ptable.txt; tail -3 $O/logs/$2.log; fi
  echo "$2 $(( $(date +%s) - t0 )) s"
}
prun scratch/bisect/b53e6fb pbase; prun . pfix
# p2p's short calls with the fix: each kind of zigzag step beside the single-device kernel (bench/cp-h200.sh step 2).
timeout 60 node bench/cp-run.mjs steps --N 16384 --R 2,4,8 --out $O/steps 2>&1 | grep -v '^Warning' > $O/steps.log
echo "steps $(( $(date +%s) - t0 )) s"; tail -12 $O/steps.log
tar czf $O/logs.tgz -C $O logs && rm -rf $O/logs
sort -k2,2 -k3,3 -k4,4 -k5,5 -k1,1 $O/ptable.txt
sort -k2,2 -k3,3 -k4,4 -k1,1 $O/table.txt
