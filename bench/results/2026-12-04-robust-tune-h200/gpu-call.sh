#!/usr/bin/env bash
# With the robustness tax gone from the portable kernels, are their default tiles still the fastest with robustness
# on (as browsers run them)? `flashring tune` over the portable candidates, f32, not causal, N = 16384, H16, D 128
# then 64, robustness on; then the same-call bench with the defaults and with the store.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-tune/gpu-call.sh
set -uo pipefail
O=/tmp/tune; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for D in 128 64; do
  FLASHRING_ROBUST=1 FLASHRING_PATH=scalar timeout 170 node bin/flashring.mjs tune --D $D --precision f32 --causal false \
    --N 16384 --heads 16 --reps 3 --store $O/tune.json > $O/tune-D$D.log 2>&1
  echo "tune D$D $(el) rc=$?"; grep -v '^Warning' $O/tune-D$D.log | tail -6; pack
done
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
env FLASHRING_ROBUST=1 FLASHRING_PATH=scalar timeout 80 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false --D 64,128 \
  --precision f32 --reps 3 --no-ring --no-memory --peer $O/peer.json --tuned $O/tune.json --out $O/tuned > $O/tuned.log 2>&1
echo "tuned $(el)"; kernel_rows tuned; pack
same_call default 1 f32 FLASHRING_PATH=scalar
