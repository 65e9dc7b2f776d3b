#!/usr/bin/env bash
# Prepared 2026-12-07 (15:09 UTC session) for the next device call, on any card, from the project root with carry
# [".gpu"] and the other results aside:
#   bash bench/results-aside.sh out wip-regs
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-regs/gpu-call3.sh
# What ../2026-12-07-ablate-h100 and ../2026-12-07-bar-h100 left: at D = 128 (f32) the forward's nine barriers a tile
# cost 8.8–9.8% (no barriers, timing only) and Q's restaging 4.0–4.3%, but a barrier fewer was slower and Q's loads
# earlier changed nothing: the staging itself has to change. `qg` (make_edits.py; a pin, FLASHRING_PORTABLE_FWD_QG=1)
# never stages Q: S reads it from global memory (L1), so K/V fit in whole rows at D = 128 (4 barriers a tile). Each
# stage while LIMIT leaves it time:
# 1. the same-call bench (robustness on, f32, D = 64 and 128, PyTorch first): the tree, qg, the tree, qg;
# 2. qg's forward tests on this GPU (test/forward.test.ts, its new case included);
# 3. f16 storage at D = 128: the default since 2026-12-07 (prefetch 1) against prefetch 2 pinned, once more, and qg;
# 4. the whole GPU suite at the tree (tensor cores required): owed since the prefetch of K and V only became the f32
#    default (4229ed8), and f16's prefetch 1 (only test/forward.test.ts has run with either);
# 5. robustness off at D = 128, the tree and qg (the cost of the bounds on qg's global reads).
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/qg; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-560}
card
variant bench/results/wip-regs/edits.json qg || exit 1
peer
qg() { (cd /tmp/v-qg && same_call "$@" FLASHRING_PORTABLE_FWD_QG=1); }
same_call tree1 1 f32 FLASHRING_PATH=scalar
qg qg1 1 f32 FLASHRING_PATH=scalar
have 75 tests && (cd /tmp/v-qg && timeout $((LIMIT - SECONDS - 10)) vitest run test/forward.test.ts > $O/qg-tests.log 2>&1; echo "qg tests $(el): $(grep -E "Tests " $O/qg-tests.log | tail -1)"); pack
have 45 again && same_call tree2 1 f32 FLASHRING_PATH=scalar
have 45 again && qg qg2 1 f32 FLASHRING_PATH=scalar
export SC_D=128
have 30 f16 && same_call h16-pf1 1 f16 FLASHRING_PATH=scalar
have 30 f16 && same_call h16-pf2 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PREFETCH=2
have 30 f16 && qg qg16 1 f16 FLASHRING_PATH=scalar
unset SC_D
have 250 suite && { FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 240 vitest run --project gpu > $O/gpu-tc.log 2>&1; echo "gpu suite rc=$? $(el): $(grep -E "Tests " $O/gpu-tc.log | tail -1)"; pack; }
# 5. robustness off at D = 128, the tree and qg: what the clamp on qg's global Q reads costs (Dawn's robustness bounds
#    each read of a runtime-sized array; Q's words from workgroup memory need none).
have 30 r0 && SC_D=128 same_call tree-r0 0 f32 FLASHRING_PATH=scalar
have 30 r0 && SC_D=128 qg qg-r0 0 f32 FLASHRING_PATH=scalar
echo "== TFLOP/s (x PyTorch's memory-efficient f32); robustness on but the -r0 runs"; grep -E " fwd " $O/table.txt | cut -c1-80; pack
