#!/usr/bin/env bash
# Prepared 2026-12-05 (19:42 UTC session). Two device calls, from the project root at abf8a30 (run1/) and d97fa41
# (run2/), carry [".gpu"], other results folders set aside (bash bench/results-aside.sh out wip-qrows):
#   bash .gpu/enter.sh bash bench/results/wip-qrows/gpu-call.sh
# (this folder was wip-qrows; the variant is not kept: qrows-run1.patch and qrows-run2.patch are its code at each call,
# against 5c7e831). As run 2 ran it, but for this header.
# The question (issue 37, the portable f32 forward at D = 128, 0.48-0.52x PyTorch's f32): does keeping Q's whole rows
# in workgroup memory (FLASHRING_PORTABLE_FWD_QROWS=1: Q staged once a workgroup, K/V in chunks) beat restaging Q's
# chunks for every K/V tile? At D = 128 in f32 the shipped 128x32 tile stages 32-column chunks of Q (4096 words a
# tile) and of K and V (1024 each); 64x32 with Q's rows kept fits 48 KiB (46592 bytes) and stages K and V only:
# a third of the staging per product, at half the rows and invocations a workgroup.
#   ship   the shipped defaults (128x32 in 32-column chunks, Q per tile), timed first and last (ship2)
#   qr64   64x32x32 with Q's rows kept;  pt64  64x32x32 with Q per tile (the same tile as shipped code runs it)
#   qr32   32x32x32 with Q's rows kept
# robustness on (browsers; the target) and, for ship and qr64, off. Then the new test on this GPU.
# Run 1 (run1/, 19:52 UTC, H100, Q in unpadded slots Qs[r][c][d], 46592 bytes): qr64 16.3 TFLOP/s against ship 22.2 and
# pt64 21.3. Run 2 (run2/): Q's kept rows as [r][c·DC + d] with one word of padding (D/4 + 1 words, 47616 bytes), as the
# chunks are padded, in case run 1 lost to bank conflicts between a load's rows; qr32 left out (8.9 in run 1).
set -uo pipefail
O=/tmp/qrows; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
echo "gpu: $(cat $O/gpu.txt)"
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
P=FLASHRING_PATH=scalar
SC_D=128 same_call ship 1 f32 $P
SC_D=128 same_call qr64 1 f32 $P FLASHRING_PORTABLE_FWD=64x32x32 FLASHRING_PORTABLE_FWD_QROWS=1
SC_D=128 same_call pt64 1 f32 $P FLASHRING_PORTABLE_FWD=64x32x32
SC_D=128 same_call ship2 1 f32 $P
SC_D=128 same_call ship-r0 0 f32 $P
SC_D=128 same_call qr64-r0 0 f32 $P FLASHRING_PORTABLE_FWD=64x32x32 FLASHRING_PORTABLE_FWD_QROWS=1
timeout 120 vitest run --project gpu test/forward.test.ts -t "whole rows kept" > $O/tests.log 2>&1
echo "test $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|forward paths" | cut -c1-200 | head; pack
echo "== forward, D = 128, f32: TFLOP/s (x peer)"
awk '$2 == "fwd" { printf "%-8s %s %s\n", $1, $4, $6 " (" $8 ")" }' $O/table.txt | sort -k2,2 -k1,1 | tee $O/summary.txt
pack
