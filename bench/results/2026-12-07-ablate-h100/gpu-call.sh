#!/usr/bin/env bash
# Prepared 2026-12-07 (12:39 UTC session) for the next device call, on any card, from the project root with carry
# [".gpu", ".regstats"] (bash bench/regstats/build.sh) and the other results aside:
#   bash bench/results-aside.sh out wip-regs
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-regs/gpu-call.sh
# What ../2026-12-07-lanes-h100 left: `lanes` (S in four lanes, forward and backward alike) made the forward 8% faster
# at D = 64 and left D = 128 as it was, but the backward lost 3–5% (255 registers and a spill at D = 128), so
# forward+backward lost 1–4%; `ranges`, 64×32 and 64×64 were slower. In order of need, each stage while LIMIT leaves
# it time:
# 1. `lanes2` (make_edits.py: two lanes of vec2 fma, 16 registers more instead of 48, the same operation count, forward
#    and backward): the driver's statistics at D = 128 and 64, then the same-call bench (robustness on, f32, PyTorch
#    first) against the tree, twice, and its forward and backward tests on this GPU;
# 2. two ablations for timing only (make_edits.py: nobar, noq; their results are wrong and checkErr says so): the
#    forward at D = 128 without its tile loop's barriers, and without loading Q's chunks again every tile, so that the
#    next lever is chosen by what those cost;
# 3. what that call's limit cut: f16 storage, the default (prefetch 2) against prefetch 1; f32 at D = 128 with P~
#    apart; autotune at D = 128 in f32 (its candidates say the seconds each took with its build and runs).
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/regs; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-560}
card
root=$(pwd); V=/tmp/v-lanes2
# variant NAME: a copy of the tree at /tmp/v-NAME with the edit NAME of edits.json applied
variant() {
  rm -rf /tmp/v-$1; mkdir -p /tmp/v-$1; cp -r src shaders bin bench test package.json tsconfig.json vitest.config.* /tmp/v-$1/ 2>/dev/null
  python3 bench/apply-edits.py bench/results/wip-regs/edits.json $1 /tmp/v-$1 || return 1
  ln -sfn $root/node_modules /tmp/v-$1/node_modules; ln -sfn $root/.regstats /tmp/v-$1/.regstats
}
variant lanes2 || exit 1; variant nobar || exit 1; variant noq || exit 1
rs() { FLASHRING_PATH=scalar RS_D=$2 timeout 50 bash bench/regstats/run.sh "$1" $O/regstats "${@:3}" 2>&1 | tee -a $O/regstats.txt | grep flash_ | grep -v bwd_pre | cut -c1-170; }
(cd $V && rs d128-lanes2 128; rs d64-lanes2 64)
echo "regstats $(el)"; pack
peer
same_call p32-tree1 1 f32 FLASHRING_PATH=scalar
(cd $V && same_call p32-lanes2a 1 f32 FLASHRING_PATH=scalar)
have 45 again && same_call p32-tree2 1 f32 FLASHRING_PATH=scalar
have 45 again && (cd $V && same_call p32-lanes2b 1 f32 FLASHRING_PATH=scalar)
# the ablations (timing only, wrong results): the forward at D = 128 without its tile loop's barriers, and without Q's restaging
have 60 ablate && (cd /tmp/v-nobar && SC_D=128 same_call abl-nobar 1 f32 FLASHRING_PATH=scalar)
have 60 ablate && (cd /tmp/v-noq && SC_D=128 same_call abl-noq 1 f32 FLASHRING_PATH=scalar)
have 150 tests && (cd $V && timeout $((LIMIT - SECONDS - 30)) vitest run test/forward.test.ts test/backward.test.ts > $O/lanes2-tests.log 2>&1; echo "lanes2 tests $(el): $(grep -E "Tests " $O/lanes2-tests.log | tail -1)"; grep -E "inputs ×30" $O/lanes2-tests.log | cut -c1-160)
have 90 p16 && same_call p16-new 1 f16 FLASHRING_PATH=scalar
have 90 p16 && same_call p16-pf1 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PREFETCH=1
have 60 apart && SC_D=128 same_call apart-new 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_SHARED_P=0
echo "== portable, robustness on: TFLOP/s (x PyTorch's memory-efficient f32)"; grep -E " (fwd|bwd) " $O/table.txt | cut -c1-80; pack
left=$((LIMIT - SECONDS - 10))
[ "$left" -gt 60 ] && FLASHRING_ROBUST=1 FLASHRING_PATH=scalar timeout "$left" node bin/flashring.mjs tune --D 128 --precision f32 --causal false --store $O/tune.json > $O/tune.log 2>&1
echo "tune $(el)"; grep -c " s with its build and runs" $O/tune.log 2>/dev/null; tail -4 $O/tune.log 2>/dev/null; pack
