#!/usr/bin/env bash
# One command: set up, build, and run every test (GPU tests skip with a reason without a GPU).
# Then, when clang is installed (scripts/setup.sh installs it), the sanitizer and fuzz build in
# build-asan/ (docs/TESTING.md): every test again under AddressSanitizer and UBSan, and each
# libFuzzer harness for 30 s (GPUPLAN_FUZZ_SECONDS) from its seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure --timeout 600 -j "$(nproc)"

if ! command -v clang++ >/dev/null; then
  echo "== no clang++: the sanitizer and fuzz build (build-asan/) is skipped"
  exit 0
fi
echo "== sanitizer and fuzz build: build-asan/ (clang, ASan + UBSan, libFuzzer)"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" -DGPUPLAN_FUZZ=ON -DGPUPLAN_CUDA=OFF \
  -DGPUPLAN_BENCH=OFF
cmake --build build-asan --parallel "$(nproc)"
# A sanitizer report aborts (SIGABRT), so that no test that expects a failing exit status passes
# on one.
export ASAN_OPTIONS=abort_on_error=1 UBSAN_OPTIONS=abort_on_error=1:print_stacktrace=1
# Tests labelled sanitizer_skip repeat a long search whose code the other sanitized tests run
# (docs/TESTING.md); they run in build/ above.
ctest --test-dir build-asan --output-on-failure --timeout 600 -j "$(nproc)" -LE sanitizer_skip
scripts/fuzz.sh --build build-asan --seconds "${GPUPLAN_FUZZ_SECONDS:-30}" --jobs "$(nproc)"
