#!/usr/bin/env bash
# Issue 37, short calls: how many workgroups of each pass the H200 runs at once (bench/cp.ts places), and
# what a workgroup costs beside its tiles (time against length at W = 132 and 264). Also the CLI and bench
# tests that run kernels through the command (this session's output changes) on the H200.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-places/gpu-call.sh
set -uo pipefail
O=/tmp/pl; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 200 vitest run test/cli.test.ts test/outputs.test.ts test/cp-bench.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |FAIL|×" | head -12; pack
places() {  # TAG D N H
  timeout 150 node bench/cp-run.mjs places --D "$2" --N "$3" --H "$4" --reps 10 --out "$O/$1" > "$O/$1.log" 2>&1
  echo "$1 $(el)"; grep -E '^(places:|fwd|dkdv|dq) ' "$O/$1.log" | cut -c1-400; pack
}
places w128 128 2048 33,66,99,132,133,165,198,231,264,265,330,396,397,528
places w64 64 2048 33,66,99,132,133,165,198,231,264,265,330,396,397,528
places len128 128 256,512,1024,2048,4096,8192 132,264
places len64 64 256,512,1024,2048,4096,8192 132,264
