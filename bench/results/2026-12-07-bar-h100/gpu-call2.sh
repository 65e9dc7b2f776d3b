#!/usr/bin/env bash
# Prepared 2026-12-07 (15:09 UTC session) for the next device call, on any card, from the project root with carry
# [".gpu"] and the other results aside:
#   bash bench/results-aside.sh out wip-regs
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-regs/gpu-call2.sh
# What ../2026-12-07-ablate-h100 left: at D = 128 (f32, robustness on) the forward without its tile loop's barriers
# was 8.8–9.8% faster, without Q's loads every tile 4.1–4.3% (timing only); f16 storage with prefetch 1 3.3–3.5% faster
# than the default 2 (now the default for f16 storage with f32 products: src/kernels/tiles.ts defaultPrefetch). Here,
# at D = 128 only, each stage while LIMIT leaves it time:
# 1. the tree and bq (both edits), then bq's forward tests on this GPU (test/forward.test.ts, tensor cores required
#    where the card has them): what shipping bq needs, first, for a short call;
# 2. abar and qearly alone;
# 3. f16 storage: the new default (prefetch 1) against prefetch 2, pinned;
# 4. the whole GPU suite at the tree (tensor cores required): owed since the prefetch of K and V only became the f32
#    default (4229ed8; only test/forward.test.ts has run with it), and now f16's prefetch 1;
# 5. the tree and the three edits again.
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/bar; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-300}
card
root=$(pwd)
# variant NAME: a copy of the tree at /tmp/v-NAME with the edit NAME of edits.json applied
variant() {
  rm -rf /tmp/v-$1; mkdir -p /tmp/v-$1; cp -r src shaders bin bench test package.json tsconfig.json vitest.config.* /tmp/v-$1/ 2>/dev/null
  python3 bench/apply-edits.py bench/results/wip-regs/edits.json $1 /tmp/v-$1 || return 1
  ln -sfn $root/node_modules /tmp/v-$1/node_modules
}
variant abar || exit 1; variant qearly || exit 1; variant bq || exit 1
peer 128
export SC_D=128
run_v() { have 30 "$1$2" && (cd /tmp/v-$1 && same_call $1$2 1 f32 FLASHRING_PATH=scalar); }
same_call tree1 1 f32 FLASHRING_PATH=scalar
run_v bq 1
have 75 tests && (cd /tmp/v-bq && FLASHRING_REQUIRE_TENSOR_CORES=1 timeout $((LIMIT - SECONDS - 10)) vitest run test/forward.test.ts > $O/bq-tests.log 2>&1; echo "bq tests $(el): $(grep -E "Tests " $O/bq-tests.log | tail -1)"); pack
run_v abar 1; run_v qearly 1
have 50 f16 && same_call h16-pf1 1 f16 FLASHRING_PATH=scalar
have 50 f16 && same_call h16-pf2 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PREFETCH=2
have 250 suite && { FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 240 vitest run --project gpu > $O/gpu-tc.log 2>&1; echo "gpu suite rc=$? $(el): $(grep -E "Tests " $O/gpu-tc.log | tail -1)"; pack; }
have 30 again && same_call tree2 1 f32 FLASHRING_PATH=scalar; for v in bq abar qearly; do run_v $v 2; done
echo "== D = 128, robustness on: TFLOP/s (x PyTorch's memory-efficient f32)"; grep -E " fwd " $O/table.txt | cut -c1-80; pack
