#!/usr/bin/env bash
# Issue 36: where the dense steps' GPU idle time goes, phase by phase (bench/megatron/phases.py), and
# two fresh draws run for the judge (drawn and committed before any run; their logs not read until the
# model to be judged is committed). Run from the project root with .mlm/ (Megatron-LM) present:
#   bash .gpu/enter.sh bash bench/results/2026-12-03-time-phases/gpu-call.sh phases   (call 1)
#   bash .gpu/enter.sh bash bench/results/2026-12-03-time-phases/gpu-call.sh fresh    (call 2)
#   bash .gpu/enter.sh bash bench/results/2026-12-03-time-phases/gpu-call.sh phases2  (call 3, phases.py's events first)
set -uo pipefail
R=$(pwd)/bench/results
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt 2>&1; date -u +%FT%TZ > $OUT/date-$1.txt
uptime >> $OUT/gpu.txt
case $1 in
phases)
  # Three dense misses of the repeats (c-r20, c-r30, h1-r06) and two dense hits (h1-r17, h2-r05).
  (cd bench/megatron && python3 terms.py $R/2026-12-03-time-repeats/draw.json --out /tmp/ph --ids c-r20,c-r30,h1-r06,h1-r17,h2-r05 \
    --iters 20 --tag ph --phases --timeout 150 --pack $OUT/phases.tgz) 2>&1 | tee $OUT/console-phases.log
  # Then the deep draw (layers 8-16, 2K and 4K), each run alone, 24 iterations.
  python3 bench/megatron/campaign.py run $R/2026-12-03-time-heldout5-deep/draw.json --out /tmp/h5d --lanes 1 --no-trace --iters 24 \
    --deadline 260 --grace 60 --ids r00,r01,r02,r03 --pack $OUT/h5d.tgz > $OUT/console-h5d.log 2>&1
  grep -c "exit 0" $OUT/console-h5d.log ;;
phases2)
  # Again with the CUDA-event window before the profiler (iterations 4-8; the first call's window came
  # after it and ran 10-25% slower than the run's own earlier iterations), and two MoE misses.
  (cd bench/megatron && python3 terms.py $R/2026-12-03-time-repeats/draw.json --out /tmp/ph2 --ids c-r30,c-r20,h1-r06,h2-r05,h1-r17,c-r40,h1-r02 \
    --iters 16 --tag ph2 --phases --timeout 120 --pack $OUT/phases2.tgz) 2>&1 | tee $OUT/console-phases2.log ;;
fresh)
  python3 bench/megatron/campaign.py run $R/2026-12-03-time-heldout5/draw.json --out /tmp/h5 --lanes 1 --no-trace --iters 24 \
    --deadline 430 --grace 70 --ids r04,r03,r02,r01,r00,r05 --pack $OUT/h5.tgz > $OUT/console-h5.log 2>&1
  grep -c "exit 0" $OUT/console-h5.log ;;
esac
