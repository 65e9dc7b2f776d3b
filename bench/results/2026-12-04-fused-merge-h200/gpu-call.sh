#!/usr/bin/env bash
# The ring's forward merging into (O, LSE) in its epilogue (no partial, no merge pass) against the code before it
# (commit aa3bed5: a partial written by the forward, then a merge pass), on the H200: the tests that cover the merging
# forward and the ring (tensor cores and portable), then the real ring's sweep (N = 16384, H16, D128, causal f16,
# zigzag, R = 1, 2, 4, 8) alternating the old tree (git archive of aa3bed5, carried as .gpu/old-tree.tgz and run from
# /tmp/old) and this one, then the steps bench of this one.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-fused/gpu-call.sh (this folder was then named wip-fused)
set -uo pipefail
O=/tmp/fused; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 280 vitest run test/active-blocks.test.ts test/nan.test.ts test/ring.test.ts test/ring-mask.test.ts test/ring-memory.test.ts test/robust.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|bitwise" | head -12; pack
root=$PWD; mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
sw() {
  local dir=$root; [ "$1" = old ] && dir=/tmp/old
  (cd $dir && timeout 150 node bench/cp-run.mjs sweep --N 16384 --H 16 --D 128 --R 1,2,4,8 --schemes p2p --budget-s 120 --out $O/sweep-$1$2) > $O/sweep-$1$2.log 2>&1
  echo "sweep $1$2 $(el)"; grep -E "^[1248] +(baseline|p2p)" $O/sweep-$1$2.log | awk -v T="$1$2" '{ print T, $0 }' | tee -a $O/table.txt; pack
}
sw old 1; sw new 1; sw old 2; sw new 2
steps new 128 2,4,8; pack
