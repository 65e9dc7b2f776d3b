#!/usr/bin/env bash
# Issue 37: what the fixed cost of a D = 128 backward workgroup (53 us for dkdv, 34 for dq: ../2026-12-03-places-h200)
# is made of. variants.py makes timing-only copies of shaders/flash_bwd_sgmm.wgsl (wrong results by design):
# noglob (no global reads or writes in the epilogue), direct (the epilogue as straight matrix stores to the
# gradient buffers: no spills, no barriers), noprol (no resident rows loaded). Each is copied over the shader;
# the places bench times each pass at W = 264 over L = 256 … 8192 (fixed + per-row fit), and the steps bench
# p2p's R = 8 steps for base and direct. main's shader runs first and last and is put back.
# Run on the H200 from the project root:  bash .gpu/enter.sh bash bench/results/wip-epi/gpu-call.sh
set -uo pipefail
S=bench/results/wip-epi; O=/tmp/epi; mkdir -p $O; source bench/gpu-lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt 2>&1; date -u +%FT%TZ > $O/date.txt
cp shaders/flash_bwd_sgmm.wgsl $O/base.wgsl
python3 $S/variants.py $O/base.wgsl $O || { echo "variants.py failed"; exit 1; }
timeout 60 node bench/cp-run.mjs places --D 128 --N 2048 --H 264 --reps 20 --out $O/warmup > $O/warmup.log 2>&1; echo "warmup $(el)"
v() {  # tag, shader
  cp "$2" shaders/flash_bwd_sgmm.wgsl
  timeout 100 node bench/cp-run.mjs places --D 128 --N 256,512,1024,2048,4096,8192 --H 264 --reps 20 --out "$O/places-$1" > "$O/places-$1.log" 2>&1
  echo "$1 $(el)"; grep -E '^(dkdv|dq) ' "$O/places-$1.log" | cut -c1-200; pack
}
v base $O/base.wgsl; v noglob $O/noglob.wgsl; v direct $O/direct.wgsl; v noprol $O/noprol.wgsl; v base2 $O/base.wgsl
st() { cp "$2" shaders/flash_bwd_sgmm.wgsl
  timeout 100 node bench/cp-run.mjs steps --N 16384 --D 128 --R 8 --out "$O/steps-$1" 2>&1 | grep -v '^Warning' > "$O/steps-$1.log"
  echo "steps $1 $(el)"; grep -E '^(1|8) ' "$O/steps-$1.log" | head -6 | awk '{ print "  " $0 }'; pack
}
st base $O/base.wgsl; st direct $O/direct.wgsl
cp $O/base.wgsl shaders/flash_bwd_sgmm.wgsl
python3 - "$O" <<'PY' | tee $O/fits.txt
import json, sys
O = sys.argv[1]
for tag in ('base', 'noglob', 'direct', 'noprol', 'base2'):
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
