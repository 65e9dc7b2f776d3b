#!/usr/bin/env bash
# Workgroup memory against speed (after ../wip-bwd-pipe2: PIPE 0's code with a second buffer's bytes allocated and
# unused ran dkdv 1.8x and dq 1.6x slower at D = 64). p2p's steps bench (N = 16384, causal f16, H16; R = 1 line:
# forward, dkdv, dq ms apart) on this tree and on copies whose Qs array holds XH more halves (unused; Qs is staged
# by run-time index in both backward kernels, so the allocation stays), and with FLASHRING_SGMM_PAD=0 (unpadded
# rows: fewer bytes, more bank conflicts). D = 64 (4x16 backward, 4x16x2 forward), then D = 128.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-wg-bytes/gpu-call.sh
set -uo pipefail
O=/tmp/wgbytes; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
variant() {   # variant XH: a copy of the tree with Qs grown by XH halves
  mkdir -p /tmp/x$1 && tar --exclude=./node_modules --exclude=./.gpu --exclude=./bench/results -cf - . | tar -xf - -C /tmp/x$1
  ln -sfn $root/node_modules /tmp/x$1/node_modules
  sed -i "s/^var<workgroup> Qs: array<array<f16, 16u \* DP>, RB>;/var<workgroup> Qs: array<array<f16, 16u * DP + $1u>, RB>;/" /tmp/x$1/shaders/flash_bwd_sgmm.wgsl
  grep -c "16u \* DP + $1u>" /tmp/x$1/shaders/flash_bwd_sgmm.wgsl >> $O/patched.txt
}
steps base 64 2
for XH in 256 512 1024 1536 2048 3072 4096 8192; do variant $XH; (cd /tmp/x$XH && steps x$XH 64 2); done
(export FLASHRING_SGMM_PAD=0; steps pad0 64 2)
steps base2 64 2
steps base 128 2
(export FLASHRING_SGMM_PAD=0; steps pad0 128 2)
echo "== R=1 ms: forward dkdv dq"
for f in $O/steps*.log; do
  awk -v T=$(basename $f .log) '$1 == 1 && $2 == "R=1" { r1 = sprintf("%s %s %s", $4, $5, $6) } END { printf "%-16s %s\n", T, r1 }' $f
done | tee $O/r1.txt
pack
