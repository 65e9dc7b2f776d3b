#!/usr/bin/env bash
# Issue 37 (ran 2026-12-03, 15:38 UTC: README.md here): what a tensor-core backward workgroup costs outside its tile loop. The short
# calls pay F = 0.196 ms a backward per 32768 rows (bench/results/2026-12-03-bwd-buffers-h200), and
# pipelining the prologue did not move it (bench/results/2026-12-03-prologue-h200). p2p's steps at R = 8
# show dkdv and dq each about 0.09 ms over R = 1's rate per call. variants.py makes timing-only copies
# of shaders/flash_bwd_sgmm.wgsl and flash_fwd_sgmm.wgsl (wrong results by design): `zero` runs no tiles (prologue + epilogue),
# `zero-noep` no tiles and no global writes, `one` one tile. Each is copied over the shader and the
# steps bench (no result check) times dkdv and dq per pass at R = 1 (2048 workgroups a pass) and
# R = 2, 4, 8 (down to 256); main's shader first and last. Then main's shader is put back.
# Ran on the H200 from the project root on branch wip/fixed-cost (main at 067df0e plus this folder, then named wip-fixed-cost):
#   bash .gpu/enter.sh bash bench/results/wip-fixed-cost/gpu-call.sh
set -uo pipefail
S=bench/results/wip-fixed-cost; O=/tmp/fc; mkdir -p $O; t0=$(date +%s)
el() { echo "$(( $(date +%s) - t0 )) s"; }
pack() { tar czf $OUT/all.tgz -C $O . ; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
cp shaders/flash_bwd_sgmm.wgsl $O/base.wgsl; cp shaders/flash_fwd_sgmm.wgsl $O/base-fwd.wgsl
python3 $S/variants.py $O/base.wgsl $O/base-fwd.wgsl $O || { echo "variants.py failed"; exit 1; }
v() { # tag, backward shader file (the forward's is its -fwd twin)
  cp "$2" shaders/flash_bwd_sgmm.wgsl; cp "${2%.wgsl}-fwd.wgsl" shaders/flash_fwd_sgmm.wgsl
  timeout 90 node bench/cp-run.mjs steps --N 16384 --R 2,4,8 --out $O/steps-$1 2>&1 | grep -v '^Warning' > $O/steps-$1.log
  echo "$1 $(el)"; grep -E '^(1|2|4|8) ' $O/steps-$1.log | head -12 | awk '{ print "  " $0 }'; pack
}
v base $O/base.wgsl; v zero $O/zero.wgsl; v zero-noep $O/zero-noep.wgsl; v one $O/one.wgsl; v base2 $O/base.wgsl
v64() { cp "$2" shaders/flash_bwd_sgmm.wgsl; cp "${2%.wgsl}-fwd.wgsl" shaders/flash_fwd_sgmm.wgsl
  timeout 90 node bench/cp-run.mjs steps --N 16384 --D 64 --R 8 --out $O/steps64-$1 2>&1 | grep -v '^Warning' > $O/steps64-$1.log
  echo "D64 $1 $(el)"; grep -E '^(1|8) ' $O/steps64-$1.log | head -6 | awk '{ print "  " $0 }'; pack
}
v64 base $O/base.wgsl; v64 zero $O/zero.wgsl
cp $O/base.wgsl shaders/flash_bwd_sgmm.wgsl; cp $O/base-fwd.wgsl shaders/flash_fwd_sgmm.wgsl
echo "R  step  count | fwd ms: base zero zero-noep one base2 | dkdv ms: base zero zero-noep one base2 | dq ms: base zero zero-noep one base2" > $O/table.txt
for k in "1  R=1" "2  diagonal" "4  j<r" "8  diagonal" "8  j<r" "8  j>r"; do
  R=${k%% *}; K=${k#* }; K=${K# }
  line="$R $K |"; for t in base zero zero-noep one base2; do line="$line $(awk -v R=$R -v K="$K" '$1 == R && $2 == K { print $4; exit }' $O/steps-$t.log)"; done
  line="$line |"; for t in base zero zero-noep one base2; do line="$line $(awk -v R=$R -v K="$K" '$1 == R && $2 == K { print $6; exit }' $O/steps-$t.log)"; done
  line="$line |"; for t in base zero zero-noep one base2; do line="$line $(awk -v R=$R -v K="$K" '$1 == R && $2 == K { print $7; exit }' $O/steps-$t.log)"; done
  echo "$line" >> $O/table.txt
done
pack; cat $O/table.txt
