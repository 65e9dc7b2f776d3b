#!/usr/bin/env bash
# Issue 37, after gpu-call.sh: the short calls' cost against a workgroup's length at a fixed grid
# (256 workgroups a pass: N/128 blocks × H heads), dense f16 D = 128, the shipped kernels.
#   bash .gpu/enter.sh bash bench/results/2026-12-03-bwd-buffers-h200/length-call.sh
set -uo pipefail
O=/tmp/len; mkdir -p $O; t0=$(date +%s)
date -u +%FT%TZ > $O/date.txt
for nh in 2048:16 4096:8 8192:4 16384:2 4096:16; do
  N=${nh%:*}; H=${nh#*:}; tag=len-n$N-h$H
  FLASHRING_ROBUST=0 timeout 40 node bin/flashring.mjs bench --N $N --heads $H --batch 1 --causal false --D 128 \
    --precision f16 --reps 5 --no-ring --no-memory --out $O/$tag > $O/$tag.log 2>&1
  f=$(ls $O/$tag/*-kernels.csv 2>/dev/null | head -1)
  [ -n "$f" ] && awk -F, -v T=$tag 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-16s %-8s %7.2f\n", T, $c["pass"], $c["tflops"] }' "$f" >> $O/table.txt
  echo "$tag $(( $(date +%s) - t0 )) s"
done
tar czf $OUT/len.tgz -C $O .
cat $O/table.txt
