#!/usr/bin/env bash
# Builds what bench/regstats/run.sh needs on a GPU host that has neither a compiler nor SPIRV-Tools, into .regstats/ at
# the project root (git ignores it; carry it to the device with `carry: [".gpu", ".regstats"]`): the regstats binary
# (regstats.c, against the Vulkan loader the GPU bundle installs there), Debian's spirv-as, and the C++ runtime it
# links, from this machine. Installs libvulkan-dev and spirv-tools here first (root, Debian bookworm).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v spirv-as > /dev/null && [ -f /usr/include/vulkan/vulkan.h ] || apt-get install -y -qq libvulkan-dev spirv-tools
rm -rf .regstats; mkdir -p .regstats/lib
gcc -O1 -Wall -Werror -o .regstats/regstats bench/regstats/regstats.c -lvulkan
cp /usr/bin/spirv-as /usr/bin/spirv-val .regstats/
for l in libstdc++.so.6 libgcc_s.so.1; do cp -L "$(gcc -print-file-name=$l)" .regstats/lib/ 2>/dev/null || cp -L /lib/x86_64-linux-gnu/$l .regstats/lib/; done
du -sh .regstats
