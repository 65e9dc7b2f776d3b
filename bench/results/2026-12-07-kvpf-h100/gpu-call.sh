#!/usr/bin/env bash
# Prepared 2026-12-07 (10:09 UTC session) as bench/results/wip-kvpf (run so: README.md), after the portable forward's default prefetch became K and V only where Q
# is staged per tile (FLASHRING_PORTABLE_FWD_PREFETCH=2; tiles.ts defaultPrefetch). One device call from the project
# root, carry [".gpu", ".regstats"] (bash bench/regstats/build.sh makes .regstats), other results folders aside:
#   bash bench/results-aside.sh out wip-kvpf
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-kvpf/gpu-call.sh
# 1. test/forward.test.ts on this GPU (where the default now takes prefetch 2 in every chunked plan; bitwise the same
#    O and LSE as none and as 1: its prefetch test).
# 2. The same-call bench (N = 16384, B1 H16, D 64 and 128, causal and not, robustness on, PyTorch first): the new default
#    against prefetch 1 (the default before), alternated twice in f32, once with f16 storage; at D = 128 also with P~
#    apart (FLASHRING_PORTABLE_FWD_SHARED_P=0: 128×32 in 32-column chunks), prefetch 2 against 1.
# 3. The driver's own statistics of the kernels (registers, spills; bench/regstats/run.sh) at D = 128, f32: the default,
#    prefetch 1 and 0; and at D = 64 the default.
# In order of need, each stage only while LIMIT (s) leaves it time: the tests, the peer, f32 new / prefetch 1, the
# statistics, f16 new / prefetch 1, f32 again, P~ apart.
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/kvpf; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-560}
card
timeout 100 vitest run test/forward.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | cut -c1-200 | head -8; pack
PYTHONUNBUFFERED=1 timeout 90 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
have() { [ $((LIMIT - SECONDS)) -gt "$1" ] || { echo "skipped past the limit: $2"; false; }; }   # seconds left for the next stage?
same_call p32-new1 1 f32 FLASHRING_PATH=scalar
same_call p32-pf1a 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PREFETCH=1
rs() { FLASHRING_PATH=scalar RS_D=$2 timeout 60 bash bench/regstats/run.sh "$1" $O/regstats "${@:3}" 2>&1 | tee -a $O/regstats.txt | cut -c1-400; }
if [ -x .regstats/regstats ]; then
  have 60 regstats && { rs d128-new 128; rs d128-pf1 128 FLASHRING_PORTABLE_FWD_PREFETCH=1; }
  have 60 regstats && { rs d128-pf0 128 FLASHRING_PORTABLE_FWD_PREFETCH=0; rs d64-new 64; }
  echo "regstats $(el)"; pack
else echo "no .regstats (bash bench/regstats/build.sh, and carry it)"; fi
have 90 p16 && same_call p16-new 1 f16 FLASHRING_PATH=scalar
have 90 p16 && same_call p16-pf1 1 f16 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PREFETCH=1
have 90 second && same_call p32-new2 1 f32 FLASHRING_PATH=scalar
have 90 second && same_call p32-pf1b 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PREFETCH=1
have 60 apart && SC_D=128 same_call apart-new 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_SHARED_P=0
have 60 apart && SC_D=128 same_call apart-pf1 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_SHARED_P=0 FLASHRING_PORTABLE_FWD_PREFETCH=1
awk -F, 'FNR > 1 && $1 == "fwd" { print FILENAME ": D" $5 " " $9 }' $O/*/*-kernels.csv 2>/dev/null | sed "s|$O/||" | sort -u | head -20 > $O/plans.txt
echo "== portable forward, robustness on: TFLOP/s (x PyTorch's memory-efficient f32)"; grep " fwd " $O/table.txt; pack
pack
