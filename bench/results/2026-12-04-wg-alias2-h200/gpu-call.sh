#!/usr/bin/env bash
# Is ../wip-wg-alias's PS variant (S and dP in one array, P and dS in one: 12960 workgroup bytes at D = 64 4x16, results
# wrong by design) faster for its bytes or for its aliasing? The same variant with Qs grown by XH halves (unused bytes
# back), p2p's steps bench at D = 64 (R = 1 line: forward, dkdv, dq ms).
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-wg-alias2/gpu-call.sh
set -uo pipefail
O=/tmp/wgalias2; mkdir -p $O; source bench/gpu-lib.sh
root=$(pwd)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
variant() {   # variant XH: the PS variant with Qs grown by XH halves
  mkdir -p /tmp/ps$1 && tar --exclude=./node_modules --exclude=./.gpu --exclude=./bench/results -cf - . | tar -xf - -C /tmp/ps$1
  ln -sfn $root/node_modules /tmp/ps$1/node_modules
  python3 bench/results/wip-wg-alias/alias.py /tmp/ps$1/shaders/flash_bwd_sgmm.wgsl PS >> $O/alias.txt
  sed -i "s/^var<workgroup> Qs: array<array<f16, 16u \* DP>, RB>;/var<workgroup> Qs: array<array<f16, 16u * DP + $1u>, RB>;/" /tmp/ps$1/shaders/flash_bwd_sgmm.wgsl
  grep -c "16u \* DP + $1u>" /tmp/ps$1/shaders/flash_bwd_sgmm.wgsl >> $O/patched.txt
}
for XH in 0 1024 2048 2560 3072 4096; do variant $XH; (cd /tmp/ps$XH && steps ps$XH 64 2); done
steps base 64 2
echo "== R=1 ms: forward dkdv dq"
for f in $O/steps*.log; do
  awk -v T=$(basename $f .log) '$1 == 1 && $2 == "R=1" { r1 = sprintf("%s %s %s", $4, $5, $6) } END { printf "%-16s %s\n", T, r1 }' $f
done | tee $O/r1.txt
pack
