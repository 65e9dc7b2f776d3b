#!/usr/bin/env bash
# Issue 37 (ran 2026-12-03, 13:53 UTC: README.md here): the tensor-core kernels' prologues pipelined (branch wip/bwd-prologue:
# the backward's resident_rows and the forward's Q staging fetch the next rows while this
# round's are loaded into matrices, so their rounds wait for one global load, not one each).
# The short calls cost a fixed 0.196 ms a backward and 0.071 ms a forward per 32768 rows
# (bench/results/2026-12-03-bwd-buffers-h200); this is the first cut at it. base-*.wgsl (main's
# shaders) and prologue-*.wgsl are each copied over the shaders and benched the same way, base
# first and last: the fixed-grid length series, the N = 16384 same-call bench, p2p's steps; then
# the float64 tests with the prologue shaders.
# Ran on the H200 from the project root on branch tmp/device (main at 73ed9eb with wip/bwd-prologue's two
# commits; the shaders are in wip/bwd-prologue):
#   bash .gpu/enter.sh bash bench/results/wip-bwd-prologue/gpu-call.sh  (S= that folder)
set -uo pipefail
S=bench/results/wip-bwd-prologue; O=/tmp/bp; mkdir -p $O; t0=$(date +%s)
el() { echo "$(( $(date +%s) - t0 )) s"; }
pack() { tar czf $OUT/all.tgz -C $O . ; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
row() { local f; f=$(ls $O/$1/*-kernels.csv 2>/dev/null | head -1)
  if [ -n "$f" ]; then awk -F, -v T=$1 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-22s %-8s H%-4s N%-6s D%-4s causal=%-5s %7.2f %.3f %s\n", T, $c["pass"], $c["H"], $c["N"], $c["D"], $c["causal"], $c["tflops"], $c["ratio"], $c["checkErr"] }' "$f" >> $O/table.txt
  else echo "$1 FAILED" >> $O/table.txt; tail -3 $O/$1.log; fi; }
v() { # tag, shader prefix
  cp "$2-bwd.wgsl" shaders/flash_bwd_sgmm.wgsl; cp "$2-fwd.wgsl" shaders/flash_fwd_sgmm.wgsl
  for nh in 2048:16 4096:8 16384:2; do N=${nh%:*}; H=${nh#*:}
    FLASHRING_ROBUST=0 timeout 40 node bin/flashring.mjs bench --N $N --heads $H --batch 1 --causal false --D 128 --precision f16 --reps 5 \
      --no-ring --no-memory --out $O/$1-n$N-h$H > $O/$1-n$N-h$H.log 2>&1; row $1-n$N-h$H
  done
  FLASHRING_ROBUST=0 timeout 80 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D 64,128 \
    --precision f16 --reps 3 --no-ring --no-memory --peer $O/peer.json --out $O/$1 > $O/$1.log 2>&1; row $1
  timeout 50 node bench/cp-run.mjs steps --N 16384 --R 2,4,8 --out $O/steps-$1 2>&1 | grep -v '^Warning' > $O/steps-$1.log
  echo "$1 $(el)"; tail -4 $O/steps-$1.log; pack
}
v base $S/base; v prologue $S/prologue; v base2 $S/base
cp $S/prologue-bwd.wgsl shaders/flash_bwd_sgmm.wgsl; cp $S/prologue-fwd.wgsl shaders/flash_fwd_sgmm.wgsl
timeout 170 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/ring-mask.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |FAIL" | head -8; pack
cp $S/base-bwd.wgsl shaders/flash_bwd_sgmm.wgsl; cp $S/base-fwd.wgsl shaders/flash_fwd_sgmm.wgsl
sort -k2,2 -k3,3 -k4,4 -k5,5 -k6,6 -k1,1 $O/table.txt
