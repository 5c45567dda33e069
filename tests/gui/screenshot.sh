#!/usr/bin/env bash
# Usage: screenshot.sh GPUPLAN_GUI OUT.png [ARGS...]
# `gpuplan-gui --screenshot OUT.png ARGS...` must exit 0 and write a PNG of the requested size
# class (at least 50 kB: a window with charts, not a blank image).
set -u
gui=$1; out=$2; shift 2
rm -f "$out"
log=$("$gui" --screenshot "$out" "$@" 2>&1); code=$?
if [ "$code" -ne 0 ]; then echo "exit $code: $log"; exit 1; fi
if [ ! -f "$out" ]; then echo "no $out written: $log"; exit 1; fi
magic=$(head -c 8 "$out" | od -An -tx1 | tr -d ' \n')
if [ "$magic" != "89504e470d0a1a0a" ]; then echo "$out is not a PNG (magic $magic)"; exit 1; fi
size=$(stat -c %s "$out")
if [ "$size" -lt 50000 ]; then echo "$out is only $size bytes: an empty window?"; exit 1; fi
echo "$log"
