#!/usr/bin/env bash
# Usage: export_slurm_runs.sh NODES -- COMMAND...
# Runs COMMAND (a `gpuplan plan ... --export FORMAT --export-launcher slurm` whose plan has NODES
# nodes), then runs the script it printed as sbatch would: with a Slurm job's environment and
# stand-ins for `scontrol`, `srun` and `torchrun` first on PATH. Passes when
# - outside a job (no SLURM_JOB_NODELIST) the script stops and says to submit it with sbatch;
# - sbatch reads the #SBATCH lines (all before the first command) as NODES nodes of whole nodes,
#   one task each with the node's GPUs;
# - srun starts one task per node with the node's CPUs, and ends the step when one fails;
# - torchrun gets NODES nodes and a c10d rendezvous at the job's first node, named by the job id.
set -u
nodes=$1
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$@" >"$dir/train.sh" 2>/dev/null || { echo "export failed: $*"; exit 1; }
mkdir "$dir/bin"
cat >"$dir/bin/scontrol" <<'SH'
#!/usr/bin/env bash
[ "$1 $2 $3" = "show hostnames gpu[07-09]" ] || { echo "scontrol $*" >&2; exit 1; }
printf 'gpu07\ngpu08\ngpu09\n'
SH
cat >"$dir/bin/srun" <<'SH'
#!/usr/bin/env bash
args=()
while [ "${1#--}" != "$1" ]; do args+=("$1"); shift; done
printf '%s\n' "${args[@]}" >"$SRUN_ARGS"
exec "$@"
SH
cat >"$dir/bin/torchrun" <<'SH'
#!/usr/bin/env bash
printf '%s\n' "$@" >"$TORCHRUN_ARGS"
SH
chmod +x "$dir/bin/"*
export PATH="$dir/bin:$PATH" SRUN_ARGS="$dir/srun" TORCHRUN_ARGS="$dir/torchrun"
export CONFIG_FILE=llama.toml DATA_ARGS="--data-path corpus_text_document" DS_CONFIG="$dir/ds.json"
if err=$(env -u SLURM_JOB_NODELIST bash "$dir/train.sh" 2>&1); then
  echo "ran outside a Slurm job"; exit 1
fi
case "$err" in
  *"submit this script with sbatch"*) ;;
  *) echo "no sbatch message: $err"; exit 1 ;;
esac
(cd "$dir" && SLURM_JOB_NODELIST="gpu[07-09]" SLURM_JOB_ID=4242 SLURM_CPUS_ON_NODE=96 \
  bash "$dir/train.sh") || { echo "script failed"; exit 1; }
python3 - "$nodes" "$dir/train.sh" "$dir/srun" "$dir/torchrun" <<'PY' || exit 1
import sys
nodes, script, srun, torchrun = sys.argv[1], *[open(p).read() for p in sys.argv[2:]]
lines = script.split("\n")
# sbatch stops reading #SBATCH at the first line that is neither a comment nor blank.
first_command = next(i for i, l in enumerate(lines) if l.strip() and not l.startswith("#"))
directives = [l.split(" ", 1)[1] for l in lines if l.startswith("#SBATCH ")]
assert all(l.startswith("#SBATCH ") is False for l in lines[first_command:]), "late #SBATCH"
assert f"--nodes={nodes}" in directives and "--ntasks-per-node=1" in directives, directives
assert "--exclusive" in directives and any(d.startswith("--gpus-per-node=") for d in directives)
assert any(d.startswith("--job-name=gpuplan-") for d in directives), directives
assert srun.split("\n")[:3] == ["--ntasks-per-node=1", "--cpus-per-task=96",
                                "--kill-on-bad-exit=1"], srun
args = torchrun.replace("=", "\n").split("\n")
value = lambda flag: args[args.index(flag) + 1]
assert value("--nnodes") == nodes, args
assert value("--rdzv-backend") == "c10d", args
assert value("--rdzv-endpoint").startswith("gpu07:"), args
assert value("--rdzv-id") == "4242", args
assert "--node_rank" not in args and "--master_addr" not in args, args
PY
exit 0
