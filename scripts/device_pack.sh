#!/usr/bin/env bash
# Usage: scripts/device_pack.sh [BUILD_DIR] [DEST]   (defaults: build, .device)
# Packs what scripts/device_check.sh runs on a GPU machine that has the CUDA toolkit and NCCL but
# nothing else of gpuplan's dependencies (no apt, no network): the `gpuplan` program installed
# with its data (`cmake --install`: DEST/bin, DEST/share/gpuplan), the GPU test programs beside
# it in DEST/bin (they find the data the installed way, docs/TESTING.md "On a GPU machine"), and
# in DEST/lib the shared libraries they load that are neither CUDA's, NCCL's nor the C/C++
# runtime's (OpenMPI and what it needs). BUILD_DIR must be a CUDA build (GPUPLAN_CUDA, the
# default, with the toolkit found) of the same CUDA major version as the GPU machine's.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
dest=${2:-.device}
tests=(tests/kernels/kernels_gpu_test tests/kernels/kernels_runner_gpu_test
       tests/profiler_gpu/profiler_gpu_test tests/validator/validator_gpu_test)
for t in cli/gpuplan "${tests[@]}"; do
  if [ ! -x "$build/$t" ]; then
    echo "device_pack: $build/$t is missing: build with CUDA first (scripts/setup.sh)" >&2
    exit 1
  fi
done
rm -rf "$dest"
cmake --install "$build" --prefix "$dest" > /dev/null
rm -f "$dest/bin/gpuplan-gui"  # the GPU machine has no display, and Qt would double the pack
for t in "${tests[@]}"; do cp "$build/$t" "$dest/bin/"; done
mkdir -p "$dest/lib"
# Libraries resolved from the system directories, except the C and C++ runtime (the GPU
# machine has its own, as new or newer) and anything under CUDA's or NCCL's directories.
for f in "$dest"/bin/*; do ldd "$f"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -E '^(/usr)?/lib/' |
  grep -v -E '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
  grep -v -E 'libnccl|libcuda|libcublas' |
  while read -r lib; do cp -L "$lib" "$dest/lib/"; done
git describe --always --dirty > "$dest/commit" 2>/dev/null || echo unknown > "$dest/commit"
echo "device_pack: $(du -sh "$dest" | cut -f1) in $dest (commit $(cat "$dest/commit")):" \
  "$(ls "$dest/bin" | tr '\n' ' ')"
