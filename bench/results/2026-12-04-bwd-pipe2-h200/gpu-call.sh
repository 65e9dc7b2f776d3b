#!/usr/bin/env bash
# After ../wip-bwd-pipe (PIPE 2 1.7-2x slower at D = 64): the tile loops unrolled by buffer parity (each tile's buffer a
# constant), and what two buffers' workgroup memory alone costs PIPE 0 (/tmp/vmem: PIPE 0 with both buffers
# allocated). Tests (both orders bitwise and against float64), p2p's steps at D = 64 (dkdv and dq apart), the same
# call at D = 64 (PIPE 0, PIPE 2, 9572722 in /tmp/old).
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-bwd-pipe2/gpu-call.sh
set -uo pipefail
O=/tmp/bwdpipe2; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
mkdir -p /tmp/vmem && tar --exclude=./node_modules --exclude=./.gpu --exclude=./bench/results -cf - . | tar -xf - -C /tmp/vmem && ln -sfn $root/node_modules /tmp/vmem/node_modules
sed -i 's/RB \* NBUF>/RB * 2u>/; s/RB \* NBUF>/RB * 2u>/; s/BR \* NBUF>/BR * 2u>/; s/BR \* NBUF>/BR * 2u>/' /tmp/vmem/shaders/flash_bwd_sgmm.wgsl
grep -c "2u>;" /tmp/vmem/shaders/flash_bwd_sgmm.wgsl > $O/vmem-patched.txt
timeout 120 vitest run test/backward.test.ts test/nan.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
FLASHRING_SGMM_BWD_PIPE=2 timeout 100 vitest run test/backward.test.ts test/ring.test.ts > $O/tests-pipe2.log 2>&1
echo "tests pipe 2 $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests-pipe2.log | grep -E "Test Files|Tests  |^ +×" | head -12; pack
steps p0 64 8
(export FLASHRING_SGMM_BWD_PIPE=2; steps p2 64 8)
(cd /tmp/old && steps old 64 8)
(cd /tmp/vmem && steps vmem 64 8)
steps p0b 64 8
for f in $O/steps*.log; do
  awk -v T=$(basename $f .log) '$1 == 1 && $2 == "R=1" { r1 = sprintf("%s %s %s", $4, $5, $6) } END { printf "%-16s R=1 fwd dkdv dq %s\n", T, r1 }' $f
done
pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
SC_D=64 same_call p0-r0 0 f16
SC_D=64 same_call p2-r0 0 f16 FLASHRING_SGMM_BWD_PIPE=2
(cd /tmp/old && SC_D=64 same_call old-r0 0 f16)
SC_D=64 same_call p2-r1 1 f16 FLASHRING_SGMM_BWD_PIPE=2
(cd /tmp/old && SC_D=64 same_call old-r1 1 f16)
echo "== pass, D, causal: TFLOP/s robust off: PIPE 0 / PIPE 2 (xFA2) / old | robust on: PIPE 2 (xFA2) / old"
awk '{ k = $2 " " $3 " " $4 " " $5; v[$1, k] = $6; r[$1, k] = $8; keys[k] = 1 } END { for (k in keys) printf "%-30s %s %s (%s) %s | %s (%s) %s\n", k, v["p0-r0", k], v["p2-r0", k], r["p2-r0", k], v["old-r0", k], v["p2-r1", k], r["p2-r1", k], v["old-r1", k] }' $O/table.txt | sort
