#!/usr/bin/env bash
# Usage: expect_exit.sh CODE SUBSTRING -- COMMAND...
# Runs COMMAND; passes when it exits with CODE and its output contains SUBSTRING.
set -u
want_code=$1; want_text=$2; shift 3
out=$("$@" 2>&1); code=$?
if [ "$code" -ne "$want_code" ]; then
  echo "expected exit $want_code, got $code: $out"; exit 1
fi
case "$out" in
  *"$want_text"*) exit 0 ;;
  *) echo "output lacks '$want_text': $out"; exit 1 ;;
esac
