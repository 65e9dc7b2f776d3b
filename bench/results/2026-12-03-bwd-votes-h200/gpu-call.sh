#!/usr/bin/env bash
# Issue 37, the tensor-core backward's fixed cost per tile, on the H200 (one call): the shipped
# flash_bwd_sgmm.wgsl (base), v1 = dkdv counts its Q tiles along instead of t % nt, (t + 1) / nt
# (branch wip/dkdv-counters), v2 = v1 + a full tile skips the non-finite vote's read (1 barrier
# where it took 3). Each variant is copied over shaders/flash_bwd_sgmm.wgsl and benched the same
# way, base first and last; then the float64 tests with v2; then p2p's steps with v2, with the
# default tiles and with smaller workgroups pinned.
# $OUT/all.tgz is rewritten after each stage, so a cut run still returns what finished.
set -uo pipefail
O=/tmp/bv; mkdir -p $O; t0=$(date +%s)
el() { echo "$(( $(date +%s) - t0 )) s"; }
pack() { tar czf $OUT/all.tgz -C $O . ; }
cp shaders/flash_bwd_sgmm.wgsl $O/base.wgsl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
b() { # tag, shader file
  cp "$2" shaders/flash_bwd_sgmm.wgsl
  FLASHRING_ROBUST=0 timeout 80 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D 64,128 \
    --precision f16 --reps 3 --no-ring --no-memory --peer $O/peer.json --out $O/$1 > $O/$1.log 2>&1
  echo "$1 $(el)"
  f=$(ls $O/$1/*-kernels.csv 2>/dev/null | head -1)
  if [ -n "$f" ]; then awk -F, -v T=$1 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-6s %-8s D%-4s causal=%-5s %7.2f %.3f %s\n", T, $c["pass"], $c["D"], $c["causal"], $c["tflops"], $c["ratio"], $c["checkErr"] }' "$f" >> $O/table.txt
  else echo "$1 FAILED" >> $O/table.txt; tail -3 $O/$1.log; fi
  pack
}
b base $O/base.wgsl; b v1 scratch/v1/flash_bwd_sgmm.wgsl; b v2 scratch/v2/flash_bwd_sgmm.wgsl; b base2 $O/base.wgsl
cp scratch/v2/flash_bwd_sgmm.wgsl shaders/flash_bwd_sgmm.wgsl
timeout 130 vitest run test/backward.test.ts test/nan.test.ts test/launch-order.test.ts test/ring-mask.test.ts test/forward.test.ts > $O/tests-v2.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-v2.log | grep -E "Test Files|Tests  |FAIL" | head -8; pack
timeout 50 node bench/cp-run.mjs steps --N 16384 --R 2,4,8 --out $O/steps-v2 2>&1 | grep -v '^Warning' > $O/steps-v2.log
echo "steps $(el)"; pack; tail -12 $O/steps-v2.log
# Short calls (issue 37 item 2): do smaller workgroups fill the GPU better where a step's grid is one
# partial wave (R = 8: 128 dkdv workgroups of 8 subgroups on 132 SMs)? The same steps, tiles pinned.
FLASHRING_SGMM_BWD=4x16 FLASHRING_SGMM_FWD=4x16x1 timeout 50 node bench/cp-run.mjs steps --N 16384 --R 4,8 --out $O/steps-small 2>&1 | grep -v '^Warning' > $O/steps-small.log
echo "steps-small $(el)"; pack; tail -12 $O/steps-small.log
cp $O/base.wgsl shaders/flash_bwd_sgmm.wgsl
sort -k2,2 -k3,3 -k4,4 -k1,1 $O/table.txt
