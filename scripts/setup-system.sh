#!/usr/bin/env bash
# Installs the Debian packages flashring needs on a Debian bookworm machine (as root):
#   - the Vulkan loader (libvulkan1) and Mesa lavapipe from bookworm-backports (Mesa >= 25:
#     bookworm's own Mesa 22.3 lavapipe is rejected by Dawn), so WebGPU runs on the CPU;
#   - chromium, for the headless browser tests.
# Idempotent and quick when everything is present. Skips itself on non-Debian systems or when
# FLASHRING_SKIP_SYSTEM_SETUP=1 (e.g. on a GPU host that has its own Vulkan driver).
set -euo pipefail
[ "${FLASHRING_SKIP_SYSTEM_SETUP:-0}" = 1 ] && exit 0
[ -f /etc/debian_version ] || { echo "setup-system: not Debian; install a Vulkan driver yourself" >&2; exit 0; }

need=()
lvp_ok() {
  [ -f /usr/share/vulkan/icd.d/lvp_icd.json ] || [ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || return 1
  v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || echo 0)
  dpkg --compare-versions "$v" ge 25 
}
lvp_ok || need+=(mesa)
dpkg-query -W -f='${Status}' libvulkan1 2>/dev/null | grep -q "ok installed" || need+=(libvulkan1)
if [ "${FLASHRING_NO_BROWSER:-0}" != 1 ]; then
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
fi
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "setup-system: missing ${need[*]}; run as root (or: sudo bash scripts/setup-system.sh)" >&2
  exit 1
fi
echo "setup-system: installing ${need[*]} (one-time) ..." >&2
export DEBIAN_FRONTEND=noninteractive
if [[ " ${need[*]} " == *" mesa "* ]]; then
  if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
    uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
    [ -n "$uri" ] || uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
    [ -n "$uri" ] || uri=http://deb.debian.org/debian
    echo "deb $uri bookworm-backports main" > /etc/apt/sources.list.d/backports.list
  fi
fi
apt-get update -qq
if [[ " ${need[*]} " == *" mesa "* ]]; then
  apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers >/dev/null
fi
apt-get install -y -qq libvulkan1 >/dev/null
if [[ " ${need[*]} " == *" chromium "* ]]; then
  apt-get install -y -qq chromium >/dev/null
fi
lvp_ok || { echo "setup-system: lavapipe >= 25 still missing after install" >&2; exit 1; }
echo "setup-system: done" >&2
