#!/usr/bin/env bash
# Issue 37: two changes to the tensor-core backward (shaders/flash_bwd_sgmm.wgsl), measured in one call
# against the same shader as before them, run first and last (base, base2):
#   acc  accumulating (ring steps) is a pipeline constant (override ACCUMULATE): the pipeline that
#        overwrites no longer holds registers for the old values the epilogue reads ahead;
#   ob2  each subgroup owns OB = 2 blocks of 16 rows (keys in dkdv, queries in dq), pinned with
#        FLASHRING_SGMM_BWD=SGx16x2, at D = 64 only (SG = 4 and 2): twice the products per staged tile
#        and barrier, each staged operand loaded once for both blocks.
# base is the working tree's shader with ACCUMULATE or'd with the uniform's P.accumulate (sed below): the
# pipeline that overwrites then reads the flag at run time, as before; ACCUMULATE stays declared and used.
# Then the float64 tests with OB = 2 pinned (backward, NaN, ring: the ring case runs the accumulating
# tensor-core backward) and with the defaults.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-ob2/gpu-call.sh
set -uo pipefail
O=/tmp/ob2; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
SH=shaders/flash_bwd_sgmm.wgsl; cp $SH $O/acc.wgsl
sed -e 's/if (load \&\& ACCUMULATE) {/if (load \&\& (ACCUMULATE || P.accumulate != 0u)) {/' \
    -e 's/if (ACCUMULATE) { x += old\[k\]; }/if (ACCUMULATE || P.accumulate != 0u) { x += old[k]; }/g' $O/acc.wgsl > $O/base.wgsl
echo "base variant: $(grep -c 'P.accumulate != 0u' $O/base.wgsl) uses of the uniform"
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
ob2() { # tag, SG: the same-call bench at D = 64 with OB = 2 pinned
  env FLASHRING_ROBUST=0 FLASHRING_SGMM_BWD=$2x16x2 timeout 60 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D 64 \
    --precision f16 --reps 3 --no-ring --no-memory --peer "$O/peer.json" --out "$O/$1" > "$O/$1.log" 2>&1
  echo "$1 $(el)"; kernel_rows "$1"; pack
}
cp $O/base.wgsl $SH; same_call base 0 f16; steps base 128 2,4,8; steps base 64 8
cp $O/acc.wgsl $SH;  same_call acc 0 f16;  steps acc 128 2,4,8;  steps acc 64 8
ob2 ob2-sg4 4; ob2 ob2-sg2 2
FLASHRING_SGMM_BWD=4x16x2 steps ob2-sg4 64 2,4,8
cp $O/base.wgsl $SH; same_call base2 0 f16
cp $O/acc.wgsl $SH
T="test/backward.test.ts test/nan.test.ts test/ring.test.ts"
FLASHRING_SGMM_BWD=4x16x2 timeout 120 vitest run $T > $O/tests-ob2.log 2>&1
echo "tests ob2 $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-ob2.log | grep -E "Test Files|Tests  |FAIL|✓|×" | head -12; pack
timeout 100 vitest run $T > $O/tests-acc.log 2>&1
echo "tests acc $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-acc.log | grep -E "Test Files|Tests  |FAIL" | head -8; pack
echo "steps (tag: R=1 ms, ring ms at R=2 4 8, ratio):"
for f in $O/steps*.log; do echo "$(basename $f .log): $(grep -E '^(2|4|8) +[0-9.]+ +[0-9.]+ +[0-9.]+ +\|' $f | awk '{ printf "%s ", $0 }')"; done
sort -k2,2 -k3,3 -k4,4 -k1,1 $O/table.txt
