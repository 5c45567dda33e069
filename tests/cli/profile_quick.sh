#!/usr/bin/env bash
# Usage: profile_quick.sh GPUPLAN OUT.json
# On a machine with a GPU: `gpuplan profile --quick` must finish (the test's timeout is the
# issue's 3-minute bar plus start-up) and write a profile that `profile --show` reads back.
# Without a GPU (or without CUDA in the build) it must exit 1 and say why.
set -u
gpuplan=$1; out=$2
rm -f "$out"
start=$(date +%s)
log=$("$gpuplan" profile --quick --out "$out" 2>&1); code=$?
elapsed=$(( $(date +%s) - start ))
case "$code:$log" in
  1:*"no CUDA GPU"*|1:*"built without CUDA"*)
    echo "no GPU here, as expected: $log"; exit 0 ;;
  0:*"profile written to"*)
    echo "quick profile took ${elapsed}s"
    if [ "$elapsed" -gt 180 ]; then echo "slower than 3 minutes"; exit 1; fi
    "$gpuplan" profile --show "$out" >/dev/null || { echo "written profile does not read back"; exit 1; }
    exit 0 ;;
  *) echo "unexpected exit $code after ${elapsed}s: $log"; exit 1 ;;
esac
