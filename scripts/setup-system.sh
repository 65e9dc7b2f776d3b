#!/usr/bin/env bash
# Installs the packages flashring needs on Debian or Ubuntu (as root):
#   - the Vulkan loader (libvulkan1) and Mesa lavapipe >= 25, so WebGPU runs on the CPU (older
#     lavapipe, e.g. Debian bookworm's own Mesa 22.3, is rejected by Dawn). On Debian bookworm
#     Mesa comes from bookworm-backports; elsewhere (Debian trixie and later, Ubuntu) from the
#     distribution's own archive when it offers Mesa >= 25, and otherwise the script stops and
#     says what to install: it never adds Debian sources to Ubuntu;
#   - chromium, for the headless browser tests.
# Idempotent and quick when everything is present. Skips itself on other systems or when
# FLASHRING_SKIP_SYSTEM_SETUP=1 (e.g. on a GPU host that has its own Vulkan driver).
# For tests: FLASHRING_OS_RELEASE (default /etc/os-release), FLASHRING_MESA_CANDIDATE (the
# version apt would install) and FLASHRING_SETUP_PLAN=1 (print where Mesa would come from, change nothing).
set -euo pipefail
[ "${FLASHRING_SKIP_SYSTEM_SETUP:-0}" = 1 ] && exit 0
os_release=${FLASHRING_OS_RELEASE:-/etc/os-release}
plan=${FLASHRING_SETUP_PLAN:-0}
ID=unknown; ID_LIKE=; VERSION_CODENAME=; PRETTY_NAME=
# shellcheck disable=SC1090
[ -r "$os_release" ] && . "$os_release"
family=" $ID $ID_LIKE "
if [[ "$family" != *" debian "* && "$family" != *" ubuntu "* ]] || { [ "$plan" != 1 ] && [ ! -f /etc/debian_version ]; }; then
  echo "setup-system: not Debian or Ubuntu ($ID); install a Vulkan driver (Mesa lavapipe >= 25 or your GPU's) yourself" >&2
  exit 0
fi

# Where Mesa >= 25 comes from: "backports" (Debian bookworm) or "archive" (the distribution's own).
mesa_source() {
  if [ "$ID" = debian ] && [ "$VERSION_CODENAME" = bookworm ]; then echo backports; return; fi
  local cand=${FLASHRING_MESA_CANDIDATE:-$(apt-cache policy mesa-vulkan-drivers 2>/dev/null | awk '/Candidate:/{print $2; exit}')}
  if [ -n "$cand" ] && [ "$cand" != "(none)" ] && dpkg --compare-versions "$cand" ge 25; then echo archive; return; fi
  {
    echo "setup-system: ${PRETTY_NAME:-$ID} offers mesa-vulkan-drivers ${cand:-(none)}, but Dawn needs Mesa lavapipe >= 25."
    if [[ "$family" == *" ubuntu "* ]]; then
      echo "  Install Mesa >= 25 yourself, then rerun: Ubuntu 25.04 and later ship it; on older releases a Mesa PPA"
      echo "  (e.g. sudo add-apt-repository ppa:kisak/kisak-mesa && sudo apt-get install mesa-vulkan-drivers libvulkan1),"
      echo "  or install your GPU's Vulkan driver. (Debian's bookworm-backports is not for Ubuntu and is not added.)"
    else
      echo "  Install Mesa >= 25 (mesa-vulkan-drivers) from your distribution's backports, or your GPU's Vulkan driver, then rerun."
    fi
  } >&2
  return 1
}

if [ "$plan" = 1 ]; then
  src=$(mesa_source) || exit 1
  echo "mesa: $src"
  exit 0
fi

need=()
lvp_ok() {
  [ -f /usr/share/vulkan/icd.d/lvp_icd.json ] || [ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] || return 1
  v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || echo 0)
  dpkg --compare-versions "$v" ge 25
}
lvp_ok || need+=(mesa)
dpkg-query -W -f='${Status}' libvulkan1 2>/dev/null | grep -q "ok installed" || need+=(libvulkan1)
if [ "${FLASHRING_NO_BROWSER:-0}" != 1 ]; then
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
fi
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "setup-system: missing ${need[*]}; run as root (or: sudo bash scripts/setup-system.sh)" >&2
  exit 1
fi
src=
if [[ " ${need[*]} " == *" mesa "* ]]; then src=$(mesa_source) || exit 1; fi
echo "setup-system: installing ${need[*]} (one-time) ..." >&2
export DEBIAN_FRONTEND=noninteractive
if [ "$src" = backports ] && ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
  uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  [ -n "$uri" ] || uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null)
  [ -n "$uri" ] || uri=http://deb.debian.org/debian
  echo "deb $uri bookworm-backports main" > /etc/apt/sources.list.d/backports.list
fi
apt-get update -qq
if [ "$src" = backports ]; then apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers >/dev/null; fi
if [ "$src" = archive ]; then apt-get install -y -qq mesa-vulkan-drivers >/dev/null; fi
apt-get install -y -qq libvulkan1 >/dev/null
if [[ " ${need[*]} " == *" chromium "* ]]; then
  apt-get install -y -qq chromium >/dev/null
fi
lvp_ok || { echo "setup-system: lavapipe >= 25 still missing after install" >&2; exit 1; }
echo "setup-system: done" >&2
