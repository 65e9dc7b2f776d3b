#!/usr/bin/env bash
# A profile of the tensor-core backward by subtraction: p2p's steps bench (N = 16384, H16, causal f16, R = 1 and 8;
# dkdv and dq timed apart) on copies of the tree whose shaders/flash_bwd_sgmm.wgsl has one phase of the tile loops
# removed (patch.py here: noexp, nopv, nos, nostash, nobar), at D = 64 (all) and D = 128 (some), the unchanged
# tree first and last; then `flashring tune` at D = 128 with robustness on (issue 37 item 4: each kernel decided
# apart, first run on the H200).
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-bwd-phases/gpu-call.sh
set -uo pipefail
O=/tmp/bwdphases; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for v in noexp nopv nos nostash nobar; do
  mkdir -p /tmp/v-$v && cp -r src shaders bin bench package.json tsconfig.json /tmp/v-$v/ && ln -sfn $root/node_modules /tmp/v-$v/node_modules
  python3 bench/results/wip-bwd-phases/patch.py $v /tmp/v-$v/shaders/flash_bwd_sgmm.wgsl || echo "patch $v FAILED"
done
steps base 64 8
for v in noexp nopv nos nostash nobar; do (cd /tmp/v-$v && steps $v 64 8); done
steps base2 64 8
steps base 128 8
for v in nopv nos nobar; do (cd /tmp/v-$v && steps $v 128 8); done
pack
echo "== R = 1 pass ms (fwd dkdv dq), then R = 8 diagonal / j<r / j>r dkdv and dq"
for f in $O/steps*.log; do
  printf "%-16s %s | %s\n" "$(basename $f .log)" "$(awk '$1 == 1 && $2 == "R=1" { print $4, $6, $7 }' $f)" "$(awk '$1 == 8 && NF > 10 { printf "%s %s  ", $6, $7 }' $f)"
done
FLASHRING_ROBUST=1 timeout 150 node bin/flashring.mjs tune --D 128 --precision f16 --causal false --N 16384 --heads 16 --reps 3 --store $O/tune-r1.json > $O/tune-r1-D128.log 2>&1
echo "tune $(el)"; grep -vE "^  (fwd|bwd) " $O/tune-r1-D128.log | tail -8; pack
