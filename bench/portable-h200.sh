#!/usr/bin/env bash
# Portable (non-subgroup-matrix) kernels on the H200, in one call (≤ 8 minutes):
#   bash .gpu/enter.sh bash bench/portable-h200.sh          (raw logs and CSVs under $OUT)
# (i) tile sweep of the portable forward/backward (f32, f16) at N=16384, D=64,128, B1 H16,
#     robustness off; (ii) the kernel bench with the best tiles, robustness on and off;
# (iii) PyTorch's memory-efficient f32 SDPA in the same call; (iv) the f32 GEMM ceiling;
# then a table: flashring TFLOP/s, peer TFLOP/s, ratio.
# Knobs (for a dry run on a CPU): N, DS, REPS, CEIL, CEILING=0 (skip the ceiling), FWD_TILES, BWD_TILES, PEER=0 (skip PyTorch);
# to fit a short lease: CAUSAL=false, ROBUST_PRECS=f32 (robust runs of f32 only).
set -uo pipefail
out=${OUT:-bench/out}; mkdir -p "$out"
N=${N:-16384}; DS=${DS:-64,128}; REPS=${REPS:-3}; CEIL=${CEIL:-8192}
FWD_TILES=${FWD_TILES:-"64x32 32x32 64x16"}; BWD_TILES=${BWD_TILES:-"32 16 16"}
export FLASHRING_PATH=scalar MESA_SHADER_CACHE_DISABLE=false
OFF='enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'
fr() { node bin/flashring.mjs "$@" 2>&1 | grep -v '^Warning'; }
bench() { # $1 tag, rest: extra bench flags
  local tag=$1; shift
  fr bench --N "$N" --heads 16 --batch 1 --causal false --reps "$REPS" --no-ring --no-memory --out "$out/$tag" "$@" > "$out/$tag.log"
  tail -n 12 "$out/$tag.log"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$out/nvidia-smi.txt" 2>&1 || true
fr info > "$out/info.txt"

echo "== (i) tile sweep (robustness off)"
set -- $BWD_TILES
for ft in $FWD_TILES; do
  bt=$1; shift
  FLASHRING_ROBUST=0 FLASHRING_DAWN_FLAGS="$OFF" FLASHRING_PORTABLE_FWD=$ft FLASHRING_PORTABLE_BWD=$bt \
    bench "sweep-$ft-$bt" --D "$DS" --precision f32,f16
done
best=$(python3 - "$out" <<'PY'
import csv, glob, os, sys
best = {}
for f in glob.glob(os.path.join(sys.argv[1], 'sweep-*', '*-kernels.csv')):
    tiles = f.split(os.sep)[-2][len('sweep-'):]
    for r in csv.DictReader(open(f)):
        if r['pass'] == 'fwd+bwd': continue
        key = (r['pass'], r['D'], r['precision'])
        if key not in best or float(r['tflops']) > best[key][0]: best[key] = (float(r['tflops']), tiles)
for (p, D, prec), (t, tiles) in sorted(best.items()): print(p, D, prec, tiles.split('-')[0 if p == 'fwd' else 1], f'{t:.2f}')
PY
)
echo "$best" | tee "$out/best-tiles.txt"
pick() { echo "$best" | awk -v p="$1" -v d="$2" -v q="$3" '$1==p && $2==d && $3==q {print $4}'; }

echo "== (iii) PyTorch memory-efficient f32 (and FlashAttention-2 f16) SDPA, same call"
if [ "${PEER:-1}" = 1 ]; then
  PYTHONUNBUFFERED=1 python3 bench/peers/torch_sdpa.py --N "$N" --D "$DS" --heads 16 --reps "$REPS" --out "$out/peer.json" > "$out/peer.log" 2>&1
  tail -n 4 "$out/peer.log"
fi
peer=(); [ -f "$out/peer.json" ] && peer=(--peer "$out/peer.json")

echo "== (ii) kernel bench with the best tiles, robustness on and off"
for robust in 1 0; do
  for D in ${DS//,/ }; do
    # Robust (browser) runs: the precisions in ROBUST_PRECS (default both); CAUSAL picks the masks.
    precs="f32 f16"; [ "$robust" = 1 ] && precs=${ROBUST_PRECS:-"f32 f16"}
    for prec in $precs; do
      ft=$(pick fwd "$D" "$prec"); bt=$(pick bwd "$D" "$prec")
      flags=""; [ "$robust" = 0 ] && flags="$OFF"
      FLASHRING_ROBUST=$robust FLASHRING_DAWN_FLAGS="$flags" FLASHRING_PORTABLE_FWD=${ft:-} FLASHRING_PORTABLE_BWD=${bt:-} \
        bench "final-r$robust-D$D-$prec" --D "$D" --precision "$prec" --causal "${CAUSAL:-false,true}" "${peer[@]}"
    done
  done
done

echo "== (iv) f32 GEMM ceiling (plain WGSL), robustness off (CEILING=0 skips it)"
[ "${CEILING:-1}" = 1 ] && FLASHRING_ROBUST=0 FLASHRING_DAWN_FLAGS="$OFF" node bench/ceiling/run.mjs --size "$CEIL" --reps "$REPS" --out "$out/ceiling" 2>&1 | grep -v '^Warning' > "$out/ceiling.log"
[ "${CEILING:-1}" = 1 ] && grep -E "f32 .*block" "$out/ceiling.log" | tee "$out/ceiling-f32.txt"

echo "== summary: portable flashring vs PyTorch memory-efficient f32 (N=$N, B1 H16)"
python3 - "$out" <<'PY'
import csv, glob, json, os, sys
out = sys.argv[1]
peer = {}
if os.path.exists(os.path.join(out, 'peer.json')):
    for r in json.load(open(os.path.join(out, 'peer.json')))['results']:
        if r.get('backend') == 'efficient': peer[(r['pass'], int(r['D']), bool(r['causal']))] = r['tflops']
print(f"{'robust':6} {'pass':8} {'D':>4} {'causal':6} {'prec':4} {'flashring':>10} {'peer f32':>9} {'ratio':>6}")
for f in sorted(glob.glob(os.path.join(out, 'final-*', '*-kernels.csv'))):
    for r in csv.DictReader(open(f)):
        p = peer.get((r['pass'], int(r['D']), r['causal'] == 'true'))
        t = float(r['tflops'])
        print(f"{r['robust']:6} {r['pass']:8} {r['D']:>4} {r['causal']:6} {r['precision']:4} {t:10.2f} {p if p is None else round(p, 1)!s:>9} {'-' if not p else f'{t / p:.3f}':>6}")
PY
