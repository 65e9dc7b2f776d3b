#!/usr/bin/env bash
# Issue 37: the tensor-core backward's direct epilogue for f32 gradients (the ring's), checked and measured.
# The float64 tests on the H200 (ring with both epilogues, NaN, backward, launch order, the benches' tests),
# then p2p's steps with the direct epilogue (the default) and the staged one pinned, alternating, at D = 128
# and D = 64; then each pass's fixed cost at D = 128 (places, W = 264 over L = 256 … 8192) with each.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-direct/gpu-call.sh
set -uo pipefail
O=/tmp/dir; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
timeout 240 vitest run test/ring.test.ts test/nan.test.ts test/backward.test.ts test/launch-order.test.ts test/cp-bench.test.ts > $O/tests.log 2>&1
echo "tests $(el)"; sed 's/\x1b\[[0-9;]*m//g' $O/tests.log | grep -E "Test Files|Tests  |FAIL|×" | head -12; pack
steps direct 128 2,4,8; FLASHRING_SGMM_EPILOGUE=staged steps staged 128 2,4,8; steps direct2 128 2,4,8
steps direct 64 2,4,8; FLASHRING_SGMM_EPILOGUE=staged steps staged 64 2,4,8; pack
pl() {  # TAG [VAR=VALUE]
  local tag=$1; shift
  env "$@" timeout 100 node bench/cp-run.mjs places --D 128 --N 256,512,1024,2048,4096,8192 --H 264 --reps 20 --out "$O/places-$tag" > "$O/places-$tag.log" 2>&1
  echo "places $tag $(el)"; pack
}
pl warm; pl direct; pl staged FLASHRING_SGMM_EPILOGUE=staged; pl direct2
python3 - "$O" <<'PY' | tee $O/fits.txt
import json, sys
O = sys.argv[1]
for tag in ('direct', 'staged', 'direct2'):
    try: j = json.load(open(f'{O}/places-{tag}/cp-places-D128.json'))
    except Exception as e: print(tag, 'no result', e); continue
    out = [tag]
    for p in ('fwd', 'dkdv', 'dq'):
        pts = [(r['L'], r['ms']) for r in j['rows'] if r['pass'] == p]
        n = len(pts); sx = sum(x for x, _ in pts); sy = sum(y for _, y in pts); sxx = sum(x * x for x, _ in pts); sxy = sum(x * y for x, y in pts)
        b = (n * sxy - sx * sy) / (n * sxx - sx * sx); a = (sy - b * sx) / n
        worst = max(abs(y - (a + b * x)) / y for x, y in pts)
        out.append(f'{p}: fixed {a * 500:.1f} us a wave, {b * 5e5:.1f} ns a row (fit {worst * 100:.1f}%)')
    print(' | '.join(out))
PY
pack
