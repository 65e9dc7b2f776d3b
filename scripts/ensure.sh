#!/usr/bin/env bash
# Installs what is missing, quickly when nothing is: Debian packages (scripts/setup-system.sh)
# and npm packages (npm ci when node_modules is absent or older than package-lock.json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-system.sh
# A node_modules that is a link (a worktree sharing another checkout's packages) is left alone: npm ci would empty the
# folder it points to, which belongs to that checkout.
if [ -L node_modules ]; then
  echo "ensure: node_modules links to $(readlink -f node_modules): not reinstalling there (npm ci would empty it); run npm ci in its checkout if its packages are stale" >&2
elif [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "ensure: npm ci ..." >&2
  npm ci --no-audit --no-fund --loglevel=error
fi
