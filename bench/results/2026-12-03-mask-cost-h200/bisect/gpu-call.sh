#!/usr/bin/env bash
# Bisect the tensor-core forward's drop (96.4 TFLOP/s on 2026-12-01 at 077265c -> 78.4 on 2026-12-02):
# each commit's tree (scratch/bisect/<sha>) benched the same way, base and HEAD at both ends.
set -uo pipefail
O=$OUT; mkdir -p $O/logs
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > $O/gpu.txt 2>&1
date -u +%FT%TZ > $O/date.txt
root=$(pwd); [ -d scratch/bisect ] || tar -xJf scratch/bisect.tar.xz -C scratch
PYTHONUNBUFFERED=1 timeout 80 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 3 --out $O/peer.json > $O/logs/peer.log 2>&1
echo "peer done $(date -u +%T)"
run() { # $1 sha, $2 tag
  local s=$1 tag=$2
  (cd scratch/bisect/$s && FLASHRING_ROBUST=0 timeout 100 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false \
     --D ${DS:-128,64} --precision f16 --reps 3 --no-ring --no-memory --out /tmp/bis/$tag > $O/logs/$tag.log 2>&1)
  f=$(ls /tmp/bis/$tag/*-kernels.csv 2>/dev/null | head -1)
  if [ -n "$f" ]; then
    awk -F, -v T=$tag 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["pass"]=="fwd" || $c["pass"]=="fwd+bwd" { printf "%-16s %-8s D%-4s %7.2f %s\n", T, $c["pass"], $c["D"], $c["tflops"], $c["checkErr"] }' "$f" | tee -a $O/table.txt
  else echo "$tag FAILED" | tee -a $O/table.txt; tail -3 $O/logs/$tag.log; fi
}
for s in ${SHAS:-077265c b53e6fb 411d6c1 0fbccf0 fbb2f0a c3504ac d383fb0 bb22266 3a09826 fc90fda 2b7086d ceccbf4}; do run $s $s; done
run 077265c 077265c-again
run b53e6fb b53e6fb-again
echo "== peer (FlashAttention-2 fwd)"; python3 -c "
import json; r=json.load(open('$O/peer.json'))['results']
for x in r:
  if x.get('backend')=='flash' and x['pass']=='fwd': print(x['D'], x['causal'], round(x['tflops'],1))
"
cat $O/table.txt
