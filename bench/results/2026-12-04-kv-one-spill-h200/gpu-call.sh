#!/usr/bin/env bash
# dkdv's Sᵀ and dPᵀ through one f32 block a subgroup and Pᵀ, then dSᵀ through one f16 block (KV_ONE; dV's product
# runs before dSᵀ overwrites Pᵀ): dkdv reaches neither dPa nor Pa, 12960 workgroup bytes at D = 64 (4x16) where
# it took 21152. p2p's steps bench (N = 16384, causal f16, H16; R = 1 line: forward, dkdv, dq ms) with dkdv's
# spills pinned one and two (FLASHRING_SGMM_KV_SPILL) at D = 64 and 128, and at D = 128 both kernels with one
# spill block at 4x16 (17056 bytes); the float64 backward and NaN tests (one spill block against two, bitwise);
# the same call at D = 64 with its peer, robustness off and on.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-kv-one-spill/gpu-call.sh (this folder was then wip-kv-one-spill)
set -uo pipefail
O=/tmp/kvspill; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for D in 64 128; do
  (export FLASHRING_SGMM_KV_SPILL=one; steps kv1 $D 2)
  (export FLASHRING_SGMM_KV_SPILL=two; steps kv2 $D 2)
done
(export FLASHRING_SGMM_KV_SPILL=one FLASHRING_SGMM_DQ_SPILL=one FLASHRING_SGMM_BWD=4x16; steps one4x16 128 2)
(export FLASHRING_SGMM_KV_SPILL=two FLASHRING_SGMM_DQ_SPILL=two FLASHRING_SGMM_BWD=4x16; steps two4x16 128 2)
echo "== R=1 ms: forward dkdv dq"; r1_table; pack
timeout 150 vitest run test/backward.test.ts test/nan.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
PYTHONUNBUFFERED=1 timeout 40 python3 bench/peers/torch_sdpa.py --N 16384 --D 64 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
SC_D=64 same_call new-r0 0 f16
SC_D=64 same_call new-r1 1 f16
echo "== R=1 ms: forward dkdv dq"; cat $O/r1.txt
