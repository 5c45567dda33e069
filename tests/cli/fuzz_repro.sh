#!/usr/bin/env bash
# Usage: fuzz_repro.sh CODE SUBSTRING -- COMMAND...
# A reproducer of issue 17 (tests/data/fuzz-repro/README.md). Passes when COMMAND finishes within
# 10 s (GPUPLAN_TEST_BOUND_S, which a sanitizer build raises: docs/TESTING.md), is not killed by a
# signal, exits with CODE and prints SUBSTRING; an exit of 2 must print exactly one line; an exit
# of 0 must print no NaN, infinity, JSON null or negative duration.
set -u
bound=${GPUPLAN_TEST_BOUND_S:-10}
want_code=$1; want_text=$2; shift 3
out=$(timeout "$bound" "$@" 2>&1); code=$?
if [ "$code" -eq 124 ]; then echo "did not finish within $bound s"; exit 1; fi
if [ "$code" -gt 128 ]; then echo "killed by signal $((code - 128)): $out"; exit 1; fi
if [ "$code" -ne "$want_code" ]; then echo "expected exit $want_code, got $code: $out"; exit 1; fi
case "$out" in
  *"$want_text"*) ;;
  *) echo "output lacks '$want_text': $out"; exit 1 ;;
esac
if [ "$code" -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then
  echo "the error is not one line: $out"; exit 1
fi
if [ "$code" -eq 0 ]; then
  bad=$(printf '%s\n' "$out" | grep -Eiw -e '-?nan' -e '-?inf' -e 'infinity' | head -1)
  [ -z "$bad" ] && bad=$(printf '%s\n' "$out" | grep -E '": null' | head -1)
  [ -z "$bad" ] && bad=$(printf '%s\n' "$out" | grep -E '(^|[ (])-[0-9][0-9.]* ?(s|ms|us|min|h|d)([^a-zA-Z%]|$)' | head -1)
  if [ -n "$bad" ]; then echo "not a sane result: $bad"; exit 1; fi
fi
exit 0
