#!/usr/bin/env bash
# Usage: timing_retry.sh COMMAND...
# Runs a `gpuplan validate --require-targets` COMMAND and, when its only failure is a missed
# timing target, runs it once more: on a shared CI host the CPU's speed drifts by +-15% between
# runs a few seconds apart (docs/TESTING.md), so one miss is noise and two in a row are a
# finding. Prints every attempt's output; exits with the last attempt's status.
set -u
out=$("$@" 2>&1); code=$?
echo "$out"
if [ "$code" -ne 0 ] && [[ "$out" == *"--require-targets: the prediction misses its targets"* ]]; then
  echo "== timing target missed once on this host: measuring again"
  out=$("$@" 2>&1); code=$?
  echo "$out"
fi
exit "$code"
