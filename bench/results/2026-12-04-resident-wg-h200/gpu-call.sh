#!/usr/bin/env bash
# Issue 37, D = 64 backward: the resident rows (K, V in dkdv; Q, dO in dq) in workgroup memory instead of
# registers (FLASHRING_SGMM_RESIDENT=workgroup), for fewer registers a lane and so more workgroups an SM.
# The float64 tests with the pin; the places of dkdv and dq at D = 64 with each (does 264 become more?);
# the same-call bench at D = 64 (f16, robustness off) default / pinned / default; p2p's steps at D = 64.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-res/gpu-call.sh (this folder was then named wip-res)
set -uo pipefail
O=/tmp/res; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
FLASHRING_SGMM_RESIDENT=workgroup timeout 200 vitest run test/backward.test.ts test/nan.test.ts test/ring.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |FAIL|×" | head -12; pack
pl() {  # TAG [VAR=VALUE]
  local tag=$1; shift
  env "$@" timeout 80 node bench/cp-run.mjs places --D 64 --N 2048 --H 264,265,396,397,528,529 --reps 10 --out "$O/places-$tag" > "$O/places-$tag.log" 2>&1
  echo "places $tag $(el)"; grep -E "dkdv|dq" "$O/places-$tag.log" | grep -v "^places" | head -16; pack
}
pl reg; pl wg FLASHRING_SGMM_RESIDENT=workgroup
sc() {  # TAG [VAR=VALUE]
  local tag=$1; shift
  env FLASHRING_ROBUST=0 "$@" timeout 90 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D 64 \
    --precision f16 --reps 3 --no-ring --no-memory --peer "$O/peer.json" --out "$O/$tag" > "$O/$tag.log" 2>&1
  echo "$tag $(el)"; kernel_rows "$tag"; pack
}
sc base; sc wg FLASHRING_SGMM_RESIDENT=workgroup; sc base2
steps reg 64 2,4,8; FLASHRING_SGMM_RESIDENT=workgroup steps wg 64 2,4,8; pack
cat $O/table.txt
