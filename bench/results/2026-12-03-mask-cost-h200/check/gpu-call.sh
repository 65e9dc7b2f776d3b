#!/usr/bin/env bash
# After the mask-cost fix, on the H200 (short: little device time left): the float64 tests on the
# tensor-core path, then the same-call figures with robustness on, then p2p's short calls.
# $OUT/all.tgz is rewritten after each stage, so a cut run still returns what finished.
set -uo pipefail
O=/tmp/chk; mkdir -p $O; t0=$(date +%s)
el() { echo "$(( $(date +%s) - t0 )) s"; }
pack() { tar czf $OUT/all.tgz -C $O . ; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 110 vitest run test/forward.test.ts test/backward.test.ts test/nan.test.ts test/launch-order.test.ts test/ring-mask.test.ts test/mask.test.ts test/mask-helpers.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |FAIL" | head -8; pack
PYTHONUNBUFFERED=1 timeout 60 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
b() { # tag, robust, precisions, extra env
  local tag=$1 rob=$2 precs=$3; shift 3
  env FLASHRING_ROBUST=$rob "$@" timeout 70 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D 64,128 \
    --precision $precs --reps 3 --no-ring --no-memory --peer $O/peer.json --out $O/$tag > $O/$tag.log 2>&1
  echo "$tag $(el)"; pack
  f=$(ls $O/$tag/*-kernels.csv 2>/dev/null | head -1); [ -n "$f" ] && awk -F, -v T=$tag 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next } { printf "%-11s %-8s D%-4s causal=%-5s %s %7.2f %s %.3f %s\n", T, $c["pass"], $c["D"], $c["causal"], $c["precision"], $c["tflops"], $c["peerBackend"], $c["ratio"], $c["checkErr"] }' "$f"
}
b tc-r1 1 f16
b portable-r1 1 f32 FLASHRING_PATH=scalar
timeout 45 node bench/cp-run.mjs steps --N 16384 --R 2,4,8 --out $O/steps 2>&1 | grep -v '^Warning' > $O/steps.log
echo "steps $(el)"; pack; tail -14 $O/steps.log
# Last (cut first if time runs out): the D = 64 backward with a longer streamed tile, now that a tile's fixed cost is lower.
for pin in 4x32 8x16; do
  FLASHRING_ROBUST=0 FLASHRING_SGMM_BWD=$pin timeout 40 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false --D 64 \
    --precision f16 --reps 3 --no-ring --no-memory --out $O/bwd-$pin > $O/bwd-$pin.log 2>&1
  echo "bwd-$pin $(el)"; pack; grep -E "^(fwd|bwd)" $O/bwd-$pin.log
done
