#!/usr/bin/env bash
# H200: flashring tune (f16 tensor-core path at N=16384, f32 portable at 4096), then the kernels with the
# tuned pins and with the defaults, in the same call as PyTorch.
set -uo pipefail
RET=$OUT; O=/tmp/o5; mkdir -p $O; S=$O/tune.json
t0=$(date +%s); el() { echo "$1 $(( $(date +%s) - t0 )) s"; }
save() { tar czf $RET/all.tgz -C $O .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
timeout 200 node bin/flashring.mjs tune --D 64,128 --precision f16 --causal false,true --N 16384 --heads 16 --reps 5 --store $S > $O/tune-f16.md 2> $O/tune-f16.log; el tune-f16; save
timeout 90 node bin/flashring.mjs tune --D 64,128 --precision f32 --causal false --N 4096 --heads 16 --reps 5 --store $S > $O/tune-f32.md 2> $O/tune-f32.log; el tune-f32; save
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 3 --out $O/peer.json > $O/peer.log 2>&1; el peer
for v in default tuned; do
  extra=""; [ $v = tuned ] && extra="--tuned $S"
  timeout 80 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D 64,128 --precision f16 --reps 5 \
    --no-ring --no-memory --peer $O/peer.json --out $O/$v $extra 2>&1 | grep -v '^Warning' > $O/$v.log; el $v; save
done
cat $O/tune-f16.md $O/tune-f32.md | grep '^|'
for v in default tuned; do f=$(ls $O/$v/*-kernels.csv 2>/dev/null | head -1)
  [ -n "$f" ] && awk -F, -v t=$v 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-8s %-8s D%-4s causal=%-5s %7.2f %.3f\n", t, $c["pass"], $c["D"], $c["causal"], $c["tflops"], $c["ratio"] }' "$f"; done
true
