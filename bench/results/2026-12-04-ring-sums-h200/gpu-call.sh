#!/usr/bin/env bash
# The p2p backward with dK/dV added onto the running sum in place (commit cea2921) against the one before
# (956c375: a scratch sum cleared each step, then a separate add, now timed). The ring tests first, then the
# one-device sweep (N = 16384, H16, D128, causal f16, zigzag, R = 1, 2, 4, 8) four times, alternating
# A (956c375's p2p.ts and chunks.ts, copied here as a-*.ts.txt) and B (this commit's), so drift shows.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-ring/gpu-call.sh (this folder was then named wip-ring)
set -uo pipefail
O=/tmp/ring; mkdir -p $O; source bench/gpu-lib.sh
W=bench/results/wip-ring   # this folder, as it was then named
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 200 vitest run test/ring.test.ts test/ring-mask.test.ts test/ring-memory.test.ts > $O/ring-tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/ring-tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
cp src/cp/schemes/p2p.ts $O/b-p2p.ts; cp src/cp/schemes/chunks.ts $O/b-chunks.ts
use() { if [ "$1" = A ]; then cp $W/a-p2p.ts.txt src/cp/schemes/p2p.ts; cp $W/a-chunks.ts.txt src/cp/schemes/chunks.ts;
        else cp $O/b-p2p.ts src/cp/schemes/p2p.ts; cp $O/b-chunks.ts src/cp/schemes/chunks.ts; fi; }
sw() {
  use "$1"
  timeout 150 node bench/cp-run.mjs sweep --N 16384 --H 16 --D 128 --R 1,2,4,8 --schemes p2p --budget-s 120 --out $O/sweep$1$2 > $O/sweep$1$2.log 2>&1
  echo "sweep $1$2 $(el)"; grep -E "^[1248] +(baseline|p2p)" $O/sweep$1$2.log | awk -v T="$1$2" '{ print T, $0 }' | tee -a $O/table.txt; pack
}
sw A 1; sw B 1; sw A 2; sw B 2
use B
