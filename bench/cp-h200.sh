#!/usr/bin/env bash
# Context parallelism v2 on the GPU host, one call, at most TOTAL_S (default 470 s, under 8 minutes):
#   bash .gpu/enter.sh bash bench/cp-h200.sh
# 1. scale (first, so its result never waits on the sweep): exact forward+backward at
#    N=1,048,576 (causal f16, H=8, D=128, R=8, p2p zigzag, one-device; about 56 GiB on the GPU),
#    sampled rows checked against the single-device kernel. Its ring took 198 s (272 s with setup
#    and the check) on 2026-12-01 (bench/results/cp-h200-2026-12-01-v4); it gets SCALE_TIMEOUT_S
#    (default 360 s), N stays 1M.
# 2. where p2p's time goes (about 20 s): `bench/cp-run.mjs steps --N 16384 --R 2,4,8`, each kind of
#    zigzag step as the ring encodes it beside the single-device kernel on the same work.
# 3. one-device sweep with the time left: N=16384 causal f16, H=16, D=128, R=1 (once: the baseline
#    of every scheme), then R=2,4,8 × p2p (zigzag), all_gather, a2a; each point warmed up (>= 1 s of
#    the same run) and the median of 5 runs, each after an R=1 run (paired ratios; a sixth checked): summed GPU kernel time vs R=1, every result checked
#    against R=1, the link model's prediction for nvlink-h200 (step times, comm fraction, TFLOP/s
#    per GPU), peak bytes per rank. A point that would end past the budget is skipped and named;
#    the JSON is rewritten after every point, so a cut run still leaves its table.
#    Pipelined, each run behind ~0.3 s of untimed work: the H200's SM clock follows the load
#    (345 MHz idle, 480–1530 MHz under a bursty one), so clocks.csv logs it (nvidia-smi, 100 ms).
# Raw JSON (cp-scale.json, cp-sweep.json, a timeline) and logs under $OUT (or bench/out); the table last.
set -uo pipefail
out=${OUT:-bench/out}; mkdir -p "$out"
start=$(date +%s)
total=${TOTAL_S:-470}
export MESA_SHADER_CACHE_DISABLE=false
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$out/nvidia-smi.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,utilization.gpu --format=csv -lms 100 > "$out/clocks.csv" 2>&1 &
clocks=$!
trap 'kill $clocks 2>/dev/null' EXIT
timeout "${SCALE_TIMEOUT_S:-360}" node bench/cp-run.mjs scale --N "${SCALE_N:-1048576}" --H 8 --D 128 --R 8 --gpu-gib 139 \
  --out "$out" 2>&1 | grep -v '^Warning' | tee "$out/cp-scale.log" | grep '^scale:' | head -5
timeout 60 node bench/cp-run.mjs steps --N "${SWEEP_N:-16384}" --R 2,4,8 --out "$out" 2>&1 | grep -v '^Warning' > "$out/cp-steps.log"
scale_s=$(( $(date +%s) - start ))
left=$(( total - scale_s - 10 ))   # 10 s for the table
echo "scale and steps: ${scale_s} s; the sweep gets ${left} s"
if (( left >= 30 )); then
  timeout "$left" node bench/cp-run.mjs sweep --N "${SWEEP_N:-16384}" --H 16 --D 128 --R 1,2,4,8 --budget-s $(( left - 12 )) --out "$out" \
    2>&1 | grep -v '^Warning' | tee "$out/cp-sweep.log" | grep '^sweep R='
else
  echo "sweep: not run (${left} s left of ${total} s)" | tee "$out/cp-sweep.log"
fi
echo; echo "== context parallelism v2 on the H200 ($(( $(date +%s) - start )) s) =="
node bench/cp-run.mjs table --out "$out" 2>&1 | grep -v '^Warning'
grep -v '^steps R=' "$out/cp-steps.log"
