#!/usr/bin/env bash
# Issue 37 (ran 2026-12-03, 15:44 UTC: README.md here): the tensor-core backward's epilogue with its old values read ahead (branch
# wip/epilogue). bench/results/2026-12-03-fixed-cost-h200 timed a backward with no tiles: at R = 1
# (N = 16384, H16, D128, accumulating as the ring does) dkdv 4.90 ms of 20.2 and dq 2.27 of 13.7, of
# which the epilogue's global reads and writes were 3.4 and 1.8 ms: write_block read each old value
# and wrote it back entry by entry, one global latency an entry, with one workgroup an SM. ep-bwd.wgsl
# reads a block's old values before its spill and the next block's while it writes this one.
# base-bwd.wgsl (main's) and ep-bwd.wgsl are each copied over the shader and benched the same way,
# base first and last: the N = 16384 same-call bench (not accumulating), p2p's steps at D = 128 and
# D = 64 (accumulating); then ep's no-tile variant (variants.py `zero`) on the steps, and the float64
# tests with ep's shader.
# Ran on the H200 from the project root on branch wip/epilogue (main at 067df0e plus ep's shader and this folder, then named wip-epilogue):
#   bash .gpu/enter.sh bash bench/results/wip-epilogue/gpu-call.sh
set -uo pipefail
S=bench/results/wip-epilogue; O=/tmp/ep; mkdir -p $O; t0=$(date +%s)
el() { echo "$(( $(date +%s) - t0 )) s"; }
pack() { tar czf $OUT/all.tgz -C $O . ; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
row() { local f; f=$(ls $O/$1/*-kernels.csv 2>/dev/null | head -1)
  if [ -n "$f" ]; then awk -F, -v T=$1 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-8s %-8s H%-4s N%-6s D%-4s causal=%-5s %7.2f %.3f %s\n", T, $c["pass"], $c["H"], $c["N"], $c["D"], $c["causal"], $c["tflops"], $c["ratio"], $c["checkErr"] }' "$f" >> $O/table.txt
  else echo "$1 FAILED" >> $O/table.txt; tail -3 $O/$1.log; fi; }
steps() { # tag, D, R list
  timeout 90 node bench/cp-run.mjs steps --N 16384 --D $2 --R $3 --out $O/steps$2-$1 2>&1 | grep -v '^Warning' > $O/steps$2-$1.log
  echo "  steps D$2 $1 $(el)"; grep -E '^(2|4|8) +[0-9]' $O/steps$2-$1.log | tail -3 | awk '{ print "  " $0 }'; }
v() { # tag, backward shader
  cp "$2" shaders/flash_bwd_sgmm.wgsl
  FLASHRING_ROBUST=0 timeout 80 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D 64,128 \
    --precision f16 --reps 3 --no-ring --no-memory --peer $O/peer.json --out $O/$1 > $O/$1.log 2>&1; row $1
  steps $1 128 2,4,8; steps $1 64 8; echo "$1 $(el)"; pack
}
v base $S/base-bwd.wgsl; v ep $S/ep-bwd.wgsl
python3 $S/variants.py $S/ep-bwd.wgsl shaders/flash_fwd_sgmm.wgsl $O || echo "variants.py failed"
cp shaders/flash_fwd_sgmm.wgsl $O/fwd-main.wgsl
cp $O/zero.wgsl shaders/flash_bwd_sgmm.wgsl; steps zero-ep 128 2,4,8
cp $O/fwd-main.wgsl shaders/flash_fwd_sgmm.wgsl
v base2 $S/base-bwd.wgsl
cp $S/ep-bwd.wgsl shaders/flash_bwd_sgmm.wgsl
timeout 170 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/ring-mask.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |FAIL" | head -8; pack
cp $S/base-bwd.wgsl shaders/flash_bwd_sgmm.wgsl
echo "steps (tag: R=1 ms, ring ms at R=2 4 8, ratio):"
for f in $O/steps*.log; do echo "$(basename $f .log): $(grep -E '^(1|2|4|8) +[0-9.]+ +[0-9.]+ +[0-9.]+ +\|' $f | awk '{ printf "%s ", $0 }')"; done
sort -k2,2 -k3,3 -k4,4 -k5,5 -k6,6 -k1,1 $O/table.txt
