#!/usr/bin/env bash
# The device tool carries the working tree (tracked files included) and `carry` paths, 64 MiB in all. The
# results folders are about 35 MiB and the GPU bundle (../shared/gpu/bundle.sh) 35–45 MiB, so together they
# pass the limit. No device command reads the results but the one being made, so before a device call move
# them aside, and back after it (measured 2026-12-05: 80 MiB refused; 48 MiB with them aside):
#   bash bench/results-aside.sh out [KEEP]   moves bench/results/* but KEEP (a folder name, e.g. wip-next) and
#                                            README.md to $ASIDE (default /tmp/flashring-results-aside)
#   bash bench/results-aside.sh in           moves them back (refuses to overwrite a folder that came back meanwhile)
# Nothing is deleted; `git status` shows the moved folders as deleted until `in`.
set -euo pipefail
cd "$(dirname "$0")/.."
aside=${ASIDE:-/tmp/flashring-results-aside}
case "${1:-}" in
  out)
    keep=${2:-}
    [ -e "$aside" ] && [ -n "$(ls -A "$aside" 2>/dev/null)" ] && { echo "$aside is not empty: run '$0 in' first" >&2; exit 2; }
    mkdir -p "$aside"
    n=0
    for d in bench/results/*; do
      b=$(basename "$d")
      [ "$b" = "$keep" ] || [ "$b" = README.md ] && continue
      mv "$d" "$aside/"; n=$((n + 1))
    done
    echo "moved $n entries of bench/results to $aside (kept: ${keep:-none}, README.md); bring them back with: bash $0 in" ;;
  in)
    [ -d "$aside" ] || { echo "nothing aside in $aside" >&2; exit 2; }
    for d in "$aside"/*; do
      [ -e "$d" ] || continue
      b=$(basename "$d")
      [ -e "bench/results/$b" ] && { echo "bench/results/$b exists again: not overwritten; move $d back by hand" >&2; exit 2; }
      mv "$d" bench/results/
    done
    rmdir "$aside"
    echo "bench/results restored" ;;
  *) echo "usage: bash $0 out [KEEP] | in" >&2; exit 2 ;;
esac
