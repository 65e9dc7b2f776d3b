#!/usr/bin/env bash
# H200: the shader refactor (bindings from tables, store_rows / write_block / rare_block /
# resident_rows / resident_products) against the float64 tests, then the tensor-core kernels'
# speed in the same call as PyTorch (regression check against 2026-12-01's figures).
set -uo pipefail
RET=$OUT; O=/tmp/o4; mkdir -p $O
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
timeout 240 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/bindings.test.ts > $O/tests.log 2>&1
echo "tests $(( $(date +%s) - t0 )) s"; grep -E "Test Files|Tests |FAIL" $O/tests.log | sed 's/\x1b\[[0-9;]*m//g' | head
PYTHONUNBUFFERED=1 timeout 90 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 3 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(( $(date +%s) - t0 )) s"
timeout 150 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D 64,128 --precision f16 --reps 5 \
  --no-ring --no-memory --peer $O/peer.json --out $O/tc 2>&1 | grep -v '^Warning' > $O/tc.log
echo "bench $(( $(date +%s) - t0 )) s"
tar czf $RET/all.tgz -C $O .
f=$(ls $O/tc/*-kernels.csv 2>/dev/null | head -1)
[ -n "$f" ] && awk -F, 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-8s D%-4s causal=%-5s %-6s %7.2f %s %.3f %s\n", $c["pass"], $c["D"], $c["causal"], $c["path"], $c["tflops"], $c["peerBackend"], $c["ratio"], $c["checkErr"] }' "$f"
true
