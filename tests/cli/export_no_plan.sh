#!/usr/bin/env bash
# Usage: export_no_plan.sh -- COMMAND...
# Runs COMMAND (a `gpuplan plan ... --export FORMAT` that finds no plan); passes when it exits 3,
# its standard output is empty (`> train.sh` leaves an empty file, not the report) and the
# report went to standard error.
set -u
shift 1
err_file=$(mktemp)
trap 'rm -f "$err_file"' EXIT
out=$("$@" 2>"$err_file"); code=$?
err=$(cat "$err_file")
if [ "$code" -ne 3 ]; then
  echo "expected exit 3, got $code: $err"; exit 1
fi
if [ -n "$out" ]; then
  echo "standard output is not empty: $out"; exit 1
fi
case "$err" in
  *"No plan found"*) exit 0 ;;
  *) echo "standard error lacks the report: $err"; exit 1 ;;
esac
