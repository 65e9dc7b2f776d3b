#!/usr/bin/env bash
# Installs what is missing, quickly when nothing is: Debian packages (scripts/setup-system.sh)
# and npm packages (npm ci when node_modules is absent or older than package-lock.json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-system.sh
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "ensure: npm ci ..." >&2
  npm ci --no-audit --no-fund --loglevel=error
fi
