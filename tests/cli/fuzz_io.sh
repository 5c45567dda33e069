#!/usr/bin/env bash
# Usage: fuzz_io.sh GPUPLAN DATA_DIR WORK_DIR
# Issue 17 reproducers that need a file system set-up (tests/data/fuzz-repro/README.md):
# D6 a model file name that is not UTF-8, D7 a FIFO or device as an input, D9 a symbolic link,
# a FIFO and a stale temporary file as outputs, D11 a directory as an input. Each command must end
# within GPUPLAN_TEST_BOUND_S seconds (10; a sanitizer build raises it: docs/TESTING.md).
set -u
bound=${GPUPLAN_TEST_BOUND_S:-10}
G=$1; data=$2; work=$3
rm -rf "$work"; mkdir -p "$work"; cd "$work" || exit 1
fail=0
check() {  # check NAME CODE SUBSTRING -- COMMAND...
  local name=$1 code=$2 text=$3; shift 4
  local out rc
  out=$(timeout "$bound" "$@" 2>&1); rc=$?
  if [ "$rc" -ne "$code" ]; then echo "$name: expected exit $code, got $rc: $out"; fail=1; return; fi
  case "$out" in *"$text"*) ;; *) echo "$name: output lacks '$text': $out"; fail=1 ;; esac
}
SIM=(simulate --model llama3-8b --gpu h100-sxm5-80gb --gpus 8 --pp 2 --global-batch 8)

# D6: the config's file name becomes the model name; it is not UTF-8.
bad=$(printf 'bad\377name.json')
cp "$data/ok.json" "$bad"
sed -i 's/"_name_or_path": "x", //' "$bad"
check D6 0 '"name": "bad' -- "$G" simulate --model "$bad" --gpu h100-sxm5-80gb --gpus 8 \
  --seq-len 2048 --global-batch 8 --json

# D7: a FIFO and a device as input files end at once.
mkfifo fifo.json
check D7_fifo 2 "fifo.json: is not a regular file" -- "$G" simulate --spec fifo.json
check D7_dev_zero 2 "/dev/zero: is not a regular file" -- "$G" validate --plan /dev/zero --dry-run
check D7_profile_fifo 2 "fifo.json: is not a regular file" -- "$G" profile --show fifo.json

# D11: a directory as an input file says so.
mkdir adir
check D11_plan_dir 2 "adir: is a directory, not a file" -- "$G" validate --plan adir --dry-run
check D11_show_dir 2 "adir: is a directory, not a file" -- "$G" validate --show adir
check D11_profile_dir 2 "adir: is a directory, not a file" -- "$G" profile --show adir
check D11_missing 2 "none.json: cannot read: No such file or directory" -- \
  "$G" validate --plan none.json --dry-run

# D9: an output path that is a symbolic link is followed; the link stays.
echo old > target.svg
ln -s target.svg link.svg
check D9_symlink 0 "" -- "$G" "${SIM[@]}" --timeline-svg link.svg
if [ ! -L link.svg ] || ! grep -q "<svg" target.svg; then
  echo "D9_symlink: the link was replaced or its target not written"; fail=1
fi
# A FIFO as an output is refused (nothing blocks, the FIFO stays).
mkfifo out.svg
check D9_fifo 1 "out.svg: exists and is not a regular file" -- "$G" "${SIM[@]}" --timeline-svg out.svg
[ -p out.svg ] || { echo "D9_fifo: the FIFO was replaced"; fail=1; }
# A stale temporary file of the old fixed name is not ours: left alone.
echo stale > .t.svg.tmp
check D9_stale 0 "" -- "$G" "${SIM[@]}" --timeline-svg t.svg
[ "$(cat .t.svg.tmp)" = stale ] || { echo "D9_stale: the stale file was overwritten"; fail=1; }
exit $fail
