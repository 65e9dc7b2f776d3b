#!/usr/bin/env bash
# The tensor-core forward's two row blocks taking turns through one 16-row S and P block a subgroup (SBR = 16 in
# flash_fwd_sgmm.wgsl; 13344 workgroup bytes at D = 64 4x16x2 where it took 21536), after ../wip-fwd-bytes's
# timing-only alias (20% faster at that size). The float64 forward, NaN and ring tests (taking turns and not, bit
# for bit: nan.test.ts); p2p's steps bench (N = 16384, causal f16, H16; R = 1 line: forward, dkdv, dq ms) with
# FLASHRING_SGMM_FWD_TURN = 1 (the default) and 0, robustness off and on; the same call at D = 64 with its peer.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-fwd-turns/gpu-call.sh (this folder was then wip-fwd-turns)
set -uo pipefail
O=/tmp/fwdturns; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for t in 1 0; do (export FLASHRING_SGMM_FWD_TURN=$t; steps turn$t 64 2); done
for t in 1 0; do (export FLASHRING_SGMM_FWD_TURN=$t FLASHRING_ROBUST=1; steps rturn$t 64 2); done
echo "== R=1 ms: forward dkdv dq"; r1_table; pack
timeout 200 vitest run test/forward.test.ts test/nan.test.ts test/ring.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|turns" | head -20; pack
PYTHONUNBUFFERED=1 timeout 40 python3 bench/peers/torch_sdpa.py --N 16384 --D 64 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
SC_D=64 same_call new-r0 0 f16
SC_D=64 same_call new-r1 1 f16
SC_D=64 same_call old-r0 0 f16 FLASHRING_SGMM_FWD_TURN=0
echo "== R=1 ms: forward dkdv dq"; cat $O/r1.txt
