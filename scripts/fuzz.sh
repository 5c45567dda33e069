#!/usr/bin/env bash
# Runs the libFuzzer harnesses of fuzz/ (docs/TESTING.md, "Fuzzing") and keeps what they find.
# Usage: scripts/fuzz.sh [--seconds N] [--runs R] [--jobs J] [--seed S] [--build DIR] [HARNESS...]
#   --seconds N  time per harness (default 3600)
#   --runs R     stop a harness after R inputs instead (whichever comes first; default: no limit)
#   --jobs J     harnesses run at once (default: the number of cores)
#   --seed S     libFuzzer's random seed, 1-4294967295 (default: the commit's first 7 hex
#                digits, so that a run on a clean checkout of a commit can be run again; 0: random)
#   --build DIR  the fuzz build (default build-asan; configured and built when missing)
#   HARNESS      names from fuzz/seeds.txt (default: every harness built)
# Each harness grows its corpus in fuzz-corpus/<harness>/ (ignored by git), starting from the
# seeds in fuzz/seeds.txt. A crash, leak, timeout (> 2 s per input) or broken invariant is
# minimised (-minimize_crash=1) and copied to tests/data/fuzz-repro/<harness>/, where the ctest
# fuzz.replay_<harness> replays it from then on. Exit status: 1 when anything was found.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=3600
runs=-1
jobs=$(nproc)
build=build-asan
seed=
names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "scripts/fuzz.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
case "$seconds" in ''|*[!0-9]*) echo "scripts/fuzz.sh: --seconds must be a whole number, got '$seconds'" >&2; exit 2 ;; esac
case "$runs" in -1) ;; ''|*[!0-9]*) echo "scripts/fuzz.sh: --runs must be a whole number, got '$runs'" >&2; exit 2 ;; esac
case "$jobs" in ''|*[!0-9]*|0) echo "scripts/fuzz.sh: --jobs must be a positive whole number, got '$jobs'" >&2; exit 2 ;; esac
if [ -z "$seed" ]; then
  commit=$(git rev-parse --short=7 HEAD 2>/dev/null || true)
  case "$commit" in [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]) seed=$((16#$commit)) ;; *) seed=0 ;; esac
  # 0 would ask libFuzzer for a random seed; a commit of seven zeros gets 1.
  [ "$commit" = 0000000 ] && seed=1
fi
case "$seed" in ''|*[!0-9]*|???????????*) echo "scripts/fuzz.sh: --seed must be a whole number 0-4294967295, got '$seed'" >&2; exit 2 ;; esac
[ "$seed" -le 4294967295 ] || { echo "scripts/fuzz.sh: --seed must be a whole number 0-4294967295, got '$seed'" >&2; exit 2; }

if [ ! -d "$build/fuzz" ]; then
  command -v clang++ >/dev/null || { echo "scripts/fuzz.sh: needs clang++ (scripts/setup.sh installs it)" >&2; exit 2; }
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DGPUPLAN_FUZZ=ON -DGPUPLAN_CUDA=OFF -DGPUPLAN_BENCH=OFF
fi
# Build only the harnesses (the rest of the sanitizer build is scripts/test.sh's).
targets=$(sed -n 's/^\([a-z_]*\) .*/fuzz_\1/p' fuzz/seeds.txt)
available=()
# The target list is read once: `grep -q` on the pipe would stop reading at its first match and
# fail the pipe with SIGPIPE under pipefail, dropping a harness that exists.
build_targets=$(cmake --build "$build" --target help)
for t in $targets; do
  if grep -q "^$t:" <<<"$build_targets"; then
    available+=("$t")
  else
    echo "scripts/fuzz.sh: $t is not a target of $build (fuzz_session is built only with Qt)"
  fi
done
cmake --build "$build" --parallel "$(nproc)" --target "${available[@]}"
if [ "${#names[@]}" -eq 0 ]; then
  for t in "${available[@]}"; do names+=("${t#fuzz_}"); done
fi

# Prints what a harness found so that a log that is all one has (a CI run) is enough to act on:
# the first report of the sanitizer, invariant or libFuzzer in its log, and the minimised input
# in base64 when it is at most 8 KiB (`base64 -d > FILE` rebuilds it), whether it fails again
# when run once more (an input that does not points at the machine, not at the input), and the
# command that searches again as this run did.
report() {
  local h=$1 bin=$2 log=$3 input=$4
  if "$bin" -timeout=10 -rss_limit_mb=2048 "$input" >/dev/null 2>&1; then
    echo "$h: the minimised input does NOT fail when run again"
  else
    echo "$h: the minimised input fails again when run again"
  fi
  echo "$h: report (first of $log):"
  grep -m1 -A30 -E 'ERROR:|runtime error|invariant broken|deadly signal|ALARM:' "$log" |
    sed "s/^/  $h| /" || true
  if [ "$(wc -c <"$input")" -le 8192 ]; then
    echo "$h: minimised input, base64:"
    base64 -w 100 "$input" | sed "s/^/  $h| /"
  fi
  echo "$h: to search again from the same start: rm -rf fuzz-corpus/$h &&" \
    "scripts/fuzz.sh --seed $seed --seconds $seconds --build $build $h"
}

# Runs one harness for $seconds; prints "<harness>: N runs" and returns 1 when it found something.
fuzz_one() {
  local h=$1 bin="$build/fuzz/fuzz_$h"
  [ -x "$bin" ] || { echo "$h: no harness $bin (names: ${available[*]#fuzz_})"; return 2; }
  local corpus="fuzz-corpus/$h" seeds="fuzz-corpus/$h.seeds" found="fuzz-corpus/$h.crashes"
  local log="fuzz-corpus/$h.log" f
  # libFuzzer reads folders only: the seed files of fuzz/seeds.txt are copied into one.
  rm -rf "$seeds"
  mkdir -p "$corpus" "$seeds" "$found"
  # shellcheck disable=SC2046  # fuzz/seeds.txt holds space-separated paths without spaces
  find $(sed -n "s/^$h //p" fuzz/seeds.txt) -type f -print0 |
    while IFS= read -r -d '' f; do cp "$f" "$seeds/${f//\//_}"; done
  "$bin" "$corpus" "$seeds" -max_total_time="$seconds" -runs="$runs" -seed="$seed" -timeout=2 \
    -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="$found/" -print_final_stats=1 \
    >"$log" 2>&1 || true
  local done_runs
  done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  echo "$h: ${done_runs:-0} runs, seed $seed (log $log)"
  local status=0 a min
  for a in "$found"/*; do
    [ -f "$a" ] || continue
    min="$found/minimized-$(basename "$a")"
    case "$(basename "$a")" in
      minimized-*) continue ;;
      crash-*|leak-*|timeout-*|oom-*)
        "$bin" -minimize_crash=1 -max_total_time=60 -timeout=2 -rss_limit_mb=2048 \
          -exact_artifact_path="$min" "$a" >>"$log" 2>&1 || true ;;
    esac
    [ -f "$min" ] || cp "$a" "$min"
    mkdir -p "tests/data/fuzz-repro/$h"
    cp "$min" "tests/data/fuzz-repro/$h/$(basename "$a")"
    echo "$h: FOUND $(basename "$a") -> tests/data/fuzz-repro/$h/$(basename "$a")"
    report "$h" "$bin" "$log" "$min"
    rm -f "$a" "$min"
    status=1
  done
  return $status
}

found_any=0
pids=()
for h in "${names[@]}"; do
  fuzz_one "$h" &
  pids+=($!)
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    wait "${pids[0]}" || found_any=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || found_any=1; done

if [ "$found_any" -ne 0 ]; then
  cat <<'MSG'
Something was found: see the FOUND lines above and the logs in fuzz-corpus/. Each reproducer is
now in tests/data/fuzz-repro/<harness>/, where `ctest -R fuzz.replay_<harness>` (in the fuzz
build) replays it. To turn it into a regression test: fix the library, add a test of the fixed
behaviour next to the code's other tests (for example a GoogleTest case reading the file, or a
CLI case in tests/cli/CMakeLists.txt using tests/cli/fuzz_repro.sh), rename the file to say what
it holds, and keep it in tests/data/fuzz-repro/<harness>/ so that the replay test keeps it fixed.
MSG
  exit 1
fi
