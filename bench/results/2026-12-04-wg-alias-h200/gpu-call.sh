#!/usr/bin/env bash
# Fewer workgroup bytes (after ../wip-wg-bytes: a cliff between 24224 and 25248 bytes at D = 64, 1.8x): timing-only
# variants of the backward (alias.py: P into dS's array, -3072 B at 4x16; also S into dP's, -8192 B; results wrong
# by design), p2p's steps bench (N = 16384, causal f16, H16; R = 1 line: forward, dkdv, dq ms) at D = 64 and 128;
# and the shipped tree's float64 backward and NaN tests (dq's vote on K only).
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-wg-alias/gpu-call.sh
set -uo pipefail
O=/tmp/wgalias; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for V in P PS; do
  mkdir -p /tmp/v$V && tar --exclude=./node_modules --exclude=./.gpu --exclude=./bench/results -cf - . | tar -xf - -C /tmp/v$V
  ln -sfn $root/node_modules /tmp/v$V/node_modules
  python3 bench/results/wip-wg-alias/alias.py /tmp/v$V/shaders/flash_bwd_sgmm.wgsl $V >> $O/alias.txt
done
for D in 64 128; do
  steps base $D 2
  (cd /tmp/vP && steps P $D 2)
  (cd /tmp/vPS && steps PS $D 2)
done
steps base2 64 2
echo "== R=1 ms: forward dkdv dq"
for f in $O/steps*.log; do
  awk -v T=$(basename $f .log) '$1 == 1 && $2 == "R=1" { r1 = sprintf("%s %s %s", $4, $5, $6) } END { printf "%-16s %s\n", T, r1 }' $f
done | tee $O/r1.txt
pack
timeout 150 vitest run test/backward.test.ts test/nan.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
