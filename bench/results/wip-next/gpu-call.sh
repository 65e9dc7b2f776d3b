#!/usr/bin/env bash
# Prepared 2026-12-07 (07:17 UTC session), after P~ in Q's array became the portable forward's default where it widens
# the chunk (07f0309). One device call from the project root, carry [".gpu", ".mlm"], other results folders aside:
#   bash bench/results-aside.sh out wip-next 2026-12-07-moe-time
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-next/gpu-call.sh
# The whole GPU suite with tensor cores required ran on an H100 at 08:03 UTC (../2026-12-07-suite-h100: 283 of 283), and
# at 81df569 on 2026-12-08 (../2026-12-08-suite-h100: 285 of 285, f16 storage's prefetch 2 and u32 words by default);
# this script now does only what needs an H200: issue 37's portable rows on its own machine (the same-call bench, D = 64 and
# 128, f32 and f16 storage, robustness on, PyTorch first), and in the time left the MoE time draw's first pairs
# (../2026-12-07-moe-time/gpu-call-h200.sh short).
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/next; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-570}
card
grep -q H200 $O/gpu.txt || { echo "not an H200: nothing run (the suite ran on an H100: ../2026-12-08-suite-h100)"; exit 0; }
peer
same_call p32 1 f32 FLASHRING_PATH=scalar
same_call p16 1 f16 FLASHRING_PATH=scalar
echo "== portable forward, robustness on: TFLOP/s (x PyTorch's memory-efficient f32)"; grep " fwd " $O/table.txt
left=$((LIMIT - SECONDS - 20))
[ "$left" -gt 200 ] && timeout "$left" bash bench/results/2026-12-07-moe-time/gpu-call-h200.sh short || echo "moe time: no time ($left s)"
