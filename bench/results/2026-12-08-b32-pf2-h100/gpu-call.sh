#!/usr/bin/env bash
# Prepared 2026-12-07 (21:00 UTC session) for the next device call on any card, from the project root with carry
# [".gpu"] and the other results aside:
#   bash bench/results-aside.sh out wip-bwd32
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-bwd32/gpu-call.sh
# 1. The whole GPU suite with tensor cores required, owed since f16 storage's forward words are widened as staged
#    (ce1b81e) and read as u32 pairs (3d7cf67): neither has run through it (the same checkErr at every bench point on
#    an H100 only: ../2026-12-07-wide-h100, ../2026-12-07-u32-h100).
# 2. The portable backward with f16 storage's words read as u32 pairs (b32, edits.json): the same-call bench, f16
#    storage, robustness on, D = 64 and 128: the tree, b32, the tree, b32 (the backward and forward+backward rows;
#    the forward is the same kernel in both).
# 3. f32 storage's forward at HEAD, once: since 3d7cf67 its SPIR-V calls h4 (the identity) where it read Q, K and V
#    directly; the f32 figures of ../2026-12-07-u32-h100 ran before that change.
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/b32; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-570}
card
have 250 suite && { FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 300 vitest run --project gpu > $O/gpu-tc.log 2>&1; echo "gpu suite rc=$? $(el): $(grep -E "Test Files |Tests " $O/gpu-tc.log | tail -2 | tr '\n' ' ')"; pack; }
variant bench/results/wip-bwd32/edits.json b32 || exit 1
have 60 peer && peer
have 50 t16 && same_call t16a 1 f16 FLASHRING_PATH=scalar
have 50 b32 && (cd /tmp/v-b32 && same_call b32a 1 f16 FLASHRING_PATH=scalar)
have 50 t16 && same_call t16b 1 f16 FLASHRING_PATH=scalar
have 50 b32 && (cd /tmp/v-b32 && same_call b32b 1 f16 FLASHRING_PATH=scalar)
have 50 f32 && same_call f32 1 f32 FLASHRING_PATH=scalar
# 4. (added 2026-12-07 23:58 UTC, for what time is left) f16 storage's forward at D = 128: widened by unpack2x16float
#    straight from the u32 pairs (unp, ../wip-unp/edits.json), and with prefetch 2 (K and V only, f32's default).
variant bench/results/wip-unp/edits.json unp && have 35 unp && (cd /tmp/v-unp && SC_D=128 same_call unp 1 f16 FLASHRING_PATH=scalar)
have 35 pf2 && SC_D=128 same_call pf2 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PREFETCH=2
echo "== backward TFLOP/s"; grep -E " bwd " $O/table.txt | cut -c1-80; echo "== forward D128 f16"; grep -E " fwd +D128 .* f16 " $O/table.txt | cut -c1-80; pack
