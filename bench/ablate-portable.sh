#!/usr/bin/env bash
# Portable kernel tile ablation on the GPU host, one call (a minute or two per kind):
#   KIND=bwd bash .gpu/enter.sh bash bench/ablate-portable.sh      (or KIND=fwd)
#   PREC=f16 KIND=fwd bash .gpu/enter.sh bash bench/ablate-portable.sh   (f16 storage, f16 tiles)
# (The f16-products and RR = 8 forward variants this script once timed were removed from the
# kernels: bench/results/portable-h200-2026-12-01-rr8 holds the RR = 8 round.)
# Times the portable kernels (PREC, default f32; N=16384, B1 H16, not causal, robustness off) with the forward
# or backward pinned to each tile in TILES (FLASHRING_PORTABLE_FWD = BRxBC[xCHUNK],
# FLASHRING_PORTABLE_BWD = RTxCT[xCHUNK]: rows, rows, head-dim columns staged at a time), at
# D = 64 and 128; a tile that does not fit says so in its log. Every run is checked against the
# float64 reference by the bench (checkErr in its CSV). Logs and CSVs under
# $OUT/ablate-$KIND (or bench/out/...); the table last.
set -uo pipefail
KIND=${KIND:-bwd}
PREC=${PREC:-f32}
# f16 storage stages 8-byte words: 128×32 in whole rows (D = 64) or 64-column chunks, and 64×64, fit.
FWD16="128x32x64 128x32x32 64x64x64 64x32x64 64x32 32x32"
# The backward with f16 words: 64×32 in whole rows at D = 64 (64-column chunks at 128), the planner's
# choice; 64x32x32 is the chunking f16 had with f32 words.
BWD16="64x32x64 64x32x32 32x32x64 32x32"
FWD32="32x32 64x32 64x32x64 128x32x32 32x32x32"
case $KIND in
  fwd) TILES=${TILES:-$([ "$PREC" = f16 ] && echo "$FWD16" || echo "$FWD32")}; VAR=FLASHRING_PORTABLE_FWD ;;
  bwd) TILES=${TILES:-$([ "$PREC" = f16 ] && echo "$BWD16" || echo "16x16 32x32x64 32x32x32 64x32 32x16 64x16x32")}; VAR=FLASHRING_PORTABLE_BWD ;;
  *) echo "KIND must be fwd or bwd, got '$KIND'" >&2; exit 2 ;;
esac
out=${OUT:-bench/out}/ablate-$KIND$([ "$PREC" = f32 ] || echo "-$PREC"); mkdir -p "$out"
N=${N:-16384}; REPS=${REPS:-2}
export FLASHRING_PATH=scalar FLASHRING_ROBUST=0 MESA_SHADER_CACHE_DISABLE=false
export FLASHRING_DAWN_FLAGS='enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia,disable_robustness'
for t in $TILES; do
  for D in 64 128; do
    env "$VAR=$t" node bin/flashring.mjs bench --N "$N" --D "$D" --heads 16 --batch 1 --causal false \
      --precision "$PREC" --reps "$REPS" --no-ring --no-memory --out "$out/$t-D$D" 2>&1 | grep -v '^Warning' > "$out/$t-D$D.log"
  done
done
echo "$KIND tile                       D   TFLOP/s  checkErr"
for t in $TILES; do
  for D in 64 128; do
    f=$(ls "$out/$t-D$D"/*-kernels.csv 2>/dev/null | head -1)
    if [ -n "$f" ]; then
      awk -F, -v t="$t" -v d="$D" -v k="$KIND" 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["pass"] == k { printf "%-32s %4s %8.2f  %s\n", t, d, $c["tflops"], $c["checkErr"] }' "$f"
    else
      printf "%-32s %4s  %s\n" "$t" "$D" "$(tail -n 1 "$out/$t-D$D.log" | cut -c1-100)"
    fi
  done
done | tee "$out/table.txt"
