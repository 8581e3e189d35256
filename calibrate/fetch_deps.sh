#!/usr/bin/env bash
# Fetches the header-only (and fmt) dependencies that the top-level CMakeLists.txt finds
# unconditionally, so that the project configures on a machine with no package registry (the
# lent GPU machine). Run here, in the repository root:   bash calibrate/fetch_deps.sh
#
#   .deps/debs/   the .deb files (about 10 MB: carry THIS folder to the GPU machine)
#   .deps/root/   the same unpacked with dpkg -x (about 190 MB, Boost's headers: for configuring here;
#                 too large to carry, so calibrate/device_check.sh unpacks .deps/debs there)
#
# Packages: what find_package(fmt / nlohmann_json / CLI11 / Boost / doctest) needs — config files,
# headers, and libfmt's shared object (moesim_core links fmt; moesim-calibrate links moesim_core).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(nlohmann-json3-dev libcli11-dev libfmt-dev libfmt9 doctest-dev libboost1.74-dev)

mkdir -p .deps/debs
(cd .deps/debs && apt-get download "${packages[@]}")

rm -rf .deps/root
mkdir -p .deps/root
for deb in .deps/debs/*.deb; do
  dpkg -x "$deb" .deps/root
done
echo "fetch_deps: $(ls .deps/debs | wc -l) packages in .deps/debs ($(du -sh .deps/debs | cut -f1)), unpacked into .deps/root ($(du -sh .deps/root | cut -f1))"
