#!/usr/bin/env bash
# Prepared 2026-12-08 00:30 UTC for a device call on any card, from the project root with carry [".gpu"] and the other
# results aside:
#   bash bench/results-aside.sh out wip-final
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-final/gpu-call.sh
# 1. The whole GPU suite with tensor cores required at 81df569: the portable backward reading f16 words as u32 pairs
#    and f16 storage's prefetch 2 by default (../2026-12-08-b32-pf2-h100 measured both as variants, the same checkErr).
# 2. The same-call bench of f16 storage with the shipped defaults (robustness on), and f32 storage's.
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/final; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-420}
card
have 290 suite && { FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 320 vitest run --project gpu > $O/gpu-tc.log 2>&1; echo "gpu suite rc=$? $(el): $(grep -E "Test Files |Tests " $O/gpu-tc.log | tail -2 | tr '\n' ' ')"; pack; }
have 60 peer && peer
have 45 t16 && same_call t16 1 f16 FLASHRING_PATH=scalar
have 45 f32 && same_call f32 1 f32 FLASHRING_PATH=scalar
echo "== forward"; grep -E " fwd " $O/table.txt | cut -c1-80; pack
