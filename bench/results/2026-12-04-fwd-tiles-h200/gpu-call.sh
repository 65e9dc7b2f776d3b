#!/usr/bin/env bash
# After ../wip-fwd-bytes (the tensor-core forward at D = 64 20% faster with its S and P blocks aliased to 13344
# workgroup bytes, 1.59x slower with 2688 bytes more): the forward's existing tiles at D = 64, pinned
# (FLASHRING_SGMM_FWD = SGxTxRB), whose bytes differ: 4x16x2 21536 (the default), 4x16x1 and 2x16x2 13088, 2x16x1
# 8864, 8x16x1 21536, 4x32x1 23840, 8x16x2 and 8x32x1 38432. p2p's steps bench (N = 16384, causal f16, H16;
# R = 1 line: forward, dkdv, dq ms), robustness off, then the three fastest shapes with robustness on. Then the
# portable forward's P~ aliased to half (timing only, f16 storage through FLASHRING_PATH=scalar: 30976 bytes
# against 40192) beside the tree.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-fwd-tiles/gpu-call.sh (this folder was then wip-fwd-tiles)
set -uo pipefail
O=/tmp/fwdtiles; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
for t in 4x16x2 4x16x1 2x16x2 2x16x1 8x16x1 4x32x1 8x16x2 8x32x1; do (export FLASHRING_SGMM_FWD=$t; steps t$t 64 2); done
for t in 4x16x2 4x16x1 2x16x2 2x16x1; do (export FLASHRING_SGMM_FWD=$t FLASHRING_ROBUST=1; steps r$t 64 2); done
echo "== R=1 ms: forward dkdv dq"; r1_table; pack
mkdir -p /tmp/v-phalf && tar --exclude=./node_modules --exclude=./.gpu --exclude=./bench/results -cf - . | tar -xf - -C /tmp/v-phalf
ln -sfn $root/node_modules /tmp/v-phalf/node_modules
sed -i 's#var<workgroup> Ps: array<array<vec4<f32>, PS>, BR>;#var<workgroup> Ps: array<array<vec4<f32>, PS>, BR / 2u>;#; s#Ps\[ty + {{rr}}u \* TY\]#Ps[(ty + {{rr}}u * TY) / 2u]#g' /tmp/v-phalf/shaders/flash_fwd.wgsl
(export FLASHRING_PATH=scalar; steps pbase 64 2)
(cd /tmp/v-phalf && export FLASHRING_PATH=scalar && steps phalf 64 2)
echo "== R=1 ms: forward dkdv dq"; r1_table; pack
