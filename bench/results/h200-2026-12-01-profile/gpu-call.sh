#!/usr/bin/env bash
# Session scratch (not committed): the portable forward's time by subtraction (bench/profile-portable.sh).
set -uo pipefail
RET=$OUT; O=/tmp/o; mkdir -p $O; export OUT=$O
t0=$(date +%s)
{ which ncu nsys nv-nsight-cu-cli; ls -d /usr/local/cuda*/ /opt/nvidia/nsight* 2>&1; } > $O/profilers.txt 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > $O/nvidia-smi.txt 2>&1
(OUT=$O/off PRECS="f32 f16" ROBUST=0 timeout 260 bash bench/profile-portable.sh > $O/off.log 2>&1)
echo "off $(( $(date +%s) - t0 )) s"; tar czf $RET/all.tgz -C $O .
(OUT=$O/on PRECS="f32" ROBUST=1 timeout 150 bash bench/profile-portable.sh > $O/on.log 2>&1)
echo "on $(( $(date +%s) - t0 )) s"; tar czf $RET/all.tgz -C $O .
cat $O/profilers.txt | head -5; cat $O/off/profile-portable/table.txt $O/on/profile-portable/table.txt
