#!/usr/bin/env bash
# Where the portable forward's time goes, by subtraction (no hardware profiler reaches Dawn's
# Vulkan): the forward timed whole and with one step left out at a time (FLASHRING_PORTABLE_FWD_SKIP,
# shaders/flash_fwd.wgsl SKIP: loads, qk, softmax, pv), and with every arithmetic step out (what the
# staging and barriers alone cost). A step's share is (full − without it) / full; the shares need not
# add up to 1 (steps overlap). The skipped runs' results are wrong by design (their checkErr says so).
#   bash .gpu/enter.sh bash bench/profile-portable.sh        (GPU host, about 2 minutes)
# Knobs: N (16384), DS ("64 128"), PRECS ("f32"), ROBUST (0: Node's default; 1: as browsers), REPS (3).
set -uo pipefail
out=${OUT:-bench/out}/profile-portable; mkdir -p "$out"
N=${N:-16384}; DS=${DS:-"64 128"}; PRECS=${PRECS:-f32}; ROBUST=${ROBUST:-0}; REPS=${REPS:-3}
export FLASHRING_PATH=scalar MESA_SHADER_CACHE_DISABLE=false FLASHRING_ROBUST=$ROBUST
[ "$ROBUST" = 0 ] && export FLASHRING_DAWN_FLAGS='enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'
SKIPS="none loads qk softmax pv qk,softmax,pv"
for prec in $PRECS; do
  for D in $DS; do
    for sk in $SKIPS; do
      tag="$prec-D$D-skip-${sk//,/+}"
      env FLASHRING_PORTABLE_FWD_SKIP="$([ "$sk" = none ] || echo "$sk")" node bin/flashring.mjs bench --N "$N" --D "$D" --heads 16 --batch 1 \
        --causal false --precision "$prec" --reps "$REPS" --no-ring --no-memory --out "$out/$tag" 2>&1 | grep -v '^Warning' > "$out/$tag.log"
    done
  done
done
python3 - "$out" "$PRECS" "$DS" "$SKIPS" <<'PY' | tee "$out/table.txt"
import csv, glob, os, sys
out, precs, ds, skips = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split()
def fwd_ms(tag):
    for f in glob.glob(os.path.join(out, tag, '*-kernels.csv')):
        for r in csv.DictReader(open(f)):
            if r['pass'] == 'fwd': return float(r['ms']), float(r['tflops'])
    return None
print(f"{'prec':4} {'D':>4} {'left out':18} {'fwd ms':>8} {'TFLOP/s':>8} {'share':>6}")
for p in precs:
    for d in ds:
        full = fwd_ms(f'{p}-D{d}-skip-none')
        for sk in skips:
            t = fwd_ms(f'{p}-D{d}-skip-{sk.replace(",", "+")}')
            if t is None: print(f"{p:4} {d:>4} {sk:18} {'(no result: see its log)':>24}"); continue
            share = '' if sk == 'none' or full is None else f"{(full[0] - t[0]) / full[0]:6.2f}"
            print(f"{p:4} {d:>4} {sk:18} {t[0]:8.2f} {t[1]:8.2f} {share:>6}")
PY
