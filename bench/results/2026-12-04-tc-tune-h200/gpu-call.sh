#!/usr/bin/env bash
# The constant-offset tensor-core kernels' tile candidates (forward and backward), timed by `flashring tune`
# (f16, N = 16384, H16, not causal, 3 reps a candidate) at D = 64 and 128, with Dawn's robustness on (browsers)
# and off (Node's default): whether the candidates' order, measured before the change, still holds.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-tc-tune/gpu-call.sh
set -uo pipefail
O=/tmp/tctune; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for r in 1 0; do
  for D in 64 128; do
    FLASHRING_ROBUST=$r timeout 100 node bin/flashring.mjs tune --D $D --precision f16 --causal false \
      --N 16384 --heads 16 --reps 3 --store $O/tune-r$r.json > $O/tune-r$r-D$D.log 2>&1
    echo "tune robust=$r D$D $(el) rc=$?"; grep -v '^Warning' $O/tune-r$r-D$D.log | tail -4; pack
  done
done
