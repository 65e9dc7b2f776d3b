#!/usr/bin/env bash
# Issue 36 (ran 2026-12-03, 13:58 and 14:04 UTC: README.md here): the launches of a Megatron-LM step by kernel name and phase
# (bench/megatron/phases.py `kernels`), for the time model's launch count op by op. The phase
# study (bench/results/2026-12-03-time-phases) found the forward-backward host-bound at 60-73 µs a
# launch, with the model counting 10-36% fewer launches there and 1.4-2.9x more in the optimizer;
# these 15 campaign configurations (2K-8K, every recompute kind, biases or not, dropout or not,
# SwiGLU or GeLU, three MoE) give the per-op counts to fix that. Each run alone, 14 iterations.
#   bash .gpu/enter.sh bash bench/results/2026-12-03-launch-counts/gpu-call.sh 1   (then 2: ~5 min each)
set -uo pipefail
R=$(pwd)/bench/results
case $1 in
1) IDS=r00,r05,r06,r10,r12,r15,r21,r31 ;;
2) IDS=r35,r36,r41,r45,r11,r16,r40 ;;
esac
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu-$1.txt 2>&1; date -u +%FT%TZ > $OUT/date-$1.txt
(cd bench/megatron && python3 terms.py $R/2026-12-02-megatron-campaign/draw.json --out /tmp/lc$1 --ids $IDS \
  --iters 14 --tag lc --phases --timeout 120 --pack $OUT/lc$1.tgz) 2>&1 | tee $OUT/console-$1.log
