#!/usr/bin/env bash
# Prepared 2026-12-07 (10:09 UTC session; the edit `lanes` added at 12:40 UTC) for the next device call, on any card,
# from the project root with carry [".gpu", ".regstats"] (bash bench/regstats/build.sh) and the other results aside:
#   bash bench/results-aside.sh out wip-regs
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-regs/gpu-call.sh
# What ../2026-12-07-kvpf-h100 left: the portable forward takes 255 registers an invocation (one 256-invocation
# workgroup an SM), and its call's limit cut f16 storage and P~ apart with prefetch 2. Two edits of the kernels
# (make_edits.py says each; both passed the forward, backward, mask and NaN tests on lavapipe, validate-shaders clean):
# `lanes` (S in four lanes of vec4 fma, forward and backward alike: 4 issue slots a word and score for 5) and
# `ranges` (the rows' key ranges taken only in masked tiles). In order of need, each stage while LIMIT leaves it time:
# 1. the driver's statistics at D = 128 in f32 (bench/regstats/run.sh): `lanes` (forward and backward), `ranges`,
#    64×32 and 64×64 (128 invocations: two workgroups an SM at up to 255 registers); after the tiles' timing, prefetch 0
#    and D = 64 with and without `lanes`;
# 2. the same-call bench (robustness on, PyTorch first): `lanes` and `ranges` against the tree at D = 64 and 128
#    (twice); 64×32 and 64×64 at D = 128; f16 storage, the default against prefetch 1; f32 at D = 128 with P~ apart;
# 3. `lanes` through the forward and backward tests on this GPU;
# 4. autotune at D = 128 in f32 (its candidates now say the seconds each took with its build and runs).
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/regs; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-560}
card
root=$(pwd)
# variant NAME: a copy of the tree at /tmp/v-NAME with the edit NAME of edits.json applied
variant() {
  rm -rf /tmp/v-$1; mkdir -p /tmp/v-$1; cp -r src shaders bin bench test package.json tsconfig.json vitest.config.* /tmp/v-$1/ 2>/dev/null
  python3 bench/apply-edits.py bench/results/wip-regs/edits.json $1 /tmp/v-$1 || return 1
  ln -sfn $root/node_modules /tmp/v-$1/node_modules; ln -sfn $root/.regstats /tmp/v-$1/.regstats
}
variant lanes || exit 1; variant ranges || exit 1
rs() { FLASHRING_PATH=scalar RS_D=$2 timeout 60 bash bench/regstats/run.sh "$1" $O/regstats "${@:3}" 2>&1 | tee -a $O/regstats.txt | cut -c1-300; }
(cd /tmp/v-lanes && rs d128-lanes 128)
(cd /tmp/v-ranges && rs d128-ranges 128)
have 60 regstats && { rs d128-64x32 128 FLASHRING_PORTABLE_FWD=64x32; rs d128-64x64 128 FLASHRING_PORTABLE_FWD=64x64; }
pack
peer
same_call p32-tree1 1 f32 FLASHRING_PATH=scalar
(cd /tmp/v-lanes && same_call p32-lanes1 1 f32 FLASHRING_PATH=scalar)
(cd /tmp/v-ranges && same_call p32-ranges1 1 f32 FLASHRING_PATH=scalar)
have 90 again && same_call p32-tree2 1 f32 FLASHRING_PATH=scalar
have 90 again && (cd /tmp/v-lanes && same_call p32-lanes2 1 f32 FLASHRING_PATH=scalar)
have 90 again && (cd /tmp/v-ranges && same_call p32-ranges2 1 f32 FLASHRING_PATH=scalar)
have 60 tiles && SC_D=128 same_call t64x32 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD=64x32
have 60 tiles && SC_D=128 same_call t64x64 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD=64x64
have 120 regstats && { rs d128-pf0 128 FLASHRING_PORTABLE_FWD_PREFETCH=0; (cd /tmp/v-lanes && rs d64-lanes 64); rs d64-tree 64; }
have 90 tests && (cd /tmp/v-lanes && timeout $((LIMIT - SECONDS - 60)) vitest run test/forward.test.ts test/backward.test.ts > $O/lanes-tests.log 2>&1; echo "lanes tests $(el): $(grep -E "Tests " $O/lanes-tests.log | tail -1)"; grep -E "inputs ×30" $O/lanes-tests.log | cut -c1-160)
have 90 p16 && same_call p16-new 1 f16 FLASHRING_PATH=scalar
have 90 p16 && same_call p16-pf1 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PREFETCH=1
have 60 apart && SC_D=128 same_call apart-new 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_SHARED_P=0
echo "== portable, robustness on: TFLOP/s (x PyTorch's memory-efficient f32)"; grep -E " (fwd|bwd) " $O/table.txt; pack
left=$((LIMIT - SECONDS - 10))
[ "$left" -gt 60 ] && FLASHRING_ROBUST=1 FLASHRING_PATH=scalar timeout "$left" node bin/flashring.mjs tune --D 128 --precision f32 --causal false --store $O/tune.json > $O/tune.log 2>&1
echo "tune $(el)"; grep -c " s with its build and runs" $O/tune.log 2>/dev/null; tail -4 $O/tune.log 2>/dev/null; pack
