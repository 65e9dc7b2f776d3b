#!/usr/bin/env bash
# One call on the GPU host (device tool, after `bash ../shared/gpu/bundle.sh`):
#   bash .gpu/enter.sh bash bench/gpu-run.sh tests|peer|bench|all
# Logs and results go to $OUT (or bench/out when OUT is unset). TESTS limits the test files;
# BENCH_N, BENCH_D, BENCH_REPS, BENCH_RING_R, BENCH_RING_N, BENCH_LAYOUTS, BENCH_GEMM and
# BENCH_EXTRA (more bench options, e.g. "--precision f16") shape the runs (the GEMM ceiling is
# bench/ceiling/run.mjs, which takes the peer's gemm line with --peer).
set -uo pipefail
out=${OUT:-bench/out}; mkdir -p "$out"
what=${1:-all}
N=${BENCH_N:-4096,16384}; D=${BENCH_D:-64,128}
export MESA_SHADER_CACHE_DISABLE=false
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/nvidia-smi.txt"
node bin/flashring.mjs info 2>&1 | grep -v '^Warning' | tee "$out/info.txt"
if [ "$what" = tests ] || [ "$what" = all ]; then
  vitest run ${TESTS:-} 2>&1 | tee "$out/vitest.log" | grep -E "✓|×|Test Files|Tests|FAIL|paths|Error" | head -60
fi
if [ "$what" = peer ] || [ "$what" = all ] || [ "$what" = bench ]; then
  [ -f "$out/peer.json" ] || PYTHONUNBUFFERED=1 python3 bench/peers/torch_sdpa.py --N "$N" --D "$D" --heads 16 --gemm "${BENCH_GEMM:-8192}" --out "$out/peer.json" 2>&1 | tee "$out/peer.log"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  node bin/flashring.mjs bench --N "$N" --D "$D" --reps "${BENCH_REPS:-5}" --ring-R "${BENCH_RING_R:-1,2,4}" \
    --ring-N "${BENCH_RING_N:-16384}" --layouts "${BENCH_LAYOUTS:-contiguous,zigzag}" ${BENCH_EXTRA:-} \
    --peer "$out/peer.json" --out "$out" 2>&1 | grep -v '^Warning' | tee "$out/bench.log" | tail -60
fi
