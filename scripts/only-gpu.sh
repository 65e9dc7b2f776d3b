#!/usr/bin/env bash
# Runs a command that sees only NVIDIA GPU K (as root): in a private mount namespace, every other
# /dev/nvidiaN node is covered by /dev/null, so Dawn in that process finds one adapter. Dawn
# gives every requestAdapter() of a process the first adapter of a name, so two identical GPUs
# need one process each (../shared/PLATFORM.md; src/ring/processRanks.ts spawns rank processes
# through this with `wrapper: ['bash', 'scripts/only-gpu.sh', '{rank}']`).
#   bash scripts/only-gpu.sh K command [args...]
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: only-gpu.sh K command [args...]" >&2; exit 2; }
k=$1; shift
[[ $k =~ ^[0-9]+$ ]] || { echo "only-gpu.sh: K must be a GPU index, got '$k'" >&2; exit 2; }
exec unshare -m bash -c 'shopt -s nullglob; for d in /dev/nvidia[0-9]*; do [ "${d#/dev/nvidia}" = "$0" ] || mount --bind /dev/null "$d"; done; exec "$@"' "$k" "$@"
