#!/usr/bin/env bash
# Prepared 2026-12-07 (21:00 UTC session) for one device call on any card, from the project root with carry
# [".gpu", ".regstats"] (bash bench/regstats/build.sh) and the other results aside:
#   bash bench/results-aside.sh out wip-s1
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-s1/gpu-call.sh
# 1. (After 3, in the time left: the device was scarce) The whole GPU suite with tensor cores required, owed since f16 storage's words are widened as staged by default
#    (ce1b81e; only test/forward.test.ts's new case ran with it, on lavapipe).
# 2. Why f16 storage's forward trails f32 storage's by about 10% at the same plan (D = 128 widened: 128×32, 64-column
#    chunks, P~ in Q's array, the same f32 words staged; D = 64 widened measured the same gap): the SPIR-V of the two
#    differs only in six conversions (Dawn's dump on lavapipe), so the driver's handling of 16-bit storage words is
#    suspect. Variants (edits.json, make_edits.py; the same bits): u32w reads each f16 word as a u32 pair and
#    bitcasts it, u32p also holds the prefetched words as raw pairs. The driver's statistics (bench/regstats) of the
#    f32 and f16 forwards at D = 128 and of both variants.
# 3. The same-call bench, f16 storage, robustness on, D = 64 and 128: the tree, u32w, u32p, the tree again (before 2's
#    statistics), then f32 storage.
# 4. On an H200 instead of 2–3's bench: issue 37's portable rows on its own machine (f32 and f16 storage).
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/s1; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-570}
card
variant bench/results/wip-s1/edits.json u32w && variant bench/results/wip-s1/edits.json u32p || exit 1
for v in u32w u32p; do ln -sfn "$(pwd)/.regstats" /tmp/v-$v/.regstats; done
if grep -q H200 $O/gpu.txt; then
  have 60 peer && peer
  have 60 rows && same_call p32 1 f32 FLASHRING_PATH=scalar
  have 60 rows && same_call p16 1 f16 FLASHRING_PATH=scalar
else
  have 60 peer && peer
  have 50 t16 && same_call t16a 1 f16 FLASHRING_PATH=scalar
  have 50 u32w && (cd /tmp/v-u32w && same_call u32w 1 f16 FLASHRING_PATH=scalar)
  have 50 u32p && (cd /tmp/v-u32p && same_call u32p 1 f16 FLASHRING_PATH=scalar)
  have 50 t16 && same_call t16b 1 f16 FLASHRING_PATH=scalar
fi
have 120 suite && { FLASHRING_REQUIRE_TENSOR_CORES=1 timeout $((LIMIT - SECONDS - 100)) vitest run --project gpu > $O/gpu-tc.log 2>&1; echo "gpu suite rc=$? $(el): $(grep -E "Test Files |Tests " $O/gpu-tc.log | tail -2 | tr '\n' ' ')"; pack; }
rs() { FLASHRING_PATH=scalar RS_D=$2 RS_PREC=$3 timeout 60 bash bench/regstats/run.sh "$1" $O/regstats "${@:4}" 2>&1 | grep flash_fwd | tee -a $O/regstats.txt | cut -c1-260; }
if [ -x .regstats/regstats ]; then
  have 60 regstats && { rs f32-d128 128 f32; rs f16-d128 128 f16; }
  have 40 regstats && { (cd /tmp/v-u32w && O=$O rs u32w-d128 128 f16); (cd /tmp/v-u32p && O=$O rs u32p-d128 128 f16); }
  echo "regstats $(el)"; pack
else echo "no .regstats (bash bench/regstats/build.sh, and carry it)"; fi
grep -q H200 $O/gpu.txt || { have 50 f32 && same_call f32 1 f32 FLASHRING_PATH=scalar; }
echo "== forward TFLOP/s (x PyTorch's memory-efficient f32)"; grep -E " fwd " $O/table.txt | cut -c1-80; pack
