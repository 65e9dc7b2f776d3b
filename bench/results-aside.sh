#!/usr/bin/env bash
# The device tool carries the working tree (tracked files included) and `carry` paths, 64 MiB in all. The
# results folders are about 35 MiB and the GPU bundle (../shared/gpu/bundle.sh) 35–45 MiB, so together they
# pass the limit. No device command reads the results but the one being made, so before a device call move
# them aside, and back after it (measured 2026-12-05: 80 MiB refused; 48 MiB with them aside):
#   bash bench/results-aside.sh out [KEEP…]  moves bench/results/* but each KEEP (a folder name, e.g. wip-NAME) and
#                                            README.md into this checkout's .git folder (on disk, not carried)
#   bash bench/results-aside.sh in           moves them all back (checked first: nothing is overwritten)
# Refused while bench/results holds files git does not track (uncommitted results: commit them first), so
# that everything aside is also in git. Nothing is deleted. Until `in`, `git status` shows the folders as
# deleted: do not commit then (`git add -A` or `commit -a` would record the deletions).
set -euo pipefail
cd "$(dirname "$0")/.."
aside=${ASIDE:-$(git rev-parse --absolute-git-dir)/flashring-results-aside}
case "${1:-}" in
  out)
    shift; keep=" $* "
    [ -d "$aside" ] && { echo "results are aside already ($aside): run '$0 in' first" >&2; exit 2; }
    untracked=$(git ls-files --others --exclude-standard -- bench/results | while read -r f; do
      d=${f#bench/results/}; d=${d%%/*}; [[ "$keep" == *" $d "* ]] || echo "$f"; done)
    [ -n "$untracked" ] && { echo "bench/results holds files git does not track (commit them first):" >&2; echo "$untracked" | head -5 >&2; exit 2; }
    mkdir -p "$aside"
    n=0
    for d in bench/results/*; do
      b=$(basename "$d")
      if [[ "$keep" == *" $b "* ]] || [ "$b" = README.md ]; then continue; fi
      mv "$d" "$aside/"; n=$((n + 1))
    done
    echo "moved $n entries of bench/results to $aside (kept: $(echo $keep README.md)); do not commit until: bash $0 in" ;;
  in)
    [ -d "$aside" ] || { echo "nothing aside in $aside" >&2; exit 2; }
    for d in "$aside"/*; do
      [ -e "$d" ] || continue
      b=$(basename "$d")
      [ -e "bench/results/$b" ] && { echo "bench/results/$b exists again: nothing moved back; move it away, then run '$0 in' again" >&2; exit 2; }
    done
    for d in "$aside"/*; do [ -e "$d" ] && mv "$d" bench/results/; done
    rmdir "$aside"
    echo "bench/results restored" ;;
  *) echo "usage: bash $0 out [KEEP…] | in" >&2; exit 2 ;;
esac
