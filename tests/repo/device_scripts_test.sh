#!/usr/bin/env bash
# Usage: device_scripts_test.sh BUILD_DIR
# scripts/device_pack.sh and scripts/device_check.sh (docs/TESTING.md "On a GPU machine") end to
# end on this host: the pack holds the programs, their data and libraries; the check runs every
# step, writes its log to OUT and, without a GPU, exits 1 saying that the GPU tests skipped and
# that there is no GPU to profile. With a usable GPU every step must pass.
set -uo pipefail
build=$1
repo=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "device scripts test: $*"; exit 1; }
"$repo/scripts/device_pack.sh" "$build" "$scratch/pack" || fail "device_pack.sh failed"
for f in bin/gpuplan bin/kernels_gpu_test bin/validator_gpu_test share/gpuplan/hardware-db/data \
         commit; do
  [ -e "$scratch/pack/$f" ] || fail "the pack has no $f"
done
[ ! -e "$scratch/pack/bin/gpuplan-gui" ] || fail "the pack holds the GUI"
OUT="$scratch/out" "$repo/scripts/device_check.sh" "$scratch/pack" > "$scratch/output" 2>&1
code=$?
log="$scratch/out/device-check.log"
[ -f "$log" ] || fail "no device-check.log in OUT"
if grep -q "== done: every step passed" "$log"; then
  [ "$code" -eq 0 ] || fail "every step passed but the exit status is $code"
  echo "device check passed on this host's GPU"
  exit 0
fi
[ "$code" -eq 1 ] || fail "exit $code without a GPU (expected 1)"
for want in "== kernels: tests skipped for want of a GPU" "== gpu_compute: tests skipped" \
            "cannot profile: no CUDA GPU" "== validate_1gpu: exit 1" "== done: a step failed"; do
  grep -q -- "$want" "$log" || { cat "$log"; fail "the log lacks '$want'"; }
done
echo "device scripts: packed $(du -sh "$scratch/pack" | cut -f1); without a GPU the check says so"
