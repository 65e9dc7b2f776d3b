#!/usr/bin/env bash
# Helpers that the device calls' gpu-call.sh scripts source (bench/results/*/gpu-call.sh, from 2026-12-03 on;
# earlier calls defined the same functions inline), from the project root (they run bin/flashring.mjs and
# bench/cp-run.mjs by relative path). Needs O (the call's scratch folder) and OUT (the device tool's return
# folder), checked when sourced, and sets t0.
#   card                the card and the date into $O and $OUT (gpu.txt, date.txt), and a line saying them
#   el                  seconds since the call began, for the progress lines
#   have S STAGE        whether the script's LIMIT (s) leaves more than S seconds for STAGE (false, and a line saying it
#                       was skipped, where not)
#   peer [DS]           PyTorch's SDPA at N = 16384, H16 (head dims DS, default 64,128) into $O/peer.json: the same-call
#                       bench's peer (bench/peers/torch_sdpa.py), measured first
#   pack                $O packed into $OUT/all.tgz (rewritten after each stage, so a cut run returns what finished)
#   kernel_rows TAG     one line per pass of $O/TAG/*-kernels.csv (the same-call bench: TFLOP/s, × the peer,
#                       checkErr, and the share of cuBLAS's GEMM where the peer file has it), printed and
#                       appended to $O/table.txt; "TAG FAILED" and its log's tail if none
#   same_call TAG ROBUST PRECISIONS [VAR=VALUE…]
#                       the same-call bench (N = 16384, H16, D 64 and 128, causal and not; $O/peer.json, the
#                       peer, measured first) with Dawn's robustness ROBUST (0 or 1) into $O/TAG, then kernel_rows;
#                       SC_D=128 (say), as a prefix (SC_D=128 same_call …), narrows the head dims
#   steps TAG D RS      p2p's steps at N = 16384 and head dim D for ranks RS (e.g. 2,4,8) into $O/stepsD-TAG.log,
#                       the ring totals printed
#   r1_table            each $O/steps*.log's R = 1 line (forward, dkdv, dq ms), printed and written to $O/r1.txt
#   variant EDITS NAME  a copy of the tree at /tmp/v-NAME with the edit NAME of the edits file EDITS
#                       (bench/apply-edits.py) applied, node_modules linked: run a bench or tests there with (cd …)
: "${O:?gpu-lib.sh needs O, the call's scratch folder}" "${OUT:?gpu-lib.sh needs OUT, the device tool's return folder}"
t0=$(date +%s)
el() { echo "$(( $(date +%s) - t0 )) s"; }
have() { [ $((LIMIT - SECONDS)) -gt "$1" ] || { echo "skipped past the limit: $2"; false; }; }
peer() {
  PYTHONUNBUFFERED=1 timeout 90 python3 bench/peers/torch_sdpa.py --N 16384 --D "${1:-64,128}" --heads 16 --reps 2 --out "$O/peer.json" > "$O/peer.log" 2>&1
  echo "peer $(el)"; pack
}
card() {
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$O/gpu.txt" 2>&1; date -u +%FT%TZ > "$O/date.txt"
  cp "$O/gpu.txt" "$O/date.txt" "$OUT/"; echo "gpu: $(cat "$O/gpu.txt") at $(date -u +%T)"
}
pack() { tar czf "$OUT/all.tgz" -C "$O" . ; }
kernel_rows() {
  local f; f=$(ls "$O/$1"/*-kernels.csv 2>/dev/null | head -1)
  if [ -z "$f" ]; then echo "$1 FAILED" | tee -a "$O/table.txt"; tail -3 "$O/$1.log"; return; fi
  awk -F, -v T="$1" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { g = ("gemmShare" in c && $c["gemmShare"] != "") ? sprintf(" gemm %.3f", $c["gemmShare"]) : ""
      printf "%-11s %-8s D%-4s causal=%-5s %s %7.2f %s %.3f %s%s\n", T, $c["pass"], $c["D"], $c["causal"], $c["precision"], $c["tflops"], $c["peerBackend"], $c["ratio"], $c["checkErr"], g }' "$f" | tee -a "$O/table.txt"
}
steps() {
  timeout 90 node bench/cp-run.mjs steps --N 16384 --D "$2" --R "$3" --out "$O/steps$2-$1" 2>&1 | grep -v '^Warning' > "$O/steps$2-$1.log"
  echo "  steps D$2 $1 $(el)"; grep -E '^(2|4|8) +[0-9]' "$O/steps$2-$1.log" | tail -3 | awk '{ print "  " $0 }'
}
same_call() {
  local tag=$1 rob=$2 precs=$3; shift 3
  env FLASHRING_ROBUST="$rob" "$@" timeout 80 node bin/flashring.mjs bench --N 16384 --heads 16 --batch 1 --causal false,true --D "${SC_D:-64,128}" \
    --precision "$precs" --reps 3 --no-ring --no-memory --peer "$O/peer.json" --out "$O/$tag" > "$O/$tag.log" 2>&1
  echo "$tag $(el)"; kernel_rows "$tag"; pack
}
r1_table() {
  local f
  for f in "$O"/steps*.log; do
    awk -v T="$(basename "$f" .log)" '$1 == 1 && $2 == "R=1" { r1 = sprintf("%s %s %s", $4, $5, $6) } END { printf "%-16s %s\n", T, r1 }' "$f"
  done | tee "$O/r1.txt"
}
variant() {
  rm -rf "/tmp/v-$2"; mkdir -p "/tmp/v-$2"
  cp -r src shaders bin bench test web package.json tsconfig.json vitest.config.* "/tmp/v-$2/" 2>/dev/null
  python3 bench/apply-edits.py "$1" "$2" "/tmp/v-$2" || return 1
  ln -sfn "$(pwd)/node_modules" "/tmp/v-$2/node_modules"
}
