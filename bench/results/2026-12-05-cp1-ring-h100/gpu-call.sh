#!/usr/bin/env bash
# Prepared 2026-12-05 (17:34 UTC session). One device call, from the project root, carry [".gpu"], other results
# folders set aside (bash bench/results-aside.sh out wip-cp1-ring):
#   git archive c8c984a src shaders bin bench package.json tsconfig.json ':!bench/results' | gzip > .gpu/old-tree.tgz
#   bash .gpu/enter.sh bash bench/results/wip-cp1-ring/gpu-call.sh
# This session made one rank on one device run as one-device mode (b79c380: it ran as multi-adapter with one
# device), so the ring sweep's R = 1 baseline, which every "× R = 1" of p2p divides by, now takes the one-device
# path. Same call: the real ring's p2p sweep (N = 16384, H16, D = 128, causal f16, R = 1, 2, 4, 8) at c8c984a (old:
# the tree before) and at this tree (new), then new again, and the steps bench; whatever the card.
set -uo pipefail
O=/tmp/cp1ring; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
echo "gpu: $(cat $O/gpu.txt)"
rm -rf /tmp/old; mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
sw() {
  local dir=$root; [ "$1" = old ] && dir=/tmp/old
  (cd $dir && timeout 150 node bench/cp-run.mjs sweep --N 16384 --H 16 --D 128 --R 1,2,4,8 --schemes p2p --budget-s 120 --out $O/sweep-$1) > $O/sweep-$1.log 2>&1
  echo "sweep $1 $(el)"; grep -E "^[1248] +(baseline|p2p)" $O/sweep-$1.log | awk -v T="$1" '{ print T, $0 }' | tee -a $O/table.txt; pack
}
sw new; sw old; sw new2
steps new 128 2,4,8; pack
r1_table
