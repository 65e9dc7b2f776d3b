#!/usr/bin/env bash
# Issue 37: (1) the tensor-core backward with its streamed tile in one or two buffers
# (FLASHRING_SGMM_BWD_BUFFERS), same call as FlashAttention-2; (2) what slows short calls: the
# backward's rate at the same work split into many short workgroups or few long ones
# (N=2048 H=16 / H=128, N=16384 H=2: dense, f16, D=128); (3) the float64 tests of the tensor-core
# backward and the NaN cases (double buffer and the window-200 vote case included).
# Run on the H200 from the project root: bash .gpu/enter.sh bash bench/results/2026-12-03-bwd-buffers-h200/gpu-call.sh
# $OUT/all.tgz is rewritten after each stage.
set -uo pipefail
O=/tmp/bb; mkdir -p $O; t0=$(date +%s)
el() { echo "$(( $(date +%s) - t0 )) s"; }
pack() { tar czf $OUT/all.tgz -C $O . ; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
row() { # tag: the run's kernels.csv as table rows
  local f; f=$(ls $O/$1/*-kernels.csv 2>/dev/null | head -1)
  [ -n "$f" ] && awk -F, -v T=$1 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-10s %-8s H%-4s N%-6s D%-4s causal=%-5s %7.2f %.3f %s %s\n", T, $c["pass"], $c["H"], $c["N"], $c["D"], $c["causal"], $c["tflops"], $c["ratio"], $c["checkErr"], $c["tiles"] }' "$f" >> $O/table.txt
}
b() { # tag, buffers, D list, extra env
  local tag=$1 nb=$2 ds=$3; shift 3
  env FLASHRING_ROBUST=0 FLASHRING_SGMM_BWD_BUFFERS=$nb "$@" timeout 80 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D $ds \
    --precision f16 --reps 3 --no-ring --no-memory --peer $O/peer.json --out $O/$tag > $O/$tag.log 2>&1
  echo "$tag $(el)"; row $tag; pack
}
g() { # tag, N, H: the grid experiment (dense, D = 128, one buffer)
  FLASHRING_ROBUST=0 timeout 60 node bin/flashring.mjs bench --N $2 --heads $3 --batch 1 --causal false --D 128 \
    --precision f16 --reps 5 --no-ring --no-memory --out $O/$1 > $O/$1.log 2>&1
  echo "$1 $(el)"; row $1; pack
}
# D = 64 at the default 8 x 16 (fits with two buffers; D = 128 at 8 x 16 does not fit 48 KiB twice, and 4 x 16 is not its default).
b nb1 1 64; b nb2 2 64
g g2048h16 2048 16; g g2048h128 2048 128; g g16384h2 16384 2; g g4096h32 4096 32
timeout 170 vitest run test/backward.test.ts test/nan.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |FAIL|✓.*window|×" | head -12; pack
sort -k2,2 -k3,3 -k4,4 -k5,5 -k6,6 -k1,1 $O/table.txt
