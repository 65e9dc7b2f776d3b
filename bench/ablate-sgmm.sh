#!/usr/bin/env bash
# Tensor-core (subgroup-matrix) kernel ablation on the GPU host, one call:
#   bash .gpu/enter.sh bash bench/ablate-sgmm.sh
# CONFIGS: space-separated PAD:FWD:BWD[:PIPE], each run as its own bench: FLASHRING_SGMM_PAD (0 or 8
# halves of row padding in workgroup memory), FLASHRING_SGMM_FWD (SGxT[xRB]),
# FLASHRING_SGMM_BWD (SGxT) and FLASHRING_SGMM_FWD_PIPE (0 or 2: the order of the forward's
# steps per K/V tile); '-' (or no PIPE) leaves that choice to the planner. f16, N=16384 B1 H16,
# D = 64 and 128, causal false and true (CAUSAL), robustness off unless FLASHRING_ROBUST=1,
# PyTorch's FlashAttention-2 backend in the same call (peer.json, made once). Every run is
# checked against the float64 reference by the bench (checkErr). Logs, CSVs and the table under
# $OUT/ablate-sgmm (or bench/out/...); the table last: TFLOP/s and the ratio to FA2. KPATH=scalar
# runs the same loop on the portable kernels (a dry run on a CPU adapter).
set -uo pipefail
CONFIGS=${CONFIGS:-"8:-:- 0:-:-"}
N=${N:-16384}; REPS=${REPS:-3}; CAUSAL=${CAUSAL:-false,true}; DS=${DS:-64 128}
out=${OUT:-bench/out}/ablate-sgmm; mkdir -p "$out"
export FLASHRING_PATH=${KPATH:-subgroup-matrix} MESA_SHADER_CACHE_DISABLE=false
[ -f "$out/peer.json" ] || PYTHONUNBUFFERED=1 python3 bench/peers/torch_sdpa.py --N "$N" --D "${DS// /,}" --heads 16 \
  --out "$out/peer.json" > "$out/peer.log" 2>&1 || echo "peer failed: $(tail -n 2 "$out/peer.log")"
peer=(); [ -f "$out/peer.json" ] && peer=(--peer "$out/peer.json")
for c in $CONFIGS; do
  IFS=: read -r pad fwd bwd pipe <<< "$c"
  for D in $DS; do
    pins=(FLASHRING_SGMM_PAD="$pad")
    [ "$fwd" != - ] && pins+=(FLASHRING_SGMM_FWD="$fwd")
    [ "$bwd" != - ] && pins+=(FLASHRING_SGMM_BWD="$bwd")
    [ -n "$pipe" ] && [ "$pipe" != - ] && pins+=(FLASHRING_SGMM_FWD_PIPE="$pipe")
    env "${pins[@]}" node bin/flashring.mjs bench --N "$N" --D "$D" --heads 16 --batch 1 --causal "$CAUSAL" \
      --precision f16 --reps "$REPS" --no-ring --no-memory ${peer[@]+"${peer[@]}"} --out "$out/${c//:/_}-D$D" 2>&1 \
      | grep -v '^Warning' > "$out/${c//:/_}-D$D.log"
  done
done
echo "pad:fwd:bwd:pipe   D  causal   fwd TFLOP/s (xFA2)   fwd+bwd TFLOP/s (xFA2)  checkErr"
for c in $CONFIGS; do
  for D in $DS; do
    f=$(ls "$out/${c//:/_}-D$D"/*-kernels.csv 2>/dev/null | head -1)
    if [ -z "$f" ]; then printf "%-16s %4s  %s\n" "$c" "$D" "$(tail -n 1 "$out/${c//:/_}-D$D.log" | cut -c1-100)"; continue; fi
    awk -F, -v cfg="$c" -v d="$D" 'NR==1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      { t[$col["causal"], $col["pass"]] = $col["tflops"]; r[$col["causal"], $col["pass"]] = $col["ratio"]; e[$col["causal"]] = $col["checkErr"] }
      END { split("false true", cs, " "); for (k = 1; k <= 2; k++) { cc = cs[k]; if (!((cc, "fwd") in t)) continue
        printf "%-16s %4s  %-6s %8.1f (%5.3f)      %8.1f (%5.3f)        %s\n", cfg, d, cc, t[cc, "fwd"], r[cc, "fwd"], t[cc, "fwd+bwd"], r[cc, "fwd+bwd"], e[cc] } }' "$f"
  done
done | tee "$out/table.txt"
