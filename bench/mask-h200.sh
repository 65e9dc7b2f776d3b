#!/usr/bin/env bash
# Masks (issue 21) on the GPU host, one call:
#   bash .gpu/enter.sh bash bench/mask-h200.sh
# 1. the mask tests on the H200: test/mask.test.ts runs every mask kind on the portable kernels
#    and, asked for explicitly, on the tensor-core kernels (f16); test/ring-mask.test.ts the ring.
# 2. bench/mask.ts: causal, window (W, 0) with W=4096, f16, H=16, D=128, N=16384..131072, portable
#    and tensor-core paths, forward and backward time per token (flat = work N·W); then 16
#    documents of 4096 tokens packed (cu_seqlens) against one 4096-token document × 16.
#    Each path is first checked against the float64 reference (f16 contract) or not timed.
# Raw JSON (mask.json) and logs under $OUT (or bench/out); the table last.
set -uo pipefail
out=${OUT:-bench/out}; mkdir -p "$out"
export MESA_SHADER_CACHE_DISABLE=false
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/nvidia-smi.txt"
timeout "${TEST_TIMEOUT_S:-240}" vitest run test/mask.test.ts test/ring-mask.test.ts 2>&1 | tee "$out/mask-tests.log" \
  | grep -E "✓|×|Test Files|Tests|FAIL|mask tests on|Error" | head -40
timeout "${BENCH_TIMEOUT_S:-300}" node bench/mask-run.mjs --out "$out" --N "${MASK_N:-16384,32768,65536,131072}" \
  --window "${MASK_W:-4096}" --doc "${MASK_DOC:-4096}" --docs "${MASK_DOCS:-16}" --reps "${MASK_REPS:-3}" \
  2>&1 | grep -v '^Warning' | tee "$out/mask-bench.log" | tail -20
