#!/usr/bin/env bash
# From a fresh clone to a first run: installs the system packages, builds
# Release in build/ (this also generates examples/data) and runs the matrix
# factorisation example on a local cluster of 2 parameter servers and 2
# workers (scripts/rigel-launch; logs under runs/). Extra arguments go to
# `rigel run` (e.g. --set NAME=VALUE). Exits with rigel's status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${RIGEL_JOBS:-2}

echo "==> [1/4] setup: system packages"
scripts/setup.sh

echo "==> [2/4] configure: cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release

echo "==> [3/4] build: ninja -C build -j$jobs"
cmake --build build -- -j"$jobs"

echo "==> [4/4] run: build/bin/rigel run examples/mf.rgl --servers 2 --workers 2 $*"
exec build/bin/rigel run examples/mf.rgl --servers 2 --workers 2 "$@"
