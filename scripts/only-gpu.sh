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
[[ $k =~ ^[0-9]+$ ]] || { echo "only-gpu.sh: K must be a GPU's device number (/dev/nvidiaK), got '$k'" >&2; exit 2; }
# K is the device node's number (/dev/nvidiaK, the driver's minor number), which is usually but
# not always nvidia-smi's index. With no NVIDIA device nodes at all (CPU machines, CI) nothing is
# hidden; with nodes but none for K, that is an error rather than a process that sees no GPU.
shopt -s nullglob
nodes=(/dev/nvidia[0-9]*)
if [ ${#nodes[@]} -gt 0 ] && [ ! -e "/dev/nvidia$k" ]; then
  echo "only-gpu.sh: no /dev/nvidia$k (there are: ${nodes[*]})" >&2; exit 2
fi
exec unshare -m bash -c 'set -e; shopt -s nullglob; for d in /dev/nvidia[0-9]*; do [ "${d#/dev/nvidia}" = "$0" ] || mount --bind /dev/null "$d"; done; exec "$@"' "$k" "$@"
