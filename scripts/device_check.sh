#!/usr/bin/env bash
# Usage: OUT=DIR [STEPS="NAME ..."] scripts/device_check.sh [PACK]
#        (PACK default .device, from scripts/device_pack.sh)
# The checks only a GPU can run, in one go, for a machine lent for a few minutes
# (docs/TESTING.md "On a GPU machine"): the CUDA kernels against their references, the profiler's
# CUDA backends, the GPU backend's compute, a `gpuplan profile` of GPU 0, the 1-GPU plan of
# examples/gpu on the profiled GPU executed and compared with its prediction (one rank:
# `--rank 0 --replay` runs it whole without mpirun), and PyTorch's own figures for constants
# the cost model reads from PyTorch's code (scripts/device_torch_checks.py, where python3 has
# torch). Every step runs under a time limit and is logged whatever the others do; OUT receives
# the log, the profile, the plan, the validation report and torch-checks.json. Exits 1 if any
# step failed.
set -uo pipefail
cd "$(dirname "$0")/.."
pack=$(cd "${1:-.device}" && pwd)
out=${OUT:?set OUT to the folder for the results}
mkdir -p "$out"
log="$out/device-check.log"
exec > >(tee "$log") 2>&1
day=$(date -u +%Y-%m-%d)
failed=0
# STEPS="kernels profile ..." runs only those steps (a rerun of the ones that failed).
wanted() { [ -z "${STEPS:-}" ] || [[ " $STEPS " == *" $1 "* ]]; }
step() {  # step NAME SECONDS COMMAND...: runs COMMAND with a limit, says how it ended
  local name=$1 seconds=$2
  shift 2
  wanted "$name" || return 0
  echo "== $name ($(date -u +%H:%M:%S))"
  timeout "$seconds" "$@"
  local code=$?
  echo "== $name: exit $code"
  if [ "$code" -ne 0 ]; then failed=1; fi
}

echo "gpuplan device check, pack commit $(cat "$pack/commit"), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || failed=1
# The pack's libraries first; CUDA's and NCCL's are the machine's (the toolkit's, and NCCL from
# the nvidia-nccl wheel of its PyTorch): each library the programs miss is looked for on disk.
export LD_LIBRARY_PATH="$pack/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
missing() { for f in "$pack"/bin/*; do ldd "$f"; done | awk '/not found/ {print $1}' | sort -u; }
for lib in $(missing); do
  found=$(find / -xdev -name "$lib" -not -path '/proc/*' 2>/dev/null | head -1)
  if [ -n "$found" ]; then
    echo "using $found"
    export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$found")"
  fi
done
if [ -n "$(missing)" ]; then
  echo "== libraries not found (LD_LIBRARY_PATH=$LD_LIBRARY_PATH): $(missing | tr '\n' ' ')"
  exit 1
fi

# A GPU test that skips for want of a GPU ("no CUDA GPU: ...") found none usable: on this
# machine that is a failure. Other skips stand (a test of the no-GPU path, one that needs 2 GPUs).
tests() {  # tests NAME SECONDS PROGRAM
  wanted "$1" || return 0
  step "$1" "$2" "$3" --gtest_brief=1 > "$out/.tests" 2>&1
  cat "$out/.tests"
  if grep -q "no CUDA GPU" "$out/.tests"; then
    echo "== $1: tests skipped for want of a GPU on a GPU machine"
    failed=1
  fi
  rm -f "$out/.tests"
}
# Limits: 580 s in all, inside one device call of 600 s (on an H200, 2026-11-30, the whole check
# took 62 s, the torch step 29 of them before attention_lengths and sustained were added).
tests kernels 60 "$pack/bin/kernels_gpu_test"
tests kernel_runner 30 "$pack/bin/kernels_runner_gpu_test"
tests profiler 60 "$pack/bin/profiler_gpu_test"
tests gpu_compute 40 "$pack/bin/validator_gpu_test"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | tr 'A-Z ' 'a-z-')
gpu=${gpu:-gpu0}
profile="$out/profile-$gpu-$day.json"
step profile 180 "$pack/bin/gpuplan" profile --out "$profile"
# The example plan on the hardware-db GPU the profile calibrates (its gpu_id).
plan=examples/gpu/gpt-1.3b-1gpu.json
with_profile=()
if [ -f "$profile" ]; then
  with_profile=(--profile "$profile")
  gpu_id=$(grep -o '"gpu_id": *"[^"]*"' "$profile" | sed 's/.*"\([^"]*\)"$/\1/')
  sed "s/\"gpu\": *\"[^\"]*\"/\"gpu\": \"$gpu_id\"/" "$plan" > "$out/gpt-1.3b-1gpu-$gpu_id.json"
  plan="$out/gpt-1.3b-1gpu-$gpu_id.json"
fi
step validate_1gpu 60 "$pack/bin/gpuplan" validate --plan "$plan" \
  --rank 0 --replay --steps 3 --warmup 2 "${with_profile[@]}" \
  --report "$out/validate-gpt-1.3b-1gpu-$gpu-$day.json"
if python3 -c "import torch" 2> /dev/null; then
  step torch 150 python3 scripts/device_torch_checks.py
elif wanted torch; then
  echo "== torch: skipped (python3 has no PyTorch here)"
fi
echo "== done: $([ "$failed" -eq 0 ] && echo "every step passed" || echo "a step failed")"
exit "$failed"
