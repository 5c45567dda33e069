#!/usr/bin/env bash
# Usage: export_stdout.sh PREFIX -- COMMAND...
# Runs COMMAND (a `gpuplan plan ... --export FORMAT` without --export-out); passes when it exits
# 0, its standard output starts with PREFIX and holds the launch configuration alone (no report:
# `> train.sh` gives a runnable file; a configuration starting with '#' must pass `bash -n`),
# and the report went to standard error.
set -u
prefix=$1; shift 2
err_file=$(mktemp)
trap 'rm -f "$err_file"' EXIT
out=$("$@" 2>"$err_file"); code=$?
err=$(cat "$err_file")
if [ "$code" -ne 0 ]; then
  echo "expected exit 0, got $code: $err"; exit 1
fi
case "$out" in
  "$prefix"*) ;;
  *) echo "standard output does not start with '$prefix': $out"; exit 1 ;;
esac
case "$out" in
  *Recommendation*) echo "standard output holds the report: $out"; exit 1 ;;
esac
case "$err" in
  *Recommendation*) ;;
  *) echo "standard error lacks the report: $err"; exit 1 ;;
esac
case "$out" in
  "#"*) printf '%s\n' "$out" | bash -n || { echo "not a valid bash script: $out"; exit 1; } ;;
esac
exit 0
