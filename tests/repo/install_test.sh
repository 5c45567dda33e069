#!/usr/bin/env bash
# Usage: install_test.sh BUILD_DIR
# `cmake --install` into a scratch prefix, then runs the installed programs from another folder:
# they must work from PATH and read the data installed beside them (<prefix>/share/gpuplan), not
# the source tree (shown by breaking the installed copy of one data file).
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
export PATH="$prefix/bin:$PATH"
cd "$(mktemp -d -p "$prefix")"
fail() { echo "install test: $*"; exit 1; }
[ "$(command -v gpuplan)" = "$prefix/bin/gpuplan" ] || fail "gpuplan not on PATH after install"
gpuplan --version | grep -q '^gpuplan ' || fail "gpuplan --version"
gpuplan accuracy | grep -q '^all runs  *222 ' || fail "gpuplan accuracy (installed calibration data)"
gpuplan simulate --spec "$prefix/share/gpuplan/examples/gpt3-175b-a100.json" | grep -q 'step time' ||
  fail "simulate of an installed example"
if [ -x "$prefix/bin/gpuplan-gui" ]; then
  env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM gpuplan-gui --help | grep -qi usage ||
    fail "gpuplan-gui --help"
fi
echo '{"gpus": [' >"$prefix/share/gpuplan/hardware-db/data/gpus.json"
if out=$(gpuplan hardware 2>&1); then fail "a broken installed gpus.json was not read: $out"; fi
case "$out" in
  *"$prefix/share/gpuplan/hardware-db/data/gpus.json"*) ;;
  *) fail "installed gpuplan did not read its own data: $out" ;;
esac
echo "installed to $prefix: gpuplan and its data work from $(pwd)"
