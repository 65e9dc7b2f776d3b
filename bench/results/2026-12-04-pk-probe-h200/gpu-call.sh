#!/usr/bin/env bash
# Issue 37 item 3, a timing probe before building it: the portable forward (robustness on, as browsers run it) with
# f16 storage, its products summed in packed f16 (FLASHRING_PROBE_PK = s: S = Q Kᵀ; sv: and P~ V) against f32
# products (this tree without the probe, and the shipped tree 2a9cfec from /tmp/old), and the f32 forward; then the
# shipped tensor-core kernels (same text as 2a9cfec) in the same call, robustness off and on; p2p's steps at D = 128;
# the float64 tests on the H200. Same call: N = 16384, B1 H16, D 64 and 128, causal and not, PyTorch 2.11 first.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-pk/gpu-call.sh (this folder was then wip-pk)
set -uo pipefail
O=/tmp/pk; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
mkdir -p /tmp/old && tar xzf .gpu/old-tree.tgz -C /tmp/old && ln -sfn $root/node_modules /tmp/old/node_modules
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
same_call pk-none 1 f16 FLASHRING_PATH=scalar
same_call pk-s 1 f16 FLASHRING_PATH=scalar FLASHRING_PROBE_PK=s
same_call pk-sv 1 f16 FLASHRING_PATH=scalar FLASHRING_PROBE_PK=sv
(cd /tmp/old && same_call shipped-f16 1 f16 FLASHRING_PATH=scalar)
same_call pk-sv-b 1 f16 FLASHRING_PATH=scalar FLASHRING_PROBE_PK=sv
same_call shipped-f32 1 f32 FLASHRING_PATH=scalar
echo "== portable fwd, robust on: f16 none / s / sv / shipped / sv again (TFLOP/s)"
awk '$2 == "fwd" { k = $3 " " $4; v[$1, k] = $6; keys[k] = 1 } END { for (k in keys) printf "%-20s %s %s %s %s %s | f32 %s\n", k, v["pk-none", k], v["pk-s", k], v["pk-sv", k], v["shipped-f16", k], v["pk-sv-b", k], v["shipped-f32", k] }' $O/table.txt | sort | tee $O/pk.txt
same_call tc-r0 0 f16
same_call tc-r1 1 f16
steps p2p 128 2,4,8
pack
timeout 150 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/robust.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|bitwise identical" | head -12; pack
echo "== portable"; cat $O/pk.txt
echo "== tensor cores"; grep "^tc-" $O/table.txt
