#!/usr/bin/env bash
# Prepared 2026-12-07 (10:09 UTC session) as bench/results/wip-occ (run so: README.md). One device call from the project root, carry [".gpu", ".mlm"], other results
# folders aside:
#   bash bench/results-aside.sh out wip-occ wip-next 2026-12-07-moe-time
#   LIMIT=<s> bash .gpu/enter.sh bash bench/results/wip-occ/gpu-call.sh
# The portable f32 forward at D = 128 (0.52× PyTorch's f32; issue 37 asks 0.6×), on any card:
# 1. How many of its workgroups share an SM? Its default (128×32, 64-column chunks, P~ in Q's array, 256 invocations,
#    43,520 bytes) holds 64 f32 accumulators, 16 scores and, with the prefetch, 40 more words in registers. With B1 H4
#    and N = 4224 there are 132 workgroups (one an SM of the H100/H200's 132), at 8448 264, at 16896 528, each with N/32
#    tiles: if a second workgroup fits an SM, the 132-workgroup point reads lower than the others; if one only, all
#    alike. For the default, the prefetch off (FLASHRING_PORTABLE_FWD_PREFETCH=0) and kvonly (below).
# 2. Two edits of flash_fwd.wgsl (edits.json, made by make_edits.py; bench/apply-edits.py writes one into a copy of the tree),
#    each bitwise the same O and LSE:
#      norescale  acc *= alpha only where one of the invocation's rows moved its (stale) max (64 products a tile else);
#      kvonly     the prefetch loads K and V ahead, Q's chunks between their barriers (its 32 registers freed);
#      both       the two.
#    Timed in the same-call bench (N = 16384, B1 H16, D = 128, causal and not, robustness on, PyTorch first), the
#    tree as it is before and after them, and with the prefetch off.
# 3. On an H200 only, with the time left: wip-next/gpu-call.sh (the portable rows on the machine).
set -uo pipefail
: "${OUT:?run through the device tool (OUT: its return folder)}"
O=/tmp/occ; mkdir -p $O; source bench/gpu-lib.sh
LIMIT=${LIMIT:-560}; root=$(pwd); W=$root/bench/results/wip-occ
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
echo "gpu: $(cat $O/gpu.txt) at $(date -u +%T)"
for t in norescale kvonly both; do
  rm -rf /tmp/$t; mkdir -p /tmp/$t; cp -r src shaders bin bench test package.json tsconfig.json vitest.config.* /tmp/$t/ 2>/dev/null
  python3 bench/apply-edits.py $W/edits.json $t /tmp/$t || exit 1; ln -sfn $root/node_modules /tmp/$t/node_modules
done
(cd /tmp/both && timeout 100 vitest run test/forward.test.ts > $O/tests-both.log 2>&1)
echo "tests (both) $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-both.log | grep -E "Test Files|Tests  |^ +×" | cut -c1-200 | head -8; pack
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
probe() {   # TAG [VAR=VALUE…]: forward TFLOP/s at 132, 264 and 528 workgroups
  local tag=$1; shift
  env FLASHRING_ROBUST=1 FLASHRING_PATH=scalar "$@" timeout 60 node bin/flashring.mjs bench --N 4224,8448,16896 --heads 4 --batch 1 \
    --causal false --D 128 --precision f32 --reps 5 --no-ring --no-memory --out "$O/occ-$tag" > "$O/occ-$tag.log" 2>&1
  awk -F, -v T="$tag" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["pass"] == "fwd" { printf "occ %-10s N%-6s wg %4d %7.3f ms %6.2f TFLOP/s %s\n", T, $c["N"], $c["N"] / 128 * 4, $c["ms"], $c["tflops"], $c["tiles"] }' \
    "$O/occ-$tag"/*-kernels.csv 2>/dev/null | tee -a $O/occ.txt || echo "occ $tag FAILED"
}
probe default; probe pf0 FLASHRING_PORTABLE_FWD_PREFETCH=0; (cd /tmp/kvonly && probe kvonly); echo "probes $(el)"; pack
SC_D=128 same_call old1 1 f32 FLASHRING_PATH=scalar
for t in norescale kvonly both; do (cd /tmp/$t && SC_D=128 same_call $t 1 f32 FLASHRING_PATH=scalar); done
SC_D=128 same_call pf0 1 f32 FLASHRING_PATH=scalar FLASHRING_PORTABLE_FWD_PREFETCH=0
SC_D=128 same_call old2 1 f32 FLASHRING_PATH=scalar
echo "== workgroups an SM (forward, B1 H4, robustness on)"; cat $O/occ.txt
echo "== portable f32 forward D128, robustness on: TFLOP/s (x PyTorch's f32)"; grep " fwd " $O/table.txt
cp $O/gpu.txt $O/date.txt $OUT/; pack; mv $OUT/all.tgz $OUT/occ.tgz   # wip-next packs its own all.tgz
grep -q H200 $O/gpu.txt || exit 0
left=$((LIMIT - SECONDS - 15))
[ "$left" -gt 150 ] && LIMIT=$left bash bench/results/wip-next/gpu-call.sh || echo "wip-next: no time ($left s)"
