#!/usr/bin/env bash
# Prepared 2026-12-05 (11:37 UTC session; tried 12:24–14:05 UTC, no device could be started). One device call,
# from the project root at the commit that added this folder (its shaders unchanged), carry [".gpu"]:
#   bash .gpu/enter.sh bash bench/results/wip-fma/gpu-call.sh
# The question: do the portable kernels' inner products run faster as chains of fma into the accumulators
# (one operation a product) than as a word's dot() plus an add (5 operations for 4 products)?
#   old    the project tree as it is (the shipped shaders);
#   new    edits.json's "new" over it (apply.py): the forward's P~ V, and the backward's sums over keys or rows (dV, dK, dQ), as fma chains;
#          S (forward) and S, dP (backward) as before, a word's dot() and an add: as fma chains they lost accuracy at
#          extreme logits on lavapipe (test/backward.test.ts "inputs ×30": 2.25× a plain f32 implementation's error,
#          where the limit is 1.5× and the shipped kernels give 0.8×; new gives 0.60–0.87×);
#   fmaall its "fmaall" over it: S and dP as fma chains too (timing only: what that accuracy would buy).
# edits.json holds each variant as text replacements in shaders/ (flash_fwd.wgsl scores and pv_full,
# flash_bwd_tiles.wgsl blocks and accum_full, and for fmaall a `columns` helper in common.wgsl); apply.py stops
# if an edit's old text is no longer there once, i.e. if those shaders changed since.
set -uo pipefail
O=/tmp/fma; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd); W=$root/bench/results/wip-fma
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for t in new fmaall; do
  rm -rf /tmp/$t; mkdir -p /tmp/$t; cp -r src shaders bin bench test package.json tsconfig.json vitest.config.* /tmp/$t/ 2>/dev/null
  python3 $W/apply.py $t /tmp/$t || exit 1; ln -sfn $root/node_modules /tmp/$t/node_modules
done
PYTHONUNBUFFERED=1 timeout 70 python3 bench/peers/torch_sdpa.py --N 16384 --D 64,128 --heads 16 --reps 2 --out $O/peer.json > $O/peer.log 2>&1
echo "peer $(el)"; pack
(cd /tmp/new && same_call p32-new 1 f32 FLASHRING_PATH=scalar)
same_call p32-old 1 f32 FLASHRING_PATH=scalar
(cd /tmp/new && timeout 150 vitest run test/forward.test.ts test/backward.test.ts > $O/tests.log 2>&1)
echo "tests (new) $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |^ +×|geometric" | cut -c1-200 | head -20; pack
(cd /tmp/new && same_call p16-new 1 f16 FLASHRING_PATH=scalar)
same_call p16-old 1 f16 FLASHRING_PATH=scalar
(cd /tmp/fmaall && same_call p32-fmaall 1 f32 FLASHRING_PATH=scalar)
echo "== portable, robustness on: TFLOP/s (× peer)  new / old / fmaall"
awk '{ k = $2 " " $3 " " $4; split($1, a, "-"); v[a[1] "-" a[2], k] = $6 " (" $8 ")"; keys[k] = 1 }
  END { for (k in keys) printf "%-30s p32 %s / %s / %s   p16 %s / %s\n", k, v["p32-new", k], v["p32-old", k], v["p32-fmaall", k], v["p16-new", k], v["p16-old", k] }' $O/table.txt | sort
