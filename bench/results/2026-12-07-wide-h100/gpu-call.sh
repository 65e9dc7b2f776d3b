#!/usr/bin/env bash
# Prepared 2026-12-07 (18:03 UTC session) for one device call on any card, from the project root with carry
# [".gpu", ".mlm"] and the other results folders aside:
#   bash bench/results-aside.sh out wip-wide 2026-12-07-moe-time
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-wide/gpu-call.sh
# What it asks: f16 storage's portable forward is slower than f32's at D = 128 (21.8 against 25.2–25.3 TFLOP/s on an
# H100, ../2026-12-07-qg-h100) although it loads half the bytes: its products widen every f16 word read from workgroup
# memory (8 vec4 conversions a word of the head dim for 16 dot4). FLASHRING_PORTABLE_FWD_WIDE=1 widens each word once,
# as it is staged, so the products read f32 words as f32 storage's do (the plan then as f32's: 64-column chunks with
# P~ in Q's array at D = 128, 32-column chunks at D = 64); bitwise the same O and LSE (test/forward.test.ts on lavapipe).
# Stages, while LIMIT leaves time:
# 1. the same-call bench (robustness on, f16, D = 64 and 128, PyTorch first): the default, wide, wide with prefetch 2,
#    then the default and wide again;
# 2. test/forward.test.ts on this GPU (tensor cores required; the wide case among them);
# 3. on an H200 only: the f32 rows (issue 37's portable rows on its own machine), then the MoE time draw's first pairs
#    (../2026-12-07-moe-time/gpu-call-h200.sh short) in the time left.
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/wide; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-420}
card
peer
same_call t16a 1 f16 FLASHRING_PATH=scalar
same_call w16a 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_WIDE=1
have 40 pf2 && same_call w16p2 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_WIDE=1 FLASHRING_PORTABLE_FWD_PREFETCH=2
have 40 again && same_call t16b 1 f16 FLASHRING_PATH=scalar
have 40 again && same_call w16b 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_WIDE=1
have 70 tests && { FLASHRING_REQUIRE_TENSOR_CORES=1 timeout $((LIMIT - SECONDS - 10)) vitest run test/forward.test.ts > $O/fwd-tests.log 2>&1; echo "forward tests rc=$? $(el): $(grep -E "Tests " $O/fwd-tests.log | tail -1)"; pack; }
if grep -q H200 $O/gpu.txt; then
  have 40 f32 && same_call p32 1 f32 FLASHRING_PATH=scalar
  left=$((LIMIT - SECONDS - 20))
  [ "$left" -gt 200 ] && timeout "$left" bash bench/results/2026-12-07-moe-time/gpu-call-h200.sh short || echo "moe time: no time ($left s)"
fi
echo "== forward TFLOP/s, robustness on (ratio: to PyTorch's f16 flash; the f32 memory-efficient peer is in peer.json)"; grep -E " fwd " $O/table.txt | cut -c1-72; pack
