#!/usr/bin/env bash
# One command: set up, build, and run every test (GPU tests skip with a reason without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure --timeout 600 -j "$(nproc)"
