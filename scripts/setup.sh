#!/usr/bin/env bash
# Installs what gpuplan needs on Debian/Ubuntu and builds it into ./build.
# Usage: scripts/setup.sh            (CUDA parts build when /usr/local/cuda is present)
set -euo pipefail
cd "$(dirname "$0")/.."

# Qt 6 Widgets (qt6-base-dev, with QtTest) for gpuplan-gui; libgl-dev because Qt6Gui's CMake
# package asks for OpenGL headers; fonts so offscreen rendering (tests, --screenshot) has glyphs;
# python3 for scripts/check_docs.py, the test that README.md and docs/ show what the programs print;
# clang with its sanitizer and libFuzzer runtimes (libclang-rt-14-dev) for the sanitizer and fuzz
# build scripts/test.sh runs in build-asan/ (docs/TESTING.md); OpenMPI (libopenmpi-dev, openmpi-bin)
# for the validator's CPU backend and its multi-process tests (mpirun).
packages=(build-essential cmake ninja-build nlohmann-json3-dev libcli11-dev libeigen3-dev
          libgtest-dev libgmock-dev libbenchmark-dev qt6-base-dev libgl-dev fonts-dejavu-core
          python3 clang libclang-rt-14-dev libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build build --parallel "$(nproc)"
