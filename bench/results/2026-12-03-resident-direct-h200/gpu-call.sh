#!/usr/bin/env bash
# Issue 37 (ran 2026-12-03, 16:03 UTC: README.md here): the tensor-core backward's resident rows (dkdv: K, V; dq: Q, dO) loaded from
# storage straight into subgroup matrices (branch wip/resident-direct: FLASHRING_SGMM_RESIDENT=direct,
# the default where the device binds 14 storage buffers) against the staged prologue as shipped
# (=staged: through workgroup memory, 16 rows a round, two barriers each, 8 rounds at SG = 8). Also
# `nopro` (variants.py: the resident rows not loaded at all; wrong results by design): how much of a
# short call's cost the prologue can be at most. staged first and last; same-call bench at N = 16384
# (not accumulating), p2p's steps at D = 128 (R = 2, 4, 8) and D = 64 (R = 8); then the float64 tests
# with the default (direct).
# Ran on the H200 from the project root on branch wip/resident-direct (main at 9da01cd plus its commit; this folder then named wip-resident-direct):
#   bash .gpu/enter.sh bash bench/results/wip-resident-direct/gpu-call.sh
set -uo pipefail
S=bench/results/wip-resident-direct; O=/tmp/rd; mkdir -p $O; t0=$(date +%s)
el() { echo "$(( $(date +%s) - t0 )) s"; }
pack() { tar czf $OUT/all.tgz -C $O . ; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
node --import tsx -e "import('./src/gpu/node.ts').then(async (m) => { const a = await (await m.nodeGPU()).requestAdapter(); console.log('maxStorageBuffersPerShaderStage', a.limits.maxStorageBuffersPerShaderStage); process.exit(0); })" > $O/limits.txt 2>&1
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; cat $O/limits.txt | tail -1; pack
row() { local f; f=$(ls $O/$1/*-kernels.csv 2>/dev/null | head -1)
  if [ -n "$f" ]; then awk -F, -v T=$1 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-8s %-8s H%-4s N%-6s D%-4s causal=%-5s %7.2f %.3f %s %s\n", T, $c["pass"], $c["H"], $c["N"], $c["D"], $c["causal"], $c["tflops"], $c["ratio"], $c["checkErr"], $c["tiles"] }' "$f" >> $O/table.txt
  else echo "$1 FAILED" >> $O/table.txt; tail -3 $O/$1.log; fi; }
steps() { # tag, D, R list
  timeout 90 node bench/cp-run.mjs steps --N 16384 --D $2 --R $3 --out $O/steps$2-$1 2>&1 | grep -v '^Warning' > $O/steps$2-$1.log
  echo "  steps D$2 $1 $(el)"; grep -E '^(2|4|8) +[0-9]' $O/steps$2-$1.log | tail -3 | awk '{ print "  " $0 }'; }
v() { # tag, FLASHRING_SGMM_RESIDENT
  export FLASHRING_SGMM_RESIDENT=$2
  FLASHRING_ROBUST=0 timeout 80 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D 64,128 \
    --precision f16 --reps 3 --no-ring --no-memory --peer $O/peer.json --out $O/$1 > $O/$1.log 2>&1; row $1
  steps $1 128 2,4,8; steps $1 64 8; echo "$1 $(el)"; pack; unset FLASHRING_SGMM_RESIDENT
}
v staged staged; v direct direct
cp shaders/flash_bwd_sgmm.wgsl $O/main-bwd.wgsl
python3 $S/variants.py $O/main-bwd.wgsl $O && cp $O/nopro.wgsl shaders/flash_bwd_sgmm.wgsl && FLASHRING_SGMM_RESIDENT=staged steps nopro 128 2,4,8
cp $O/nopro-zero.wgsl shaders/flash_bwd_sgmm.wgsl && FLASHRING_SGMM_RESIDENT=staged steps nopro-zero 128 2,4,8
cp $O/main-bwd.wgsl shaders/flash_bwd_sgmm.wgsl; pack
v staged2 staged
timeout 170 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/ring-mask.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |FAIL" | head -8; pack
echo "steps (R: ring ms, plain ms, R=1 ms | ring/plain, plain/R=1, ring/R=1):"
for f in $O/steps*.log; do echo "$(basename $f .log): $(grep -E '^(1|2|4|8) +[0-9.]+ +[0-9.]+ +[0-9.]+ +\|' $f | awk '{ printf "[%s %s %s | %s] ", $1, $2, $4, $NF }')"; done
sort -k2,2 -k3,3 -k4,4 -k5,5 -k6,6 -k1,1 $O/table.txt | cut -c1-110
