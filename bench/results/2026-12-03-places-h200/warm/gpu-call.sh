#!/usr/bin/env bash
# Issue 37: the places at D = 128 again, warm. The first sweep of ../2026-12-03-places-h200 (w128) ran at low
# clocks, so its step at W = 133 is not a measurement to lean on. Each sweep here runs twice back to back
# (the first warms the GPU), with the step read off by bench/cpPlaces.ts placesOf.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-places2/gpu-call.sh
set -uo pipefail
O=/tmp/pl2; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
places() {  # TAG D N H
  timeout 120 node bench/cp-run.mjs places --D "$2" --N "$3" --H "$4" --reps 20 --out "$O/$1" > "$O/$1.log" 2>&1
  echo "$1 $(el)"; grep -E '^(places:|fwd|dkdv|dq) ' "$O/$1.log" | cut -c1-400; pack
}
places d128-warmup 128 2048 66,128,132,133,136,198,264,265
places d128 128 2048 66,128,132,133,136,198,264,265
places d64 64 2048 66,128,132,133,264,265,266,396
