#!/usr/bin/env bash
# One command: set up, build, and run the main job on the built-in hardware database:
# GPT-3 175B on 1024 A100-80GB (TP 8, PP 16, DP 8), as in the job spec of examples/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
./build/cli/gpuplan simulate --spec examples/gpt3-175b-a100.json
