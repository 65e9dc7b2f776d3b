#!/usr/bin/env bash
# Prepared 2026-12-07 (04:22 UTC session). One device call from the project root, carry [".gpu"]:
#   bash .gpu/enter.sh bash bench/results/2026-12-07-sharedp-h100/gpu-call.sh
# The question: does the portable forward at D = 128 in f32 run faster with P~ in Q's workgroup array (tiles.ts
# sharesP, flash_fwd.wgsl QP; FLASHRING_PORTABLE_FWD_SHARED_P=1), which lets 64-column chunks fit 48 KiB (two staging
# points a tile's S and two for V, against four and four, a barrier more for P~), than with P~ apart and 32-column
# chunks (the default)?
# O and LSE are bitwise the same either way (test/forward.test.ts "sharedP", run here first on this GPU).
#   new   FLASHRING_PORTABLE_FWD_SHARED_P=1 (P~ in Q's array, 64-column chunks);
#   old   the default (the kernels as before this change);
# new and old twice each, alternating, robustness on (as browsers run), the peer (PyTorch's f32 memory-efficient) first;
# then 64×64 in 64-column chunks with P~ in Q's array (34,816 bytes; without sharing it needs 52,224, so no plan had it).
set -uo pipefail
O=/tmp/sharedp; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
echo "gpu: $(cat $O/gpu.txt)"
timeout 120 vitest run test/forward.test.ts -t "sharedP|prefetch|pinned" > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | cut -c1-200 | head -8; pack
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
SC_D=128 same_call p32-new1 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_SHARED_P=1
SC_D=128 same_call p32-old1 1 f32 FLASHRING_PATH=scalar
SC_D=128 same_call p32-new2 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_SHARED_P=1
SC_D=128 same_call p32-old2 1 f32 FLASHRING_PATH=scalar
SC_D=128 same_call p32-s64x64 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_SHARED_P=1 FLASHRING_PORTABLE_FWD=64x64x64
awk -F, 'FNR > 1 && $1 == "fwd" { print FILENAME ": D" $5 " " $9 }' $O/p32-new1/*-kernels.csv $O/p32-old1/*-kernels.csv 2>/dev/null | sed "s|$O/||" | head -6
echo "== portable f32 forward, robustness on: TFLOP/s (x peer)"
grep " fwd " $O/table.txt | sort -k3,4 -k1,1
# Autotune at D = 128, f32, not causal, robustness on, on the portable path: does the search (P~ in Q's array among its
# candidates since 2f017e2) pick it at its own shape (N = 4096)?
FLASHRING_ROBUST=1 FLASHRING_PATH=scalar timeout 170 node bin/flashring.mjs tune --D 128 --precision f32 --causal false --store $O/tune.json > $O/tune.log 2>&1
echo "tune $(el)"; grep -v "^  fwd\|^  bwd" $O/tune.log | tail -8; pack
