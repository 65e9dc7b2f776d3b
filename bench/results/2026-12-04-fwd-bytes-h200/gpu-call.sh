#!/usr/bin/env bash
# Timing-only probes: do the forwards sit on the workgroup-memory steps the backward showed (../2026-12-04-wg-bytes-h200,
# ../2026-12-04-wg-alias2-h200)? Copies of the tree with bytes added (unused, to an array indexed at run time so the
# allocation stays) or removed by aliasing (two groups' S and P blocks, or two rows of P~, share memory: wrong
# outputs, the same work). Tensor-core forward (D = 64, 4x16x2, 21536 bytes): p2p's steps bench, R = 1 forward ms.
# Portable forward (f32 128x32, 41472 bytes; f16 40192): the kernel bench, robustness on, N = 16384, H16.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-fwd-bytes/gpu-call.sh (this folder was then wip-fwd-bytes)
set -uo pipefail
O=/tmp/fwdbytes; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
variant() {   # variant NAME FILE SED-SCRIPT: a copy of the tree with shaders/FILE patched
  mkdir -p /tmp/v-$1 && tar --exclude=./node_modules --exclude=./.gpu --exclude=./bench/results -cf - . | tar -xf - -C /tmp/v-$1
  ln -sfn $root/node_modules /tmp/v-$1/node_modules
  sed -i "$3" /tmp/v-$1/shaders/$2
  echo "$1: $(diff <(cat shaders/$2) /tmp/v-$1/shaders/$2 | grep -c '^>') lines changed" | tee -a $O/patched.txt
}
TC=flash_fwd_sgmm.wgsl
ALIAS='s#array<array<f32, SROWS \* SS>, BR / SROWS>#array<array<f32, SROWS * SS>, BR / SROWS / 2u>#; s#array<array<f16, SROWS \* PS>, BR / SROWS>#array<array<f16, SROWS * PS>, BR / SROWS / 2u>#; s#S\[grp\]#S[grp / 2u]#g; s#Pm\[grp\]#Pm[grp / 2u]#g'
grow() { echo "s#var<workgroup> Ks: array<array<f16, 16u \* DP>, CB>;#var<workgroup> Ks: array<array<f16, 16u * DP + $1u>, CB>;#"; }
variant x1344 $TC "$(grow 1344)"
variant x1856 $TC "$(grow 1856)"
variant alias $TC "$ALIAS"
variant alias832 $TC "$ALIAS; $(grow 832)"
variant alias1856 $TC "$ALIAS; $(grow 1856)"
steps base 64 2
for v in x1344 x1856 alias alias832 alias1856; do (cd /tmp/v-$v && steps $v 64 2); done
echo "== R=1 ms: forward dkdv dq"; r1_table; pack
PT=flash_fwd.wgsl
variant pgrow14 $PT 's#var<workgroup> Qs: array<array<vec4<ST>, CS>, BR>;#var<workgroup> Qs: array<array<vec4<ST>, CS>, BR + 14u>;#'
variant pgrow42 $PT 's#var<workgroup> Qs: array<array<vec4<ST>, CS>, BR>;#var<workgroup> Qs: array<array<vec4<ST>, CS>, BR + 42u>;#'
variant phalf $PT 's#var<workgroup> Ps: array<array<vec4<f32>, PS>, BR>;#var<workgroup> Ps: array<array<vec4<f32>, PS>, BR / 2u>;#; s#Ps\[ty + {{rr}}u \* TY\]#Ps[(ty + {{rr}}u * TY) / 2u]#g'
variant pquarter $PT 's#var<workgroup> Ps: array<array<vec4<f32>, PS>, BR>;#var<workgroup> Ps: array<array<vec4<f32>, PS>, BR / 4u>;#; s#Ps\[ty + {{rr}}u \* TY\]#Ps[(ty + {{rr}}u * TY) / 4u]#g'
pbench() {   # pbench TAG PREC D: the portable kernels' bench, robustness on
  FLASHRING_ROBUST=1 FLASHRING_PATH=scalar timeout 90 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false \
    --D "$3" --precision "$2" --reps 3 --no-ring --no-memory --out "$O/p-$1-$2-$3" > "$O/p-$1-$2-$3.log" 2>&1
  echo "p $1 $2 D$3 $(el): $(grep -E '^fwd +16384' "$O/p-$1-$2-$3.log" | head -1)" | tee -a $O/ptable.txt
}
pbench base f32 64
for v in pgrow14 pgrow42 phalf pquarter; do (cd /tmp/v-$v && pbench $v f32 64); done
pbench base f16 64
(cd /tmp/v-phalf && pbench phalf f16 64)
pbench base f32 128
(cd /tmp/v-phalf && pbench phalf f32 128)
pack
echo "== tensor-core forward R=1 ms: forward dkdv dq"; cat $O/r1.txt
echo "== portable (robustness on)"; cat $O/ptable.txt
