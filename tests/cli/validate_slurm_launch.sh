#!/usr/bin/env bash
# Usage: validate_slurm_launch.sh -- GPUPLAN VALIDATE-ARGS...
# Runs `GPUPLAN validate VALIDATE-ARGS... --launch slurm` (a 2-rank plan of the cpu device) with a
# stand-in `srun` first on PATH. Passes when srun is asked for 2 tasks, 2 per node, the job ended
# when one fails, each running this gpuplan (its absolute path) with the request minus --launch;
# when gpuplan exits 0 as srun did, and 2 (invalid input) when srun exits 2.
set -u
shift 1
gpuplan=$1
shift 1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/bin"
cat >"$dir/bin/srun" <<'SH'
#!/usr/bin/env bash
printf '%s\n' "$@" >"$SRUN_ARGS"
exit "${SRUN_EXIT:-0}"
SH
chmod +x "$dir/bin/srun"
export PATH="$dir/bin:$PATH" SRUN_ARGS="$dir/args"
"$gpuplan" validate "$@" --launch slurm || { echo "gpuplan failed where srun did not"; exit 1; }
python3 - "$dir/args" "$(readlink -f "$gpuplan")" "$@" <<'PY' || exit 1
import sys
args = open(sys.argv[1]).read().split("\n")[:-1]
program, request = sys.argv[2], sys.argv[3:]
assert args[:4] == ["--ntasks=2", "--ntasks-per-node=2", "--kill-on-bad-exit=1", program], args
ranks = args[4:]
assert ranks[0] == "validate" and "--launch" not in ranks, ranks
for flag in ("--plan", "--backend"):
    assert ranks[ranks.index(flag) + 1] == request[request.index(flag) + 1], (flag, ranks)
assert "--comm-only" in ranks, ranks
PY
SRUN_EXIT=2 "$gpuplan" validate "$@" --launch slurm >/dev/null 2>&1
code=$?
[ "$code" -eq 2 ] || { echo "srun exiting 2 gave exit $code, not 2"; exit 1; }
exit 0
