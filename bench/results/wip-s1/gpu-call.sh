#!/usr/bin/env bash
# Prepared 2026-12-07 (21:00 UTC session) for one device call on any card, from the project root with carry
# [".gpu", ".regstats"] (bash bench/regstats/build.sh) and the other results aside:
#   bash bench/results-aside.sh out wip-s1
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-s1/gpu-call.sh
# 1. The whole GPU suite with tensor cores required, owed since f16 storage's words are widened as staged by default
#    (ce1b81e; only test/forward.test.ts's new case ran with it, on lavapipe).
# 2. Why f16 storage's forward at D = 128 trails f32 storage's by about 10% though, widened, it stages the same f32
#    words in the same plan (128×32, 64-column chunks, P~ in Q's array): the driver's statistics (bench/regstats) of
#    f32 and f16 forwards at D = 128 (f16: the default widened with prefetch 1; prefetch 2; staged as f16) and D = 64.
# 3. The same-call bench at D = 128, f32 and f16 storage, robustness on and off: whether Dawn's bounds on the f16
#    words' reads are the gap.
# 4. On an H200 only: issue 37's portable rows on its own machine (the same-call bench at D = 64 and 128, f32 and f16).
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/s1; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-570}
card
have 250 suite && { FLASHRING_REQUIRE_TENSOR_CORES=1 timeout 300 vitest run --project gpu > $O/gpu-tc.log 2>&1; echo "gpu suite rc=$? $(el): $(grep -E "Test Files |Tests " $O/gpu-tc.log | tail -2 | tr '\n' ' ')"; pack; }
rs() { FLASHRING_PATH=scalar RS_D=$2 RS_PREC=$3 timeout 60 bash bench/regstats/run.sh "$1" $O/regstats "${@:4}" 2>&1 | grep flash_fwd | tee -a $O/regstats.txt | cut -c1-260; }
if [ -x .regstats/regstats ]; then
  have 60 regstats && { rs f32-d128 128 f32; rs f16-d128 128 f16; }
  have 40 regstats && { rs f16-d128-pf2 128 f16 FLASHRING_PORTABLE_FWD_PREFETCH=2; rs f16-d128-narrow 128 f16 FLASHRING_PORTABLE_FWD_WIDE=0; }
  have 40 regstats && { rs f32-d64 64 f32; rs f16-d64 64 f16; }
  echo "regstats $(el)"; pack
else echo "no .regstats (bash bench/regstats/build.sh, and carry it)"; fi
if grep -q H200 $O/gpu.txt; then
  have 60 peer && peer
  have 60 rows && same_call p32 1 f32 FLASHRING_PATH=scalar
  have 60 rows && same_call p16 1 f16 FLASHRING_PATH=scalar
else
  have 60 peer && peer 128
  export SC_D=128
  have 40 r1 && same_call f32-r1 1 f32 FLASHRING_PATH=scalar
  have 40 r1 && same_call f16-r1 1 f16 FLASHRING_PATH=scalar
  have 40 r0 && same_call f32-r0 0 f32 FLASHRING_PATH=scalar
  have 40 r0 && same_call f16-r0 0 f16 FLASHRING_PATH=scalar
  unset SC_D
fi
echo "== forward TFLOP/s (x PyTorch's memory-efficient f32)"; grep -E " fwd " $O/table.txt | cut -c1-80; pack
